"""The waiting ledger: every attention episode (when it opened, when and how it ended) and every
idle gap after a finished turn, read back from events.jsonl and its rotated files. Reads only.

The episodes are the state machine's own: a record's `notify` lists the intents that event
raised, so an attention kind opens an episode of the event's actor and `resolved` closes one.
Streaming and cheap: a line that can matter is found by substring before it is parsed."""

from __future__ import annotations

import calendar
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

from lookout import _jsonfast, store

ATTENTION = frozenset(("permission", "question", "plan", "elicitation", "input", "error"))
# A turn's outcome, not a dialog: Stop raises `question` when the last message asks something.
_OUTCOME_EVENTS = frozenset(("Stop", "SubagentStop"))
# How a permission dialog ended, from the event that ended it.
_RAN = frozenset(("PostToolUse", "PostToolUseFailure"))  # the call ran: the user said yes
_APPROVED = frozenset(("approved", "answered"))  # Reconciled: the command ran / returned
_DENIED = frozenset(("rejected", "denied"))  # Reconciled: No / Esc
# The writer's compact JSON: a record that raised nothing has exactly this.
_NO_NOTIFY = b'"notify":[]'
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
            base = calendar.timegm(time.strptime(day.decode("ascii"), "%Y-%m-%d")) * 1000
            _DAYS[day] = base
        return (
            base
            + int(ts[11:13]) * 3_600_000
            + int(ts[14:16]) * 60_000
            + int(ts[17:19]) * 1000
            + int(ts[20:23])
        )
    except ValueError:
        return None


def records(state_dir: str, since_ms: int = 0, until_ms: int | None = None) -> Iterator[dict]:  # type: ignore[type-arg]
    """The records that can open or close an episode or an idle gap, in the order written."""
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
            for raw in fh:
                if _NO_NOTIFY in raw and _PROMPT not in raw:
                    continue  # nothing opened or closed here (most lines)
                stamp = raw[_TS_AT]
                if stamp < since or stamp >= until:
                    continue
                try:
                    record = _jsonfast.loads(raw.decode("utf-8", "replace"))
                except ValueError:
                    continue  # a line torn by a writer killed mid-write
                if isinstance(record, dict):
                    record["_ms"] = ts_ms(stamp)
                    yield record


def read(state_dir: str, since_ms: int = 0, until_ms: int | None = None) -> History:
    """The episodes that began in [since_ms, until_ms) and ended (an open one has no known
    length: it is left out, never guessed), and the idle gaps likewise."""
    waits: list[Wait] = []
    idles: list[Idle] = []
    # session -> actor ("" for the main thread) -> the open episode's fields
    open_: dict[str, dict[str, list[object]]] = {}
    finished: dict[str, int] = {}  # session -> when its last turn ended with nothing running
    for r in records(state_dir, since_ms, until_ms):
        at = r["_ms"]
        if not isinstance(at, int):
            continue
        session = str(r.get("session_id") or "")
        kinds = r.get("notify") or []
        event = r.get("event")
        actors = open_.setdefault(session, {})
        if event == "UserPromptSubmit" and r.get("source") != "task-notification":
            done_at = finished.pop(session, None)
            if done_at is not None:
                idles.append(Idle(session, _str(r.get("project")), _agent(r), done_at, at))
        for kind in kinds:
            if kind == "resolved":
                _close(r, at, actors, waits)
            elif kind in ATTENTION and event not in _OUTCOME_EVENTS:
                actors[str(r.get("agent_id") or "")] = [
                    at,
                    kind,
                    _tool(r),
                    _str(r.get("summary")),
                    r.get("rule") if isinstance(r.get("rule"), str) else None,
                    _str(r.get("project")),
                    _agent(r),
                ]
            elif kind in ("done", "question") and event == "Stop":
                finished[session] = at
        if event in ("SessionEnd", "SessionStart") or r.get("status") == "ended":
            finished.pop(session, None)
    return History(waits, idles)


def _close(r: dict, at: int, actors: dict[str, list[object]], waits: list[Wait]) -> None:  # type: ignore[type-arg]
    """One `resolved`: the event's own actor first, then the main thread, then the others."""
    if not actors:
        return
    own = str(r.get("agent_id") or "")
    key = own if own in actors else "" if "" in actors else next(iter(actors))
    start, reason, tool, summary, rule, project, agent = actors.pop(key)
    waits.append(
        Wait(
            session_id=str(r.get("session_id") or ""),
            project=str(project) or _str(r.get("project")),
            agent=str(agent),
            reason=str(reason),
            tool=tool if isinstance(tool, str) else None,
            start_ms=int(start),  # type: ignore[call-overload]
            end_ms=at,
            summary=str(summary),
            answer=_answer(r, tool) if reason == "permission" else "unknown",
            rule=rule if isinstance(rule, str) else None,
        )
    )


def _answer(r: dict, tool: object) -> str:  # type: ignore[type-arg]
    """approved: the call ran (or the user allowed it from afar); denied: the user refused it;
    unknown: the turn or the session ended some other way (`claude -p`, Esc, a crash)."""
    event = r.get("event")
    if event in _RAN:
        return "approved" if r.get("tool_name") == tool else "unknown"
    if event == "Reconciled":
        outcome = r.get("outcome")
        return "approved" if outcome in _APPROVED else "denied" if outcome in _DENIED else "unknown"
    if event == "RemoteDecision":
        said = str((r.get("remote") or {}).get("decision") or "")
        return "approved" if said.startswith("allow") else "denied" if said == "deny" else "unknown"
    return "unknown"


def _tool(r: dict) -> str | None:  # type: ignore[type-arg]
    tool = r.get("tool_name")
    if isinstance(tool, str) and tool:
        return tool
    detail = r.get("detail")  # a Notification-opened dialog: the pending call's tool
    if isinstance(detail, str) and detail and r.get("status") == "attention":
        return detail.rpartition(": ")[2] or None
    return None


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _agent(r: dict) -> str:  # type: ignore[type-arg]
    return _str(r.get("agent")) or "claude"
