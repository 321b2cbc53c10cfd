"""Gemini CLI, GitHub Copilot CLI, Cursor and OpenCode: lookout's entries in each agent's own
files, with the guarantees of Claude Code's (install.files: strict parse or refuse, backup,
atomic write through symlinks, read-back; every foreign entry kept in place; idempotent; a diff
for --dry-run; an uninstall that takes out exactly what was put in).

- Gemini CLI: ~/.gemini/settings.json `hooks`, Claude Code's shape (matcher groups), timeouts in ms.
- Copilot CLI: $COPILOT_HOME/hooks/lookout.json, a hooks file of lookout's own (`version: 1`).
- Cursor: ~/.cursor/hooks.json (`version: 1`, one flat list of handlers per event).
- OpenCode: ~/.config/opencode/plugin/lookout.js, a plugin file lookout writes whole.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from lookout import hookspec, paths
from lookout.errors import LookoutError
from lookout.install import claude as settings
from lookout.install import files
from lookout.install.files import NOTHING_CHANGED, Loaded, Out
from lookout.paths import tilde

AGENTS = ("gemini", "copilot", "cursor", "opencode")
NAMES = {
    "gemini": "Gemini CLI",
    "copilot": "Copilot CLI",
    "cursor": "Cursor",
    "opencode": "OpenCode",
}
# Keys of Gemini CLI's `hooks` object that are settings, not events.
GEMINI_CONFIG_KEYS = ("enabled", "disabled", "notifications")


def target(agent: str) -> Path:
    return {
        "gemini": paths.gemini_settings_path,
        "copilot": paths.copilot_hooks_path,
        "cursor": paths.cursor_hooks_path,
        "opencode": paths.opencode_plugin_path,
    }[agent]()


def home(agent: str) -> Path:
    """The agent's own directory: ~/.gemini, $COPILOT_HOME, ~/.cursor, ~/.config/opencode."""
    path = target(agent)
    return path.parent if agent in ("gemini", "cursor") else path.parent.parent


def present(agent: str) -> bool:
    """Whether the agent is set up here (--agent all skips the others)."""
    return home(agent).is_dir()


def command(python: str, home: Path, agent: str, *args: str) -> str:
    script = home / "hooks" / hookspec.AGENT_SCRIPTS[agent]
    return " ".join(shlex.quote(w) for w in (python, "-I", "-S", str(script), *args))


# -- flat hooks files (Copilot CLI, Cursor): {"version": 1, "hooks": {event: [handler, ...]}} --


def _command_of(handler: dict[str, Any]) -> str | None:
    value = handler.get("bash", handler.get("command"))
    return value if isinstance(value, str) else None


def is_ours(handler: object, agent: str, roots: Sequence[str] = ()) -> bool:
    """A handler running this agent's lookout script from a `.../lookout/.../hooks/` directory or
    from one of `roots` (the current runtime)."""
    if not isinstance(handler, dict):
        return False
    text = _command_of(handler)
    if text is None:
        return False
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    for word in words:
        path = PurePosixPath(word)
        if path.name != hookspec.AGENT_SCRIPTS[agent] or path.parent.name != "hooks":
            continue
        base = path.parent.parent
        if "lookout" in base.parts or any(str(base) == str(PurePosixPath(r)) for r in roots):
            return True
    return False


def check_flat(data: object) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise settings.ShapeError("expected a JSON object at the top level")
    if "version" in data and data["version"] != 1:
        raise settings.ShapeError(f"version: expected 1, got {json.dumps(data['version'])}")
    hooks = data.get("hooks")
    if "hooks" in data and not isinstance(hooks, dict):
        raise settings.ShapeError("hooks: expected an object")
    for event, handlers in (hooks or {}).items():
        if not isinstance(handlers, list):
            raise settings.ShapeError(f"hooks.{event}: expected an array of hooks")
        for i, handler in enumerate(handlers):
            if not isinstance(handler, dict):
                raise settings.ShapeError(f"hooks.{event}[{i}]: expected an object")
    return data


def load_flat(path: Path) -> Loaded:
    """Like files.load_settings (the same refusals), for the flat shape."""
    return files.load_settings(path, check=check_flat)


def merge_flat(
    data: dict[str, Any], wanted: list[tuple[str, dict[str, Any]]], agent: str, roots: list[str]
) -> dict[str, Any]:
    """Exactly `wanted` as lookout's handlers: an old one of ours is replaced where it stands, a
    missing one appended at the end of its event; every other handler kept in place."""
    out = copy.deepcopy(check_flat(data))
    out.setdefault("version", 1)
    hooks = out.setdefault("hooks", {})
    keep = dict(wanted)
    for event in list(hooks):
        kept: list[Any] = []
        for handler in hooks[event]:
            if not is_ours(handler, agent, roots):
                kept.append(handler)
            elif event in keep:
                kept.append(keep.pop(event))
        if kept:
            hooks[event] = kept
        elif event not in keep:
            del hooks[event]
        else:
            hooks[event] = kept
    for event, handler in wanted:
        if event in keep:
            hooks.setdefault(event, []).append(handler)
    return out


def unmerge_flat(data: dict[str, Any], agent: str, roots: list[str]) -> dict[str, Any]:
    out = copy.deepcopy(check_flat(data))
    hooks: dict[str, Any] = out.get("hooks") or {}
    for event in list(hooks):
        kept = [h for h in hooks[event] if not is_ours(h, agent, roots)]
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return out


def count_flat(data: dict[str, Any], agent: str, roots: Sequence[str]) -> int:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    return sum(
        1
        for handlers in hooks.values()
        if isinstance(handlers, list)
        for handler in handlers
        if is_ours(handler, agent, roots)
    )


def wanted(python: str, home: Path, agent: str) -> list[tuple[str, dict[str, Any]]]:
    if agent == "gemini":
        return [
            (
                event,
                {
                    "name": f"lookout-{event}",
                    "type": "command",
                    "command": command(python, home, agent),
                    "timeout": hookspec.GEMINI_TIMEOUT_MS,
                },
            )
            for event in hookspec.GEMINI_EVENTS
        ]
    if agent == "copilot":
        return [
            (
                event,
                {
                    "type": "command",
                    "bash": command(python, home, agent, event),
                    "timeoutSec": hookspec.TIMEOUT_S,
                },
            )
            for event in hookspec.COPILOT_EVENTS
        ]
    return [
        (event, {"command": command(python, home, agent), "timeout": hookspec.TIMEOUT_S})
        for event in hookspec.CURSOR_EVENTS
    ]


# -- OpenCode: a plugin file of lookout's own ---------------------------------------------------

PLUGIN_MARK = "// lookout plugin for OpenCode, written by lookout's install.py"


def plugin_text(python: str, home: Path) -> str:
    script = str(home / "hooks" / hookspec.AGENT_SCRIPTS["opencode"])
    body = (Path(__file__).with_name("opencode_plugin.js")).read_text(encoding="utf-8")
    # json.dumps: a valid JS string literal (ASCII only, so no U+2028 surprises).
    return (
        f"{PLUGIN_MARK}\n"
        f"const PYTHON = {json.dumps(python)};\n"
        f"const SCRIPT = {json.dumps(script)};\n"
        f"{body}"
    )


def plugin_paths(text: str) -> tuple[str, str]:
    """(interpreter, script) a plugin file written by plugin_text runs; ("", "") if unreadable."""
    found: dict[str, str] = {}
    for line in text.splitlines()[1:3]:
        for name in ("PYTHON", "SCRIPT"):
            prefix = f"const {name} = "
            if line.startswith(prefix) and line.endswith(";"):
                try:
                    value = json.loads(line[len(prefix) : -1])
                except ValueError:
                    continue
                if isinstance(value, str):
                    found[name] = value
    return found.get("PYTHON", ""), found.get("SCRIPT", "")


def load_plugin(path: Path) -> Loaded:
    """The plugin file, refused unless it is absent or lookout's own."""
    text = files.read_text(path)
    if text is not None and not text.startswith(PLUGIN_MARK):
        raise LookoutError(
            f"{tilde(path)}: exists and is not lookout's plugin",
            hint=f"move it away (lookout will not overwrite it); {NOTHING_CHANGED}",
        )
    return Loaded(path, text, {})


def write_plugin(path: Path, text: str) -> None:
    data = text.encode("utf-8")
    try:
        Path(os.path.realpath(path)).parent.mkdir(parents=True, exist_ok=True)
        files.atomic_write(path, data, 0o644)
        if path.read_bytes() != data:
            raise LookoutError(f"{tilde(path)}: read-back differs", hint="run install.py again")
    except OSError as exc:
        raise LookoutError(
            f"{tilde(path)}: cannot write: {exc.strerror or exc}",
            hint=f"check the permissions of {tilde(path.parent)}",
        ) from exc


# -- install / uninstall -----------------------------------------------------------------------


def load(agent: str) -> Loaded:
    """Read (and so check) the agent's file before anything changes; refuse a broken one."""
    path = target(agent)
    if agent == "gemini":
        return files.load_settings(path, GEMINI_CONFIG_KEYS)
    if agent == "opencode":
        return load_plugin(path)
    return load_flat(path)


def _render(agent: str, loaded: Loaded, python: str, home: Path) -> tuple[str, int]:
    roots = [str(home)]
    if agent == "opencode":
        return plugin_text(python, home), 1
    handlers = wanted(python, home, agent)
    if agent == "gemini":
        new = settings.merge(loaded.data, handlers, roots, GEMINI_CONFIG_KEYS)
    else:
        new = merge_flat(loaded.data, handlers, agent, roots)
    return settings.dumps(new, loaded.text), len(handlers)


def _what(agent: str, count: int) -> str:
    return "the plugin" if agent == "opencode" else f"{count} hooks"


def install(agent: str, python: str, home: Path, dry_run: bool, out: Out) -> bool:
    loaded = load(agent)
    text, count = _render(agent, loaded, python, home)
    where = tilde(loaded.path)
    name = NAMES[agent]
    if loaded.text is not None and text == loaded.text:
        out(f"already installed: {_what(agent, count)} for {name} in {where}")
        return False
    if dry_run:
        out(files.unified_diff(loaded, text).rstrip("\n"))
        return True
    if agent == "opencode":
        # A file of lookout's own (load_plugin refused anything else): no backup to keep.
        write_plugin(loaded.path, text)
        backup = None
    else:
        backup = files.write_settings(loaded, text)
    note = files.written_note([], backup, loaded)
    out(f"installed {_what(agent, count)} for {name} into {where}{note}")
    return True


def _ours(agent: str, loaded: Loaded, roots: list[str]) -> int:
    if agent == "opencode":
        return int(loaded.text is not None)
    if agent == "gemini":
        return settings.count_ours(loaded.data, roots)
    return count_flat(loaded.data, agent, roots)


def uninstall(agent: str, roots: list[str], dry_run: bool, out: Out) -> bool:
    loaded = load(agent)
    where = tilde(loaded.path)
    found = _ours(agent, loaded, roots)
    if not found:
        out(f"nothing to uninstall for {NAMES[agent]} in {where}")
        return False
    if agent == "opencode":
        out(f"{'would remove' if dry_run else 'removed'} lookout's plugin {where}")
        if not dry_run:
            os.unlink(loaded.path)
        return not dry_run
    if agent == "gemini":
        new = settings.unmerge(loaded.data, roots, GEMINI_CONFIG_KEYS)
    else:
        new = unmerge_flat(loaded.data, agent, roots)
    text = settings.dumps(new, loaded.text)
    if dry_run:
        out(files.unified_diff(loaded, text).rstrip("\n"))
        return False
    backup = files.write_settings(loaded, text)
    out(f"removed {found} hooks for {NAMES[agent]} from {where}{files.suffix(backup)}")
    return True


def installed_commands(agent: str, roots: list[str]) -> list[tuple[str, str]]:
    """(event, command) of lookout's entries in the agent's file, for doctor; [] when none."""
    loaded = load(agent)
    if agent == "opencode":
        return [("plugin", loaded.text or "")] if loaded.text is not None else []
    hooks = loaded.data.get("hooks")
    found: list[tuple[str, str]] = []
    if not isinstance(hooks, dict):
        return found
    check: Callable[[object], bool] = (
        (lambda h: settings.is_ours(h, roots))
        if agent == "gemini"
        else (lambda h: is_ours(h, agent, roots))
    )
    for event, value in hooks.items():
        groups = value if isinstance(value, list) else []
        handlers = (
            [h for g in groups if isinstance(g, dict) for h in g.get("hooks") or []]
            if agent == "gemini"
            else groups
        )
        for handler in handlers:
            if check(handler):
                text = _command_of(handler) if isinstance(handler, dict) else None
                found.append((event, text or ""))
    return found
