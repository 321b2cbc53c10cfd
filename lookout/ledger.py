"""The waiting ledger: every attention episode (when it opened, when and how it ended) and every
idle gap after a finished turn, read back from events.jsonl and its rotated files. Reads only.

The episodes are the state machine's own: a record's `notify` lists the intents that event
raised, so an attention kind opens an episode of the event's actor and `resolved` closes one.
Streaming and cheap: the files are searched in blocks for the lines that can matter, and only
the fields needed are read out of those (the writer's compact JSON, keys in a fixed form), never
a whole line parsed."""

from __future__ import annotations

import calendar
import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from lookout import _jsonfast, store

ATTENTION = frozenset(("permission", "question", "plan", "elicitation", "input", "error"))
# A turn's outcome, not a dialog: Stop raises `question` when the last message asks something.
_OUTCOME_EVENTS = frozenset((b"Stop", b"SubagentStop"))
# How a permission dialog ended, from the event that ended it.
_RAN = frozenset((b"PostToolUse", b"PostToolUseFailure"))  # the call ran: the user said yes
# Reconciled: the command ran / returned, or the client's own file said `busy` after the dialog
# (the state machine's approval; on a busy machine it can come before the tool's hook).
_APPROVED = frozenset(("approved", "answered", "busy"))
# Reconciled: No / Esc, or the client's file said `idle` after the dialog (machine: rejected).
_DENIED = frozenset(("rejected", "denied", "idle"))
# The writer's compact JSON: a record that raised an intent has this (most have `[]`).
_SOME_NOTIFY = b'"notify":["'
BLOCK = 4 * 1024 * 1024
LOOKBACK_MS = 86_400_000  # before --since: how far back open episodes are followed
_PROMPT = b'"event":"UserPromptSubmit"'
_TS_AT = slice(7, 31)  # every line starts `{"ts":"2026-11-26T06:36:55.123Z",`


@dataclass(frozen=True, slots=True)
class Wait:
    """One attention episode that ended: the session waited on the user from start to end."""

    session_id: str
    project: str
    agent: str
    reason: str
    tool: str | None
    start_ms: int
    end_ms: int
    summary: str
    # permission episodes: approved | denied | unknown (ended some other way); else unknown
    answer: str
    rule: str | None  # the PermissionRequest's exact rule (events.permission_rule)

    @property
    def wait_ms(self) -> int:
        return max(0, self.end_ms - self.start_ms)


@dataclass(frozen=True, slots=True)
class Idle:
    """A finished turn, then the user's next prompt."""

    session_id: str
    project: str
    agent: str
    start_ms: int
    end_ms: int


@dataclass
class History:
    waits: list[Wait]
    idles: list[Idle]


def log_files(state_dir: str) -> list[str]:
    """events.jsonl's files, oldest first (rotation renames .1 to .2 and so on)."""
    base = os.path.join(state_dir, store.EVENTS)
    rotated = []
    n = 1
    while os.path.exists(f"{base}.{n}"):
        rotated.append(f"{base}.{n}")
        n += 1
    return [*reversed(rotated), base]


def _last_ts(path: str) -> bytes:
    """The ts of the file's last whole line (b"" if unknown): a file older than the window is
    skipped unread."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 65536))
            tail = fh.read()
    except OSError:
        return b""
    for raw in reversed(tail.split(b"\n")):
        if raw.startswith(b'{"ts":"') and raw.endswith(b"}"):
            return raw[_TS_AT]
    return b""


_DAYS: dict[bytes, int] = {}


def ts_ms(ts: bytes) -> int | None:
    """b"2026-11-26T06:36:55.123Z" in epoch ms (the store's own format), None if it is not."""
    if len(ts) != 24 or ts[10:11] != b"T" or ts[23:24] != b"Z":
        return None
    day = ts[:10]
    base = _DAYS.get(day)
    try:
        if base is None:
            parsed = time.strptime(day.decode("ascii"), "%Y-%m-%d")
            base = _DAYS[day] = calendar.timegm(parsed) * 1000
        clock = int(ts[11:13] + ts[14:16] + ts[17:19] + ts[20:23])  # HHMMSSmmm
    except ValueError:
        return None
    hours, rest = divmod(clock, 10_000_000)
    minutes, millis = divmod(rest, 100_000)
    return base + hours * 3_600_000 + minutes * 60_000 + millis


def _raw(line: bytes, key: bytes) -> bytes | None:
    """The still-escaped text of a string field of one record line, None for null or absent.
    The writer's compact JSON puts every key as `"key":` and escapes every quote inside a
    string, so the first `"key":` is the key itself."""
    at = line.find(key)
    if at == -1:
        return None
    start = at + len(key)
    if line[start : start + 1] != b'"':
        return None
    end = line.find(b'"', start + 1)
    while end != -1 and line[end - 1 : end] == b"\\":
        # An escaped quote, unless the backslash is itself escaped: count them.
        n = 1
        while line[end - 1 - n : end - n] == b"\\":
            n += 1
        if n % 2 == 0:
            break
        end = line.find(b'"', end + 1)
    return None if end == -1 else line[start + 1 : end]


def _text(value: bytes | None) -> str | None:
    if value is None:
        return None
    if b"\\" not in value:
        return value.decode("utf-8", "replace")
    try:
        text = _jsonfast.loads('"' + value.decode("utf-8", "replace") + '"')
    except ValueError:
        return None
    return text if isinstance(text, str) else None


_K_SESSION = b'"session_id":'
_K_AGENT = b'"agent":'
_K_STATUS = b'"status":'
_K_DETAIL = b'"detail":'
_K_AGENT_ID = b'"agent_id":'
_K_PROJECT = b'"project":'
_K_TOOL = b'"tool_name":'
_K_SOURCE = b'"source":'
_K_SUMMARY = b'"summary":'
_K_NOTIFY = b'"notify":['
_K_RULE = b'"rule":'
_K_OUTCOME = b'"outcome":'
_K_DECISION = b'"decision":'
_K_SESSION_Q = b'"session_id":"'
_K_EVENT_Q = b'"event":"'


def lines(state_dir: str, since_ms: int = 0, until_ms: int | None = None) -> Iterator[bytes]:
    """The lines that can open or close an episode or an idle gap, in the order written, within
    [since_ms, until_ms) by their ts. Blocks are searched for the two markers in C (bytes.find):
    the lines around the hits are all Python ever touches."""
    since = store.rfc3339(since_ms).encode("ascii")
    until = store.rfc3339(until_ms).encode("ascii") if until_ms is not None else b"~"
    for path in log_files(state_dir):
        last = _last_ts(path)
        if last and last < since:
            continue
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed below, the generator may be left
        except FileNotFoundError:
            continue
        with fh:
            carry = b""
            while True:
                block = fh.read(BLOCK)
                if not block:
                    break
                cut = block.rfind(b"\n") + 1
                if cut == 0:
                    carry += block
                    continue
                data, carry = carry + block[:cut], block[cut:]
                for raw in _hits(data):
                    stamp = raw[_TS_AT]
                    if since <= stamp < until and raw.endswith(b"}\n"):  # a torn line: skipped
                        yield raw


def _hits(data: bytes) -> Iterator[bytes]:
    """The whole lines of `data` (whole lines) that raised an intent or are a prompt."""
    pos = 0
    notify = data.find(_SOME_NOTIFY)
    prompt = data.find(_PROMPT)
    while notify != -1 or prompt != -1:
        hit = notify if prompt == -1 or (notify != -1 and notify < prompt) else prompt
        start = data.rfind(b"\n", pos, hit) + 1 or pos
        end = data.find(b"\n", hit) + 1 or len(data)
        yield data[start:end]
        pos = end
        if notify != -1 and notify < end:
            notify = data.find(_SOME_NOTIFY, end)
        if prompt != -1 and prompt < end:
            prompt = data.find(_PROMPT, end)


def read(state_dir: str, since_ms: int = 0, until_ms: int | None = None) -> History:
    """The episodes that began in [since_ms, until_ms) and ended (an open one has no known
    length: it is left out, never guessed), and the idle gaps likewise."""
    waits: list[Wait] = []
    idles: list[Idle] = []
    # session -> actor ("" for the main thread) -> the open episode's line and fields
    open_: dict[bytes, dict[bytes, tuple[int, str, bytes]]] = {}
    finished: dict[bytes, int] = {}  # session -> when its last turn ended with nothing running
    # Episodes open when the window starts are followed (not counted), so that each `resolved`
    # in the window closes the episode it belongs to.
    for raw in lines(state_dir, max(0, since_ms - LOOKBACK_MS), until_ms):
        at = ts_ms(raw[_TS_AT])
        # Ids and event names hold no quote: two finds each instead of _raw's general case.
        i = raw.find(_K_SESSION_Q)
        j = raw.find(b'"', i + len(_K_SESSION_Q))
        k = raw.find(_K_EVENT_Q, j)
        if at is None or i == -1 or k == -1:
            continue
        session = raw[i + len(_K_SESSION_Q) : j]
        event = raw[k + len(_K_EVENT_Q) : raw.find(b'"', k + len(_K_EVENT_Q))]
        kinds_at = raw.find(_K_NOTIFY)
        kinds_end = raw.find(b"]", kinds_at)
        kinds = raw[kinds_at + len(_K_NOTIFY) : kinds_end].split(b",") if kinds_at != -1 else []
        if (
            event == b"UserPromptSubmit"
            and session in finished
            and _raw(raw, _K_SOURCE) != b"task-notification"  # the client's, not the user's
        ):
            done_at = finished.pop(session)
            if done_at >= since_ms:
                idles.append(Idle(session.decode(), _project(raw), _agent(raw), done_at, at))
        actors = open_.get(session)
        for kind in kinds:
            if kind == b'"resolved"':
                if actors:
                    wait = _close(raw, event, at, actors)
                    if wait.start_ms >= since_ms:
                        waits.append(wait)
            elif kind in _ATTENTION_KINDS and event not in _OUTCOME_EVENTS:
                if actors is None:
                    actors = open_[session] = {}
                actors[_raw(raw, _K_AGENT_ID) or b""] = (at, kind[1:-1].decode(), raw)
            elif kind in (b'"done"', b'"question"') and event == b"Stop":
                finished[session] = at
        if event == b"SessionStart" or b'"session_end"' in kinds:  # incl. the process gone
            finished.pop(session, None)
    return History(waits, idles)


_ATTENTION_KINDS = frozenset(b'"' + k.encode() + b'"' for k in ATTENTION)


def _close(raw: bytes, event: bytes, at: int, actors: dict[bytes, tuple[int, str, bytes]]) -> Wait:
    """One `resolved`: the event's own actor first, then the main thread, then the others."""
    own = _raw(raw, _K_AGENT_ID) or b""
    key = own if own in actors else b"" if b"" in actors else next(iter(actors))
    start, reason, opened = actors.pop(key)
    tool = _tool(opened)
    return Wait(
        session_id=_text(_raw(opened, _K_SESSION)) or "",
        project=_project(opened),
        agent=_agent(opened),
        reason=reason,
        tool=tool,
        start_ms=start,
        end_ms=at,
        summary=_text(_raw(opened, _K_SUMMARY)) or "",
        answer=_answer(raw, event, tool) if reason == "permission" else "unknown",
        rule=_text(_raw(opened, _K_RULE)),
    )


def _answer(raw: bytes, event: bytes, tool: str | None) -> str:
    """approved: the call ran (or the user allowed it from afar); denied: the user refused it;
    unknown: the turn or the session ended some other way (`claude -p`, Esc, a crash)."""
    if event in _RAN:
        return "approved" if _text(_raw(raw, _K_TOOL)) == tool else "unknown"
    if event == b"Reconciled":
        outcome = _text(_raw(raw, _K_OUTCOME))
        return "approved" if outcome in _APPROVED else "denied" if outcome in _DENIED else "unknown"
    if event == b"RemoteDecision":
        said = _text(_raw(raw, _K_DECISION)) or ""
        return "approved" if said.startswith("allow") else "denied" if said == "deny" else "unknown"
    return "unknown"


def _tool(raw: bytes) -> str | None:
    tool = _text(_raw(raw, _K_TOOL))
    if tool:
        return tool
    detail = _text(_raw(raw, _K_DETAIL))  # a Notification-opened dialog: the pending call's tool
    if detail and _raw(raw, _K_STATUS) == b"attention":
        return detail.rpartition(": ")[2] or None
    return None


def _project(raw: bytes) -> str:
    return _text(_raw(raw, _K_PROJECT)) or ""


def _agent(raw: bytes) -> str:
    return _text(_raw(raw, _K_AGENT)) or "claude"


# -- the summary: `lookout report --json` and the dashboard's panel -------------------------

DIMENSIONS = (
    ("by_project", "project"),
    ("by_reason", "reason"),
    ("by_tool", "tool"),
    ("by_agent", "agent"),
)


def p50(values: list[float]) -> float:
    """The median (the mean of the two middle values for an even count); 0 for none."""
    if not values:
        return 0.0
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def p95(values: list[float]) -> float:
    """The nearest-rank 95th percentile: the smallest value at least 95 % of them do not exceed."""
    if not values:
        return 0.0
    s = sorted(values)
    return s[max(0, math.ceil(0.95 * len(s)) - 1)]


def _secs(ms: int) -> float:
    return round(ms / 1000, 3)


def _stats(waits: list[Wait]) -> dict[str, Any]:
    values = [w.wait_ms / 1000 for w in waits]
    return {
        "episodes": len(waits),
        "wait_s": round(sum(values), 3),
        "p50_s": round(p50(values), 3),
        "p95_s": round(p95(values), 3),
    }


def _group(waits: list[Wait], name: str, key: Callable[[Wait], str | None]) -> list[dict[str, Any]]:
    groups: dict[str | None, list[Wait]] = {}
    for w in waits:
        groups.setdefault(key(w), []).append(w)
    rows = [{name: k, **_stats(v)} for k, v in groups.items()]
    rows.sort(key=lambda r: (-r["wait_s"], -r["episodes"], str(r[name])))
    return rows


def summarize(history: History, since_ms: int, until_ms: int) -> dict[str, Any]:
    """The report's JSON (docs/report.md)."""
    waits = history.waits
    out: dict[str, Any] = {"since": since_ms, "until": until_ms, **_stats(waits)}
    keys: dict[str, Callable[[Wait], str | None]] = {
        "project": lambda w: w.project,
        "reason": lambda w: w.reason,
        "tool": lambda w: w.tool,
        "agent": lambda w: w.agent,
    }
    for field, name in DIMENSIONS:
        out[field] = _group(waits, name, keys[name])
    longest = max(waits, key=lambda w: (w.wait_ms, -w.start_ms), default=None)
    out["longest"] = (
        None
        if longest is None
        else {
            "session_id": longest.session_id,
            "project": longest.project,
            "reason": longest.reason,
            "tool": longest.tool,
            "summary": longest.summary,
            "since": longest.start_ms,
            "wait_s": _secs(longest.wait_ms),
        }
    )
    idle = [(i.end_ms - i.start_ms) / 1000 for i in history.idles]
    out["idle"] = {
        "gaps": len(idle),
        "idle_s": round(sum(idle), 3),
        "p50_s": round(p50(idle), 3),
        "p95_s": round(p95(idle), 3),
    }
    return out
