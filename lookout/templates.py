"""Notification texts: `{placeholder}` templates filled with plain text from an intent.

No str.format (no attribute, index or format-spec tricks) and no regex: this runs in the hook.
"""

from __future__ import annotations

from lookout import paths, words
from lookout.words import SUMMARY_CHARS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

PLACEHOLDERS = frozenset(
    {
        "project",
        "session",
        "kind",
        "reason",
        "tool_name",
        "summary",
        "message",
        "question",
        "duration",
        "session_id",
        "cwd",
        "until",
    }
)
# A command channel's argv may also use the rendered texts.
ARGV_PLACEHOLDERS = PLACEHOLDERS | {"title", "body"}

DEFAULTS: dict[str, dict[str, str]] = {
    "permission": {"title": "{session} · needs permission", "message": "{summary}"},
    "question": {"title": "{session} · has a question", "message": "{question}"},
    "plan": {"title": "{session} · plan to approve", "message": "{summary}"},
    "elicitation": {"title": "{session} · needs input (MCP)", "message": "{message}"},
    "input": {"title": "{session} · waiting for input", "message": "{message}"},
    "error": {"title": "{session} · turn failed", "message": "{message}"},
    "done": {"title": "{session} · done in {duration}", "message": "{message}"},
    "idle": {"title": "{session} · waiting for your next prompt", "message": "{message}"},
    "subagent_done": {"title": "{session} · subagent finished", "message": "{summary}"},
    "session_start": {"title": "{session} · session started", "message": "{cwd}"},
    "session_end": {"title": "{session} · session ended", "message": "{reason}"},
    "message": {"title": "{session}", "message": "{message}"},
    "resolved": {"title": "{session} · {reason} handled", "message": "after {duration}"},
    "stuck": {"title": "{session} · stuck? nothing moves", "message": "{message}"},
    "limit_lifted": {"title": "{session} · usage limit lifted", "message": "{message}"},
}
# A failed turn's default title when the turn failed on a usage limit whose lift time is known.
_LIMIT_TITLE = "{session} · turn failed: usage limit until {until}"
# Used instead of a default title whose {duration} is unknown ("done in " reads badly).
_NO_DURATION = {"done": "{session} · done", "resolved": "{session} · {reason} handled"}
# A resolved episode the user did not answer: the default texts say what ended it instead.
_RESOLVED_BY = {
    "ended": {"title": "{session} · session ended", "message": "it was waiting: {summary}"},
    "ack": {"title": "{session} · {reason} cleared", "message": "by lookout ack"},
}

FULL_CHARS = 600

Part = tuple[bool, str]  # (is_placeholder, text)


def parse(template: str, allowed: frozenset[str] = PLACEHOLDERS) -> list[Part]:
    """Split a template into literal text and placeholder names; ValueError names the problem.
    `{{` and `}}` are literal braces."""
    parts: list[Part] = []
    literal: list[str] = []
    i, n = 0, len(template)
    while i < n:
        ch = template[i]
        if ch == "{":
            if template.startswith("{{", i):
                literal.append("{")
                i += 2
                continue
            end = template.find("}", i + 1)
            if end < 0:
                raise ValueError(f"unclosed '{{' at position {i} (write {{{{ for a literal brace)")
            name = template[i + 1 : end]
            if name not in allowed:
                raise ValueError(
                    f"unknown placeholder {{{name}}} (expected one of "
                    f"{', '.join('{' + p + '}' for p in sorted(allowed))})"
                )
            if literal:
                parts.append((False, "".join(literal)))
                literal = []
            parts.append((True, name))
            i = end + 1
        elif ch == "}":
            if template.startswith("}}", i):
                literal.append("}")
                i += 2
                continue
            raise ValueError(f"single '}}' at position {i} (write }}}} for a literal brace)")
        else:
            literal.append(ch)
            i += 1
    if literal:
        parts.append((False, "".join(literal)))
    return parts


def render(template: str, values: Mapping[str, str], allowed: frozenset[str] = PLACEHOLDERS) -> str:
    # Values are inserted verbatim: a value containing "{x}" is never expanded again.
    return "".join(
        values.get(text, "") if is_field else text for is_field, text in parse(template, allowed)
    )


def format_duration(ms: object) -> str:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or ms < 0:
        return ""
    s = int(ms // 1000)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def truncate(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rstrip()
    space = cut.rfind(" ")
    if space > limit * 2 // 3:
        cut = cut[:space]
    return cut + "…"


def _strip_links(line: str) -> str:
    # [text](url) -> text, ![alt](url) -> alt
    out: list[str] = []
    i = 0
    while i < len(line):
        start = line.find("[", i)
        if start < 0:
            break
        mid = line.find("](", start)
        end = line.find(")", mid + 2) if mid >= 0 else -1
        if mid < 0 or end < 0 or "\n" in line[start:end]:
            break
        prefix_end = start - 1 if start > 0 and line[start - 1] == "!" else start
        out.append(line[i:prefix_end])
        out.append(line[start + 1 : mid])
        i = end + 1
    out.append(line[i:])
    return "".join(out)


def strip_markdown(text: str) -> str:
    """Readable plain text from Claude's markdown: no fences, headings, emphasis or link URLs."""
    lines: list[str] = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            continue
        line = line.lstrip("#>").strip() if line.startswith(("#", ">")) else line
        for marker in ("- ", "* ", "+ "):
            if line.startswith(marker):
                line = "• " + line[2:]
                break
        for mark in ("**", "__", "`"):
            line = line.replace(mark, "")
        line = _strip_links(line)
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip()


def _first_line(text: str) -> str:
    for line in text.split("\n"):
        if line.strip():
            return line.strip()
    return ""


def values(
    intent: Mapping[str, object],
    content: str = "full",
    clean: Callable[[str], str] | None = None,
) -> dict[str, str]:
    """Placeholder values for one intent at one content level (full / summary / none).
    `clean` (lookout.mask.mask in the sender) runs on each text before it is cut."""

    def s(key: str) -> str:
        v = intent.get(key)
        if not isinstance(v, str):
            return ""
        return clean(v) if clean is not None else v

    cwd = s("cwd")
    project = s("project") or (cwd.rstrip("/").rpartition("/")[2] if cwd else "") or "claude"
    tool = s("tool_name")
    summary = s("summary").strip()
    if tool and not summary.startswith(tool):
        summary = f"{tool}: {summary}" if summary else tool
    message = strip_markdown(s("message"))
    question = strip_markdown(s("question") or (s("message") if s("kind") == "question" else ""))
    home = paths.home()
    if home not in ("", "/") and cwd.startswith(home + "/"):
        cwd = "~" + cwd[len(home) :]
    out = {
        "project": project,
        # The session's title: the client's display name when it has one, else the project.
        "session": s("title") or project,
        "kind": s("kind"),
        "reason": s("reason"),
        "tool_name": tool,
        "summary": truncate(_first_line(summary), 200),
        "message": truncate(message, FULL_CHARS),
        "question": truncate(question, FULL_CHARS),
        "duration": format_duration(intent.get("duration_ms")),
        "session_id": s("session_id"),
        "cwd": cwd,
        "until": _until(intent.get("until_ms")),
    }
    if content == "summary":
        # Remote channels: one line each, never tool input beyond the command's first line.
        out["summary"] = truncate(out["summary"], SUMMARY_CHARS)
        out["message"] = truncate(_first_line(message), SUMMARY_CHARS)
        out["question"] = truncate(_first_line(question), SUMMARY_CHARS)
    elif content == "none":
        for key in ("tool_name", "summary", "message", "question", "cwd"):
            out[key] = ""
    return out


def _until(ms: object) -> str:
    """When a usage limit lifts, as the status shows it (15:05 today, else "Nov 29 18:19")."""
    if not isinstance(ms, int) or isinstance(ms, bool) or ms <= 0:
        return ""
    return words.clock(ms)


def _default_title(kind: str, title_t: str, vals: Mapping[str, str]) -> str:
    """The default title as what is known says it: a limit's lift time, no unknown duration."""
    if kind == "error" and vals["until"]:
        return _LIMIT_TITLE
    if not vals["duration"] and kind in _NO_DURATION:
        return _NO_DURATION[kind]
    return title_t


def render_texts(
    intent: Mapping[str, object],
    tmpl: Mapping[str, Mapping[str, str]],
    content: str = "full",
    clean: Callable[[str], str] | None = None,
    host: str | None = None,
) -> tuple[str, str]:
    """(title, body) for an intent, from the config's templates (defaults for missing kinds);
    `host` (fleet.host, when [fleet] is set up) leads the title: which machine is asking."""
    kind = intent.get("kind")
    kind = kind if isinstance(kind, str) else "message"
    default = DEFAULTS.get(kind, DEFAULTS["message"])
    t = tmpl.get(kind, default)
    vals = values(intent, content, clean)
    title_t = t.get("title", default["title"])
    body_t = t.get("message", default["message"])
    ended_by = _RESOLVED_BY.get(str(intent.get("outcome"))) if kind == "resolved" else None
    if ended_by is not None and (title_t, body_t) == (default["title"], default["message"]):
        title_t, body_t = ended_by["title"], ended_by["message"]
    answer = intent.get("answer") if kind == "resolved" and ended_by is None else None
    if answer in ("allowed", "denied") and (title_t, body_t) == (
        default["title"],
        default["message"],
    ):
        # "demo · permission denied" / "in the terminal, after 4s": what happened, and who.
        by = intent.get("by")
        by_t = by.replace("{", "{{").replace("}", "}}") if isinstance(by, str) and by else ""
        title_t = "{session} · {reason} " + str(answer)  # the title, as the alert said
        if not vals["duration"]:
            body_t = by_t
        else:
            body_t = f"{by_t}, after {{duration}}" if by_t else "after {duration}"
    if title_t == default["title"]:
        title_t = _default_title(kind, title_t, vals)
    if kind == "resolved" and not vals["duration"] and body_t == default["message"]:
        body_t = ""
    title = " ".join(render(title_t, vals).split())
    title = truncate(f"{host} · {title}" if host else title, 200)
    body = render(body_t, vals).strip()
    return title, body
