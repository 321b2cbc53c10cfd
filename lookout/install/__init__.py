"""The installer: `python3 install.py` and `lookout uninstall` (plan, cli), the safe writes of
other programs' files (files, settings, hooks, hookfiles), the runtime, the bridge's service."""
