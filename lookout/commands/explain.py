"""`lookout explain [SESSION]`: for a session's last notifications, what was sent where, and why
not: events.jsonl says which event raised which kind, deliveries.jsonl what each channel did with
it (sent, failed, or a rule's `skipped` with its reason), joined on the event's ts. Reads only."""

from __future__ import annotations

import argparse
import json
import os
from datetime import datetime
from typing import Any

from lookout import paths, store, words
from lookout.commands import args, view
from lookout.errors import LookoutError
from lookout.sessions import Row, label, load_sessions, parse_line, resolve

DELIVERIES = "deliveries.jsonl"
ROTATED = store.DEFAULT_KEEP  # events.jsonl.1..7; deliveries.jsonl rotates the same way


def declare(p: argparse.ArgumentParser) -> None:
    """For a session's last notifications (a permission, a finished turn...): which channels got
    them, which failed, and which rule withheld one and why (quiet hours, min_duration_s,
    cooldown_s, ...). SESSION is an id or its start (lookout status shows it), a project or a
    title; without it, the latest session of the current directory, else the latest."""
    args.session(p)
    p.add_argument(
        "-n", "--last", type=args.count, default=5, metavar="N", help="how many notifications (5)"
    )
    args.json_flag(p)


def run(args: argparse.Namespace) -> int:
    return explain(session=args.session, last=args.last, as_json=args.json)


def pick_session(state_dir: str, key: str | None) -> Row:
    """The session `key` names (sessions.resolve), or else the latest one of the current
    directory, or else the latest one."""
    sessions = load_sessions(state_dir, words.now_ms())
    if key is not None:
        return resolve(sessions, key, "lookout explain")
    found = sorted(sessions, key=lambda s: -s["updated_ms"])
    if not found:
        raise LookoutError("no session is recorded yet", hint="lookout doctor checks the hooks")
    here = os.getcwd()
    mine = [
        s for s in found if (cwd := s["cwd"]) and (here + "/").startswith(cwd.rstrip("/") + "/")
    ]
    return (mine or found)[0]


def _lines(state_dir: str, name: str, marker: bytes) -> list[dict[str, Any]]:
    """Every record of one log (rotated files first) whose line holds `marker`."""
    out: list[dict[str, Any]] = []
    base = os.path.join(state_dir, name)
    for path in [f"{base}.{n}" for n in range(ROTATED, 0, -1)] + [base]:
        try:
            with open(path, "rb") as fh:
                for raw in fh:
                    if marker in raw:  # the writer's compact JSON: skip other sessions unparsed
                        record = parse_line(raw.rstrip(b"\n"))
                        if record is not None:
                            out.append(record)
        except FileNotFoundError:
            continue
    return out


def notifications(state_dir: str, session_id: str, last: int) -> list[dict[str, Any]]:
    """The session's last `last` notification kinds raised, each with its delivery lines."""
    marker = b'"session_id":' + json.dumps(session_id).encode()
    raised = (
        [
            (r, kind)
            for r in _lines(state_dir, store.EVENTS, marker)
            if r.get("session_id") == session_id
            for kind in (r.get("notify") or [])
        ][-last:]
        if last > 0
        else []
    )
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for d in _lines(state_dir, DELIVERIES, marker):
        if d.get("session_id") == session_id and d.get("event_ts"):
            results.setdefault((str(d["event_ts"]), str(d.get("kind"))), []).append(d)
    return [
        {
            "ts": r.get("ts"),
            "event": r.get("event"),
            "kind": kind,
            "summary": r.get("summary") or "",
            "duration_ms": r.get("duration_ms") if kind == "done" else None,
            "deliveries": [
                {k: d.get(k) for k in ("channel", "result", "detail", "rule", "reason")}
                for d in results.get((str(r.get("ts")), kind), [])
            ],
        }
        for r, kind in raised
    ]


def steered(state_dir: str, session_id: str, last: int) -> list[dict[str, Any]]:
    """The session's last `last` steering actions (say, interrupt, start: Steered records)."""
    marker = b'"session_id":' + json.dumps(session_id).encode()
    found = [
        {
            "ts": r.get("ts"),
            "source": r.get("source"),
            "summary": r.get("summary") or "",
            **{k: v for k, v in (r.get("steer") or {}).items() if k != "target"},
        }
        for r in _lines(state_dir, store.EVENTS, marker)
        if r.get("session_id") == session_id and r.get("event") == "Steered"
    ]
    return found[-last:] if last > 0 else []


def _why_nothing(kind: str, cwd: str | None) -> str:
    """No delivery line for a kind: what the current config says about it."""
    from lookout.config import check, files

    try:
        cfg = files.load(cwd)
    except check.ConfigError as exc:
        return f"the config is invalid, so nothing is sent: {exc.errors[0]}"
    if not any(kind in rule["when"] for rule in cfg["rules"]):
        return f"no rule sends {kind}"
    return (
        "no delivery line names this event (an older lookout recorded it, or the sender did not"
        " run: lookout doctor)"
    )


def _printable(text: str) -> str:
    # Summaries are payload text: never let a control character reach the terminal raw.
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)


def _clock(ts: object) -> str:
    try:
        moment = datetime.fromisoformat(str(ts).replace("Z", "+00:00"))
    except ValueError:
        return "??:??:??"
    return moment.astimezone().strftime("%H:%M:%S")


def explain(*, session: str | None, last: int, as_json: bool) -> int:
    state_dir = paths.state_dir()
    chosen = pick_session(state_dir, session)
    sid = chosen["session_id"]
    items = notifications(state_dir, sid, last)
    for item in items:
        if not item["deliveries"]:
            item["note"] = _why_nothing(item["kind"], chosen.get("cwd"))
    steering = steered(state_dir, sid, last)
    if as_json:
        print(
            json.dumps({"session_id": sid, "notifications": items, "steered": steering}, indent=2)
        )
        return 0
    where = paths.tilde(chosen["cwd"]) if chosen["cwd"] else "?"
    who = _printable(f"{label(chosen)} {chosen.get('short_id') or sid[:8]} ({where})")
    if not items:
        print(f"{who}: no notification raised yet")
        _show_steered(steering)
        return 0
    plural = "s" if len(items) != 1 else ""
    print(f"{who}: the last {len(items)} notification{plural}, oldest first")
    width = max([len(str(d["channel"])) for i in items for d in i["deliveries"]] + [7])
    for item in items:
        head = f"{_clock(item['ts'])}  {item['kind']}"
        if item["duration_ms"] is not None:
            head += f" (turn {view.age(int(item['duration_ms']))})"
        if item["summary"]:
            head += f"  {_printable(item['summary'])[:60]}"
        print(head)
        for d in item["deliveries"]:
            detail = _printable(str(d["detail"] or ""))
            print(f"          {d['channel']!s:<{width}}  {d['result']:<7}  {detail}".rstrip())
        if not item["deliveries"]:
            print(f"          {item['note']}")
    _show_steered(steering)
    return 0


def _show_steered(steering: list[dict[str, Any]]) -> None:
    """Who steered the session (lookout say, interrupt, start) and what came of it."""
    if not steering:
        return
    print(f"steered ({len(steering)}), oldest first:")
    for s in steering:
        print(f"{_clock(s['ts'])}  {_printable(str(s['summary']))[:100]}  (from {s['source']})")
