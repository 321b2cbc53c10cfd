"""`lookout report`: how long sessions waited on the user (the waiting ledger), in total and by
project, reason, tool and agent, and how long they sat idle after finishing. A session is named by
its title, as `lookout status` names it. Reads only."""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import time
from collections.abc import Iterable
from typing import Any

from lookout import ledger, paths, sessions, store, words
from lookout.boundary import visible
from lookout.commands import args
from lookout.ledger import DIMENSIONS, summarize


def declare(p: argparse.ArgumentParser) -> None:
    """The waiting ledger: every dialog that waited on you (permission, question, plan, error...)
    and how long until it was answered, by project, reason, tool and agent; and how long sessions
    sat idle after finishing. Reads the rotated history too."""
    p.add_argument(
        "--since", type=args.duration, default=7 * 86400, metavar="AGE", help="how far back (7d)"
    )
    p.add_argument("--project", metavar="GLOB", help="only projects matching GLOB")
    args.json_flag(p)


def run(args: argparse.Namespace) -> int:
    return report(since_s=args.since, project=args.project, as_json=args.json)


def collect(
    state_dir: str, since_ms: int, until_ms: int, project: str | None = None
) -> dict[str, Any]:
    history = ledger.read(state_dir, since_ms, until_ms)
    if project is not None:
        history = ledger.History(
            [w for w in history.waits if fnmatch.fnmatchcase(w.project, project)],
            [i for i in history.idles if fnmatch.fnmatchcase(i.project, project)],
        )
    data = summarize(history, since_ms, until_ms)
    longest = data["longest"]
    if longest is not None:
        # Its title as `lookout status` shows it (the client's name for it), while its snapshot
        # is kept; else its project.
        snapshot = store.read_session(state_dir, longest["session_id"])
        title = sessions.title_of(snapshot) if snapshot is not None else ""
        longest["title"] = title or longest["project"]
    return data


def duration(seconds: float) -> str:
    """1h 02m, 4m 10s, 31s, 0.4s: what a person reads at a glance."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h {m:02d}m"
    return f"{m}m {s:02d}s" if m else f"{s}s"


def render(data: dict[str, Any]) -> list[str]:

    def day(ms: int) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))

    lines = [f"waiting on you, {day(data['since'])} .. {day(data['until'])}"]
    if not data["episodes"]:
        lines.append("no dialog waited on you in this period")
    else:
        lines.append(
            f"{data['episodes']} episodes, {duration(data['wait_s'])} in all;"
            f" time to unblock: median {duration(data['p50_s'])}, p95 {duration(data['p95_s'])}"
        )
        lg = data["longest"]
        what = " ".join(x for x in (lg["reason"], lg["tool"] or "", lg["summary"]) if x)
        title = lg.get("title") or lg["project"] or "-"
        lines.append(
            visible(f"longest: {duration(lg['wait_s'])} {title} ({what}) at {day(lg['since'])}")
        )
    idle = data["idle"]
    if idle["gaps"]:
        lines.append(
            f"idle after finishing: {idle['gaps']} times, {duration(idle['idle_s'])} in all,"
            f" median {duration(idle['p50_s'])}"
        )
    for field, name in DIMENSIONS:
        rows = data[field]
        if not rows:
            continue
        lines.append("")
        lines.append(
            f"{('by ' + name).upper():<24} {'EPISODES':>8} {'WAIT':>8} {'MEDIAN':>8} {'P95':>8}"
        )
        for row in rows:
            label = visible(row[name] if row[name] is not None else "-")[:24]
            lines.append(
                f"{label:<24} {row['episodes']:>8} {duration(row['wait_s']):>8}"
                f" {duration(row['p50_s']):>8} {duration(row['p95_s']):>8}"
            )
    return lines


def report(*, since_s: int, project: str | None, as_json: bool, now_ms: int | None = None) -> int:
    until_ms = words.now_ms() if now_ms is None else now_ms
    from lookout import reconcile

    reconcile.drain_quietly(paths.state_dir())  # a delivery waiting in spool/ is recorded first
    data = collect(paths.state_dir(), until_ms - since_s * 1000, until_ms, project)
    if as_json:
        print(json.dumps(data))
    else:
        _print(render(data))
    return 0


def _print(lines: Iterable[str]) -> None:
    sys.stdout.write("".join(line + "\n" for line in lines))
