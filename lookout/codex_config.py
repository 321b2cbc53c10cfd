"""The top-level `notify` setting of Codex's config.toml, edited in the file's text so that the
user's comments, key order and formatting survive (a TOML writer would drop them).

Pure (str -> str): no file I/O. Never changes anything but that one setting; every edit is
checked by parsing the result and comparing every other key with the original.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import PurePosixPath
from typing import Any

from lookout import hookspec

# Where a top-level `notify = ...` may start; the parser decides which candidate is the real one.
_NOTIFY_LINE = re.compile(r"""^[ \t]*(?:notify|"notify"|'notify')[ \t]*=""")
_HEADER_LINE = re.compile(r"^[ \t]*\[")
_COMMENT_LINE = re.compile(r"^[ \t]*#")


class ConfigError(ValueError):
    """The text is not TOML, or `notify` is not what Codex accepts (message names the key)."""


def parse(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}") from exc


def notify_value(data: dict[str, Any]) -> list[str] | None:
    """The notify argv, None when unset; ConfigError unless it is an array of strings."""
    if "notify" not in data:
        return None
    value = data["notify"]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"notify: expected an array of strings, got {_kind(value)}")
    return list(value)


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, list):
        return "an array with non-string items"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__


def is_ours(argv: list[str] | None) -> bool:
    """A notify argv that runs lookout's codex_notify.py from a hooks/ directory."""
    return _script_index(argv) is not None


def _script_index(argv: list[str] | None) -> int | None:
    for i, word in enumerate(argv or ()):
        path = PurePosixPath(word)
        if path.name == hookspec.CODEX_NOTIFY_SCRIPT and path.parent.name == "hooks":
            return i
    return None


def chained(argv: list[str] | None) -> list[str]:
    """The user's own notify program: for ours, what follows its `--`; otherwise all of it."""
    i = _script_index(argv)
    if argv is None:
        return []
    if i is None:
        return list(argv)
    rest = argv[i + 1 :]
    return rest[rest.index("--") + 1 :] if "--" in rest else []


def notify_argv(python: str, script: str, previous: list[str]) -> list[str]:
    # runner.run_codex_notify: everything between "--" and the JSON Codex appends is chained.
    return [python, "-I", "-S", script, "--", *previous]


def _toml_string(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            raise ConfigError(f"notify: {text!r} is not valid Unicode (a lone surrogate)")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def render(argv: list[str]) -> str:
    """The `notify = [...]` line (with its newline) for an argv."""
    return f"notify = [{', '.join(_toml_string(a) for a in argv)}]\n"


def _without_notify(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "notify"}


def _parses_to(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def find(text: str) -> tuple[int, int] | None:
    """(start, end) character offsets of the lines holding the top-level `notify` (it may span
    several lines, with comments), None if the file has none. Found by re-parsing, so a line
    that only looks like it (inside a multi-line string, inside a table) is never taken."""
    data = parse(text)
    if "notify" not in data:
        return None
    want = {"notify": data["notify"]}
    rest_want = _without_notify(data)
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for i, line in enumerate(lines):
        if not _NOTIFY_LINE.match(line):
            continue
        for j in range(i + 1, len(lines) + 1):
            got = _parses_to("".join(lines[i:j]))
            if got is None:
                continue
            if got != want:
                break  # it parsed as something else: longer snippets only add more
            if _parses_to("".join(lines[:i] + lines[j:])) == rest_want:
                return offsets[i], offsets[j]
            break
    raise ConfigError("notify: cannot find where the setting is written in the file")


def _insertion_point(text: str, snippet: str, data: dict[str, Any]) -> str:
    """text with snippet inserted before the first table header (and the comment lines just
    above it), or at the end of a file without tables."""
    lines = text.splitlines(keepends=True)
    want = {**data, "notify": parse(snippet)["notify"]}
    for k, line in enumerate(lines):
        if not _HEADER_LINE.match(line):
            continue
        at = k
        while at > 0 and _COMMENT_LINE.match(lines[at - 1]):
            at -= 1
        candidate = "".join(lines[:at]) + snippet + "".join(lines[at:])
        if _parses_to(candidate) == want:
            return candidate
    sep = "\n" if text and not text.endswith("\n") else ""
    candidate = text + sep + snippet
    if _parses_to(candidate) == want:
        return candidate
    raise ConfigError("notify: cannot find a place for the setting at the top of the file")


def replace(text: str, snippet: str) -> str:
    """text with the top-level notify lines replaced by `snippet` (exact text; "" removes them),
    or with snippet inserted when there is no notify yet."""
    data = parse(text)
    found = find(text)
    if found is None:
        return _insertion_point(text, snippet, data) if snippet else text
    start, end = found
    return text[:start] + snippet + text[end:]


def current_snippet(text: str) -> str:
    found = find(text)
    return "" if found is None else text[found[0] : found[1]]


def check(old_text: str, new_text: str, notify: list[str] | None) -> None:
    """ConfigError unless new_text parses to old_text's keys with only notify set to `notify`
    (None: absent)."""
    old = parse(old_text) if old_text else {}
    new = _parses_to(new_text)
    if new is None:
        raise ConfigError("the edited file is not valid TOML")
    if _without_notify(new) != _without_notify(old):
        raise ConfigError("the edit would change other settings")
    if new.get("notify") != notify:
        raise ConfigError("the edited notify does not hold the wanted value")
