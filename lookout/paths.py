"""Where lookout and Claude Code keep their files (another agent's: its lookout.agents module),
from the environment (env overrides first, then XDG), and tilde() to show them. Pure lookups:
never creates anything.

On the hook path: only `os` is imported; pathlib is loaded by the functions that return a Path,
which no hook calls."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


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
    return default_state_dir()


def default_state_dir() -> str:
    """The state directory without LOOKOUT_STATE_DIR (where a refused override is reported)."""
    return os.path.join(_xdg("XDG_STATE_HOME", ".local/state"), "lookout")


def config_path() -> str:
    return os.environ.get("LOOKOUT_CONFIG") or os.path.join(config_home(), "lookout", "config.toml")


def config_home() -> str:
    """$XDG_CONFIG_HOME, or ~/.config (where lookout's and other agents' configs live)."""
    return _xdg("XDG_CONFIG_HOME", ".config")


def data_dir() -> str:
    """Where install.py puts the runtime (virtual environment and hook scripts)."""
    return os.environ.get("LOOKOUT_HOME") or os.path.join(
        _xdg("XDG_DATA_HOME", ".local/share"), "lookout"
    )


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def tilde(path: str | os.PathLike[str]) -> str:
    text = str(path)
    home = os.path.expanduser("~").rstrip("/")
    if home and (text == home or text.startswith(home + "/")):
        return "~" + text[len(home) :]
    return text


def user_settings_path() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return _path(base) / "settings.json"


def scope_path(scope: str, project: str | None = None) -> Path:
    if scope == "user":
        return user_settings_path()
    root = _path(os.path.abspath(project or os.getcwd()))
    name = "settings.json" if scope == "project" else "settings.local.json"
    return root / ".claude" / name


def runtime_home() -> Path:
    return _path(os.path.abspath(data_dir()))


def venv_python(home: Path) -> Path:
    return home / "venv" / "bin" / "python"


def bin_dir() -> Path:
    return _path(os.path.expanduser("~")) / ".local" / "bin"
