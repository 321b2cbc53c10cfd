"""Where lookout keeps its files, from the environment (env overrides first, then XDG).

Pure lookups: never creates anything."""

from __future__ import annotations

import os


def _xdg(var: str, default: str) -> str:
    value = os.environ.get(var)
    # The XDG spec says relative values are invalid and must be ignored.
    if value and os.path.isabs(value):
        return value
    return os.path.join(os.path.expanduser("~"), default)


def state_dir() -> str:
    # Hooks run in the project directory: a relative override would scatter state per project.
    override = os.environ.get("LOOKOUT_STATE_DIR")
    if override and os.path.isabs(override):
        return override
    return os.path.join(_xdg("XDG_STATE_HOME", ".local/state"), "lookout")


def config_path() -> str:
    return os.environ.get("LOOKOUT_CONFIG") or os.path.join(
        _xdg("XDG_CONFIG_HOME", ".config"), "lookout", "config.toml"
    )


def data_dir() -> str:
    """Where install.py puts the runtime (virtual environment and hook scripts)."""
    return os.environ.get("LOOKOUT_HOME") or os.path.join(
        _xdg("XDG_DATA_HOME", ".local/share"), "lookout"
    )
