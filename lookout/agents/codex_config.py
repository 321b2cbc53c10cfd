"""OpenAI Codex's install side (lookout.agents.codex imports it only to install, uninstall or
check): which way to wire it (hooks.json or the legacy `notify`), and the top-level `notify`
setting of its config.toml, edited in the file's text so that the user's comments, key
order and formatting survive (a TOML writer would drop them).

The text edits are pure (str -> str). Never changes anything but that one setting; every edit is
checked by parsing the result and comparing every other key with the original. The file I/O goes
through install.files (backup, atomic write, read-back)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from lookout import paths
from lookout.atomic import write_json
from lookout.errors import LookoutError
from lookout.install import files, settings
from lookout.install.files import NOTHING_CHANGED, Loaded, Out
from lookout.paths import tilde
from lookout.platform.base import capture

# The first Codex release with hooks on by default; older ones only have `notify`.
CODEX_HOOKS_SINCE = (0, 124, 0)
NOTIFY_SCRIPT = "codex_notify.py"  # in hooks/: the program for the legacy `notify` setting

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
    except RecursionError:
        raise ConfigError("nested too deeply to be a config") from None


def notify_value(data: dict[str, Any]) -> list[str] | None:
    """The notify argv, None when unset; ConfigError unless it is an array of strings."""
    if "notify" not in data:
        return None
    value = data["notify"]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        got = settings.kind(value, _TOML_KINDS)
        raise ConfigError(f"notify: expected an array of strings, got {got}")
    return list(value)


# settings.kind's words for TOML (notify_value's only array is one with a non-string in it).
_TOML_KINDS: settings.Kinds = (
    (bool, "a boolean"),
    (list, "an array with non-string items"),
    (dict, "a table"),
    (str, "a string"),
)


def is_ours(argv: list[str] | None) -> bool:
    """A notify argv that runs lookout's codex_notify.py from a hooks/ directory."""
    return _script_index(argv) is not None


def _script_index(argv: list[str] | None) -> int | None:
    for i, word in enumerate(argv or ()):
        path = PurePosixPath(word)
        if path.name == NOTIFY_SCRIPT and path.parent.name == "hooks":
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
    # runner.run_notify: everything between "--" and the JSON Codex appends is chained.
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
    except (tomllib.TOMLDecodeError, RecursionError):
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


# --- installing into Codex's files ----------------------------------------------------------


def load_codex_config(path: Path) -> Loaded:
    """Codex's config.toml, parsed strictly (data: the TOML document)."""
    text = files.read_text(path)
    if text is None:
        return Loaded(path, None, {})
    try:
        data = parse(text)
        notify_value(data)
    except ConfigError as exc:
        raise LookoutError(
            f"{tilde(path)}: {exc}", hint=f"fix or move the file; {NOTHING_CHANGED}"
        ) from exc
    return Loaded(path, text, data)


def codex_binary() -> str:
    """$LOOKOUT_CODEX names the binary (empty: none), else `codex` on PATH ("" if none)."""
    return os.environ.get("LOOKOUT_CODEX", shutil.which("codex") or "")


def codex_version(binary: str | None = None) -> tuple[str | None, tuple[int, int, int] | None]:
    """(the codex binary, its version), from `codex --version`; None where unknown."""
    if binary is None:
        binary = codex_binary()
    if not binary:
        return None, None
    try:
        done = capture([binary, "--version"], timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return binary, None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        return binary, None
    major, minor, patch = (int(x) for x in found.groups())
    return binary, (major, minor, patch)


def codex_mode(force_notify: bool, out: Out, hooks_file: Path, config_file: Path) -> str:
    """'hooks' or 'notify': which way Codex is wired, said in one line."""
    hooks, config = tilde(hooks_file), tilde(config_file)
    since = ".".join(str(n) for n in CODEX_HOOKS_SINCE)
    if force_notify:
        out(f"codex: --codex-notify: using notify in {config}")
        return "notify"
    binary, version = codex_version()
    if version is None:
        what = "codex not found on PATH" if binary is None else f"{binary} --version failed"
        out(
            f"codex: {what}: using hooks in {hooks} (Codex {since}+;"
            " for an older Codex add --codex-notify)"
        )
        return "hooks"
    shown = ".".join(str(n) for n in version)
    if version < CODEX_HOOKS_SINCE:
        out(f"codex: Codex {shown} has no hooks (they start in {since}): using notify in {config}")
        return "notify"
    out(f"codex: Codex {shown} has hooks: using {hooks}")
    return "hooks"


def notify_memo_path() -> Path:
    # The exact text of the notify lines lookout replaced, so uninstall restores them byte for
    # byte; without it the previous argv (kept after our "--") is rewritten on one line.
    return paths.runtime_home() / "codex-notify.json"


def _read_memo() -> dict[str, dict[str, str]]:
    try:
        memo = json.loads(notify_memo_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(memo, dict):
        return {}
    return {
        k: v
        for k, v in memo.items()
        if isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
    }


def _write_memo(memo: dict[str, dict[str, str]]) -> None:
    write_json(notify_memo_path(), memo or None)


def _edit_notify(loaded: Loaded, snippet: str, notify: list[str] | None) -> str:
    text = loaded.text or ""
    try:
        new_text = replace(text, snippet)
        check(text, new_text, notify)
    except ConfigError as exc:
        raise LookoutError(f"{tilde(loaded.path)}: {exc}", hint=NOTHING_CHANGED) from exc
    return new_text


def _verify_written(loaded: Loaded, backup: Path | None, notify: list[str] | None) -> None:
    """Read the file back: every other key as before, notify as wanted."""
    text = files.read_text(loaded.path) or ""
    try:
        check(loaded.text or "", text, notify)
    except ConfigError as exc:
        restore = f"restore it from {tilde(backup)}" if backup else "remove it"
        raise LookoutError(f"{tilde(loaded.path)}: read back: {exc}", hint=restore) from exc


def install_notify(loaded: Loaded, python: str, home: Path, dry_run: bool, out: Out) -> bool:
    """Point Codex's legacy `notify` at codex_notify.py, chaining the program set before."""
    path = loaded.path
    current = notify_value(loaded.data)
    previous = chained(current)
    script = str(home / "hooks" / NOTIFY_SCRIPT)
    argv = notify_argv(python, script, previous)
    if current == argv:
        out(f"already installed: notify in {tilde(path)}")
        return False
    old_snippet = current_snippet(loaded.text) if loaded.text else ""
    snippet = render(argv)
    text = _edit_notify(loaded, snippet, argv)
    if dry_run:
        out(files.unified_diff(loaded, text).rstrip("\n"))
        return True
    backup = files.write_settings(loaded, text)
    _verify_written(loaded, backup, argv)
    memo = _read_memo()
    key = os.path.realpath(path)
    if not is_ours(current):
        memo[key] = {"previous": old_snippet, "written": snippet}
    elif key in memo:
        memo[key]["written"] = snippet
    _write_memo(memo)
    first = [f"still runs your {shlex.join(previous[:1])}"] if previous else []
    out(f"set notify in {tilde(path)}{files.written_note(first, backup, loaded)}")
    return True


def uninstall_notify(loaded: Loaded, dry_run: bool, out: Out) -> bool:
    """Put back the notify lookout replaced (exactly, when it remembers the text), or remove
    ours when there was none."""
    path = loaded.path
    current = notify_value(loaded.data)
    if loaded.text is None or not is_ours(current):
        out(f"nothing to uninstall in {tilde(path)}")
        return False
    previous = chained(current)
    restore = render(previous) if previous else ""
    memo = _read_memo()
    key = os.path.realpath(path)
    entry = memo.get(key)
    if entry and entry.get("written") == current_snippet(loaded.text):
        kept = entry.get("previous", "")
        try:
            value = parse(kept).get("notify") if kept else None
        except ConfigError:
            value = False
        if value == (previous or None):
            restore = kept
    text = _edit_notify(loaded, restore, previous or None)
    if dry_run:
        out(files.unified_diff(loaded, text).rstrip("\n"))
        return False
    backup = files.write_settings(loaded, text)
    _verify_written(loaded, backup, previous or None)
    if memo.pop(key, None) is not None:
        _write_memo(memo)
    what = "restored your previous notify in" if previous else "removed lookout's notify from"
    out(f"{what} {tilde(path)}{files.suffix(backup)}")
    return True


# -- Codex's own trust records (doctor) ------------------------------------------------------------


def snake(event: str) -> str:
    """Codex's name for a hook event in its trust keys: PreToolUse -> pre_tool_use."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trust_hash(event: str, group: dict[str, Any], handler: dict[str, Any]) -> str:
    """The hash Codex 0.169.0 keeps as `trusted_hash` for one command hook (checked against its
    app-server's `hooks/list` currentHash): sha256 of the canonical JSON of the hook's identity,
    its event, its group's matcher and the handler with Codex's defaults filled in."""
    import hashlib

    hook: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": max(1, int(handler.get("timeout") or 600)),
        "async": bool(handler.get("async")),
    }
    if isinstance(handler.get("statusMessage"), str):
        hook["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": snake(event), "hooks": [hook]}
    if isinstance(group.get("matcher"), str):
        identity["matcher"] = group["matcher"]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def untrusted(
    hooks_file: Path, data: dict[str, Any], config: dict[str, Any], roots: list[str]
) -> list[str]:
    """lookout's hooks in `data` (Codex's hooks.json at `hooks_file`) that Codex would not run:
    no trust record for its key in config.toml's `[hooks.state]`, a record of another hash (the
    hook changed since it was trusted), or a record that disables it. Their events."""
    hooks = config.get("hooks")
    states = hooks.get("state") if isinstance(hooks, dict) else None
    states = states if isinstance(states, dict) else {}
    where = os.path.abspath(hooks_file)
    found = []
    for event, groups in (data.get("hooks") or {}).items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if not (isinstance(handler, dict) and settings.is_ours(handler, roots)):
                    continue
                state = states.get(f"{where}:{snake(event)}:{g}:{h}")
                if not (
                    isinstance(state, dict)
                    and state.get("trusted_hash") == trust_hash(event, group, handler)
                    and state.get("enabled", True) is not False
                ):
                    found.append(event)
    return found
