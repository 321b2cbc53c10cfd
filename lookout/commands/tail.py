"""`lookout tail`: the recorded events (or notification deliveries) as readable lines, following
events.jsonl across rotation with -f. Reads only."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

from lookout import paths, store
from lookout.commands import view


def tail(*, lines: int, follow: bool, as_json: bool, session: str | None, deliveries: bool) -> int:
    name = store.DELIVERIES if deliveries else store.EVENTS
    path = os.path.join(paths.state_dir(), name)
    for record in _records(path, max(0, lines), follow):
        if session and not str(record.get("session_id", "")).startswith(session):
            continue
        if as_json:
            print(json.dumps(record, ensure_ascii=False), flush=follow)
        elif deliveries:
            print(_format_delivery(record), flush=follow)
        else:
            print(view.format_record(record), flush=follow)
    return 0


def _format_delivery(r: dict[str, Any]) -> str:
    ts = str(r.get("ts", ""))[11:19]
    parts = [ts, str(r.get("session_id", ""))[:8], str(r.get("kind", "")), "→"]
    parts += [str(r.get("channel", "")), str(r.get("result", ""))]
    if r.get("detail"):
        parts.append(f"({r['detail']})")
    return view.visible(" ".join(parts))


def _records(path: str, last: int, follow: bool) -> Iterator[dict[str, Any]]:
    """The last `last` whole records, then (with follow) every new one, across rotation."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - reopened across rotation below
    except FileNotFoundError:
        if not follow:
            return
        f = None
    if f is not None:
        for raw in _last_lines(f, last):
            record = view.parse_line(raw)
            if record is not None:
                yield record
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
                record = view.parse_line(raw)
                if record is not None:
                    yield record
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
