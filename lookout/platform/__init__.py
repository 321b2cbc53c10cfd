"""Where lookout meets the operating system (issue 27): alerts with actions, process truth, the
bridge's background service. One module per platform behind base.Platform; current.get() picks
one. Never imported by a hook."""
