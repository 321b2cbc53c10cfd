"""The read model: every session as the store wrote it, with the two computed properties (stale,
alive), most urgent first; and events.jsonl's lines. Never writes, never re-derives a status from
events: the snapshot the hooks wrote is the truth. `status`, the dashboard, the fleet and jump
all read through here."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from lookout import _jsonfast, reconcile, store, words

STALE_AFTER_S = 8 * 3600
ORDER = {"attention": 0, "working": 1, "idle": 2, "ended": 3}


class Child(TypedDict):
    """A subagent as a row shows it."""

    agent_id: str
    agent_type: str
    status: str | None
    reason: str | None
    detail: str | None


class Row(TypedDict):
    """One session as shown: `lookout status --json`, `/api/sessions` and the MQTT payload are
    this without `updated_ms` and `waiting_ms` (see `public`)."""

    session_id: str
    agent: str
    status: str
    reason: str | None
    detail: str | None
    summary: str
    cwd: str | None
    project: str
    last_event: str | None
    updated_at: str
    updated_ms: int
    since: str
    stale: bool
    alive: bool | None
    pid: int | None
    tmux_pane: str | None
    model: str | None
    last_turn_ms: int | None
    episode: dict[str, Any] | None
    waiting_since: str | None
    waiting_ms: int | None
    print_mode: bool
    agents: list[Child]
    # Where its tmux pane is now, resolved live by jump.tmux_json (status --json, /api/sessions).
    tmux: NotRequired[dict[str, Any] | None]
    # jump and pick attach the raw snapshot (where the session runs); never in public output.
    snapshot: NotRequired[Mapping[str, Any]]


def load_sessions(
    state_dir: str, now_ms: int | None = None, stale_after_s: int = STALE_AFTER_S
) -> list[Row]:
    """Every recorded session as shown to the user, most urgent first."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    directory = os.path.join(state_dir, store.SESSIONS)
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        names = []
    sessions = []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        snapshot = store.read_json(os.path.join(directory, name))
        if isinstance(snapshot, dict) and isinstance(snapshot.get("session_id"), str):
            sessions.append(present(snapshot, now_ms, stale_after_s))
    sessions.sort(key=order)
    return sessions


def order(s: Row) -> tuple[int, int]:
    """Attention first, the one waiting longest on top; then the most recently active."""
    if s["status"] == "attention":
        return 0, int(s.get("waiting_ms") or s["updated_ms"])
    return ORDER.get(s["status"], 9), -s["updated_ms"]


def waiting_since(snapshot: dict[str, Any]) -> int | None:
    """When the oldest open attention episode (the session's or a subagent's) began."""
    actors = [snapshot.get("main"), *(snapshot.get("agents") or {}).values()]
    starts = [
        int(a["episode"]["since_ms"])
        for a in actors
        if isinstance(a, dict)
        and isinstance(a.get("episode"), dict)
        and isinstance(a["episode"].get("since_ms"), int)
    ]
    return min(starts) if starts else None


def present(snapshot: dict[str, Any], now_ms: int, stale_after_s: int) -> Row:
    """One session in the shape of `lookout status --json`."""
    updated_ms = int(snapshot.get("updated_ms") or 0)
    status = snapshot.get("status") or "idle"
    reason = snapshot.get("reason")
    detail = snapshot.get("detail")
    # True/False when it can be known, None when no pid was recorded (one kill(pid, 0) check).
    alive = reconcile.pid_alive(snapshot.get("pid"))
    if alive is False and status != "ended":
        # No SessionEnd came (kill -9, crash, closed terminal): the process is the truth.
        status, reason, detail = "ended", "process_gone", None
    # How long it has waited on you: the episode's start (kept by the machine; for an older
    # snapshot, the oldest open episode's), not its latest event.
    waiting = None
    if status == "attention":
        since = snapshot.get("since_ms")
        waiting = since if isinstance(since, int) else waiting_since(snapshot)
    agents: list[Child] = [
        {
            "agent_id": agent_id,
            "agent_type": child.get("agent_type") or "",
            "status": child.get("status"),
            "reason": child.get("reason"),
            "detail": child.get("detail"),
        }
        for agent_id, child in (snapshot.get("agents") or {}).items()
        if isinstance(child, dict)
    ]
    return {
        "session_id": snapshot["session_id"],
        "agent": snapshot.get("agent") or "claude",
        "status": status,
        "reason": reason,
        "detail": detail,
        "summary": snapshot.get("summary") or "",
        "cwd": snapshot.get("cwd"),
        "project": snapshot.get("project") or "",
        "last_event": snapshot.get("last_event"),
        "updated_at": store.rfc3339(updated_ms),
        "updated_ms": updated_ms,
        "since": store.rfc3339(
            waiting if waiting is not None else shown_since(snapshot, status, updated_ms)
        ),
        "stale": now_ms - updated_ms > stale_after_s * 1000,
        "alive": alive,
        "pid": snapshot.get("pid"),
        "tmux_pane": snapshot.get("tmux_pane"),
        "model": snapshot.get("model"),
        "last_turn_ms": snapshot.get("last_turn_ms"),
        "episode": snapshot.get("episode"),
        "waiting_since": store.rfc3339(waiting) if waiting is not None else None,
        "waiting_ms": waiting,
        "print_mode": words.print_mode(snapshot.get("entrypoint")),
        "agents": agents,
    }


def shown_since(snapshot: dict[str, Any], status: str, updated_ms: int) -> int:
    """When a status other than attention began (attention's start is `waiting_since`): the
    turn's start while working, else the last event."""
    if status == "working":
        turn = snapshot.get("turn")
        if isinstance(turn, dict) and isinstance(turn.get("started_ms"), int):
            return int(turn["started_ms"])
    return updated_ms


def public(session: Mapping[str, Any]) -> dict[str, Any]:
    """The row as it goes out (`status --json`, the dashboard, the bus): without the two
    millisecond keys that are only for ordering."""
    return {k: v for k, v in session.items() if k not in ("updated_ms", "waiting_ms")}


# -- events.jsonl ------------------------------------------------------------------------------


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """One record, or None for a torn or foreign line (a writer killed mid-append)."""
    try:
        value = _jsonfast.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
