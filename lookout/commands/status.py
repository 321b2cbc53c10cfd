"""`lookout status`: every session, the ones that need you first, as a table, one line, JSON, or a
table refreshed in place. Reads the snapshots the hooks wrote, after reconciling what claims your
attention with what the client left behind (lookout.reconcile; it writes through the store)."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from lookout import paths
from lookout.commands import view
from lookout.errors import LookoutError


def status(*, fmt: str, show_all: bool, interval: float, stale_after_s: int) -> int:
    """fmt: "table", "json", "line" or "watch"."""
    state_dir = paths.state_dir()
    if fmt == "watch":
        return _watch(state_dir, show_all, interval, stale_after_s)
    now = int(time.time() * 1000)
    shown = _shown(state_dir, now, show_all, stale_after_s)
    # Hooks keep recording with a broken config but send nothing: say so where people look.
    config_error = notifications_off()
    if fmt == "json":
        from lookout import jump

        jump.tmux_json(shown, state_dir)  # where each one is now, so other tools can jump too
        body = {"sessions": [view.public(s) for s in shown], "config_error": config_error}
        print(json.dumps(body, indent=2))
        return 0
    if fmt == "line":
        print(view.line(shown) + (" · config error" if config_error else ""))
        return 0
    print(view.table(shown, now, colour(), width()))
    hint = ack_hint(shown)
    if hint:
        print(_dim(hint))
    if config_error:
        print(f"warning: notifications are off: {config_error}", file=sys.stderr)
        print("hint: run `lookout check-config`", file=sys.stderr)
    return 0


def _shown(state_dir: str, now: int, show_all: bool, stale_after_s: int) -> list[dict[str, Any]]:
    reconcile_quietly(state_dir)
    sessions = view.load_sessions(state_dir, now, stale_after_s)
    return sessions if show_all else [s for s in sessions if s["status"] != "ended"]


def reconcile_quietly(state_dir: str) -> None:
    """End what was answered though no hook said so. A reader that cannot (a hook holds the lock
    too long, an unreadable file) still shows the snapshots as the hooks left them."""
    from lookout import reconcile

    try:
        reconcile.reconcile(state_dir)
    except (OSError, TimeoutError, LookoutError):
        pass


def ack_hint(sessions: list[dict[str, Any]]) -> str | None:
    """How to clear an attention no signal ended, naming the first such session."""
    waiting = [s for s in sessions if s["status"] == "attention"]
    if not waiting:
        return None
    return f"answered already? `lookout ack {handle(waiting[0], sessions)}` clears it"


def handle(session: dict[str, Any], sessions: list[dict[str, Any]]) -> str:
    """The shortest name `lookout ack` takes for a session: its project, or an id prefix."""
    project = session["project"]
    if project and sum(1 for s in sessions if s["project"] == project) == 1:
        return str(project)
    return str(session["session_id"])[:8]


def notifications_off() -> str | None:
    """The config's first error line when it is broken (hooks record, but send nothing)."""
    from lookout.notify import config

    try:
        config.load()
    except LookoutError as exc:
        return str(exc).splitlines()[0]
    return None


def _watch(state_dir: str, show_all: bool, interval: float, stale_after_s: int) -> int:
    try:
        while True:
            now = int(time.time() * 1000)
            shown = _shown(state_dir, now, show_all, stale_after_s)
            stamp = time.strftime("%H:%M:%S")
            # Home + clear-to-end keeps the screen from flickering on every refresh.
            sys.stdout.write("\033[H\033[J" if sys.stdout.isatty() else "\n")
            sys.stdout.write(f"lookout · {stamp} · Ctrl-C to quit\n\n")
            sys.stdout.write(view.table(shown, now, colour(), width()) + "\n")
            hint = ack_hint(shown)
            if hint:
                sys.stdout.write(_dim(hint) + "\n")
            sys.stdout.flush()
            time.sleep(max(0.1, interval))
    except KeyboardInterrupt:
        return 0


def _dim(text: str) -> str:
    return f"\033[2m{text}\033[0m" if colour() else text


def colour() -> bool:
    return (
        sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    )


def width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 160
