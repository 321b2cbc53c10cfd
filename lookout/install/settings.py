"""Merge lookout's hook entries into a Claude Code settings dict and take them out again.

Pure functions (dict -> dict, str -> str): no file I/O here; the installer reads and writes.
Never drops, reorders or rewrites anything that is not lookout's own hook entry.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import PurePosixPath
from typing import Any

from lookout import events, hookspec

Handler = dict[str, Any]
Settings = dict[str, Any]
Wanted = Sequence[tuple[str, Handler]]
Kinds = tuple[tuple[type, str], ...]

# Every script name lookout has ever registered: what an older install left behind must be found.
OUR_SCRIPTS = frozenset(
    {script for _, script, _ in hookspec.EVENTS}
    | {hookspec.GENERIC_SCRIPT, hookspec.REMOTE_SCRIPT}
    # An agent with one script of its own names it after itself (hooks/gemini.py).
    | {f"{agent}.py" for agent in events.AGENTS}
)

# The variable that tells the runtime which agent runs a hook (events.agent_of reads it).
AGENT_VAR = "LOOKOUT_AGENT"


def script_guard(script: str) -> str:
    """`[ -f SCRIPT ] || exit 0; `: Python exits 2 for a script that is gone (a purge, a plugin
    update under a running session), and Claude Code reads 2 as "block": every prompt would be
    refused. A missing script must cost nothing. `script` is already shell-quoted."""
    return f"[ -f {script} ] || exit 0; "


def guarded(script: str, run: str, term_guard: bool = True) -> str:
    """The hook command. Claude Code's start with `trap '' TERM`: `claude -p` exits right after
    firing Stop, StopFailure and SessionEnd and SIGTERMs hooks still starting up, which loses the
    turn's last record; the hook ignores SIGTERM from its first instruction (it finishes in
    milliseconds, its lock wait is bounded). Then the script check, then `exec` of `run` (no
    shell process left behind)."""
    command = script_guard(script) + ("exec " if term_guard else "") + run
    return "trap '' TERM; " + command if term_guard else command


def _after_guards(words: list[str]) -> list[str]:
    if words[:3] == ["trap", "", "TERM;"]:
        words = words[3:]
    if words[:2] == ["[", "-f"] and words[3:7] == ["]", "||", "exit", "0;"]:
        words = words[7:]
    if words[:1] == ["exec"]:
        words = words[1:]
    return words


def loose_words(command: str) -> list[str]:
    """The shell words of `command`; one shlex cannot split (an open quote) split at spaces."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def command_words(command: str) -> list[str]:
    """The argv a hook command runs: shell words without the guards or VAR=value prefixes."""
    words = _after_guards(shlex.split(command))
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        words = words[1:]
    return words


# A group with one of these matchers matches every event, like a group without a matcher.
_MATCH_ALL = ("", "*")


class ShapeError(ValueError):
    """The settings are valid JSON but not the shape Claude Code accepts (message names the key)."""


def wanted_handlers(
    command_for: Callable[[str], str],
    events: Sequence[tuple[str, str, bool]] = hookspec.EVENTS,
) -> list[tuple[str, Handler]]:
    """One command handler per event (hookspec.EVENTS, or another agent's subset of it);
    command_for maps a script to a command."""
    out: list[tuple[str, Handler]] = []
    for event, script, is_async in events:
        handler: Handler = {
            "type": "command",
            "command": command_for(script),
            "timeout": hookspec.TIMEOUT_S,
        }
        if is_async:
            handler["async"] = True
        out.append((event, handler))
    return out


# How an error names a JSON value it did not expect ("expected an object, got an array"): the
# words of the first type it is, in this order.
JSON_KINDS: Kinds = (
    (bool, "a boolean"),
    (dict, "an object"),
    (list, "an array"),
    (str, "a string"),
    (type(None), "null"),
    (object, "a number"),
)


def kind(value: object, kinds: Kinds = JSON_KINDS) -> str:
    """The words for value's type, from the first of `kinds` it is (else its Python type)."""
    return next((words for type_, words in kinds if isinstance(value, type_)), type(value).__name__)


def check_shape(settings: object, config_keys: Collection[str] = ()) -> Settings:
    """Raise ShapeError unless settings is an object whose `hooks` Claude Code would accept.
    `config_keys` are keys of `hooks` that are settings, not events (in another agent's file of
    this shape): kept as they are, never merged into."""
    if not isinstance(settings, dict):
        raise ShapeError(f"expected a JSON object at the top level, got {kind(settings)}")
    hooks = settings.get("hooks")
    if hooks is None and "hooks" not in settings:
        return settings
    if not isinstance(hooks, dict):
        raise ShapeError(f"hooks: expected an object, got {kind(hooks)}")
    for event, groups in hooks.items():
        if event in config_keys:
            continue
        where = f"hooks.{event}"
        if not isinstance(groups, list):
            raise ShapeError(f"{where}: expected an array of matcher groups, got {kind(groups)}")
        for i, group in enumerate(groups):
            gwhere = f"{where}[{i}]"
            if not isinstance(group, dict):
                raise ShapeError(f"{gwhere}: expected an object, got {kind(group)}")
            if "matcher" in group and not isinstance(group["matcher"], str):
                got = kind(group["matcher"])
                raise ShapeError(f"{gwhere}.matcher: expected a string, got {got}")
            handlers = group.get("hooks")
            if not isinstance(handlers, list):
                got = "nothing" if "hooks" not in group else kind(handlers)
                raise ShapeError(f"{gwhere}.hooks: expected an array of hooks, got {got}")
            for j, handler in enumerate(handlers):
                if not isinstance(handler, dict):
                    got = kind(handler)
                    raise ShapeError(f"{gwhere}.hooks[{j}]: expected an object, got {got}")
    return settings


def _command_paths(handler: Handler) -> Iterable[str]:
    command = handler.get("command")
    if isinstance(command, str):
        yield from loose_words(command)
    args = handler.get("args")
    if isinstance(args, list):
        yield from (a for a in args if isinstance(a, str))


def is_ours(handler: object, roots: Sequence[str] = ()) -> bool:
    """True for a command running one of our hook scripts from a `.../lookout/.../hooks/` dir
    (any install layout, old or new) or from one of `roots` (the current runtime, anywhere)."""
    if not isinstance(handler, dict) or handler.get("type") != "command":
        return False
    for word in _command_paths(handler):
        path = PurePosixPath(word)
        if path.name not in OUR_SCRIPTS or path.parent.name != "hooks":
            continue
        base = path.parent.parent
        if "lookout" in base.parts:
            return True
        if any(str(base) == str(PurePosixPath(root)) for root in roots):
            return True
    return False


def handler_agent(handler: object) -> str:
    """Which agent one of our handlers was installed for: another agent's commands declare
    themselves with a leading `LOOKOUT_AGENT=<agent>` (see hooks.hook_command)."""
    if isinstance(handler, dict):
        command = handler.get("command")
        try:
            words = _after_guards(shlex.split(command)) if isinstance(command, str) else []
        except ValueError:
            words = []
        for word in words:
            name, _, value = word.partition("=")
            if name == AGENT_VAR and value in events.AGENTS:
                return value
            if "=" not in word:
                break  # past the environment assignments: the interpreter
    return "claude"


def handlers_in(settings: Settings, grouped: bool = True) -> Iterator[tuple[str, object]]:
    """(event, handler) for every handler under `hooks`: inside each event's matcher groups
    (Claude Code's shape) or, not grouped, straight in each event's list (a flat hooks file).
    Whatever has another shape is passed over (a setting among the events, Gemini CLI's)."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, value in hooks.items():
        if not isinstance(value, list):
            continue
        if not grouped:
            yield from ((event, handler) for handler in value)
            continue
        for group in value:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                yield from ((event, handler) for handler in group["hooks"])


def count_ours(settings: Settings, roots: Sequence[str] = ()) -> int:
    return sum(1 for _, handler in handlers_in(settings) if is_ours(handler, roots))


def _strip(
    settings: Settings,
    roots: Sequence[str],
    keep: dict[str, list[Handler]],
    config_keys: Collection[str] = (),
) -> None:
    """Remove our handlers in place. For an event in `keep`, the first ones of ours found in
    match-all groups are replaced, in order, by keep[event]'s handlers where they stand (so a
    re-install is byte-identical); what replaced one leaves `keep`. Containers that a removal
    empties are dropped, except an event (and the `hooks` key) that `keep` is about to fill
    again, so it stays where it was. `config_keys` are settings beside the events."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return
    refill = set(keep)
    removed_event = False
    for event in list(hooks):
        groups = hooks[event]
        if event in config_keys:
            continue  # a setting, not an event (check_shape let it through)
        removed_group = False
        for group in list(groups):
            handlers = group["hooks"]
            kept: list[Any] = []
            for handler in handlers:
                if not is_ours(handler, roots):
                    kept.append(handler)
                elif keep.get(event) and group.get("matcher", "") in _MATCH_ALL:
                    kept.append(keep[event].pop(0))
            if kept != handlers:
                group["hooks"] = kept
                if not kept:
                    groups.remove(group)
                    removed_group = True
        if removed_group and not groups and event not in refill:
            del hooks[event]
            removed_event = True
    if removed_event and not hooks and not refill:
        del settings["hooks"]


def merge(
    settings: Settings,
    wanted: Wanted,
    roots: Sequence[str] = (),
    config_keys: Collection[str] = (),
) -> Settings:
    """Settings with exactly `wanted` as lookout's entries: stale ones replaced or removed,
    missing ones appended as a new match-all group at the end of their event."""
    out = copy.deepcopy(check_shape(settings, config_keys))
    # An event may have more than one entry of ours (PermissionRequest: the recording hook and,
    # with [remote] enabled, the deciding one).
    keep: dict[str, list[Handler]] = {}
    for event, handler in wanted:
        keep.setdefault(event, []).append(copy.deepcopy(handler))
    _strip(out, roots, keep, config_keys)
    left = [(event, handler) for event, handlers in keep.items() for handler in handlers]
    if left:
        hooks = out.setdefault("hooks", {})
        for event, handler in left:
            hooks.setdefault(event, []).append({"hooks": [handler]})
    return out


def unmerge(
    settings: Settings, roots: Sequence[str] = (), config_keys: Collection[str] = ()
) -> Settings:
    """Settings without any lookout entry; containers that this leaves empty are dropped."""
    out = copy.deepcopy(check_shape(settings, config_keys))
    _strip(out, roots, {}, config_keys)
    return out


# --- text form -------------------------------------------------------------------------------

_INDENT = re.compile(r"\n([ \t]+)\S")


def dumps(settings: Settings, like: str | None = None) -> str:
    """JSON text in the style of `like` (the file's current text): its indent, its final newline,
    and ASCII escapes only if it used them. Claude Code's own 2-space style round-trips exactly."""
    indent: str = "  "
    newline = True
    ensure_ascii = False
    if like is not None and like.strip():
        found = _INDENT.search(like)
        if found:
            indent = found.group(1)
        newline = like.endswith("\n")
        ensure_ascii = like.isascii() and "\\u" in like
    text = json.dumps(settings, indent=indent, ensure_ascii=ensure_ascii)
    text = text + "\n" if newline else text
    # L14: a CRLF file stays CRLF (JSON strings never hold a raw newline, so every one is ours).
    crlf = like is not None and "\r\n" in like and like.count("\n") == like.count("\r\n")
    return text.replace("\n", "\r\n") if crlf else text
