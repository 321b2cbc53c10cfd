"""Read side: the sessions as the store wrote them, with the two computed properties (stale,
alive), and their renderings (table, status-bar line, JSON). Never writes, never re-derives a
status from events: the snapshot the hooks wrote is the truth."""

from __future__ import annotations

import os
import time
from typing import Any

from lookout import _jsonfast, reconcile, store

STALE_AFTER_S = 8 * 3600
SHORT_ID = 8
ORDER = {"attention": 0, "working": 1, "idle": 2, "ended": 3}


# True/False when it can be known, None when no pid was recorded (the one kill(pid, 0) check).
pid_alive = reconcile.pid_alive


def load_sessions(
    state_dir: str, now_ms: int | None = None, stale_after_s: int = STALE_AFTER_S
) -> list[dict[str, Any]]:
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


def order(s: dict[str, Any]) -> tuple[int, int]:
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


def present(snapshot: dict[str, Any], now_ms: int, stale_after_s: int) -> dict[str, Any]:
    """One session in the shape of `lookout status --json`."""
    updated_ms = int(snapshot.get("updated_ms") or 0)
    status = snapshot.get("status") or "idle"
    reason = snapshot.get("reason")
    detail = snapshot.get("detail")
    alive = pid_alive(snapshot.get("pid"))
    if alive is False and status != "ended":
        # No SessionEnd came (kill -9, crash, closed terminal): the process is the truth.
        status, reason, detail = "ended", "process_gone", None
    # How long it has waited on you: the episode's start (kept by the machine; for an older
    # snapshot, the oldest open episode's), not its latest event.
    waiting = None
    if status == "attention":
        since = snapshot.get("since_ms")
        waiting = since if isinstance(since, int) else waiting_since(snapshot)
    agents = [
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
        "print_mode": str(snapshot.get("entrypoint") or "").startswith("sdk-"),
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


def public(session: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in session.items() if k not in ("updated_ms", "waiting_ms")}


# -- rendering ---------------------------------------------------------------------------------

# Text from payloads, paths and servers must never reach a terminal as control characters (an OSC
# 52 sequence in a prompt would set the clipboard): C0, DEL, C1 and the bidi overrides that
# reorder what is shown become visible escapes. `--json` output is exact and never goes through it.
_ESCAPES = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in (
        *range(0x20),
        0x7F,
        *range(0x80, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    )
}
_ESCAPES_KEEP_NEWLINES = {k: v for k, v in _ESCAPES.items() if k != 0x0A}


def visible(text: object, keep_newlines: bool = False) -> str:
    """`text` safe to print to a terminal: every control character shown as `\\x1b`-style text."""
    return str(text).translate(_ESCAPES_KEEP_NEWLINES if keep_newlines else _ESCAPES)


_COLOURS = {
    "attention": "\033[1;31m",
    "working": "\033[33m",
    "idle": "\033[32m",
    "ended": "\033[2m",
}
_DIM = "\033[2m"
_RESET = "\033[0m"


def age(ms: int) -> str:
    seconds = max(0, ms // 1000)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"
    return f"{seconds // 86400}d"


def _status_text(status: str, reason: object) -> str:
    return f"{status} {reason}" if status == "attention" and reason else status


def table(sessions: list[dict[str, Any]], now_ms: int, colour: bool, width: int = 120) -> str:
    """The status table. ID (the session id's start, what `explain`/`tail --session` take) tells
    two sessions of one project apart; AGE of a session that waits is how long it has waited."""
    if not sessions:
        return "no sessions"
    # (project, id, status text, status, detail, age, summary, stale)
    rows: list[tuple[str, str, str, str, str, str, str, bool]] = []
    for s in sessions:
        label = visible(s["project"] or "?")
        if s["agent"] != "claude":
            label = f"{label} ({visible(s['agent'])})"
        since = s.get("waiting_ms") or s["updated_ms"]
        rows.append(
            (
                label,
                s["session_id"][:SHORT_ID],
                visible(_status_text(s["status"], s["reason"])),
                s["status"],
                visible(s["detail"] or ""),
                age(now_ms - since),
                visible(s["summary"]),
                s["stale"],
            )
        )
        for child in s["agents"]:
            if child["status"] == "done":
                continue  # a finished agent is history: its parent's line says enough
            rows.append(
                (
                    f"  └ {visible(child['agent_type'] or 'subagent')}",
                    "",
                    visible(_status_text(child["status"] or "", child.get("reason"))),
                    child["status"] or "",
                    visible(child.get("detail") or ""),
                    "",
                    "",
                    s["stale"],
                )
            )
    header = ("PROJECT", "ID", "STATUS", "", "DETAIL", "AGE", "SUMMARY", False)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in (0, 1, 2, 4, 5)]
    used = sum(widths) + 2 * len(widths)
    room = max(10, width - used)
    lines = []
    for r in [header, *rows]:
        cells = [
            r[0].ljust(widths[0]),
            r[1].ljust(widths[1]),
            r[2].ljust(widths[2]),
            r[4].ljust(widths[3]),
            r[5].rjust(widths[4]),
        ]
        summary = r[6] if len(r[6]) <= room else r[6][: room - 1] + "…"
        if colour and r is not header:
            start = _COLOURS.get(r[3], "")
            if start:
                cells[2] = f"{start}{cells[2]}{_RESET}"
        line = "  ".join([*cells, summary]).rstrip()
        if colour and r is not header and r[7]:
            line = f"{_DIM}{line}{_RESET}"
        lines.append(line)
    return "\n".join(lines)


def line(sessions: list[dict[str, Any]]) -> str:
    """One short line for a tmux/waybar status bar."""
    counts = {k: 0 for k in ("attention", "working", "idle")}
    waiting = []
    for s in sessions:
        if s["status"] in counts:
            counts[s["status"]] += 1
        if s["status"] == "attention":
            waiting.append(f"{s['project'] or '?'}:{s['reason'] or '?'}")
    parts = []
    if waiting:
        parts.append("! " + " ".join(waiting))
    parts.extend(f"{n} {k}" for k, n in counts.items() if n and k != "attention")
    # `#` doubled: tmux expands formats and styles in #() output (N9), a project name must not.
    return visible(" · ".join(parts)).replace("#", "##") if parts else "no sessions"


# -- events.jsonl ------------------------------------------------------------------------------


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """One record, or None for a torn or foreign line (a writer killed mid-append)."""
    try:
        value = _jsonfast.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def format_record(r: dict[str, Any]) -> str:
    ts = str(r.get("ts", ""))[11:19]
    sid = str(r.get("session_id", ""))[:8]
    status = _status_text(str(r.get("status", "")), r.get("reason"))
    parts = [ts, f"{r.get('project') or '?':<14}", sid, f"{r.get('event', ''):<18}", status]
    if r.get("detail"):
        parts.append(f"[{r['detail']}]")
    if r.get("agent_id"):
        parts.append(f"<{r.get('agent_type') or r['agent_id']}>")
    if r.get("duplicate"):
        parts.append("(duplicate)")
    if r.get("late"):
        parts.append("(late)")
    if r.get("summary"):
        parts.append(f"— {r['summary']}")
    if r.get("notify"):
        parts.append("→ " + ",".join(str(n) for n in r["notify"]))
    return visible(" ".join(parts))
