"""`lookout tail`: the recorded events (or notification deliveries) as readable lines, following
events.jsonl across rotation with -f. Reads only."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from typing import Any

from lookout import paths, store
from lookout.commands import view
from lookout.errors import LookoutError
from lookout.sessions import parse_line


def tail(*, lines: int, follow: bool, as_json: bool, session: str | None, deliveries: bool) -> int:
    name = store.DELIVERIES if deliveries else store.EVENTS
    state_dir = paths.state_dir()
    path = os.path.join(state_dir, name)
    if session and not _known(state_dir, path, session):
        if not follow:
            raise LookoutError(
                f"no session {session!r} is recorded",
                hint="lookout status --all lists the sessions (the ID column)",
            )
        print(f"note: no session {session!r} yet; waiting for one", file=sys.stderr, flush=True)
    width = None if as_json else line_width()
    out = sys.stdout.buffer
    for raw, record in _records(path, max(0, lines), follow):
        if session and not str(record.get("session_id", "")).startswith(session):
            continue
        if as_json:
            out.write(raw + b"\n")  # the stored bytes, not a re-serialization
        else:
            text = _format_delivery(record) if deliveries else view.format_record(record)
            if width is not None and len(text) > width:
                text = text[: width - 1] + "…"  # one line per record, never wrapped
            out.write(text.encode("utf-8", "replace") + b"\n")
        if follow:
            out.flush()
    out.flush()
    return 0


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


def _known(state_dir: str, path: str, prefix: str) -> bool:
    """A recorded session (snapshot or a line of the log) has an id starting with `prefix`."""
    try:
        names = os.listdir(os.path.join(state_dir, store.SESSIONS))
    except FileNotFoundError:
        names = []
    if any(name.startswith(prefix) for name in names):  # ids are stored as their own file names
        return True
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


def _records(path: str, last: int, follow: bool) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """The last `last` whole records (with their stored bytes), then (with follow) every new
    one, across rotation."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - reopened across rotation below
    except FileNotFoundError:
        if not follow:
            return
        f = None
    if f is not None:
        for raw in _last_lines(f, last):
            record = parse_line(raw)
            if record is not None:
                yield raw, record
    if not follow:
        if f is not None:
            f.close()
        return
    partial = b""
    while True:
        if f is None:
            try:
                f = open(path, "rb")  # noqa: SIM115
            except FileNotFoundError:
                time.sleep(0.25)
                continue
        chunk = f.read()
        if chunk:
            partial += chunk
            *complete, partial = partial.split(b"\n")
            for raw in complete:
                record = parse_line(raw)
                if record is not None:
                    yield raw, record
            continue
        if _rotated(f, path):
            f.close()  # the old file was drained above; follow the new one
            f = None
            partial = b""
            continue
        time.sleep(0.25)


def _rotated(f: Any, path: str) -> bool:
    try:
        return os.stat(path).st_ino != os.fstat(f.fileno()).st_ino
    except FileNotFoundError:
        return True


def _last_lines(f: Any, count: int) -> list[bytes]:
    """The last `count` complete lines, read from the end (events.jsonl can be large)."""
    f.seek(0, os.SEEK_END)
    end = f.tell()
    if count == 0:
        return []
    block = 64 * 1024
    data = b""
    pos = end
    while pos > 0 and data.count(b"\n") <= count:
        step = min(block, pos)
        pos -= step
        f.seek(pos)
        data = f.read(step) + data
    f.seek(end)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        lines.pop()  # a torn last line: a writer died mid-append, skip it
    if pos > 0 and lines:
        lines = lines[1:]  # the first one may be cut by the block boundary
    return lines[-count:]
