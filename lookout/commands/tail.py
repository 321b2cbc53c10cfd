"""`lookout tail`: the recorded events (or notification deliveries) as readable lines, following
events.jsonl across rotation with -f. Reads only."""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from lookout import paths, store
from lookout.commands import args, view
from lookout.commands.args import UsageError
from lookout.errors import LookoutError
from lookout.sessions import MIN_PREFIX, label, load_sessions, matching, parse_line, resolve


def declare(p: argparse.ArgumentParser) -> None:
    """Print the last events of events.jsonl, oldest first; -f keeps following across rotation."""
    p.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    p.add_argument("-n", "--lines", type=args.count, default=20, metavar="N", help="how many (20)")
    args.json_flag(p, "print the stored JSON lines as they are")
    p.add_argument(
        "session_arg",
        nargs="?",
        metavar="SESSION",
        help="only this session (an id or its start, a project or a title); -n counts its records",
    )
    p.add_argument("--session", metavar="SESSION", help="the same as SESSION")
    p.add_argument("--deliveries", action="store_true", help="show notification deliveries instead")


def run(args: argparse.Namespace) -> int:
    session = args.session_arg if args.session is None else args.session
    if args.session is not None and args.session_arg not in (None, args.session):
        raise UsageError("give the session once: as SESSION or as --session, not both")
    return tail(
        lines=args.lines,
        follow=args.follow,
        as_json=args.json,
        session=session,
        deliveries=args.deliveries,
    )


def tail(*, lines: int, follow: bool, as_json: bool, session: str | None, deliveries: bool) -> int:
    name = store.DELIVERIES if deliveries else store.EVENTS
    state_dir = paths.state_dir()
    if not deliveries:
        from lookout import reconcile

        reconcile.drain_quietly(state_dir)  # a delivery waiting in spool/ is recorded first
    path = os.path.join(state_dir, name)
    keep = _session_filter(state_dir, path, session, follow) if session is not None else None
    width = None if as_json else line_width()
    titles = Titles(state_dir)
    out = sys.stdout.buffer
    for raw, record in _records(path, max(0, lines), follow, keep):
        if as_json:
            out.write(raw + b"\n")  # the stored bytes, not a re-serialization
        else:
            title = titles(record.get("session_id"))
            text = _format_delivery(record) if deliveries else view.format_record(record, title)
            if width is not None and len(text) > width:
                text = text[: width - 1] + "…"  # one line per record, never wrapped
            out.write(text.encode("utf-8", "replace") + b"\n")
        if follow:
            out.flush()
    out.flush()
    return 0


Keep = Callable[[dict[str, Any]], bool]


class Titles:
    """Each session's title (sessions.label) as its snapshot says it: a record carries only the
    project. One snapshot read per session; None for a session without one (pruned), which its
    record's project names."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self.known: dict[str, str | None] = {}

    def __call__(self, session_id: object) -> str | None:
        if not isinstance(session_id, str) or not session_id:
            return None
        if session_id not in self.known:
            snapshot = store.read_session(self.state_dir, session_id)
            self.known[session_id] = label(snapshot) if snapshot else None
        return self.known[session_id]


def _session_filter(state_dir: str, path: str, key: str, follow: bool) -> Keep:
    """Which records SESSION keeps: those of the one session `key` names (sessions.resolve);
    for a session only the log knows (pruned) or, with -f, one not started yet, an id prefix
    (MIN_PREFIX characters at least: a shorter or empty key says so through resolve)."""
    rows = load_sessions(state_dir)
    if matching(rows, key) or len(key) < MIN_PREFIX:
        sid = resolve(rows, key, "lookout tail")["session_id"]
        return lambda r: r.get("session_id") == sid
    if not _known(path, key):
        if not follow:
            raise LookoutError(
                f"no session {key!r} is recorded",
                hint="give the start of a session id (the ID column of `lookout status --all`),"
                " a project or a title",
            )
        print(f"note: no session {key!r} yet; waiting for one", file=sys.stderr, flush=True)
    return lambda r: str(r.get("session_id", "")).startswith(key)


def line_width() -> int | None:
    """The terminal's width ($COLUMNS first), or None when the output is not a terminal."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if not sys.stdout.isatty():
        return None
    try:
        return os.get_terminal_size().columns
    except OSError:
        return None


def _known(path: str, prefix: str) -> bool:
    """A line of the log has a session id starting with `prefix` (its snapshot was pruned)."""
    marker = b'"session_id":"' + prefix.encode("utf-8", "replace")
    try:
        with open(path, "rb") as fh:
            return any(marker in raw for raw in fh)
    except FileNotFoundError:
        return False


def _format_delivery(r: dict[str, Any]) -> str:
    ts = str(r.get("ts", ""))[11:19]
    parts = [ts, str(r.get("session_id", ""))[:8], str(r.get("kind", "")), "→"]
    parts += [str(r.get("channel", "")), str(r.get("result", ""))]
    if r.get("detail"):
        parts.append(f"({r['detail']})")
    return view.visible(" ".join(parts))


def _records(
    path: str, last: int, follow: bool, keep: Keep | None = None
) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """The last `last` whole records that `keep` keeps (with their stored bytes), then (with
    follow) every new one it keeps, across rotation (store.Tail; events.jsonl's follower has
    what waits in spool/ recorded): the filter comes before the count."""
    drain = None
    if os.path.basename(path) == store.EVENTS:
        from lookout import reconcile

        drain = functools.partial(reconcile.drain_quietly, os.path.dirname(path))
    tail = store.Tail(path, drain=drain)
    tail.to_end()
    yield from _last_records(tail, last, keep)
    while follow:
        lines = tail.poll()
        if lines is None:
            print(
                f"note: {os.path.basename(path)} was truncated or rotated past its kept files:"
                " lines were missed",
                file=sys.stderr,
                flush=True,
            )
        for raw in lines or ():
            record = parse_line(raw)
            if record is not None and (keep is None or keep(record)):
                yield raw, record
        if not lines:
            time.sleep(0.25)


def _last_records(
    tail: store.Tail, count: int, keep: Keep | None
) -> list[tuple[bytes, dict[str, Any]]]:
    """The last `count` complete records `keep` keeps, read back from the mark in the live file
    (events.jsonl can be large, and one session's records may be far apart)."""
    found: list[tuple[bytes, dict[str, Any]]] = []
    if count == 0:
        return found
    for raw in tail.before(older=False):
        record = parse_line(raw)
        if record is not None and (keep is None or keep(record)):
            found.append((raw, record))
            if len(found) == count:
                break
    return found[::-1]
