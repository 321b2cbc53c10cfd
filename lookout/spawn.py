"""Starts lookout's detached processes: the background sender for one job file (a hook's), and
what the sender and the Telegram poller need to start theirs (where the package is, the
environment without the project's). Detached (new session, stdio on /dev/null) and never
waited for. The only module that starts processes on the hook's path; process plumbing, so it
sits below notify/ and remote/, which both use it."""

from __future__ import annotations

import os
import sys

# The built-in half of `signal` (no stub for it): `signal` itself imports enum, ~3-8 ms of a hook.
from _signal import SIGTERM  # type: ignore[import-not-found]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

# The sender runs with site-packages (optional apprise lives there) but isolated (-I) from the
# user's PYTHON* variables and cwd, so it is told where the lookout package is.
# It serves every session's jobs, so it runs in no session's directory (N2): chdir to / first.
_BOOT = (
    "import os, sys; os.chdir('/'); sys.path.insert(0, sys.argv[1]); "
    "from lookout.sender.sender import main; raise SystemExit(main(sys.argv[2:]))"
)


def runtime_root() -> str:
    # lookout/spawn.py -> the directory that holds the lookout package
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sender_argv(state_dir: str, job_path: str, lock_fd: int | None = None) -> list[str]:
    state_dir, job_path = os.path.abspath(state_dir), os.path.abspath(job_path)  # it leaves cwd
    argv = [sys.executable, "-I", "-c", _BOOT, runtime_root(), state_dir, job_path]
    return argv if lock_fd is None else [*argv, str(lock_fd)]


def spawn(state_dir: str, job_path: str, project_dirs: Sequence[str] = ()) -> int | None:
    """Make sure a sender will take the job just written to outbox/: start one (its pid) unless
    the state directory's sender runs (None), which takes every job there before it exits.
    Never waits: the hook exits long before the sender does. `project_dirs`: the directories
    the payload names (its cwd), whose projects' PATH entries the sender must not inherit."""
    from lookout import store

    fd = store.try_lock(os.path.join(state_dir, store.SENDER_LOCK))
    if fd is None:
        # The running sender takes it: woken now if it waits on a deadline, and it re-scans
        # outbox/ after it lets go of the lock.
        store.ring(state_dir)
        return None
    # The sender inherits the lock already held: no other hook can start a second one while
    # this one starts up (a flock belongs to the open file, which the child shares).
    try:
        os.set_inheritable(fd, True)
        env = sender_env(os.environ, project_dirs=project_dirs)
        return spawn_detached(sender_argv(state_dir, job_path, fd), env)
    finally:
        os.close(fd)


def sender_env(
    environ: Mapping[str, str], cwd: str | None = None, project_dirs: Sequence[str] = ()
) -> dict[str, str]:
    """The environment the shared sender gets (N2): the hook's, without what belongs to the
    project the hook ran in: PWD/OLDPWD, and PATH entries that are relative or inside that
    project (a repository's `bin/` or `node_modules/.bin`), which would otherwise choose the
    program behind a bare name for every later session's notification. The project is the
    repository root (the nearest `.git` up to the home directory) above the hook's directory
    (`cwd`, else the process's), the payload's `project_dirs` and CLAUDE_PROJECT_DIR (S5: a hook
    in `repo/sub` kept `repo/bin`), or that directory itself outside a repository."""
    try:
        here = cwd if cwd is not None else os.getcwd()
    except OSError:
        here = "/"
    home = os.path.realpath(os.path.expanduser("~"))
    places = [here, *project_dirs, environ.get("CLAUDE_PROJECT_DIR") or ""]
    roots = {r for r in (_project_root(p, home) for p in places if os.path.isabs(p)) if r}
    env = {k: v for k, v in environ.items() if k not in ("PWD", "OLDPWD")}
    kept = []
    for entry in environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        real = os.path.realpath(entry)
        if any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots):
            continue
        kept.append(entry)
    if "PATH" in environ:
        env["PATH"] = os.pathsep.join(kept)
    return env


def _project_root(directory: str, home: str) -> str | None:
    """The repository root above `directory` (never the home directory or above it), else the
    directory itself; None when it names no project (/, the home directory or above it)."""
    here = os.path.realpath(directory)
    if here == "/" or here == home or home.startswith(here.rstrip("/") + "/"):
        return None
    d = here
    while d not in (home, "/"):
        if os.path.exists(os.path.join(d, ".git")):
            return d
        d = os.path.dirname(d)
    return here


def start_poller(state_dir: str) -> int | None:
    """Make sure the state directory's Telegram poller runs: start one (its pid) unless one
    runs (None), handing it telegram.lock already taken (no second one starts meanwhile). Never
    waits. A hook calls this only when the poller is wanted and its lock is free; a poller
    handing over to a newer runtime calls that runtime's (keep the name)."""
    from lookout import store

    return start_listener(state_dir, store.TELEGRAM_LOCK, "lookout.surfaces.telegram", hold=True)


def start_listener(state_dir: str, lock: str, module: str, hold: bool = False) -> int | None:
    """Make sure the state directory's chat listener runs (`module`'s main: lookout.surfaces.
    telegram, slack, matrix, ntfy): start one (its pid) unless one holds `lock` (None). `hold`:
    hand it the lock already taken (its main takes the descriptor after the state directory),
    so that no second one starts meanwhile; else it takes the lock itself. Never waits."""
    import subprocess

    from lookout import store

    state_dir = os.path.abspath(state_dir)
    fd = store.try_lock(os.path.join(state_dir, lock))
    if fd is None:
        return None
    if not hold:  # it takes the lock itself: free before it starts
        os.close(fd)
    boot = (
        "import os, sys; os.chdir('/'); sys.path.insert(0, sys.argv[1]); "
        f"from {module} import main; raise SystemExit(main(sys.argv[2:]))"
    )
    try:
        argv = [sys.executable, "-I", "-c", boot, runtime_root(), state_dir]
        # Not the hook's tmux pane: a session /new starts opens in lookout's own tmux session.
        env = {k: v for k, v in sender_env(os.environ).items() if k not in ("TMUX", "TMUX_PANE")}
        # close_fds: a sender that starts us holds sender.lock on an inheritable descriptor (and
        # an agent may leave a pipe to its hooks open); a listener holding a copy would keep
        # every later job waiting for a sender that is gone.
        return subprocess.Popen(
            [*argv, str(fd)] if hold else argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd="/",
            close_fds=True,
            pass_fds=(fd,) if hold else (),
            start_new_session=True,
        ).pid
    finally:
        if hold:
            os.close(fd)


def held_main(
    argv: Sequence[str] | None,
    positional: int,
    serve: Callable[[str, int | None], object],
    what: str,
) -> int:
    """The `python -m` entry of a process started with its lock taken (the sender's, the
    Telegram poller's): `positional` arguments, the state directory first, then LOCK_FD when
    whoever started it holds that lock already; `serve(state_dir, LOCK_FD or None)` until it
    leaves. Exit 0 always (2 for wrong arguments), whatever went wrong logged to errors.log as
    `what`."""
    import signal
    import traceback

    from lookout import store

    # A hook ignores SIGTERM (install.settings.guarded); what it starts must not inherit that,
    # or a logout waits for it until SIGKILL.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    args = list(argv or [])
    if len(args) not in (positional, positional + 1):
        return 2
    if len(args) > positional and not args[positional].isdigit():
        return 2
    state_dir = os.path.abspath(args[0])
    held = int(args[positional]) if len(args) > positional else None
    try:
        if held is not None:  # passed on inheritable: what we start would keep our lock
            os.set_inheritable(held, False)
        serve(state_dir, held)
    except Exception:
        store.log_error(state_dir, f"{what}: {traceback.format_exc()}")
    return 0


def spawn_detached(argv: list[str], env: Mapping[str, str] | None = None) -> int:
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
            os.environ if env is None else env,
            file_actions=actions,
            setsid=True,
            setsigdef=(SIGTERM,),
        )
    except (NotImplementedError, AttributeError, TypeError):  # pragma: no cover - no SETSID
        import subprocess

        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        ).pid
