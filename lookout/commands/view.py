"""The terminal renderings of the read model (lookout.sessions): the status table, the status-bar
line and events.jsonl's records. Everything printed goes through `visible`."""

from __future__ import annotations

import os
import sys

from lookout import paths
from lookout.boundary import visible as visible
from lookout.sessions import label
from lookout.sessions import parse_line as parse_line  # doctor's name for it

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from lookout.config.files import ProjectFile
    from lookout.sessions import Row

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


# A row of the status table: (title, id, status text, status, detail, age, summary, stale,
# evidence).
_Row = tuple[str, str, str, str, str, str, str, bool, str]
_HEADER: _Row = ("SESSION", "ID", "STATUS", "", "DETAIL", "AGE", "SUMMARY", False, "EVIDENCE")


def table(
    sessions: Sequence[Mapping[str, Any]],
    now_ms: int,
    colour: bool,
    width: int = 120,
    evidence: bool = False,
) -> str:
    """The status table. SESSION is the session's title (the client's name for it, else the
    project); ID (the session id's start, what `explain`/`tail` take) tells two
    sessions apart; AGE of a session that waits is how long it has waited. With `evidence`, a
    column says what proved each status (docs/state-model.md)."""
    if not sessions:
        return "no sessions"
    rows = [row for s in sessions for row in _rows(s, now_ms)]
    columns = (0, 1, 2, 8, 4, 5) if evidence else (0, 1, 2, 4, 5)
    widths = [max(len(str(r[i])) for r in [_HEADER, *rows]) for i in columns]
    room = max(10, width - sum(widths) - 2 * len(widths))  # what is left for the summary
    lines = [_laid_out(_HEADER, columns, widths, room, False)]
    lines += [_laid_out(r, columns, widths, room, colour) for r in rows]
    return "\n".join(lines)


def _rows(s: Mapping[str, Any], now_ms: int) -> list[_Row]:
    """A session's row, then one per subagent still at work: a finished one is history, its
    parent's row says enough."""
    named = visible(label(s))
    if s["agent"] != "claude":
        named = f"{named} ({visible(s['agent'])})"
    since = s.get("waiting_ms") or s["updated_ms"]
    row: _Row = (
        named,
        s.get("short_id") or s["session_id"][:SHORT_ID],
        visible(_status_text(s["status"], s["reason"])),
        s["status"],
        visible(detail_text(s, now_ms)),
        age(now_ms - since),
        visible(s["summary"]),
        s["stale"],
        visible(evidence_text(s)),
    )
    return [row, *(_child_row(c, s["stale"]) for c in s["agents"] if c["status"] != "done")]


def detail_text(s: Mapping[str, Any], now_ms: int) -> str:
    """DETAIL: the session's detail, with how long its tool has run (`Bash 12m`) and when a
    usage limit lifts (`rate_limit until 15:05`, then `lifted 15:05`)."""
    detail = str(s.get("detail") or "")
    tool = s.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("running_s"), int):
        return f"{detail} {age(tool['running_s'] * 1000)}".strip()
    until = s.get("until_ms")
    if isinstance(until, int):
        from lookout.silence import clock

        word = "until" if until > now_ms else "lifted"
        return f"{detail} {word} {clock(until)}".strip()
    return detail


def _child_row(child: Mapping[str, Any], stale: bool) -> _Row:
    status = child["status"] or ""
    return (
        f"  └ {visible(child['agent_type'] or 'subagent')}",
        "",
        visible(_status_text(status, child.get("reason"))),
        status,
        visible(child.get("detail") or ""),
        "",
        "",
        stale,
        "",
    )


def _laid_out(r: _Row, columns: tuple[int, ...], widths: list[int], room: int, colour: bool) -> str:
    """One row in its columns (AGE aligned right), the summary cut to the room left; with
    `colour`, the status in its colour and a stale session's whole row dimmed."""
    cells = [str(r[i]).ljust(w) for i, w in zip(columns[:-1], widths[:-1], strict=True)]
    cells.append(str(r[5]).rjust(widths[-1]))
    summary = r[6] if len(r[6]) <= room else r[6][: room - 1] + "…"
    start = _COLOURS.get(r[3], "") if colour else ""
    if start:
        cells[2] = f"{start}{cells[2]}{_RESET}"
    text = "  ".join([*cells, summary]).rstrip()
    return f"{_DIM}{text}{_RESET}" if colour and r[7] else text


def line(sessions: Sequence[Mapping[str, Any]]) -> str:
    """One short line for a tmux/waybar status bar."""
    counts = {k: 0 for k in ("attention", "working", "idle")}
    waiting = []
    for s in sessions:
        if s["status"] in counts:
            counts[s["status"]] += 1
        if s["status"] == "attention":
            waiting.append(f"{label(s)}:{s['reason'] or '?'}")
    parts = []
    if waiting:
        parts.append("! " + " ".join(waiting))
    parts.extend(f"{n} {k}" for k, n in counts.items() if n and k != "attention")
    # `#` doubled: tmux expands formats and styles in #() output (N9), a project name must not.
    return visible(" · ".join(parts)).replace("#", "##") if parts else "no sessions"


# -- events.jsonl ------------------------------------------------------------------------------


def format_record(r: dict[str, Any], title: str | None = None) -> str:
    """One events.jsonl record as a line; `title`: how the session is named now (its record
    carries only the project)."""
    ts = str(r.get("ts", ""))[11:19]
    sid = str(r.get("session_id", ""))[:8]
    said = r.get("status")
    status = _status_text(said, r.get("reason")) if isinstance(said, str) else ""
    # A record of no session's (the away switch's) names none.
    named = title or r.get("project") or ("?" if sid else "-")
    parts = [ts, f"{named:<14}", sid, f"{r.get('event', ''):<18}", status]
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


# -- what a status shows, and how wide and in colour -----------------------------------------


class Filter:
    """Which sessions a status shows."""

    def __init__(self, show_all: bool, attention: bool, project: str | None) -> None:
        self.show_all = show_all
        self.attention = attention
        self.project = project

    def __call__(self, sessions: list[Row]) -> list[Row]:
        return [s for s in sessions if self.keeps(s)]

    def keeps(self, s: Row) -> bool:
        if self.attention and s["status"] != "attention":
            return False
        if not self.show_all and not self.attention and s["status"] == "ended":
            return False
        return self.project is None or project_matches(self.project, s)


def project_matches(glob: str, s: Row) -> bool:
    """Like a rule's `projects`: the project name, or the path when the glob has a / or ~."""
    from fnmatch import fnmatchcase

    if "/" in glob or glob.startswith("~"):
        pattern = os.path.expanduser(glob).rstrip("/")
        cwd = str(s.get("cwd") or "")
        return fnmatchcase(cwd, pattern) or fnmatchcase(cwd, pattern + "/*")
    return fnmatchcase(str(s.get("project") or ""), glob)


def colour() -> bool:
    return (
        sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    )


def width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 160


def project_file_line(pf: ProjectFile) -> str:
    """What check-config (and status) say about the project file a session uses."""
    where = visible(paths.tilde(pf.path))
    if pf.ignored is None:
        how = "trusted: it may add to your config" if pf.trusted else "it narrows your config"
        return f"{where}: ok ({how})"
    hint = (
        f"lookout trust {visible(paths.tilde(os.path.dirname(os.path.dirname(pf.path))))}"
        " shows what it adds and asks"
        if pf.adds
        else "a project file must be yours and writable only by you"
    )
    return f"warning: {where}: ignored: {visible(pf.ignored)}\nhint: {hint}"
