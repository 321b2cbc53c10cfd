"""`lookout tail`: the recorded events (or notification deliveries) as readable lines, following
events.jsonl across rotation with -f. Reads only."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from lookout import paths, store
from lookout.commands import view
from lookout.errors import LookoutError
from lookout.sessions import MIN_PREFIX, label, load_sessions, matching, parse_line, resolve


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
    """Which records --session keeps: those of the one session `key` names (sessions.resolve);
    for a session only the log knows (pruned) or, with -f, one not started yet, an id prefix
    (MIN_PREFIX characters at least: a shorter or empty key says so through resolve)."""
    rows = load_sessions(state_dir)
    if matching(rows, key) or len(key) < MIN_PREFIX:
        sid = resolve(rows, key, "lookout tail --session")["session_id"]
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
    follow) every new one it keeps, across rotation: the filter comes before the count."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - reopened across rotation below
    except FileNotFoundError:
        if not follow:
            return
        f = None
    if f is not None:
        yield from _last_records(f, last, keep)
    if not follow:
        if f is not None:
            f.close()
        return
    partial: list[bytes] = []  # the pieces of a line not yet complete, joined once it is
    while True:
        if f is None:
            try:
                f = open(path, "rb")  # noqa: SIM115
            except FileNotFoundError:
                time.sleep(0.25)
                continue
        chunk = f.read()
        if chunk:
            *complete, rest = chunk.split(b"\n")
            if complete:
                complete[0] = b"".join([*partial, complete[0]])
                partial = []
            partial.append(rest)
            for raw in complete:
                record = parse_line(raw)
                if record is not None and (keep is None or keep(record)):
                    yield raw, record
            continue
        if _rotated(f, path):
            f.close()  # the old file was drained above; follow the new one
            f = None
            partial = []
            continue
        time.sleep(0.25)


def _rotated(f: Any, path: str) -> bool:
    try:
        return os.stat(path).st_ino != os.fstat(f.fileno()).st_ino
    except FileNotFoundError:
        return True


def _last_records(f: Any, count: int, keep: Keep | None) -> list[tuple[bytes, dict[str, Any]]]:
    """The last `count` complete records `keep` keeps, read from the end block by block
    (events.jsonl can be large, and one session's records may be far apart)."""
    end = f.seek(0, os.SEEK_END)
    if count == 0:
        return []
    block = 64 * 1024
    found: list[tuple[bytes, dict[str, Any]]] = []
    pos = end
    # The end of a line whose start is in an earlier block, newest block first: kept as pieces
    # and joined once its start is found, so one huge line costs linear time (S8: it was
    # re-joined and re-split on every block, over 60 s for a 50 MB line).
    pieces: list[bytes] = []
    torn = True  # the last line, unless it ends in a newline: a writer died mid-append
    while pos > 0 and len(found) < count:
        step = min(block, pos)
        pos -= step
        f.seek(pos)
        lines = f.read(step).split(b"\n")
        if len(lines) == 1 and pos > 0:
            pieces.append(lines[0])
            continue
        lines[-1] += b"".join(reversed(pieces))
        pieces = [lines.pop(0)] if pos > 0 else []
        for raw in reversed(lines):
            if torn:
                torn = False
                continue  # b"" after the final newline, or the torn last line
            record = parse_line(raw) if raw else None
            if record is not None and (keep is None or keep(record)):
                found.append((raw, record))
                if len(found) == count:
                    break
    f.seek(end)
    return found[::-1]
