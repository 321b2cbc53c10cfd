"""Starts the background sender for one job file: detached (new session, stdio on /dev/null) and
never waited for. The only module that starts processes on the hook's path."""

from __future__ import annotations

import os
import sys

# The sender runs with site-packages (optional apprise lives there) but isolated (-I) from the
# user's PYTHON* variables and cwd, so it is told where the lookout package is.
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); from lookout.notify.sender import main; "
    "raise SystemExit(main(sys.argv[2:]))"
)


def runtime_root() -> str:
    # lookout/notify/spawn.py -> the directory that holds the lookout package
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sender_argv(state_dir: str, job_path: str) -> list[str]:
    return [sys.executable, "-I", "-c", _BOOT, runtime_root(), state_dir, job_path]


def spawn(state_dir: str, job_path: str) -> int:
    """Start the sender; returns its pid. Does not wait: the hook exits long before it does."""
    return spawn_detached(sender_argv(state_dir, job_path))


def spawn_detached(argv: list[str]) -> int:
    """Start `argv` (no shell) in a new session with stdio on /dev/null; never wait for it.
    A bare program name is looked up on PATH."""
    actions = [
        (os.POSIX_SPAWN_OPEN, fd, os.devnull, flags, 0)
        for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY))
    ]
    spawner = os.posix_spawn if os.sep in argv[0] else os.posix_spawnp
    try:
        return spawner(argv[0], argv, os.environ, file_actions=actions, setsid=True)
    except (NotImplementedError, AttributeError, TypeError):  # pragma: no cover - no SETSID
        import subprocess

        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        ).pid
