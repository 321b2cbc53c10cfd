"""`lookout status --fleet`: every host's sessions from the broker, with a HOST column, attention
first; the sessions of a host that is not online are shown as unknown, never as their last
status. Reads the bus only; never writes."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

from lookout import words
from lookout.commands import args, view
from lookout.commands.view import Filter, colour, width
from lookout.errors import LookoutError

_UNKNOWN = "\033[35m"


def declare(p: argparse.ArgumentParser) -> None:
    """Manage what the MQTT broker in [fleet] holds for the fleet."""
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    forget = actions.add_parser(
        "forget",
        help="clear a retired host's retained topics, Home Assistant's included",
        description="Clear every retained topic of HOST on the broker (online, summary,"
        " sessions, Home Assistant discovery), so no viewer shows it any more. Needs a broker"
        " user that may write that host's topics (docs/fleet.md: the broker ACL).",
    )
    forget.add_argument("host", metavar="HOST", help="the host name, as `status --fleet` shows it")
    forget.add_argument(
        "--force", action="store_true", help="even while it says it is online (`bridge --once`)"
    )
    args.dry_run(forget, "list the topics, clear nothing")


def run(args: argparse.Namespace) -> int:
    return forget(args.host, force=args.force, dry_run=args.dry_run)


def fleet_status(fmt: str, pick: Filter, stale_after_s: int, *, quiet: bool = False) -> int:
    """fmt: "table", "json", "line" or "watch". With `pick.attention`, as for this host: only the
    sessions that need you, exit 0 if there is one and 1 if none. Otherwise what the broker's
    ACL denies this viewer is an error (exit 1): the list may then be incomplete."""
    import lookout.config.fleet
    from lookout.fleet import mqtt, watch

    cfg = lookout.config.fleet.load()
    mqtt.require()
    if fmt == "watch":
        return _watch(cfg, pick, stale_after_s)
    fleet = watch.gather(cfg)
    snap = _picked(fleet.snapshot(True, stale_after_s), pick)
    # A session found waiting is found, whatever else was denied; none found is 1 either way.
    rc = (0 if snap["sessions"] else 1) if pick.attention else (1 if fleet.problems else 0)
    if quiet:
        return rc
    if fmt == "json":
        print(json.dumps(watch.public(snap), indent=2))
    elif fmt == "line":
        print(line(snap))
    else:
        print(table(snap, words.now_ms(), colour(), width()))
    for error, hint in fleet.problems:
        print(f"error: {view.visible(error)}", file=sys.stderr)
        print(f"hint: {view.visible(hint)}", file=sys.stderr)
    return rc


def _picked(snap: dict[str, Any], pick: Filter) -> dict[str, Any]:
    """The sessions `pick` shows; the hosts' counts stay those of what is shown."""
    sessions = [s for s in snap["sessions"] if pick.keeps(s)]
    hosts = [
        {
            **h,
            "sessions": sum(1 for s in sessions if s["host"] == h["host"]),
            "attention": sum(
                1 for s in sessions if s["host"] == h["host"] and s["status"] == "attention"
            ),
        }
        for h in snap["hosts"]
    ]
    # What the limits dropped stays with the snapshot (N6): a filter never hides a flood.
    return {**snap, "hosts": hosts, "sessions": sessions}


def _watch(cfg: Any, pick: Filter, stale_after_s: int) -> int:
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
            snap = _picked(fleet.snapshot(True, stale_after_s), pick)
            n = len(snap["hosts"])
            sys.stdout.write(
                f"lookout fleet · {n} host{'' if n == 1 else 's'} · {stamp} · Ctrl-C to quit\n"
            )
            for error, _hint in fleet.problems:
                sys.stdout.write(f"error: {view.visible(error)}\n")
            sys.stdout.write("\n")
            sys.stdout.write(table(snap, words.now_ms(), colour(), width()) + "\n")
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
    online = [h["host"] for h in snap["hosts"] if h["online"] is True]
    if not sessions:
        text = "no sessions" if snap["hosts"] else "no hosts on the bus yet (is a bridge running?)"
        if online:  # the bridges are there: say so, a bare "no sessions" reads as a broken fleet
            text += f"; {_hosts_online(online)}"
    else:
        text = _rows(sessions, now_ms, colour, width)
        shown = {s["host"] for s in sessions}
        quiet = [name for name in online if name not in shown]
        if quiet:
            text += f"\n\nalso online, no sessions shown: {', '.join(quiet)}"
    down = [h for h in snap["hosts"] if h["online"] is not True]
    if down:
        names = ", ".join(
            f"{h['host']} ({'offline' if h['online'] is False else 'no online status'})"
            for h in down
        )
        text += f"\n\nnot online: {names}; their sessions are shown as unknown"
    skewed = [h for h in snap["hosts"] if h.get("clock_skew_s")]
    if skewed:
        clocks = ", ".join(f"{h['host']} {skew(h['clock_skew_s'])}" for h in skewed)
        text += f"\n\nclock skew: {clocks} (against this host's clock); their ages are corrected"
    if snap.get("dropped"):
        from lookout.fleet import limits

        lines = limits.describe(snap["dropped"])
        text += "\n\nnote: over the fleet limits, not shown:\n  " + "\n  ".join(lines)
    return text


def _rows(sessions: list[dict[str, Any]], now_ms: int, colour: bool, width: int) -> str:
    """view.table's lines with a HOST column in front."""
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
    return "\n".join(out)


def _hosts_online(names: list[str]) -> str:
    n = len(names)
    return f"{n} host{'' if n == 1 else 's'} online: {', '.join(names)}"


def skew(seconds: int) -> str:
    """`+10m`, `-9h00m`: to the nearest minute beyond one (the measure is good to a second or
    two, so 599 s reads as the 10 minutes it is)."""
    sign = "+" if seconds > 0 else "-"
    n = abs(seconds)
    if n < 60:
        return f"{sign}{n}s"
    minutes = (n + 30) // 60
    return f"{sign}{minutes}m" if minutes < 60 else f"{sign}{minutes // 60}h{minutes % 60:02d}m"


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


def forget(host: str, *, force: bool, dry_run: bool) -> int:
    """`lookout fleet forget HOST`: clear a retired host's retained topics."""
    from lookout.config import fleet as config
    from lookout.fleet import forget as fleet_forget
    from lookout.fleet import mqtt

    cfg = config.load()
    mqtt.require()
    cleared = fleet_forget.forget(cfg, host, force=force, dry_run=dry_run)
    ha = [t for t in cleared if not t.startswith(cfg.topic_prefix + "/")]
    where = f"{cfg.topic_prefix}/{host}/..." + (
        f" and {len(ha)} Home Assistant discovery config{'' if len(ha) == 1 else 's'}" if ha else ""
    )
    n = len(cleared)
    if dry_run:
        for topic in cleared:
            print(f"would clear {view.visible(topic)}")
        print(f"would forget host {host}: {n} retained topic{'' if n == 1 else 's'} ({where})")
        return 0
    print(
        f"forgot host {host}: cleared {n} retained topic{'' if n == 1 else 's'} on {cfg.url}"
        f" ({where})"
    )
    return 0
