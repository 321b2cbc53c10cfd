"""`lookout pick`: a tmux menu of the sessions, the ones waiting on you first, with number keys;
choosing one switches the menu's client to that session's pane. Labels are payload text: control
characters never reach tmux, and `#` cannot start a tmux format."""

from __future__ import annotations

import argparse
import os
import subprocess
from dataclasses import dataclass

from lookout import paths, store
from lookout.commands import args
from lookout.errors import LookoutError
from lookout.jump import locate as places
from lookout.jump import tmux
from lookout.sessions import Row, label, load_sessions

KEYS = "1234567890"
LABEL_MAX = 72


def declare(p: argparse.ArgumentParser) -> None:
    """Show a tmux menu (display-menu) of the sessions, the ones waiting on you first, with number
    keys; choosing one switches the menu's client to that session's pane. Sessions on another
    tmux server or outside tmux are listed but greyed out."""
    args.client(p)
    p.add_argument("--print", action="store_true", help="print the menu instead of showing it")


def run(args: argparse.Namespace) -> int:
    return pick(client=args.client, print_only=args.print)


@dataclass(frozen=True)
class Item:
    label: str
    key: str
    pane: str | None  # None: shown, but cannot be chosen from this tmux server
    why: str  # why it cannot, or where it goes


def _clean(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)


def _status(s: Row) -> str:
    return f"{s['status']} {s['reason']}" if s["status"] == "attention" else str(s["status"])


def _name(s: Row, sessions: list[Row]) -> str:
    """The title (sessions.label), and the short id when another listed session has both."""
    project = _clean(label(s))[:16]
    same = [o for o in sessions if (o["title"], o["project"]) == (s["title"], s["project"])]
    if len(same) > 1:
        return f"{project} {_clean(s.get('short_id') or s['session_id'][:8])}"
    return project


def _label(s: Row, project: str, project_w: int, status_w: int) -> str:
    summary = _clean(s["summary"] or s["detail"] or "")
    text = f"{project:<{project_w}}  {_status(s):<{status_w}}  {summary}".rstrip()
    return text if len(text) <= LABEL_MAX else text[: LABEL_MAX - 1] + "…"


def items(state_dir: str, socket: str | None) -> list[Item]:
    """Every live session, attention first (longest waiting first), then working, then idle,
    as a reader proves them now (lookout.reconcile)."""
    from lookout import reconcile

    reconcile.quietly(state_dir)
    sessions = [s for s in load_sessions(state_dir) if s["status"] != "ended"]
    for s in sessions:
        s["snapshot"] = store.read_session(state_dir, s["session_id"]) or {}
    cache: dict[str, dict[str, tmux.Pane] | None] = {}
    held = places.holders(state_dir)
    names = [_name(s, sessions) for s in sessions]
    project_w = max((len(n) for n in names), default=0)
    status_w = max((len(_status(s)) for s in sessions), default=0)
    out = []
    for i, s in enumerate(sessions):
        key = KEYS[i] if i < len(KEYS) else ""
        label = _label(s, names[i], project_w, status_w)
        place = places.where(s["snapshot"])
        pane = places.locate_tmux(s["snapshot"], cache)
        if "tmux_pane" not in place:
            out.append(Item(label, key, None, "not in tmux"))
        elif pane is None:
            out.append(Item(label, key, None, "pane gone"))
        elif places.shared(state_dir, s["snapshot"], held) is not None:
            out.append(Item(label, key, None, "no pane of its own: see lookout jump"))
        elif socket is not None and not tmux.same_server(pane.socket, socket):
            out.append(Item(label, key, None, "another tmux server"))
        else:
            out.append(Item(label, key, pane.pane, pane.target))
    return out


def menu_args(entries: list[Item]) -> list[str]:
    """display-menu's NAME KEY COMMAND triples. A name is a tmux format (so `#` is doubled) and
    a leading `-` disables it; the command only ever holds a pane id tmux gave us."""
    args: list[str] = []
    for item in entries:
        name = item.label.replace("#", "##")
        if item.pane is None:
            args += [f"-{name}  ({item.why})", "", ""]
        else:
            args += [name.lstrip("-"), item.key, f"switch-client -t {item.pane}"]
    return args


def pick(*, client: str | None, print_only: bool) -> int:
    state_dir = paths.state_dir()
    own = os.environ.get("TMUX", "").split(",", 1)[0] or None
    entries = items(state_dir, own)
    if print_only:
        if not entries:
            print("no sessions")
        width = max((len(item.label) for item in entries), default=0)
        for item in entries:
            goes = item.why if item.pane else f"({item.why})"
            print(f"{item.key or ' '}  {item.label:<{width}}  → {goes}")
        return 0
    socket = own or _server_of(client)
    if socket is None:
        raise LookoutError(
            "lookout pick shows a tmux menu: run it inside tmux",
            hint="or bind it to a key: lookout tmux-setup --apply (prefix A)",
        )
    target = ["-c", client] if client else []
    if not entries:
        tmux.run(socket, "display-message", *target, "lookout: no sessions")
        return 0
    title = "#[align=centre] lookout "
    argv = ["tmux", "-S", socket, "display-menu", *target, "-T", title, *menu_args(entries)]
    # The menu stays until the user chooses: no time limit here.
    done = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise LookoutError(
            f"tmux display-menu failed: {done.stderr.strip() or f'exit {done.returncode}'}",
            hint="`tmux list-clients` shows the clients a menu can go to (--client)",
        )
    return 0


def _server_of(client: str | None) -> str | None:
    """Outside tmux, with --client: the recorded server that client is attached to."""
    if client is None:
        return None
    state_dir = paths.state_dir()
    for s in load_sessions(state_dir):
        snapshot = store.read_session(state_dir, s["session_id"])
        if snapshot is None or not places.where(snapshot).get("tmux_socket"):
            continue
        socket, why = places.tmux_socket(snapshot)  # the checked path, never the recorded one
        if why is not None:
            continue
        try:
            if any(c.name == client for c in tmux.clients(socket)):
                return socket
        except (tmux.ServerGone, LookoutError):
            continue
    return None
