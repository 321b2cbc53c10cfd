"""Starts the background sender for one job file: detached (new session, stdio on /dev/null) and
never waited for. The only module that starts processes on the hook's path."""

from __future__ import annotations

import os
import signal
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


def sender_argv(state_dir: str, job_path: str, lock_fd: int | None = None) -> list[str]:
    argv = [sys.executable, "-I", "-c", _BOOT, runtime_root(), state_dir, job_path]
    return argv if lock_fd is None else [*argv, str(lock_fd)]


def spawn(state_dir: str, job_path: str) -> int | None:
    """Make sure a sender will take the job just written to outbox/: start one (its pid) unless
    the state directory's sender runs (None), which takes every job there before it exits.
    Never waits: the hook exits long before the sender does."""
    from lookout import store

    fd = store.try_lock(os.path.join(state_dir, store.SENDER_LOCK))
    if fd is None:
        return None  # the running sender re-scans outbox/ after it lets go of the lock
    # The sender inherits the lock already held: no other hook can start a second one while
    # this one starts up (a flock belongs to the open file, which the child shares).
    try:
        os.set_inheritable(fd, True)
        return spawn_detached(sender_argv(state_dir, job_path, fd))
    finally:
        os.close(fd)


def spawn_detached(argv: list[str]) -> int:
    """Start `argv` (no shell) in a new session with stdio on /dev/null; never wait for it.
    A bare program name is looked up on PATH."""
    actions = [
        (os.POSIX_SPAWN_OPEN, fd, os.devnull, flags, 0)
        for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY))
    ]
    spawner = os.posix_spawn if os.sep in argv[0] else os.posix_spawnp
    try:
        # SIGTERM back to its default: the hook ignores it (install.settings.guarded), and what
        # it starts must not, or a logout waits for it until SIGKILL.
        return spawner(
            argv[0],
            argv,
            os.environ,
            file_actions=actions,
            setsid=True,
            setsigdef=(signal.SIGTERM,),
        )
    except (NotImplementedError, AttributeError, TypeError):  # pragma: no cover - no SETSID
        import subprocess

        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        ).pid
