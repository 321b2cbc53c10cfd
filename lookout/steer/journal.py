"""The steering record: each say/interrupt/start as a `Steered` line in events.jsonl (through
the store's one writer, under its lock, the text masked as alerts mask it), and the rate limit
per surface (steer-rate.json). A Steered line changes no status: the snapshot only gets its seq
moved on, so the line's seq is unique as every record's is."""

from __future__ import annotations

from typing import Any

from lookout import events, mask, paths, store, words
from lookout.steer.shapes import SteerError

RATE_FILE = "steer-rate.json"
RATE_LOCK = "steer.lock"
EVENT = "Steered"
WINDOW_MS = 60_000
TEXT_MAX = events.MESSAGE_MAX


def allow(state_dir: str, surface: str, per_minute: int, now_ms: int | None = None) -> None:
    """Count one attempt of `surface`; SteerError(rate) when it made `per_minute` already in
    the last minute. Every attempt counts, refused or not: a surface cannot probe faster."""
    now_ms = words.now_ms() if now_ms is None else now_ms
    with store.Locked(state_dir, RATE_LOCK):
        path = paths.join(state_dir, RATE_FILE)
        table = store.read_json(path)
        surfaces = table.get("surfaces") if isinstance(table, dict) else None
        surfaces = dict(surfaces) if isinstance(surfaces, dict) else {}
        recent = [
            t
            for t in surfaces.get(surface) or []
            if isinstance(t, int) and now_ms - WINDOW_MS < t <= now_ms
        ]
        if len(recent) >= per_minute:
            wait_s = max(1, (min(recent) + WINDOW_MS - now_ms + 999) // 1000)
            raise SteerError(
                "rate",
                f"{surface}: {len(recent)} steering actions in the last minute, the most"
                f" [steer] per_minute allows",
                hint=f"try again in {wait_s} s",
            )
        surfaces[surface] = [*recent, now_ms]
        store.write_json_atomic(path, {"v": 1, "surfaces": surfaces})


def shown_text(text: str) -> str:
    """The text as the record keeps it: masked as alerts are, cut to the hook's message size."""
    masked = mask.mask(text)
    return masked if len(masked) <= TEXT_MAX else masked[: TEXT_MAX - 1] + "…"


def record(
    state_dir: str,
    session_id: str,
    *,
    action: str,
    source: str,
    via: str,
    target: str,
    text: str,
    result: str,
    ts_ms: int,
    reason: str | None = None,
    dismissed: str | None = None,
    agent: str | None = None,
) -> dict[str, Any]:
    """Append one Steered line for `session_id` (its snapshot's seq moves on; nothing else in it
    changes) and return it. `dismissed`: the dialog an interrupt's Esc answered (as No). `agent`:
    the agent when no snapshot says it (a `start` whose first hook never came); the status is
    then unknown (None), never a guess."""
    kept = shown_text(text)
    what = f"{action} via {via}" if via else action
    what += f", {result}" + (f" ({reason})" if reason else "")
    if dismissed:
        what += f", the open dialog ({dismissed}) dismissed (denied)"
    summary = events.one_line(f"{what}: {kept}" if kept else what)
    steer: dict[str, Any] = {
        "action": action,
        "via": via,
        "target": target,
        "result": result,
        "text": kept,
    }
    if reason:
        steer["reason"] = reason
    if dismissed:
        steer["dismissed"] = dismissed
    with store.Locked(state_dir) as st:
        session = st.read_session(session_id)
        known = session is not None and not store.newer(session, words.SNAPSHOT_VERSION)
        seq = 0
        s: dict[str, Any] = dict(session) if session is not None else {}
        if session is not None and known:
            seq = int(session.get("seq", 0)) + 1
            session["seq"] = seq
            st.write_session(session)
        line: dict[str, Any] = store.plain_line(
            ts_ms,
            seq,
            session_id,
            s.get("agent") or agent or "claude",
            EVENT,
            s,
            source=source,
            summary=summary,
            outcome=result,
        )
        line["steer"] = steer
        st.append(store.EVENTS, line, store.rotate_bytes())
    return line
