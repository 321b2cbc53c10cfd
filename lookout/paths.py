"""Where lookout and Claude Code keep their files (another agent's: its lookout.agents module),
from the environment (env overrides first, then XDG), and tilde() to show them. Pure lookups:
never creates anything.

On the hook path: not even `os` (with the _collections_abc it loads, ~1 ms of every hook): the
functions a hook calls use the interpreter's built-in `posix` and string joins on absolute paths.
pathlib and os are loaded by the functions that need them, which no hook calls."""

from __future__ import annotations

import _stat
import posix
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Mapping
    from pathlib import Path

_started_env: dict[str, str] | None = None


def environ() -> Mapping[str, str]:
    """The process's environment: os.environ once `os` is loaded (the CLI, tests: it may have
    been changed through it), else the environment the interpreter started with, decoded as
    os.environ decodes it (a hook never changes its own)."""
    global _started_env
    loaded = sys.modules.get("os")
    if loaded is not None:
        env: Mapping[str, str] = loaded.environ
        return env
    if _started_env is None:
        encoding = sys.getfilesystemencoding()
        _started_env = {
            k.decode(encoding, "surrogateescape"): v.decode(encoding, "surrogateescape")
            for k, v in posix.environ.items()
        }
    return _started_env


def join(base: str, *names: str) -> str:
    """os.path.join for names that are relative (never start with /)."""
    base = posix.fspath(base)
    for name in names:
        base = base + name if base.endswith("/") else f"{base}/{name}"
    return base


def home() -> str:
    """os.path.expanduser("~"): $HOME, else the password database's entry."""
    value = environ().get("HOME")
    if value is None:
        import pwd

        try:
            value = pwd.getpwuid(posix.getuid()).pw_dir
        except KeyError:
            return "~"
    return value.rstrip("/") or "/"


def expanduser(path: str) -> str:
    """os.path.expanduser: `~` and `~/...` from home(); `~user` (rare) through os."""
    if path == "~" or path.startswith("~/"):
        return (home().rstrip("/") + path[1:]) or "/"
    if path.startswith("~"):
        import os.path

        return os.path.expanduser(path)
    return path


def normpath(path: str) -> str:
    """os.path.normpath of an absolute path: no `.`, `..` or empty components."""
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    return "/" + "/".join(parts)


def exists(path: str) -> bool:
    """os.path.exists, through posix."""
    try:
        posix.stat(path)
    except (OSError, ValueError):
        return False
    return True


def isdir(path: str) -> bool:
    """os.path.isdir, through posix."""
    try:
        return _stat.S_ISDIR(posix.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def isfile(path: str) -> bool:
    """os.path.isfile, through posix."""
    try:
        return _stat.S_ISREG(posix.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _xdg(var: str, default: str) -> str:
    value = environ().get(var)
    # The XDG spec says relative values are invalid and must be ignored.
    if value and value.startswith("/"):
        return value
    return join(home(), default)


def state_dir() -> str:
    # Hooks run in the project directory: a relative override would scatter state per project.
    override = environ().get("LOOKOUT_STATE_DIR")
    if override and override.startswith("/"):
        return override
    return default_state_dir()


def default_state_dir() -> str:
    """The state directory without LOOKOUT_STATE_DIR (where a refused override is reported)."""
    return join(_xdg("XDG_STATE_HOME", ".local/state"), "lookout")


def config_path() -> str:
    return environ().get("LOOKOUT_CONFIG") or join(config_home(), "lookout", "config.toml")


def config_home() -> str:
    """$XDG_CONFIG_HOME, or ~/.config (where lookout's and other agents' configs live)."""
    return _xdg("XDG_CONFIG_HOME", ".config")


def data_dir() -> str:
    """Where install.py puts the runtime (virtual environment and hook scripts)."""
    return environ().get("LOOKOUT_HOME") or join(_xdg("XDG_DATA_HOME", ".local/share"), "lookout")


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def tilde(path: str | os.PathLike[str]) -> str:
    text = str(path)
    base = home().rstrip("/")
    if base and (text == base or text.startswith(base + "/")):
        return "~" + text[len(base) :]
    return text


def user_settings_path() -> Path:
    base = environ().get("CLAUDE_CONFIG_DIR") or join(home(), ".claude")
    return _path(base) / "settings.json"


def scope_path(scope: str, project: str | None = None) -> Path:
    import os

    if scope == "user":
        return user_settings_path()
    root = _path(os.path.abspath(project or os.getcwd()))
    name = "settings.json" if scope == "project" else "settings.local.json"
    return root / ".claude" / name


def runtime_home() -> Path:
    import os

    return _path(os.path.abspath(data_dir()))


def venv_python(home: Path) -> Path:
    return home / "venv" / "bin" / "python"


def bin_dir() -> Path:
    return _path(home()) / ".local" / "bin"
