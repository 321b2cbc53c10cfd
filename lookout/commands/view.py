"""The terminal renderings of the read model (lookout.sessions): the status table, the status-bar
line and events.jsonl's records. Everything printed goes through `visible`."""

from __future__ import annotations

from lookout.boundary import visible as visible
from lookout.sessions import parse_line as parse_line  # doctor's name for it

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

SHORT_ID = 8


# -- rendering ---------------------------------------------------------------------------------

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


def evidence_text(s: Mapping[str, Any]) -> str:
    """What proved the status (`status --evidence`), and whether lookout's hooks report it."""
    text = str(s.get("evidence") or "")
    return text if s.get("hooks", True) else f"{text}, no hooks"


def table(
    sessions: Sequence[Mapping[str, Any]],
    now_ms: int,
    colour: bool,
    width: int = 120,
    evidence: bool = False,
) -> str:
    """The status table. SESSION is the session's title (the client's name for it, else the
    project); ID (the session id's start, what `explain`/`tail --session` take) tells two
    sessions apart; AGE of a session that waits is how long it has waited. With `evidence`, a
    column says what proved each status (docs/state-model.md)."""
    if not sessions:
        return "no sessions"
    # (title, id, status text, status, detail, age, summary, stale, evidence)
    rows: list[tuple[str, str, str, str, str, str, str, bool, str]] = []
    for s in sessions:
        label = visible(s.get("title") or s["project"] or "?")
        if s["agent"] != "claude":
            label = f"{label} ({visible(s['agent'])})"
        since = s.get("waiting_ms") or s["updated_ms"]
        rows.append(
            (
                label,
                s.get("short_id") or s["session_id"][:SHORT_ID],
                visible(_status_text(s["status"], s["reason"])),
                s["status"],
                visible(s["detail"] or ""),
                age(now_ms - since),
                visible(s["summary"]),
                s["stale"],
                visible(evidence_text(s)),
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
                    "",
                )
            )
    header = ("SESSION", "ID", "STATUS", "", "DETAIL", "AGE", "SUMMARY", False, "EVIDENCE")
    columns = (0, 1, 2, 8, 4, 5) if evidence else (0, 1, 2, 4, 5)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in columns]
    used = sum(widths) + 2 * len(widths)
    room = max(10, width - used)
    lines = []
    for r in [header, *rows]:
        cells = [str(r[i]).ljust(w) for i, w in zip(columns[:-1], widths[:-1], strict=True)]
        cells.append(str(r[5]).rjust(widths[-1]))
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


def line(sessions: Sequence[Mapping[str, Any]]) -> str:
    """One short line for a tmux/waybar status bar."""
    counts = {k: 0 for k in ("attention", "working", "idle")}
    waiting = []
    for s in sessions:
        if s["status"] in counts:
            counts[s["status"]] += 1
        if s["status"] == "attention":
            waiting.append(f"{s.get('title') or s['project'] or '?'}:{s['reason'] or '?'}")
    parts = []
    if waiting:
        parts.append("! " + " ".join(waiting))
    parts.extend(f"{n} {k}" for k, n in counts.items() if n and k != "attention")
    # `#` doubled: tmux expands formats and styles in #() output (N9), a project name must not.
    return visible(" · ".join(parts)).replace("#", "##") if parts else "no sessions"


# -- events.jsonl ------------------------------------------------------------------------------


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
    if r.get("answer"):
        parts.append(f"({r['answer']})")  # the permission it ended: allowed, denied by whom
    return visible(" ".join(parts))
