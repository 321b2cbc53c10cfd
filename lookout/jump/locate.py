"""Getting the user to a session: which session (`lookout jump [SESSION]`), where it lives now
(its tmux pane on its own server, resolved live; a kitty window; a WezTerm pane), and the switch.

Used by `lookout jump`/`pick`, `status --json`, the desktop alert's Focus action and the dashboard.
Never imported by a hook. Every failure is a LookoutError (message + hint)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from lookout import paths, store
from lookout.boundary import socket_path
from lookout.errors import LookoutError
from lookout.jump import tmux
from lookout.jump.tmux import Pane
from lookout.sessions import Row, label, load_sessions, resolve, title_of

TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Landed:
    """Where a jump went (or, with print_only, would go)."""

    session_id: str
    project: str
    via: str  # tmux | kitty | wezterm
    target: str  # tmux: session:window.%pane; kitty: window id; wezterm: pane id
    client: str | None = None  # the tmux client that was switched
    socket: str | None = None
    title: str = ""  # how outputs name the session (sessions.label)


def printable(text: str) -> str:
    """Payload-derived text (a project is a directory name) for a terminal: no control chars."""
    return "".join(c if c.isprintable() else "?" for c in text)


def name(session: Mapping[str, Any]) -> str:
    """How messages name a session: `demo (cf0b6c18)` (its title, sessions.label; its short id,
    unique among the sessions)."""
    short = session.get("short_id") or str(session["session_id"])[:8]
    return printable(f"{label(session)} ({short})")


# -- which session ---------------------------------------------------------------------------


def candidates(state_dir: str, query: str | None) -> list[Row]:
    """The sessions `query` names, best first, each with its snapshot under "snapshot".
    Without a query: those waiting in attention, longest first, then the idle ones, most
    recently idle first (the read model's order), as a reader proves them now (a dialog
    answered where no hook saw it waits no more; a renamed session answers to its new title)."""
    from lookout import reconcile

    reconcile.quietly(state_dir)
    sessions = load_sessions(state_dir)
    for s in sessions:
        s["snapshot"] = store.read_session(state_dir, s["session_id"]) or {}
    if query is None:
        waiting = [s for s in sessions if s["status"] == "attention"]
        idle = [s for s in sessions if s["status"] == "idle"]
        if not waiting and not idle:
            raise LookoutError(
                "no session needs you and none is idle",
                hint="`lookout status` lists them all; name one: lookout jump SESSION",
            )
        return waiting + idle
    return [resolve(sessions, query, "lookout jump")]


# -- where it lives --------------------------------------------------------------------------


def where(snapshot: Mapping[str, object]) -> dict[str, str]:
    recorded = snapshot.get("where")
    return (
        {k: v for k, v in recorded.items() if isinstance(v, str)}
        if isinstance(recorded, dict)
        else {}
    )


def tmux_socket(snapshot: Mapping[str, object]) -> tuple[str, str | None]:
    """(the session's recorded tmux socket as lookout connects to it: walked component by
    component, every symlink resolved (boundary.socket_path); why lookout will not use it, or
    None). It comes from the hook's $TMUX, which a repository's settings can set (`env`): keys
    sent there could reach another user's server, and a tmux server can make a client write files
    as you. Every call to tmux goes to the path returned, never to the recorded one: nothing
    another user can change lies between the check and tmux's connect. A socket no longer there
    (in a directory only you can write) is the server gone, which the callers say as such."""
    socket = where(snapshot).get("tmux_socket") or ""
    return socket_path(socket, "its tmux socket")


def untrusted(snapshot: Mapping[str, object]) -> str | None:
    """Why the session's recorded tmux socket is not this user's own (tmux_socket), or None."""
    return tmux_socket(snapshot)[1]


def locate_tmux(
    snapshot: Mapping[str, object], cache: dict[str, dict[str, Pane] | None] | None = None
) -> Pane | None:
    """The session's tmux pane as its server knows it now; None when there is no recorded pane,
    the server is gone or the pane is, or the socket is not this user's own (untrusted).
    `cache` (socket -> panes) saves a call per session. The pane's `socket` is the checked path
    (tmux_socket): what every later call to that server uses."""
    place = where(snapshot)
    socket, pane = place.get("tmux_socket"), place.get("tmux_pane")
    if not socket or not pane:
        return None
    cache = {} if cache is None else cache
    if socket not in cache:
        path, why = tmux_socket(snapshot)
        try:
            cache[socket] = tmux.panes(path) if why is None else None
        except (tmux.ServerGone, LookoutError):
            cache[socket] = None
    found = cache[socket]
    return found.get(pane) if found else None


def _require_tmux_pane(session: Mapping[str, Any]) -> Pane:
    place = where(session["snapshot"])
    socket, pane = place["tmux_socket"], place["tmux_pane"]
    path, why = tmux_socket(session["snapshot"])
    if why is not None:
        raise LookoutError(
            f"{name(session)}: lookout will not use its tmux server: {why}",
            hint="its hooks recorded that server from $TMUX (a project's settings `env` can set"
            " it): check where TMUX comes from",
        )
    try:
        found = tmux.panes(path)
    except tmux.ServerGone:
        raise LookoutError(
            f"{name(session)}: its tmux server is not running ({paths.tilde(socket)})",
            hint="the tmux server it ran in has exited; the session is gone with it",
        ) from None
    if pane not in found:
        raise LookoutError(
            f"{name(session)}: tmux pane {pane} is gone",
            hint="its pane was closed; `lookout status` shows where the others are",
        )
    return found[pane]


def choose_client(socket: str, explicit: str | None, caller: bool) -> tmux.Client:
    """`explicit`, else (caller) the client showing the calling pane's session, else the most
    recently active client of that server."""
    attached = tmux.clients(socket)
    if explicit is not None:
        for c in attached:
            if c.name == explicit:
                return c
        raise LookoutError(
            f"tmux client {explicit} is not attached to the server at {paths.tilde(socket)}",
            hint=f"`tmux -S {paths.tilde(socket)} list-clients` shows the attached clients",
        )
    if not attached:
        raise LookoutError(
            f"no tmux client is attached to the server at {paths.tilde(socket)}",
            hint=f"attach one first: tmux -S {paths.tilde(socket)} attach",
        )
    if caller:
        own = os.environ.get("TMUX", "").split(",", 1)[0]
        pane = os.environ.get("TMUX_PANE")
        if own and pane and tmux.same_server(own, socket):
            showing = tmux.sessions_showing(socket, pane)
            for c in attached:
                if c.session_id in showing:
                    return c
    return attached[0]


# -- a pane of its own ---------------------------------------------------------------------------

NO_DAEMON_HINT = (
    "`codex --no-daemon` runs each Codex session in a process of its own, whose pane lookout"
    " knows; until then, go to its window yourself"
)


def shared(
    state_dir: str, snapshot: Mapping[str, object], held: Held | None = None
) -> tuple[str, str] | None:
    """(why, hint) when the session has no pane of its own, else None. The pane lookout records
    is the one its hooks' process runs in; a process that serves several sessions (Codex's
    shared `codex app-server`, started by the first Codex TUI and reused by every later one; or
    any process another session not ended records too, with the same start) sits in the pane of
    whichever window started it, so every pane action (say, interrupt, jump, pick, Focus) refuses
    such a session rather than reach that window. A process that is gone shares nothing.
    `held`: holders(state_dir), when a batch has read it already."""
    from lookout.platform import current

    pid, start = snapshot.get("pid"), snapshot.get("pid_start")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    system = current.get()
    if system.alive(pid, start, snapshot.get("started_ms")) is not True:
        return None
    words = " ".join(system.cmdline(pid) or []).split()
    daemon = (
        len(words) > 1
        and os.path.basename(words[0]).startswith("codex")
        and words[1] == "app-server"
    )
    if daemon:
        return (
            "it has no pane of its own: its hooks run in Codex's shared `codex app-server`"
            f" (pid {pid}), which serves every Codex session started while it runs, in the pane"
            " of the window that started it",
            NO_DAEMON_HINT,
        )
    held = holders(state_dir) if held is None else held
    others = held.get((pid, start), set()) - {snapshot.get("session_id")}
    if not others:
        return None
    short = ", ".join(sorted(str(o)[:8] for o in others))
    return (
        f"it has no pane of its own: its process (pid {pid}) serves another session too"
        f" ({short}), in the pane of whichever window started it",
        NO_DAEMON_HINT if snapshot.get("agent") == "codex" else "go to its window yourself",
    )


Held = dict[tuple[object, object], set[object]]


def holders(state_dir: str) -> Held:
    """(pid, start) -> the sessions not ended that record that process: read once for a batch."""
    directory = os.path.join(state_dir, store.SESSIONS)
    try:
        names = os.listdir(directory)
    except OSError:
        return {}
    found: Held = {}
    for file in names:
        if not file.endswith(".json") or file.startswith("."):
            continue
        other = store.read_json(os.path.join(directory, file))
        if isinstance(other, dict) and other.get("status") != "ended" and other.get("pid"):
            key = (other.get("pid"), other.get("pid_start"))
            found.setdefault(key, set()).add(other.get("session_id"))
    return found


def _refuse_shared(state_dir: str, session: Mapping[str, Any]) -> None:
    found = shared(state_dir, session["snapshot"])
    if found is not None:
        raise LookoutError(f"{name(session)}: {found[0]}", hint=found[1])


# -- the jump ---------------------------------------------------------------------------------


def reachable(snapshot: Mapping[str, object]) -> bool:
    place = where(snapshot)
    return bool(
        ("tmux_socket" in place and "tmux_pane" in place)
        or "kitty_window" in place
        or "wezterm_pane" in place
    )


def jump(
    query: str | None = None,
    *,
    client: str | None = None,
    caller: bool = True,
    print_only: bool = False,
    state_dir: str | None = None,
) -> Landed:
    """Bring a tmux client (or kitty/WezTerm) to the session `query` names (a session id, a
    prefix of one, a project or a title), or to the one that has waited longest (see
    _next_after_current). `caller`: prefer the tmux client of the calling terminal (False for a
    desktop click). Raises LookoutError."""
    state_dir = state_dir or paths.state_dir()
    found = candidates(state_dir, query)
    usable = [s for s in found if reachable(s["snapshot"])]
    if not usable:
        raise _nowhere(found[0])
    if query is None:  # the attention cycle passes over a session with no pane of its own
        held = holders(state_dir)
        own = [s for s in usable if shared(state_dir, s["snapshot"], held) is None]
        usable = own or usable[:1]
    if query is None and len(usable) > 1:  # --print says where the jump itself would go
        usable = _next_after_current(usable, client, caller)
    _refuse_shared(state_dir, usable[0])
    return _go(usable[0], client, caller, print_only)


def jump_to(session_id: str, *, client: str | None = None, state_dir: str | None = None) -> Landed:
    """The dashboard's and the Focus action's entry: this exact session, on the most recently
    active client (or `client`). Raises LookoutError."""
    state_dir = state_dir or paths.state_dir()
    snapshot = store.read_session(state_dir, session_id)
    if snapshot is None:
        raise LookoutError(f"no session {session_id!r}", hint="`lookout status` lists them")
    session = {
        "session_id": session_id,
        "project": snapshot.get("project") or "",
        "title": title_of(snapshot),
        "snapshot": snapshot,
    }
    if not reachable(snapshot):
        raise _nowhere(session)
    _refuse_shared(state_dir, session)
    return _go(session, client, False, False)


def _nowhere(session: Mapping[str, Any]) -> LookoutError:
    place = where(session["snapshot"])
    if "zellij_session" in place:
        return LookoutError(
            f"{name(session)} runs in zellij session {place['zellij_session']!r}, which lookout"
            " cannot switch to from outside",
            hint=f"zellij attach {place['zellij_session']}",
        )
    return LookoutError(
        f"{name(session)} was not started inside tmux (no pane recorded)",
        hint="start your agents inside tmux (or kitty/WezTerm with remote control) to jump to them",
    )


def _next_after_current(usable: list[Row], client: str | None, caller: bool) -> list[Row]:
    """The attention cycle: when the client already shows a session that waits on you, `prefix
    a` again goes on to the next one that waits (after the last, back to the first; when it is
    the only one, on to the idle ones). From any other pane, an idle session's too, the order
    stays: the one waiting longest first."""
    first = where(usable[0]["snapshot"])
    if not first.get("tmux_socket"):
        return usable
    socket, why = tmux_socket(usable[0]["snapshot"])
    if why is not None:
        return usable  # the jump itself refuses it, saying why
    try:
        current = choose_client(socket, client, caller).pane
    except (LookoutError, tmux.ServerGone):
        return usable
    waiting = [s for s in usable if s["status"] == "attention"]
    rest = [s for s in usable if s["status"] != "attention"]
    for i, s in enumerate(waiting):
        place = where(s["snapshot"])
        if place.get("tmux_pane") == current and tmux.same_server(
            place.get("tmux_socket", ""), socket
        ):
            return waiting[i + 1 :] + waiting[:i] + rest + [s]
    return usable


def _go(session: Mapping[str, Any], client: str | None, caller: bool, print_only: bool) -> Landed:
    return replace(_switch(session, client, caller, print_only), title=label(session))


def _switch(
    session: Mapping[str, Any], client: str | None, caller: bool, print_only: bool
) -> Landed:
    place = where(session["snapshot"])
    sid, project = session["session_id"], session.get("project") or ""
    if "tmux_socket" in place and "tmux_pane" in place:
        pane = _require_tmux_pane(session)
        if print_only:
            return Landed(sid, project, "tmux", pane.target, None, pane.socket)
        try:
            chosen = choose_client(pane.socket, client, caller)
            landed = tmux.switch(pane.socket, chosen.name, pane.pane)
        except tmux.ServerGone:
            _require_tmux_pane(session)  # says whether the server or the pane went away
            raise LookoutError(f"the tmux server at {paths.tilde(pane.socket)} exited") from None
        if landed != pane.pane:
            raise LookoutError(
                f"tmux client {chosen.name} is on {landed or 'no pane'}, not {pane.pane}",
                hint="another command moved it at the same time; run the jump again",
            )
        return Landed(sid, project, "tmux", pane.target, chosen.name, pane.socket)
    if "kitty_window" in place:
        return _kitty(session, place, print_only)
    return _wezterm(sid, project, place, print_only)


def _terminal_cli(argv: list[str], what: str) -> None:
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        raise LookoutError(
            f"{argv[0]} not found on PATH", hint=f"lookout focuses {what} through its own CLI"
        ) from None
    except subprocess.TimeoutExpired:
        raise LookoutError(f"{argv[0]} did not answer in {TIMEOUT_S:g}s") from None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LookoutError(
            f"{' '.join(argv[:3])} failed: {err[-1][:200] if err else f'exit {done.returncode}'}",
            hint=f"is remote control enabled in {what}?",
        )


def _kitty(session: Mapping[str, Any], place: dict[str, str], print_only: bool) -> Landed:
    sid, project = session["session_id"], session.get("project") or ""
    window = place["kitty_window"]
    listen = place.get("kitty_listen_on", "")
    if not listen.startswith(("unix:", "tcp:127.0.0.1:", "tcp:localhost:")):
        raise LookoutError(
            f"{name(session)} runs in kitty window {window},"
            " but kitty's remote control"
            " address was not recorded (or is not local)",
            hint="set `allow_remote_control yes` and `listen_on unix:/tmp/kitty` in kitty.conf,"
            " then restart the session",
        )
    if not print_only:
        _terminal_cli(
            ["kitty", "@", "--to", listen, "focus-window", "--match", f"id:{window}"], "kitty"
        )
    return Landed(sid, project, "kitty", window)


def _wezterm(sid: str, project: str, place: dict[str, str], print_only: bool) -> Landed:
    pane = place["wezterm_pane"]
    if not print_only:
        _terminal_cli(["wezterm", "cli", "activate-pane", "--pane-id", pane], "WezTerm")
    return Landed(sid, project, "wezterm", pane)


def tmux_json(sessions: Sequence[Row] | Sequence[dict[str, Any]], state_dir: str) -> None:
    """Add `tmux` ({socket, pane, session, window} resolved live, or None) to each session of
    `lookout status --json`: one tmux call per server. None for a session with no pane of its
    own (shared)."""
    cache: dict[str, dict[str, Pane] | None] = {}
    held: dict[str, Held] = {}
    for s in sessions:
        snapshot = store.read_session(state_dir, s["session_id"])
        pane = own_pane(state_dir, snapshot, cache, held) if snapshot else None
        s["tmux"] = pane.as_json() if pane else None


def own_pane(
    state_dir: str,
    snapshot: Mapping[str, object],
    cache: dict[str, dict[str, Pane] | None],
    held: dict[str, Held],
) -> Pane | None:
    """locate_tmux, but None for a session with no pane of its own (shared): what `status
    --json` and the fleet bridge show. `held` keeps holders() by state directory for a batch."""
    pane = locate_tmux(snapshot, cache)
    if pane is None or not snapshot.get("pid"):
        return pane
    if state_dir not in held:
        held[state_dir] = holders(state_dir)
    return None if shared(state_dir, snapshot, held[state_dir]) is not None else pane
