"""Getting the user to a session: `locate` (which session, where it lives now, the switch) and
`tmux` (the tmux calls). Never imported by a hook."""
