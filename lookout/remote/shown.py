"""What a surface shows of a permission request, and whether it may offer Allow (issue 31): the
one rule that the desktop popup, Telegram, Home Assistant, the dashboard and `lookout answer`
(and any later surface) call.

Allow approves what the tool will do (issue 38): every field of its input but the model's own
commentary beside it (Bash's `description`), as the agent's plug-in names it from the tool's
published schema (lookout.agents.<agent>.COMMENTARY; an unknown tool: every field counts; see
requests.approved). So a surface offers Allow (for a question: its options) only when the text
it shows holds all of what runs: every such field, every line and character, escaped by
`escape` as the dashboard card and `lookout answer` show it, within the surface's real limit
(below), and unchanged by masking except for values that are a secret and nothing else
(lookout.mask.harmless). An alert (the popup, a Telegram message, a Home Assistant button) is
read at a glance and shows each field as one `key: value` line, so it offers Allow only when no
such value spans lines: a command's second line would read as another field, or be missed.
Otherwise a surface offers Deny, and its text says where all of it is shown: the request's
dashboard card (when [remote] url is set) and `lookout answer ID`.

The commentary is never counted and never stands in for what runs (an input without its
command gets no Allow anywhere). It is shown after what runs, `key: text` on a line of its own
with its line breaks escaped, where the surface has room left (cut with …, or left out; never on
a Home Assistant button's one line, nor at `content = "summary"`).

Stdlib only, pure; never called by a hook."""

from __future__ import annotations

from typing import Protocol, TypedDict

from lookout import mask
from lookout.boundary import invisible, visible
from lookout.remote import requests
from lookout.words import SUMMARY_CHARS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from lookout.remote.requests import Approved

# The views without a limit (the dashboard card, `lookout answer`): a `view` for None shows all of
# the request, unmasked. Every alert has its surface's real limits (LIMITS in surfaces/<x>.py);
# none shows more than ALERT_CHARS (Telegram's message, the longest), so no more is masked.
ALERT_CHARS = 4096


class Limits(Protocol):
    """What an alert can show, as its surface measured it (lookout.surfaces.<x>.LIMITS): what
    it is called in a refusal, whether it is one line (a Home Assistant button's name: no tool
    before it, no commentary, no refusal text after it), whether the refusal's lines take room
    from the preview, whether `lines` under `title` fit, and how they are drawn."""

    @property
    def WHAT(self) -> str: ...  # "popup", "message", "button's name"

    @property
    def ONE_LINE(self) -> int: ...  # 0, or the characters of the one line it shows

    @property
    def TAIL_ROOM(self) -> bool: ...  # the refusal's own lines count against the limit

    def fits(self, title: str, lines: list[str]) -> bool: ...

    def render(self, lines: list[str]) -> str: ...


class View(TypedDict):
    """What one surface shows of a request: `text` (its body; on the desktop ready for the
    popup), and whether it may offer Allow (for a question: its options), and if not, `why`."""

    text: str
    allow: bool
    why: str


def escape(text: object, keep_newlines: bool = True) -> str:
    """`text` with every control, bidi and invisible character as a visible escape (`\\x1b`,
    `\\u202e`, `\\u200b`): what the dashboard card and `lookout answer` show."""
    return "".join(f"\\u{ord(c):04x}" if invisible(c) else c for c in visible(text, keep_newlines))


def request_lines(rec: Mapping[str, Any], seen: Approved) -> list[str]:
    """What Allow approves of the request, as every surface shows it, not yet escaped: every
    input field but the model's commentary (`seen`: requests.approved), its switches (`flags:
    ! name (risky)`), each question with its options."""
    questions = rec.get("questions") or []
    text = seen["runs"]
    if seen["missing"]:  # never the summary: it would be the commentary (`description`)
        text = text or f"(no {seen['missing']})"
    elif not text and not questions:
        text = str(rec.get("summary") or "") or "(no input)"
    lines = text.split("\n") if text else []
    flags = [f for f in rec.get("flags") or [] if isinstance(f, dict)]
    if flags:
        names = [f"! {f['name']} (risky)" if f.get("risky") else str(f.get("name")) for f in flags]
        lines.append("flags: " + ", ".join(names))
    for q in questions:
        notes = q.get("descriptions") or [""] * len(q["options"])
        options = [f"{o} ({d})" if d else o for o, d in zip(q["options"], notes, strict=False)]
        lines.append(f"{q['question']}  options: {' | '.join(options)}")
    return lines


def whole(rec: Mapping[str, Any], seen: Approved | None = None) -> str:
    """Why no view of `rec` holds all of its input ("" when one may): the whole verdict of the
    surfaces without a limit (the dashboard, `lookout answer`), which show all of it."""
    if rec.get("too_large"):
        return "it is too large to show in full: answer it in the terminal"
    if not isinstance(rec.get("detail"), str):
        return "its input is unknown"
    missing = (seen or requests.approved(rec))["missing"]
    if missing:
        return f"its input has no {missing}, and the model's commentary never stands in for it"
    return ""


def view(
    rec: Mapping[str, Any],
    surface: Limits | None,
    *,
    title: str = "",
    content: str = "full",
    url: str | None = None,
) -> View:
    """What an alert within `surface`'s limits (None: the dashboard card or `lookout answer`,
    which have none) shows of request `rec` under `title` at its `content` level, and whether
    it may offer Allow. `url`: the request's dashboard card, named when Allow is not here."""
    seen = requests.approved(rec)
    raw = request_lines(rec, seen)
    notes = requests.note_lines(seen["notes"])
    why = whole(rec, seen)
    if surface is None:  # no limit: they show all of it, unmasked
        text = "\n".join(escape(line) for line in [*raw, *notes])
        return View(text=text, allow=not why, why=why)
    text = "\n".join(raw)
    cut = len(text) > ALERT_CHARS  # longer than any alert shows: mask only what may be shown
    shows = text[:ALERT_CHARS] + ("…" if cut else "")
    lines, why = _alert_lines(rec, shows, surface, why, seen["notes"])
    lines, why = _at_level(lines, content, why)
    # The commentary: after what runs, where there is room; never on a button's one line.
    if content != "full" or surface.ONE_LINE:
        notes = []
    notes = [escape(mask.masked(note).text, False) for note in notes]
    if not why and not cut and surface.fits(title, lines):
        lines = _with_notes(surface, title, lines, notes, [])
        return View(text=surface.render(lines), allow=True, why="")
    why = why or f"it is longer than this {surface.WHAT} shows"
    shown, tail = _deny_only(surface, title, lines, why, rec, url)
    if shown == lines:  # all of what runs is there: the commentary, if the tail leaves room
        shown = _with_notes(surface, title, shown, notes, tail)
    # lookout's own words are not broken up for the popup: an id must copy whole.
    return View(text="\n".join(filter(None, (surface.render(shown), *tail))), allow=False, why=why)


def _alert_lines(
    rec: Mapping[str, Any], text: str, surface: Limits, why: str, notes: Mapping[str, str]
) -> tuple[list[str], str]:
    """The request as an alert's lines (masked, escaped), and why they may not offer Allow
    ('' when they may, as far as what they hold goes)."""
    hidden = mask.masked(text)
    lines = escape(hidden.text).split("\n")
    if not surface.ONE_LINE:  # a button's title names the tool
        lines[0] = f"{escape(rec.get('tool_name') or '?', False)}: {lines[0]}"
    if not why and not all(mask.harmless(s) for s in hidden.secrets):
        why = "a masked value there holds more than a secret"
    if not why and _spans_lines(rec, notes):
        why = "a value there spans several lines"
    return lines, why


def _at_level(lines: list[str], content: str, why: str) -> tuple[list[str], str]:
    """What a channel's content level lets it show of those lines (`none`: nothing, `summary`:
    one line of SUMMARY_CHARS), and why that is not all of it."""
    if content == "none":
        return [], why or 'this channel shows no tool input (content = "none")'
    if content == "summary" and (len(lines) > 1 or len(lines[0]) > SUMMARY_CHARS):
        lines = [_cut(lines[0] + (" …" if len(lines) > 1 else ""), SUMMARY_CHARS)]
        return lines, why or 'this channel shows one line of it (content = "summary")'
    return lines, why


def _spans_lines(rec: Mapping[str, Any], notes: Mapping[str, str]) -> bool:
    """Does a value of what runs hold a line break (the alerts show one line per field)? A
    nested value is shown as JSON, where a line break is `\\n`; escaped separators (`\\r`,
    `\\u2028`) are visible. The commentary (`notes`) is shown on one line, escaped."""
    tool_input = rec.get("tool_input")
    values = (
        [v for k, v in tool_input.items() if k not in notes] if isinstance(tool_input, dict) else []
    )
    for q in rec.get("questions") or []:
        values += [q.get("question"), *(q.get("options") or []), *(q.get("descriptions") or [])]
    return any(isinstance(v, str) and "\n" in v for v in values)


def _deny_only(
    surface: Limits,
    title: str,
    lines: list[str],
    why: str,
    rec: Mapping[str, Any],
    url: str | None,
) -> tuple[list[str], list[str]]:
    """As much of the request as fits, and then why there is no Allow and where all of it is."""
    if surface.ONE_LINE:
        return [
            _cut(lines[0] + (" …" if len(lines) > 1 else ""), surface.ONE_LINE)
        ] if lines else [], []
    rid = escape(rec.get("id") or "?", False)
    tail = [f"No Allow here: {why}."]
    if not rec.get("too_large"):
        tail += [f"All of it: {url}" if url else "All of it on the dashboard (lookout serve)"]
        tail += [f"or: lookout answer {rid}"]
    # On the popup the tail's rows come on top of the preview's: a popup without Allow may be
    # taller (it approves nothing), and still fits a 600 px screen.
    room = tail if surface.TAIL_ROOM else []
    shown: list[str] = []
    for line in lines:
        if not surface.fits(title, [*shown, line, *room]):
            shown.append(line[: _longest(surface, title, shown, line, room)] + "…")
            break
        shown.append(line)
    return shown, tail


def _longest(surface: Limits, title: str, shown: list[str], line: str, room: list[str]) -> int:
    """How long a start of `line`, cut with …, fits after `shown` and before `room`."""
    low, high = 0, len(line)
    while low < high:
        mid = (low + high + 1) // 2
        fits = surface.fits(title, [*shown, line[:mid] + "…", *room])
        low, high = (mid, high) if fits else (low, mid - 1)
    return low


def _with_notes(
    surface: Limits, title: str, lines: list[str], notes: list[str], room: list[str]
) -> list[str]:
    """`lines`, then as much of the model's commentary as fits before `room`: each note whole,
    the first that does not fit cut with … (its `key: ` label whole), the rest left out."""
    out = list(lines)
    for note in notes:
        if surface.fits(title, [*out, note, *room]):
            out.append(note)
            continue
        keep = _longest(surface, title, out, note, room)
        if keep > note.find(": ") + 2:
            out.append(note[:keep] + "…")
        break
    return out


def _cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"
