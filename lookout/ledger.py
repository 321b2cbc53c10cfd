"""The waiting ledger: every attention episode (when it opened, when and how it ended) and every
idle gap after a finished turn, read back from events.jsonl and its rotated files. Reads only.

The episodes are the state machine's own: a record's `notify` lists the intents that event
raised, so an attention kind opens an episode of the event's actor and `resolved` closes one.
Streaming and cheap: the files are searched in blocks (in C) for the few markers a line that
can matter holds, and only those lines are parsed (the C JSON scanner)."""

from __future__ import annotations

import calendar
import math
import os
import time
from collections.abc import Iterable, Iterator, Sized
from dataclasses import dataclass, replace
from typing import Any, BinaryIO

from lookout import _jsonfast, store

ATTENTION = frozenset(("permission", "question", "plan", "elicitation", "input", "error"))
# A turn's outcome, not a dialog: Stop raises `question` when the last message asks something.
_OUTCOME_EVENTS = frozenset((b"Stop", b"SubagentStop"))
# How a permission dialog ended, from the event that ended it.
_RAN = frozenset((b"PostToolUse", b"PostToolUseFailure"))  # the call ran: the user said yes
_APPROVED = frozenset((b"approved", b"answered"))  # Reconciled: the command ran / returned
_DENIED = frozenset((b"rejected", b"denied"))  # Reconciled: No / Esc
# Read in blocks of 1 MiB: as fast as 4 MiB (bench/report.py: 1.03x against 1.08x json.loads)
# and a quarter of the memory a report holds while it reads (lookout serve asks every minute).
BLOCK = 1024 * 1024
LOOKBACK_MS = 86_400_000  # before --since: how far back open episodes are followed
_TS_AT = slice(7, 31)  # every line starts `{"ts":"2026-11-26T06:36:55.123Z",`


@dataclass(slots=True)
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
# Parsed pieces of time stamps: each minute's start and each `SS.mmm` within a minute, in ms
# (int() of bytes costs more than the rest of a line's reading; a year has 525,600 minutes).
# They live for one read (read() empties them): kept, they would fill with every minute and
# millisecond a long-lived `lookout serve` ever reported on, about 100 bytes each.
_MINUTES: dict[bytes, int] = {}
_SECONDS: dict[bytes, int] = {}
_MINUTES_MAX = 100_000


def ts_ms(ts: bytes) -> int | None:
    """b"2026-11-26T06:36:55.123Z" in epoch ms (the store's own format), None if it is not."""
    if len(ts) != 24 or ts[10:11] != b"T" or ts[23:24] != b"Z":
        return None
    return _clock(ts, 0)


def _clock(raw: bytes, at: int) -> int | None:
    """The store's time stamp that starts at raw[at] (its form checked by the caller)."""
    minute = raw[at : at + 16]
    base = _MINUTES.get(minute)
    if base is None:
        day = minute[:10]
        base = _DAYS.get(day)
        try:
            if base is None:
                parsed = time.strptime(day.decode("ascii"), "%Y-%m-%d")
                base = _DAYS[day] = calendar.timegm(parsed) * 1000
            if minute[13:14] != b":" or not (minute[11:13] + minute[14:16]).isdigit():
                return None
            base += int(minute[11:13]) * 3_600_000 + int(minute[14:16]) * 60_000
        except (ValueError, UnicodeDecodeError):
            return None
        if len(_MINUTES) >= _MINUTES_MAX:
            _MINUTES.clear()
        _MINUTES[minute] = base
    second = raw[at + 17 : at + 23]
    millis = _SECONDS.get(second)
    if millis is None:
        if not (second[:2] + second[3:]).isdigit() or second[2:3] != b".":
            return None
        millis = _SECONDS[second] = int(second[:2]) * 1000 + int(second[3:])
    return base + millis


# What a block is searched for (in C): the lines that can open, close or decide an episode or an
# idle gap. The writer's compact JSON puts each as written here and escapes every quote inside a
# string, so none of them can occur inside a value.
_SOME_NOTIFY = b'"notify":["'  # a record that raised an intent (most have `[]`)
_PROMPT = b'"event":"UserPromptSubmit"'
_REQUEST = b'"event":"PermissionRequest"'  # says what a dialog a reader opened is about
_RAN_MARK = b'"event":"PostToolUse'  # and PostToolUseFailure: proves an approval (_Unproved)
_NONE = 1 << 62
# A block where at least one line in this many holds a marker is split into lines in C first.
_DENSE = 4
_SAMPLE = 256 * 1024


def _blocks(state_dir: str, since: bytes) -> Iterator[bytes]:
    """The files' contents in blocks of whole lines, oldest first; a file that ended before
    `since` is skipped unread."""
    for path in log_files(state_dir):
        last = _last_ts(path)
        if last and last < since:
            continue
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed below, the generator may be left
        except FileNotFoundError:
            continue
        with fh:
            yield from _file_blocks(fh, [0], None)


def _file_blocks(fh: BinaryIO, at: list[int], stop: int | None) -> Iterator[bytes]:
    """The file's whole lines in blocks, from at[0] to `stop` (None: its end); at[0] is moved
    past each block given (a line not ended yet is left for the next read)."""
    fh.seek(at[0])
    carry = b""
    while stop is None or at[0] + len(carry) < stop:
        want = BLOCK if stop is None else min(BLOCK, stop - at[0] - len(carry))
        block = fh.read(want)
        if not block:
            break
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            carry += block
            continue
        data = carry + block[:cut]
        carry = block[cut:]
        at[0] += len(data)
        yield data


def _next(data: bytes, mark: bytes, at: int) -> int:
    found = data.find(mark, at)
    return _NONE if found == -1 else found


def _sparse(data: bytes, ran: Sized, asked: Sized) -> Iterator[bytes]:
    """The lines of `data` that hold a marker, without their newline, found by searching for
    the markers: PostToolUse lines only while `ran` is not empty, PermissionRequest lines without
    an intent only while `asked` is not empty (both change as the caller reads what this
    yields)."""
    find = data.find
    pos = 0
    notify = _next(data, _SOME_NOTIFY, 0)
    prompt = _next(data, _PROMPT, 0)
    post = request = _NONE
    posting = requesting = False
    while True:
        if posting is not bool(ran):
            posting = not posting
            post = _next(data, _RAN_MARK, pos) if posting else _NONE
        if requesting is not bool(asked):
            requesting = not requesting
            request = _next(data, _REQUEST, pos) if requesting else _NONE
        hit = min(notify, prompt, request, post)
        if hit == _NONE:
            return
        start = data.rfind(b"\n", pos, hit) + 1 or pos
        pos = find(b"\n", hit) + 1  # every block ends with a newline
        yield data[start : pos - 1]
        if notify < pos:
            notify = _next(data, _SOME_NOTIFY, pos)
        if prompt < pos:
            prompt = _next(data, _PROMPT, pos)
        if request < pos:
            request = _next(data, _REQUEST, pos)
        if post < pos:
            post = _next(data, _RAN_MARK, pos)


def lines(
    state_dir: str,
    since_ms: int = 0,
    until_ms: int | None = None,
    ran: Sized = (),
    asked: Sized = (),
) -> Iterator[bytes]:
    """The lines (without their newline) that can open, close or decide an episode or an idle
    gap, in the order written, within [since_ms, until_ms) by their ts; PostToolUse(Failure)
    lines too while `ran` is not empty, PermissionRequest lines while `asked` is not (the reader's
    open questions). A block is searched in C for the markers such a line holds; one where most
    lines hold one is only split into lines (in C), all of them given: the reader passes over
    the others as cheaply as a search would."""
    since = store.rfc3339(since_ms).encode("ascii")
    yield from _wanted(_blocks(state_dir, since), since_ms, until_ms, ran, asked)


def _wanted(
    blocks: Iterable[bytes], since_ms: int, until_ms: int | None, ran: Sized, asked: Sized
) -> Iterator[bytes]:
    """lines() of these blocks of whole lines."""
    since = store.rfc3339(since_ms).encode("ascii")
    until = store.rfc3339(until_ms).encode("ascii") if until_ms is not None else b"~"
    for data in blocks:
        # The density, from the block's first lines.
        if data.count(_SOME_NOTIFY, 0, _SAMPLE) * _DENSE > data.count(b"\n", 0, _SAMPLE):
            found: Iterable[bytes] = data.split(b"\n")
        else:
            found = _sparse(data, ran, asked)
        for raw in found:
            if since <= raw[_TS_AT] < until and raw.endswith(b"}"):  # a torn line: skipped
                yield raw


def _parse(raw: bytes) -> dict[str, Any]:
    """One whole line (the C scanner); {} for one that is not a record."""
    try:
        value = _jsonfast.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _str(rec: dict[str, Any], key: str) -> str | None:
    value = rec.get(key)
    return value if isinstance(value, str) else None


def _quoted(raw: bytes, key: bytes, at: int = 0) -> bytes | None:
    """The value of a field that holds no quote (ids, event and tool names, outcomes)."""
    i = raw.find(key, at)
    if i == -1:
        return None
    i += len(key)
    return raw[i : raw.find(b'"', i)]


@dataclass(slots=True)
class _About:
    """What an episode was about, from the line that opened it (or a later PermissionRequest)."""

    project: str
    agent: str
    tool: str | None
    summary: str
    rule: str | None


def _tail(raw: bytes) -> dict[str, Any]:
    """The line from `"project":` on, parsed (machine._record's order: past the ids and the
    cwd, a third of the C scanner's work saved); {} when it has no such field."""
    at = raw.find(b',"project":')
    return _parse(b"{" + raw[at + 1 :]) if at != -1 else {}


def _agent_of(raw: bytes) -> str | None:
    agent = _quoted(raw, b'"agent":"')  # a plain word at the line's start
    return agent.decode("utf-8", "replace") if agent else None


def _about(raw: bytes) -> _About:
    """The fields of a line a Wait needs (the C scanner reads them faster than any search)."""
    rec = _tail(raw)
    tool = _str(rec, "tool_name")
    agent = _agent_of(raw)
    if tool is None or agent is None:  # the tool from `detail` (or not a record): all of it
        rec = _parse(raw)
        tool, agent = _tool(rec), _agent(rec)
    return _About(_project(rec), agent, tool, _str(rec, "summary") or "", _str(rec, "rule"))


@dataclass(slots=True)
class _Open:
    """An episode still open, as the ledger follows it."""

    start: int
    reason: str
    raw: bytes  # the line that says what it is about (tool, summary, rule, project)
    # Opened by a reader from the client's registry (`waiting`), not yet confirmed by a hook:
    # the hook's record of the same dialog may still come (the registry flips first).
    client: bool = False
    # Taken over by a subagent's dialog, which the registry's `waiting` really was.
    ghost: bool = False


@dataclass(slots=True)
class _Unproved:
    """A permission episode that ended without saying how (the client's `busy`, a batch): the
    call's own PostToolUse(Failure), if it comes before the turn moves on, proves the yes."""

    index: int | None  # in the waits (None: it began before the window)
    tool: bytes
    summary: str


# A session's turn moved on: an unproved end stays unknown.
_TURN_EDGES = frozenset(
    (b"UserPromptSubmit", b"Stop", b"StopFailure", b"SessionStart", b"SessionEnd")
)
_RESOLVED = b'"resolved"'
_ENDED = b'"session_end"'
_ATTENTION_KINDS = frozenset(b'"' + k.encode() + b'"' for k in ATTENTION)
_TURN_KINDS = frozenset((b'"done"', b'"question"'))  # a Stop's outcome: the turn is over
_CLIENT = b'"source":"client"'
_TASK = b'"source":"task-notification"'
_K_TOOL = b'"tool_name":"'


class _Reader:
    """The ledger's one pass over the lines (see read)."""

    def __init__(self, since_ms: int) -> None:
        self.since_ms = since_ms
        self.waits: list[Wait] = []
        self.idles: list[Idle] = []
        # session -> actor (b"" for the main thread) -> its open episode
        self.open: dict[bytes, dict[bytes, _Open]] = {}
        # session -> when its last turn ended with nothing running
        self.finished: dict[bytes, int] = {}
        # session -> actor -> an ended permission episode awaiting its call's PostToolUse
        self.unproved: dict[bytes, dict[bytes, _Unproved]] = {}
        # (session, actor) of the open episodes a reader opened from the registry (or that a
        # subagent took over): their PermissionRequest may still come
        self.asked: set[tuple[bytes, bytes]] = set()

    def line(self, raw: bytes) -> None:
        # `{"ts":"…","seq":N,"session_id":"…","agent":"…","event":"…",` (machine._record)
        head = raw.split(b'"', 18)
        if len(head) < 19 or head[7] != b"session_id" or head[15] != b"event":
            return
        session, event = head[9], head[17]
        n = raw.rfind(b'"notify":[') + 10
        if raw[n : n + 1] == b"]":  # `[]`: a prompt, a PermissionRequest of an open dialog...
            if event in _RAN:
                if self.unproved:
                    self.ran(session, _actor(raw), raw)
            elif event == b"UserPromptSubmit":
                self.edge(session, b"", event)
                self.prompt(session, raw)
            elif event == b"PermissionRequest":
                self.confirm(session, _actor(raw), raw)
            elif event in _TURN_EDGES or event == b"SubagentStop":
                self.edge(session, _actor(raw), event)
            return
        if n == 9:
            return  # no `notify` at all: not a record
        self.noted(session, event, raw, n)

    def noted(self, session: bytes, event: bytes, raw: bytes, n: int) -> None:
        """A record that notified (its `notify` list at `n`): episodes open and close here."""
        if self.unproved:
            self.progress(session, event, raw)
        if event == b"UserPromptSubmit":
            self.prompt(session, raw)
        kinds = raw[n : raw.find(b"]", n)].split(b",")
        if event == b"SessionStart" or _ENDED in kinds:  # incl. the process gone
            self.finished.pop(session, None)
        opens = event not in _OUTCOME_EVENTS and not _ATTENTION_KINDS.isdisjoint(kinds)
        closes = _RESOLVED in kinds
        if not (opens or closes or event == b"Stop"):
            return
        at = _clock(raw, 7)
        if at is None:
            return
        actor = _actor(raw) if opens or closes else b""
        carry: int | None = None  # a registry-opened episode that the hook's record opens again
        for kind in kinds:
            if kind == _RESOLVED:
                carry = self.close(session, actor, event, raw, at, opens) or carry
            elif opens and kind in _ATTENTION_KINDS:
                self.begin(session, actor, event, kind, raw, at, carry)
                carry = None
            elif kind in _TURN_KINDS and event == b"Stop":
                self.finished[session] = at

    def progress(self, session: bytes, event: bytes, raw: bytes) -> None:
        """A call ran, or the turn moved on: what an unproved end was."""
        if event in _RAN:
            self.ran(session, _actor(raw), raw)
        elif event in _TURN_EDGES or event == b"SubagentStop":
            self.edge(session, _actor(raw), event)

    def edge(self, session: bytes, actor: bytes, event: bytes) -> None:
        """The turn moved on (a subagent's: its own): what ended unproved stays unknown."""
        if not self.unproved:
            return
        if event == b"SubagentStop":
            self.unproved.get(session, {}).pop(actor, None)
        else:
            self.unproved.pop(session, None)

    def prompt(self, session: bytes, raw: bytes) -> None:
        """The user's next prompt after a finished turn: an idle gap."""
        if session not in self.finished or _TASK in raw:  # the client's prompt, not the user's
            return
        at = _clock(raw, 7)
        done_at = self.finished.pop(session)
        if at is not None and done_at >= self.since_ms:
            project = _project(_tail(raw))
            agent = _agent_of(raw) or "claude"
            self.idles.append(Idle(session.decode(), project, agent, done_at, at))

    def ran(self, session: bytes, actor: bytes, raw: bytes) -> None:
        """A call ran: the approval of an episode that ended unproved, if it was that call."""
        pending = self.unproved.get(session)
        found = pending.get(actor) if pending else None
        if found is None or pending is None or _quoted(raw, _K_TOOL) != found.tool:
            return
        if found.summary and _about(raw).summary != found.summary:
            return
        del pending[actor]
        if not pending:
            del self.unproved[session]
        if found.index is not None:
            wait = self.waits[found.index]
            self.waits[found.index] = replace(wait, answer="approved")

    def confirm(self, session: bytes, actor: bytes, raw: bytes) -> None:
        """A PermissionRequest of the dialog already open (no new episode): it says what the
        dialog is about when a reader opened it from the registry, and supplies the rule."""
        episode = self.open.get(session, {}).get(actor)
        if episode is None or not (episode.client or episode.ghost):
            return
        if episode.ghost:  # this thread's own dialog after all: an episode of its own
            at = _clock(raw, 7)
            episode.ghost, episode.start = False, episode.start if at is None else at
        episode.raw, episode.client = raw, False
        self.asked.discard((session, actor))

    def begin(
        self,
        session: bytes,
        actor: bytes,
        event: bytes,
        kind: bytes,
        raw: bytes,
        at: int,
        carry: int | None,
    ) -> None:
        actors = self.open.get(session)
        if actors is None:
            actors = self.open[session] = {}
        client = event == b"Reconciled" and _CLIENT in raw
        start = at
        if carry is not None:
            start = carry
        elif actor and not client:
            main = actors.get(b"")
            if main is not None and main.client and not main.ghost:
                # The registry's `waiting` was this subagent's dialog: one dialog, one episode.
                start, main.ghost, main.client = main.start, True, False
        actors[actor] = _Open(start, _REASONS[kind], raw, client)
        if client:
            self.asked.add((session, actor))

    def close(
        self, session: bytes, actor: bytes, event: bytes, raw: bytes, at: int, opens: bool
    ) -> int | None:
        """One `resolved`: the event's own actor first, then the main thread, then the others.
        Returns the start to carry when the hook's record of a dialog that a reader opened
        from the registry ends that episode and opens its own: the same dialog."""
        actors = self.open.get(session)
        if not actors:
            return None
        key = actor if actor in actors else b"" if b"" in actors else next(iter(actors))
        episode = actors.pop(key)
        if episode.client or episode.ghost:
            self.asked.discard((session, key))
        if episode.ghost:
            return None
        if episode.client and opens and key == actor and event != b"Reconciled":
            return episode.start
        about = _about(episode.raw)
        tool = about.tool
        answer = _answer(raw, event, tool) if episode.reason == "permission" else "unknown"
        index = None
        if episode.start >= self.since_ms:
            index = len(self.waits)
            self.waits.append(
                Wait(
                    session.decode(),
                    about.project,
                    about.agent,
                    episode.reason,
                    tool,
                    episode.start,
                    at,
                    about.summary,
                    answer,
                    about.rule,
                )
            )
        # Unproved, unless the end was the turn's own (a new prompt, Stop, the session's end).
        if (
            answer == "unknown"
            and tool
            and episode.reason == "permission"
            and (event not in _TURN_EDGES)
        ):
            pending = self.unproved.setdefault(session, {})
            pending[key] = _Unproved(index, tool.encode(), about.summary)
        return None


_REASONS = {b'"' + k.encode() + b'"': k for k in ATTENTION}


def _actor(raw: bytes) -> bytes:
    """The line's agent_id (an id: no quote in it), b"" for the main thread."""
    a = raw.find(b'"agent_id":') + 11
    return raw[a + 1 : raw.find(b'"', a + 1)] if raw[a : a + 1] == b'"' else b""


def read(state_dir: str, since_ms: int = 0, until_ms: int | None = None) -> History:
    """The episodes that began in [since_ms, until_ms) and ended (an open one has no known
    length: it is left out, never guessed), and the idle gaps likewise.

    Whoever records a dialog's start or end first (its hooks, or a reader that saw the client's
    registry flip first), the same dialogs, approvals and rules come out (docs/report.md)."""
    reader = _Reader(since_ms)
    line = reader.line
    # Episodes open when the window starts are followed (not counted), so that each `resolved`
    # in the window closes the episode it belongs to.
    since = max(0, since_ms - LOOKBACK_MS)
    try:
        for raw in lines(state_dir, since, until_ms, reader.unproved, reader.asked):
            line(raw)
    finally:
        # Another read still running (the dashboard's threads) refills what it needs.
        _DAYS.clear()
        _MINUTES.clear()
        _SECONDS.clear()
    return History(reader.waits, reader.idles)


class Kept:
    """read() for a long-lived reader (`lookout serve` asks for the week every minute): the
    lines read stay read. While the window starts at the same time and the rotated files are
    the same files (dev, inode) of the same size, only what was appended to the live file since
    the last call is read, into the same pass; a new window, a rotation, or a file truncated or
    replaced reads everything again. Lines stamped at or after `until_ms` (written while it
    read) are read too, and what began before `until_ms` is kept: the next call then misses
    none. Thread-safe: the dashboard's threads share one."""

    def __init__(self, state_dir: str) -> None:
        import threading

        self.state_dir = state_dir
        self._lock = threading.Lock()
        self._since: int | None = None
        self._rotated: list[tuple[int, int, int]] = []
        self._live: tuple[int, int] = (0, 0)  # (dev, inode) of events.jsonl as read
        self._at = [0]  # where the next read of the live file starts
        self._reader = _Reader(0)
        self.full_reads = 0  # how often everything was read (a test counts them)

    def read(self, since_ms: int, until_ms: int) -> History:
        with self._lock:
            try:
                self._read(since_ms)
            finally:
                _DAYS.clear()
                _MINUTES.clear()
                _SECONDS.clear()
            r = self._reader
            return History(
                [w for w in r.waits if w.start_ms < until_ms],
                [i for i in r.idles if i.start_ms < until_ms],
            )

    def _read(self, since_ms: int) -> None:
        paths = log_files(self.state_dir)
        found: list[tuple[str, os.stat_result]] = []
        for path in paths:
            try:
                found.append((path, os.stat(path)))
            except FileNotFoundError:
                continue
        rotated = [(st.st_dev, st.st_ino, st.st_size) for p, st in found if p != paths[-1]]
        live = next((st for p, st in found if p == paths[-1]), None)
        since = max(0, since_ms - LOOKBACK_MS)
        if self._rotated_once(rotated):
            # The live file read last is events.jsonl.1 now: its rest, then the new one.
            self._feed(found[len(rotated) - 1][0], self._at, rotated[-1][2], since)
            self._rotated, self._live, self._at = rotated, (0, 0), [0]
        same = (
            self._since == since_ms
            and rotated == self._rotated
            and (live is None or (self._live in ((live.st_dev, live.st_ino), (0, 0))
                                  and live.st_size >= self._at[0]))
        )  # fmt: skip
        if not same:
            self.full_reads += 1
            self._since, self._rotated, self._reader = since_ms, rotated, _Reader(since_ms)
            self._live, self._at = (0, 0), [0]
            mark = store.rfc3339(since).encode("ascii")
            for path, st in found:
                if path != paths[-1]:
                    last = _last_ts(path)
                    if not (last and last < mark):
                        self._feed(path, [0], st.st_size, since)
        if live is not None:
            self._live = (live.st_dev, live.st_ino)
            self._feed(paths[-1], self._at, live.st_size, since)

    def _rotated_once(self, rotated: list[tuple[int, int, int]]) -> bool:
        """Whether the files are those read last, rotated once since: the live file read last
        is the newest rotated one, at least as long as read, and the older ones unchanged (the
        oldest may be gone)."""
        if self._live == (0, 0) or not rotated or rotated[-1][:2] != self._live:
            return False
        if rotated[-1][2] < self._at[0]:
            return False
        older = rotated[:-1]
        return not older or self._rotated[len(self._rotated) - len(older) :] == older

    def _feed(self, path: str, at: list[int], stop: int, since: int) -> None:
        r = self._reader
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with fh:
            for raw in _wanted(_file_blocks(fh, at, stop), since, None, r.unproved, r.asked):
                r.line(raw)


def _answer(raw: bytes, event: bytes, tool: str | None) -> str:
    """approved: the call ran (or the user allowed it from afar); denied: the user refused it;
    unknown: the turn or the session ended some other way (`claude -p`, Esc, a crash), or the
    end does not say (the client's `busy`, a batch: then _Unproved)."""
    if event in _RAN:
        ran = _quoted(raw, _K_TOOL)
        return "approved" if tool is not None and ran == tool.encode() else "unknown"
    if event == b"Reconciled":
        outcome = _quoted(raw, b'"outcome":"', raw.rfind(b'"notify":['))
        return "approved" if outcome in _APPROVED else "denied" if outcome in _DENIED else "unknown"
    if event == b"RemoteDecision":
        remote = _parse(raw).get("remote")
        decision = remote.get("decision") if isinstance(remote, dict) else None
        said = decision if isinstance(decision, str) else ""
        return "approved" if said.startswith("allow") else "denied" if said == "deny" else "unknown"
    return "unknown"


def _tool(rec: dict[str, Any]) -> str | None:
    tool = _str(rec, "tool_name")
    if tool:
        return tool
    detail = _str(rec, "detail")  # a Notification-opened dialog: the pending call's tool
    # (a failed turn's detail is its error's code, no tool)
    if detail and rec.get("status") == "attention" and rec.get("reason") != "error":
        return detail.rpartition(": ")[2] or None
    return None


def _project(rec: dict[str, Any]) -> str:
    return _str(rec, "project") or ""


def _agent(rec: dict[str, Any]) -> str:
    return _str(rec, "agent") or "claude"


# -- the summary: `lookout report --json` and the dashboard's panel -------------------------

DIMENSIONS = (
    ("by_project", "project"),
    ("by_reason", "reason"),
    ("by_tool", "tool"),
    ("by_agent", "agent"),
)


def p50(values: list[float], ordered: bool = False) -> float:
    """The median (the mean of the two middle values for an even count); 0 for none."""
    if not values:
        return 0.0
    s = values if ordered else sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def p95(values: list[float], ordered: bool = False) -> float:
    """The nearest-rank 95th percentile: the smallest value at least 95 % of them do not exceed."""
    if not values:
        return 0.0
    s = values if ordered else sorted(values)
    return s[max(0, math.ceil(0.95 * len(s)) - 1)]


def _secs(ms: int) -> float:
    return round(ms / 1000, 3)


def _stats(values: list[float]) -> dict[str, Any]:
    """Episodes, total, median and p95 of these waits in seconds (sorted once)."""
    ordered = sorted(values)
    return {
        "episodes": len(values),
        "wait_s": round(sum(values), 3),
        "p50_s": round(p50(ordered, ordered=True), 3),
        "p95_s": round(p95(ordered, ordered=True), 3),
    }


def _group(values: list[float], name: str, keys: Iterable[str | None]) -> list[dict[str, Any]]:
    groups: dict[str | None, list[float]] = {}
    for key, value in zip(keys, values, strict=True):
        group = groups.get(key)
        if group is None:
            groups[key] = [value]
        else:
            group.append(value)
    rows = [{name: k, **_stats(v)} for k, v in groups.items()]
    rows.sort(key=lambda r: (-r["wait_s"], -r["episodes"], str(r[name])))
    return rows


def summarize(history: History, since_ms: int, until_ms: int) -> dict[str, Any]:
    """The report's JSON (docs/report.md)."""
    waits = history.waits
    values = [w.wait_ms / 1000 for w in waits]  # each wait once, in the order read
    out: dict[str, Any] = {"since": since_ms, "until": until_ms, **_stats(values)}
    keys: dict[str, Iterable[str | None]] = {
        "project": (w.project for w in waits),
        "reason": (w.reason for w in waits),
        "tool": (w.tool for w in waits),
        "agent": (w.agent for w in waits),
    }
    for field, name in DIMENSIONS:
        out[field] = _group(values, name, keys[name])
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
