"""What text lookout will type or send for the user: never a control character but newline (no
terminal escape reaches tmux), never a character that hides text from the person who sent it
(bidi controls, zero-width and other format characters: the same attack as on an Allow), never
more than [steer] max_chars, never a line the agent's input box would run as a command. Pure."""

from __future__ import annotations

import unicodedata

from lookout.boundary import invisible
from lookout.steer.shapes import SteerError

# What an agent's input box runs instead of sending (Claude Code, Codex, Gemini CLI, OpenCode):
# `/exit`, `/quit` and the like; `!` is shell mode (the command runs without the model).
COMMAND_PREFIXES = ("/", "!")


def escaped(ch: str) -> str:
    """`ch` as an escape a terminal shows as it is (\\x1b, \\u200b)."""
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _name(ch: str) -> str:
    return unicodedata.name(ch, "") or f"U+{ord(ch):04X}"


# Why each kind of invisible character (boundary.invisible) is refused, by its category.
_SEPARATOR = "a line or paragraph separator"
_NO_FORM = "a character with no visible form"
_WHY = {
    "Cf": "an invisible formatting character",
    "Zl": _SEPARATOR,
    "Zp": _SEPARATOR,
    "Co": _NO_FORM,
    "Cs": _NO_FORM,
    "Cn": _NO_FORM,
}


def hidden(ch: str) -> str | None:
    """Why `ch` may not be typed or sent, or None. Newline is the one control allowed; every
    character a shown request escapes as invisible (boundary.invisible: format characters, the
    Hangul fillers, the variation selectors...) is refused, and so is an unassigned one."""
    if ch == "\n":
        return None
    category = unicodedata.category(ch)
    if category == "Cc":
        return "a control character"
    if category == "Cn" or invisible(ch):
        return _WHY.get(category, "an invisible character")
    return None


def check(text: str, max_chars: int, *, what: str = "the message") -> str:
    """`text` as it will be delivered; SteerError when it may not be."""
    if not text.strip():
        raise SteerError("text", f"{what} is empty", hint="give the text to send")
    if len(text) > max_chars:
        raise SteerError(
            "too_long",
            f"{what} has {len(text)} characters, more than [steer] max_chars ({max_chars})",
            hint="send a shorter message, or raise max_chars in [steer]",
        )
    for i, ch in enumerate(text):
        why = hidden(ch)
        if why is not None:
            line = text.count("\n", 0, i) + 1
            raise SteerError(
                "text",
                f"{what} holds {why} ({escaped(ch)} {_name(ch)}) at character {i + 1}"
                f" (line {line}): lookout never types or sends it",
                hint="remove it; only printable text and newlines are sent",
            )
    return text


def command_prefix(text: str) -> str | None:
    """The prefix that makes an agent's input box run `text` as a command, if it has one."""
    head = text.lstrip()  # any whitespace: "\n/exit" types a newline, then runs /exit
    return next((p for p in COMMAND_PREFIXES if head.startswith(p)), None)
