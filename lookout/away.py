"""The away switch (issue 41): whether the user said they are away from the screen. Codex runs its
deciding PermissionRequest hook before its own prompt and holds the prompt until the hook
returns, so its hook waits for an answer from afar only while away (lookout.remote.decide polls
the switch, and turning it off releases every waiting hook); away also lifts `skip_when_focused`.

`<state>/away.json` (0600, replaced atomically by store.write_json_atomic, under events.lock):
`{"v": 1, "away": bool, "since_ms": int, "until_ms": int | null, "source": str}`. A past
`until_ms` reads as off, whoever reads it (`lookout away on --for 1h` ends by itself). Each change
is an `Away` line in events.jsonl with its source, through the store's one writer, as steering's
`Steered` lines are (lookout.steer.journal): no session's, so its session_id is "" and its seq 0.

Stdlib only, reads through posix: the status line and the deciding hook read it."""

from __future__ import annotations

from lookout import paths, store, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypedDict

    class State(TypedDict):
        """`lookout away --json`: the switch as of now."""

        away: bool
        since_ms: int | None  # when it was last turned on or off (or ran out)
        until_ms: int | None  # when it ends by itself (None: when turned off)
        source: str | None  # one of SOURCES; "expired" once until_ms passed


FILE = store.AWAY
EVENT = "Away"
# Who may turn it on or off: the steering surfaces (lookout.steer.shapes.SURFACES, which sits
# floors above; tests/test_away.py keeps the two equal).
SOURCES = ("terminal", "dashboard", "telegram", "slack", "matrix")
EXPIRED = "expired"  # the source of a switch whose until_ms has passed
OFF: State = {"away": False, "since_ms": None, "until_ms": None, "source": None}


def path(state_dir: str) -> str:
    return paths.join(state_dir, FILE)


def read(state_dir: str, now_ms: int | None = None) -> State:
    """The switch as of `now_ms` (now): off when never set, unreadable, a newer lookout's, or
    past its until_ms."""
    return judge(store.read_json(path(state_dir)), words.now_ms() if now_ms is None else now_ms)


def judge(raw: object, now_ms: int) -> State:
    """The parsed file as of `now_ms` (a past until_ms is off since then)."""
    if not isinstance(raw, dict) or store.newer(raw, words.FORMATS[FILE]):
        return dict(OFF)  # type: ignore[return-value]
    since, until, source = raw.get("since_ms"), raw.get("until_ms"), raw.get("source")
    since = since if type(since) is int else None
    until = until if type(until) is int else None
    source = source if isinstance(source, str) else None
    if raw.get("away") is not True:
        return {"away": False, "since_ms": since, "until_ms": None, "source": source}
    if until is not None and now_ms >= until:
        return {"away": False, "since_ms": until, "until_ms": None, "source": EXPIRED}
    return {"away": True, "since_ms": since, "until_ms": until, "source": source}


class Switch:
    """The switch as a loop polls it: the file is read again only when it was replaced (a new
    inode or mtime), and until_ms is weighed against each call's clock."""

    def __init__(self, state_dir: str) -> None:
        self.path = path(state_dir)
        self._stamp: tuple[int, int] | None = None
        self._raw: object = None

    def on(self, now_ms: int) -> bool:
        return self.state(now_ms)["away"]

    def state(self, now_ms: int) -> State:
        import posix

        try:
            st = posix.stat(self.path)
            stamp = (st.st_ino, st.st_mtime_ns)
        except OSError:
            stamp = None
        if stamp != self._stamp:
            self._stamp = stamp
            self._raw = store.read_json(self.path) if stamp is not None else None
        return judge(self._raw, now_ms)


def turn(
    state_dir: str, on: bool, *, source: str, for_s: int | None = None, now_ms: int | None = None
) -> tuple[State, bool]:
    """Turn the switch on (for `for_s` seconds, or until turned off) or off, from `source`: the
    state afterwards, and whether it changed (an off while off changes nothing, records
    nothing). Recorded as an `Away` event. ValueError for a source that may not."""
    if source not in SOURCES:
        raise ValueError(f"{source!r} may not turn the away switch")
    if for_s is not None and (not on or for_s <= 0):
        raise ValueError("only a positive --for, and only with on")
    now_ms = words.now_ms() if now_ms is None else now_ms
    with store.Locked(state_dir) as st:
        before = read(state_dir, now_ms)
        if not on and not before["away"]:
            return before, False
        until = now_ms + for_s * 1000 if for_s is not None else None
        since = before["since_ms"] if on and before["away"] else now_ms
        after: State = {"away": on, "since_ms": since, "until_ms": until, "source": source}
        store.write_json_atomic(path(state_dir), {"v": 1, **after})
        st.append(store.EVENTS, _line(after, now_ms), store.rotate_bytes())
    return after, True


def said(state: State) -> str:
    """`on until 19:20 (from dashboard)`, `off (from telegram)`: the switch in a few words."""
    if state["away"]:
        until = f" until {clock(state['until_ms'])}" if state["until_ms"] is not None else ""
        return f"on{until} (from {state['source']})"
    if state["source"] == EXPIRED:
        return f"off (ran out at {clock(state['since_ms'])})"
    return f"off (from {state['source']})" if state["source"] else "off"


def clock(ms: int | None) -> str:
    """A local wall time, `19:20`, with the date when it is not today."""
    import time

    if ms is None:
        return "?"
    at = time.localtime(ms / 1000)
    if time.strftime("%Y-%m-%d", at) == time.strftime("%Y-%m-%d"):
        return time.strftime("%H:%M", at)
    return time.strftime("%Y-%m-%d %H:%M", at)


def _line(state: State, now_ms: int) -> dict[str, Any]:
    """The Away record: the keys every events.jsonl line has (as a Steered line's), no session."""
    from lookout import events  # not for the status line, which only reads the switch

    line = store.plain_line(
        now_ms,
        0,
        "",
        None,
        EVENT,
        {},
        source=state["source"],
        summary=events.one_line(f"away {said(state)}"),
        outcome="on" if state["away"] else "off",
    )
    line["away"] = dict(state)
    return line
