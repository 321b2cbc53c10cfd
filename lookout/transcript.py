"""Reading the transcript a client writes (`transcript_path`, JSON lines) from its end: whole
lines, newest first, bounded, never blocking on a FIFO someone put there. What the lines prove is
reconcile's and silence's to judge (docs/signals.md). Never imported by a hook."""

from __future__ import annotations

import os
import stat
import time

from lookout import _jsonfast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

CHUNK = 64 * 1024
# Past this many bytes from the end nothing is read: the proof of an answer is always near the
# end while the status still claims a dialog (every later step would have fired hooks).
TAIL_MAX_BYTES = 1024 * 1024
CONVERSATION = (b'"type":"user"', b'"type":"assistant"')


def path_of(session: Mapping[str, Any], agent_id: str | None) -> str | None:
    """The transcript an actor writes: the session's (`transcript_path`, as its hooks said),
    or its subagent's own file beside it."""
    path = session.get("transcript")
    if not isinstance(path, str) or not path.endswith(".jsonl") or not os.path.isabs(path):
        return None
    if agent_id is None:
        return path
    base = path[: -len(".jsonl")]
    name = "agent-" + "".join(c for c in agent_id if c.isalnum() or c in "-_") + ".jsonl"
    return os.path.join(base, "subagents", name)


def open_regular(path: str) -> int | None:
    """A read-only fd of a regular file, or None: never blocks on a FIFO someone put there."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def lines_backwards(fd: int, max_bytes: int) -> Iterable[bytes]:
    """Whole lines from the end of the file, newest first; a line cut by the bound is dropped."""
    end = os.fstat(fd).st_size
    pos = end
    carry = b""
    while pos > 0 and end - pos < max_bytes:
        step = min(CHUNK, pos)
        pos -= step
        data = os.pread(fd, step, pos) + carry
        lines = data.split(b"\n")
        carry = lines[0] if pos > 0 else b""
        for raw in reversed(lines[1:] if pos > 0 else lines):
            if raw.strip():
                yield raw


def conversation_backwards(fd: int, max_bytes: int) -> Iterable[tuple[bytes, dict[str, Any]]]:
    """The user and assistant lines (raw, parsed), newest first: bookkeeping lines (snapshots,
    api requests, modes) are never parsed."""
    for raw in lines_backwards(fd, max_bytes):
        if not any(mark in raw for mark in CONVERSATION):
            continue
        parsed = entry(raw)
        if parsed is not None and parsed.get("type") in ("user", "assistant"):
            yield raw, parsed


def entry(raw: bytes) -> dict[str, Any] | None:
    try:
        value = _jsonfast.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def ts_ms(line: dict[str, Any]) -> int | None:
    """A transcript line's `timestamp` ("2026-11-26T02:25:07.011Z") in epoch ms."""
    text = line.get("timestamp")
    if not isinstance(text, str) or len(text) < 19:
        return None
    try:
        import calendar  # only with a transcript to read: status --line rarely needs it

        seconds = calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    except (ValueError, OverflowError):
        return None
    millis = int(text[20:23]) if len(text) >= 23 and text[20:23].isdigit() else 0
    return seconds * 1000 + millis


def last_api_error(path: str, max_bytes: int = CHUNK * 4) -> dict[str, Any] | None:
    """The newest conversational line, when it is the client's API error message (2.1.332:
    an assistant line with `isApiErrorMessage`, `error`, and for a usage limit `quotaLimits`):
    what ended the turn. None when the conversation went on after it, or there is none."""
    fd = open_regular(path)
    if fd is None:
        return None
    try:
        for _raw, line in conversation_backwards(fd, max_bytes):
            if line.get("type") == "assistant" and line.get("isApiErrorMessage") is True:
                return line
            return None
    finally:
        os.close(fd)
    return None


def written_ms(path: str | None) -> int | None:
    """When the file was last written (its mtime, in ms), None when it cannot be read."""
    if not path:
        return None
    try:
        return int(os.stat(path).st_mtime * 1000)
    except (OSError, ValueError):
        return None
