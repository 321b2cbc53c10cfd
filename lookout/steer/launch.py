"""`start`: a new session of an agent in a new tmux window whose working directory is an allowed
project. The window runs the agent's own program with the prompt as one argv element (tmux runs
a command given as several arguments itself, without a shell; lookout's own one-line exec step
makes sure there are always several). Which tmux: the server and session lookout runs in
($TMUX), else a session named `lookout` on the default server (created on first use)."""

from __future__ import annotations

import glob
import os
import stat
import sys
import time

from lookout import paths, store
from lookout.config.steer import SteerConfig
from lookout.errors import LookoutError
from lookout.jump import tmux
from lookout.steer import agents
from lookout.steer.pane import escaped_arg
from lookout.steer.shapes import SteerError

OWN_SESSION = "lookout"
# A fixed program: exec the agent's executable with its arguments (argv[1:]), nothing else.
_EXEC = "import os, sys; os.execv(sys.argv[1], sys.argv[1:])"
# What the new session's hooks need to report where lookout waits for them.
_PASSED = ("LOOKOUT_STATE_DIR", "LOOKOUT_CONFIG")
WAIT_S = 30.0
POLL_S = 0.1


def project_names(cfg: SteerConfig) -> list[tuple[str, str]]:
    """(name, directory) of every project [steer] allows, sorted: a directory's name, as
    `status` shows its sessions' project, and the name of the glob's match that leads to it
    (a symlink in ~/src), each once."""
    found: set[tuple[str, str]] = set()
    for pattern in cfg.projects:
        for match in glob.glob(os.path.expanduser(pattern)):
            if os.path.isdir(match):
                real = os.path.realpath(match)
                for name in {os.path.basename(match.rstrip("/")), os.path.basename(real)}:
                    if name:
                        found.add((name, real))
    return sorted(found)


def by_name(cfg: SteerConfig, project: str) -> str:
    """The allowed project named `project` (project_names) when exactly one has that name;
    SteerError listing the allowed ones otherwise."""
    named = project_names(cfg)
    dirs = sorted({d for n, d in named if n == project})
    if len(dirs) == 1:
        return dirs[0]
    listed = ", ".join(f"{n} ({paths.tilde(d)})" for n, d in named[:20]) or "none exist"
    if dirs:
        raise SteerError(
            "project",
            f"{project!r} names {len(dirs)} of the projects [steer] allows:"
            f" {', '.join(paths.tilde(d) for d in dirs)}",
            hint="give its path (~/...)",
        )
    raise SteerError(
        "project",
        f"no project [steer] allows is named {project!r} (allowed: {listed})",
        hint="give one of those names, its path or ~/...; [steer] projects in your own config"
        " says which",
    )


def project_dir(cfg: SteerConfig, project: str, names: bool = False) -> str:
    """PROJECT resolved through symlinks, when [steer] projects names it and no other user can
    write it or a directory above it; SteerError otherwise. `names`: a PROJECT that is no path
    (no `/`, no `~`) is an allowed project's name (by_name): a surface without a working
    directory (Telegram) has no relative paths."""
    if names and "/" not in project and not project.startswith("~"):
        project = by_name(cfg, project)
    given = os.path.expanduser(project)
    real = os.path.realpath(given)
    if not os.path.isdir(real):
        raise SteerError("project", f"{project} is not a directory")
    allowed = cfg.project_dirs()
    if real not in allowed:
        listed = ", ".join(paths.tilde(d) for d in allowed[:5]) or "none exist"
        raise SteerError(
            "project",
            f"{paths.tilde(real)} is not one of the projects [steer] allows ({listed})",
            hint="add it (or a glob) to projects in [steer], in your own config",
        )
    why = unsafe_dir(real)
    if why is not None:
        raise SteerError(
            "project",
            f"{paths.tilde(real)}: {why}, so a session there could run what someone else put in it",
            hint="start sessions only in your own directories",
        )
    return real


def unsafe_dir(real: str) -> str | None:
    """Why a directory (resolved) could be changed by another user: it or a directory above it
    is writable by another user (a sticky directory such as /tmp counts for itself, not for what
    you own inside it), or it is not yours."""
    uid = os.geteuid()
    st = os.stat(real)
    if st.st_uid != uid:
        return f"it is owned by uid {st.st_uid}, not by you"
    d = real
    while True:
        st = os.stat(d)
        if st.st_uid not in (uid, 0):
            return f"{d} is owned by uid {st.st_uid}"
        writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if writable and (d == real or not st.st_mode & stat.S_ISVTX):
            return f"{d} is writable by other users"
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def argv(keys: agents.Keys, program: str, prompt: str | None) -> list[str]:
    """What the window runs: lookout's exec step, the agent's program, the prompt as data."""
    extra = keys.prompt_argv(prompt) if prompt else []
    return [sys.executable, "-I", "-S", "-c", _EXEC, program, *extra]


def _where() -> tuple[str, str | None]:
    """(the tmux server's socket, the session to open the window in: None for ours, on the
    default server)."""
    own = os.environ.get("TMUX", "").split(",", 1)[0]
    if own:
        pane = os.environ.get("TMUX_PANE", "")
        if pane:
            try:
                found = tmux.run(own, "display-message", "-p", "-t", pane, "#{session_id}")
            except tmux.ServerGone:
                raise SteerError("failed", f"the tmux server in $TMUX ({own}) is gone") from None
            if found.strip():
                return own, found.strip()
        raise SteerError(
            "failed", "$TMUX is set but $TMUX_PANE is not: lookout cannot tell which tmux session"
        )
    base = os.environ.get("TMUX_TMPDIR") or "/tmp"  # noqa: S108 - where tmux itself looks
    return os.path.join(base, f"tmux-{os.geteuid()}", "default"), None


def open_window(directory: str, command: list[str]) -> tuple[str, str]:
    """Run `command` in a new tmux window in `directory`; (socket, pane id)."""
    socket, session = _where()
    env = [x for k in _PASSED if os.environ.get(k) for x in ("-e", f"{k}={os.environ[k]}")]
    # Where it runs and what, the same in a new session as in a new window; -P: print its pane.
    window = ("-c", directory, "-P", "-F", "#{pane_id}", *env, "--", *command)
    server = ["-S", socket]
    if session is None:
        server = ["-L", "default"]  # tmux makes its socket's directory (-S would not)
        session = f"={OWN_SESSION}"
        if not _has(server, session):
            return socket, _tmux(server, "new-session", "-d", "-s", OWN_SESSION, *window)
    return socket, _tmux(server, "new-window", "-d", "-t", f"{session}:", *window)


def _has(server: list[str], session: str) -> bool:
    try:
        _tmux(server, "has-session", "-t", session)
    except SteerError:
        return False
    return True


def _tmux(server: list[str], *args: str) -> str:
    """A tmux command whose every argument reaches it as written (see pane.escaped_arg)."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    try:
        done = subprocess.run(
            ["tmux", *server, *(escaped_arg(a) for a in args)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=tmux.TIMEOUT_S,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        raise SteerError("failed", "tmux not found on PATH", hint="install tmux") from None
    except subprocess.TimeoutExpired:
        raise SteerError("failed", f"tmux did not answer in {tmux.TIMEOUT_S:g}s") from None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip()
        raise SteerError("failed", f"tmux {args[0]} failed: {err or f'exit {done.returncode}'}")
    return done.stdout.decode("utf-8", "replace").strip()


def target(socket: str, pane_id: str) -> str:
    """session:window.%pane of the new pane (its id alone if tmux cannot say)."""
    try:
        found = tmux.panes(socket).get(pane_id)
    except (tmux.ServerGone, LookoutError):
        found = None
    return found.target if found else pane_id


def first_session(
    state_dir: str, socket: str, pane_id: str, known: set[str], wait_s: float
) -> str | None:
    """The id of the new session whose hooks report from `pane_id` of that tmux server, once its
    first hook arrived; None at the deadline."""
    directory = os.path.join(state_dir, store.SESSIONS)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            names = os.listdir(directory)
        except FileNotFoundError:
            names = []
        for name in names:
            if not name.endswith(".json") or name.startswith(".") or name in known:
                continue
            snapshot = store.read_json(os.path.join(directory, name))
            if not isinstance(snapshot, dict):
                continue
            place = snapshot.get("where")
            if (
                isinstance(place, dict)
                and place.get("tmux_pane") == pane_id
                and tmux.same_server(str(place.get("tmux_socket", "")), socket)
            ):
                return str(snapshot.get("session_id"))
        if time.monotonic() > deadline:
            return None
        time.sleep(POLL_S)


def known_sessions(state_dir: str) -> set[str]:
    try:
        return set(os.listdir(os.path.join(state_dir, store.SESSIONS)))
    except FileNotFoundError:
        return set()
