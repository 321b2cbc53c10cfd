"""`lookout status --fleet`: every host's sessions from the broker, with a HOST column, attention
first; the sessions of a host that is not online are shown as unknown, never as their last
status. Reads the bus only; never writes."""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from lookout.commands import view
from lookout.commands.status import colour, width
from lookout.errors import LookoutError

_UNKNOWN = "\033[35m"


def fleet_status(*, fmt: str, show_all: bool, stale_after_s: int) -> int:
    """fmt: "table", "json", "line" or "watch"."""
    from lookout.fleet import config, mqtt, watch

    cfg = config.load()
    mqtt.require()
    if fmt == "watch":
        return _watch(cfg, show_all, stale_after_s)
    fleet = watch.gather(cfg)
    snap = fleet.snapshot(show_all, stale_after_s)
    if fmt == "json":
        print(json.dumps(watch.public(snap), indent=2))
    elif fmt == "line":
        print(line(snap))
    else:
        print(table(snap, int(time.time() * 1000), colour(), width()))
    return 0


def _watch(cfg: Any, show_all: bool, stale_after_s: int) -> int:
    from lookout.fleet import watch

    changed = threading.Event()
    fleet = watch.Fleet(cfg, on_change=changed.set)
    fleet.start()
    problem = ""
    try:
        while True:
            if problem or fleet.lost.is_set():
                # Without the broker nothing here is current: say so instead of a stale table.
                fleet.stop()
                try:
                    fleet.start()
                    problem = ""
                except LookoutError as exc:
                    problem = str(exc)
            stamp = time.strftime("%H:%M:%S")
            # Home + clear-to-end keeps the screen from flickering on every refresh.
            sys.stdout.write("\033[H\033[J" if sys.stdout.isatty() else "\n")
            if problem:
                sys.stdout.write(
                    f"lookout fleet · {stamp} · {problem}; retrying · Ctrl-C to quit\n"
                )
                sys.stdout.flush()
                time.sleep(2.0)
                continue
            snap = fleet.snapshot(show_all, stale_after_s)
            n = len(snap["hosts"])
            sys.stdout.write(
                f"lookout fleet · {n} host{'' if n == 1 else 's'} · {stamp} · Ctrl-C to quit\n\n"
            )
            sys.stdout.write(table(snap, int(time.time() * 1000), colour(), width()) + "\n")
            sys.stdout.flush()
            # A change redraws at once (a burst becomes one redraw); ages tick every second.
            changed.wait(1.0)
            time.sleep(0.02)
            changed.clear()
    except KeyboardInterrupt:
        return 0
    finally:
        fleet.stop()


def table(snap: dict[str, Any], now_ms: int, colour: bool, width: int = 120) -> str:
    sessions = snap["sessions"]
    if not sessions:
        text = "no sessions" if snap["hosts"] else "no hosts on the bus yet (is a bridge running?)"
    else:
        hw = max(4, *(len(s["host"]) for s in sessions))
        rows = view.table(sessions, now_ms, colour, max(40, width - hw - 2)).split("\n")
        out = [f"{'HOST'.ljust(hw)}  {rows[0]}"]
        rest = iter(rows[1:])
        for s in sessions:
            row = next(rest, "")
            if colour and s["status"] == "unknown":
                row = f"{_UNKNOWN}{row}\033[0m"
            out.append(f"{s['host'].ljust(hw)}  {row}")
            # view.table's subagent lines follow their session's line (finished ones it leaves out).
            for child in s["agents"]:
                if child["status"] == "done":
                    continue
                out.append(f"{''.ljust(hw)}  {next(rest, '')}")
        text = "\n".join(out)
    down = [h for h in snap["hosts"] if h["online"] is not True]
    if down:
        names = ", ".join(
            f"{h['host']} ({'offline' if h['online'] is False else 'no online status'})"
            for h in down
        )
        text += f"\n\nnot online: {names}; their sessions are shown as unknown"
    if snap.get("dropped"):
        from lookout.fleet import limits

        lines = limits.describe(snap["dropped"])
        text += "\n\nnote: over the fleet limits, not shown:\n  " + "\n  ".join(lines)
    return text


def line(snap: dict[str, Any]) -> str:
    """One line for a status bar: `! alpha/api:permission · 2 working · 1 idle · 1 host offline`."""
    counts = {"working": 0, "idle": 0, "unknown": 0}
    waiting = []
    for s in snap["sessions"]:
        if s["status"] in counts:
            counts[s["status"]] += 1
        if s["status"] == "attention":
            waiting.append(f"{s['host']}/{s['project'] or '?'}:{s['reason'] or '?'}")
    parts = ["! " + " ".join(waiting)] if waiting else []
    parts += [f"{n} {k}" for k, n in counts.items() if n]
    down = sum(1 for h in snap["hosts"] if h["online"] is not True)
    if down:
        parts.append(f"{down} host{'' if down == 1 else 's'} offline")
    # `#` doubled: tmux expands formats and styles in #() output (N9); a host's names must not.
    return " · ".join(parts).replace("#", "##") if parts else "no sessions"
