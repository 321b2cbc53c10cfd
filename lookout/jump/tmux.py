"""Talking to one tmux server by its socket: its panes and attached clients, and switching a client
to a pane. Every call names the server (-S), the client (-c) and the target (-t) explicitly, runs
without a shell and is bounded in time."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from lookout.errors import LookoutError
from lookout.paths import tilde

TIMEOUT_S = 5.0
_SEP = "\x1f"  # between format fields: session names may hold tabs and spaces, never this


class ServerGone(Exception):
    """No tmux server answers on the socket (it exited, or the socket was removed)."""


@dataclass(frozen=True)
class Pane:
    socket: str
    pane: str  # %N
    session: str
    window: int
    session_id: str  # $N: a pane may show in several (grouped) sessions

    @property
    def target(self) -> str:
        return f"{self.session}:{self.window}.{self.pane}"

    def as_json(self) -> dict[str, object]:
        return {
            "socket": self.socket,
            "pane": self.pane,
            "session": self.session,
            "window": self.window,
        }


@dataclass(frozen=True)
class Client:
    name: str
    activity: int
    session_id: str
    pane: str


def run(socket: str, *args: str) -> str:
    """`tmux -S socket args...`; ServerGone when no server listens there, LookoutError on any
    other failure (with tmux's own message)."""
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    try:
        done = subprocess.run(
            ["tmux", "-S", socket, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT_S,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        raise LookoutError(
            "tmux not found on PATH", hint="install tmux, or run lookout where tmux is"
        ) from None
    except subprocess.TimeoutExpired:
        raise LookoutError(
            f"tmux server {tilde(socket)} did not answer in {TIMEOUT_S:g}s",
            hint="is that tmux server stuck? `tmux -S SOCKET info` tells",
        ) from None
    err = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode != 0:
        if not os.path.exists(socket) or err.startswith(("no server running", "error connecting")):
            raise ServerGone(socket)
        raise LookoutError(f"tmux {args[0]} failed: {err or f'exit {done.returncode}'}")
    return done.stdout.decode("utf-8", "replace")


def _rows(text: str, fields: int) -> list[list[str]]:
    rows = [line.split(_SEP) for line in text.splitlines()]
    return [row for row in rows if len(row) == fields]


def panes(socket: str) -> dict[str, Pane]:
    """Every pane of the server, by id (the first session that shows it)."""
    fmt = _SEP.join(("#{pane_id}", "#{session_name}", "#{window_index}", "#{session_id}"))
    found: dict[str, Pane] = {}
    for pane, session, window, session_id in _rows(run(socket, "list-panes", "-a", "-F", fmt), 4):
        if pane not in found and window.isdigit():
            found[pane] = Pane(socket, pane, session, int(window), session_id)
    return found


def sessions_showing(socket: str, pane: str) -> set[str]:
    """Ids of the (grouped) sessions in which `pane` appears."""
    fmt = _SEP.join(("#{pane_id}", "#{session_id}"))
    return {s for p, s in _rows(run(socket, "list-panes", "-a", "-F", fmt), 2) if p == pane}


def clients(socket: str) -> list[Client]:
    """The attached clients, most recently active first."""
    fmt = _SEP.join(("#{client_name}", "#{client_activity}", "#{session_id}", "#{pane_id}"))
    found = [
        Client(name, int(activity) if activity.isdigit() else 0, session_id, pane)
        for name, activity, session_id, pane in _rows(run(socket, "list-clients", "-F", fmt), 4)
    ]
    return sorted(found, key=lambda c: -c.activity)


def switch(socket: str, client: str, pane: str) -> str:
    """Switch `client` to `pane` (its session, window and pane at once); return where it landed."""
    run(socket, "switch-client", "-c", client, "-t", pane)
    # Read back through list-clients: `display -p -c CLIENT` expands for another client's pane.
    return next((c.pane for c in clients(socket) if c.name == client), "")


def same_server(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)
