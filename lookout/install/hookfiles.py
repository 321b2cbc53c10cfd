"""lookout's entries in an agent's own file, for the agents that keep their hooks in one file
(their lookout.agents module describes it with a Spec), with the
guarantees of Claude Code's (install.files: strict parse or refuse, backup, atomic write through
symlinks, read-back; every foreign entry kept in place; idempotent; a diff for --dry-run; an
uninstall that takes out exactly what was put in).

Three shapes of file:
- "groups": Claude Code's matcher groups (`hooks.<Event>[].hooks[]`), plus settings keys beside
  the events;
- "flat": `{"version": 1, "hooks": {event: [handler, ...]}}`, one flat list per event;
- "plugin": a file lookout writes whole (its first line marks it as lookout's).
"""

from __future__ import annotations

import copy
import json
import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from lookout import hookspec, paths
from lookout.errors import LookoutError
from lookout.install import checks, files, hooks, registry, settings
from lookout.install.files import NOTHING_CHANGED, Loaded, Out
from lookout.paths import tilde

if TYPE_CHECKING:
    from lookout.agents.base import Install, Uninstall
    from lookout.install.options import Options

TIMEOUT_S = hookspec.TIMEOUT_S

Handler = dict[str, Any]


def agent_home(folder: str, variable: str | None = None) -> Path:
    """An agent's own directory (its module's home()): $variable, where the agent reads one and
    it is set, else ~/<folder>."""
    override = os.environ.get(variable) if variable else None
    return Path(override or os.path.join(os.path.expanduser("~"), folder))


def command(python: str, home: Path, script: str, *args: str) -> str:
    path = home / "hooks" / script
    return " ".join(shlex.quote(w) for w in (python, "-I", "-S", str(path), *args))


@dataclass(frozen=True)
class Spec:
    """One agent's file, as its module describes it."""

    name: str  # --agent
    title: str
    script: str  # in hooks/
    shape: str  # "groups" | "flat" | "plugin"
    path: Path  # the file lookout writes
    home: Path  # the agent's own directory
    events: tuple[str, ...]  # what lookout registers (doctor says which are missing)
    wanted: Callable[[str, Path], list[tuple[str, Handler]]]  # (python, runtime) -> handlers
    config_keys: tuple[str, ...] = ()  # "groups": keys of `hooks` that are settings
    plugin: Callable[[str, Path], str] | None = None  # "plugin": (python, runtime) -> text
    plugin_paths: Callable[[str], tuple[str, str]] | None = None  # text -> (python, script)
    also_check: Callable[[checks.Report], None] | None = None  # doctor, once lookout's are found

    # -- the agent's install side (lookout.agents.base.Installer), for a one-file agent -------

    def plan_install(self, opts: Options, out: Out) -> Install | None:
        if opts.agent == "all" and not self.home.is_dir():
            # Only the agents set up on this machine: `all` must not create their directories.
            out(f"{self.title}: not set up here ({tilde(self.home)} does not exist): skipped")
            return None
        if opts.agent not in (self.name, "all"):
            return None
        load(self)
        return lambda python, home: install(self, python, home, opts.dry_run, out)

    def plan_uninstall(self, opts: Options, out: Out) -> Uninstall | None:
        there = os.path.lexists(self.path)
        # With --purge the runtime goes away: no agent's entries may point at it.
        if opts.agent != self.name and not ((opts.purge or opts.agent == "all") and there):
            return None
        load(self)
        return lambda roots: uninstall(self, roots, opts.dry_run, out)

    def installed(self, project: str) -> bool:
        try:
            return bool(installed_commands(self, [str(paths.runtime_home())]))
        except LookoutError:
            return True  # unreadable: claim nothing

    def check(self, report: checks.Report, project: str) -> int:
        found = check(self, report)
        if found and self.also_check is not None:
            self.also_check(report)
        return found


# -- flat hooks files: {"version": 1, "hooks": {event: [handler, ...]}} ------------------------


def _command_of(handler: Handler) -> str | None:
    value = handler.get("bash", handler.get("command"))
    return value if isinstance(value, str) else None


def is_ours(handler: object, script: str, roots: Sequence[str] = ()) -> bool:
    """A handler running this agent's lookout script from a `.../lookout/.../hooks/` directory or
    from one of `roots` (the current runtime)."""
    if not isinstance(handler, dict):
        return False
    text = _command_of(handler)
    if text is None:
        return False
    for word in settings.loose_words(text):
        path = PurePosixPath(word)
        if path.name != script or path.parent.name != "hooks":
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
    data: dict[str, Any], wanted: list[tuple[str, Handler]], script: str, roots: list[str]
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
            if not is_ours(handler, script, roots):
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


def unmerge_flat(data: dict[str, Any], script: str, roots: list[str]) -> dict[str, Any]:
    out = copy.deepcopy(check_flat(data))
    hooks: dict[str, Any] = out.get("hooks") or {}
    for event in list(hooks):
        kept = [h for h in hooks[event] if not is_ours(h, script, roots)]
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return out


def count_flat(data: dict[str, Any], script: str, roots: Sequence[str]) -> int:
    found = settings.handlers_in(data, grouped=False)
    return sum(1 for _, handler in found if is_ours(handler, script, roots))


# -- a plugin file of lookout's own -------------------------------------------------------------


def plugin_mark(title: str) -> str:
    return f"// lookout plugin for {title}, written by lookout's install.py"


def load_plugin(path: Path, mark: str) -> Loaded:
    """The plugin file, refused unless it is absent or lookout's own."""
    text = files.read_text(path)
    if text is not None and not text.startswith(mark):
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


def load(spec: Spec) -> Loaded:
    """Read (and so check) the agent's file before anything changes; refuse a broken one."""
    if spec.shape == "groups":
        return files.load_settings(spec.path, spec.config_keys)
    if spec.shape == "plugin":
        return load_plugin(spec.path, plugin_mark(spec.title))
    return load_flat(spec.path)


def _render(spec: Spec, loaded: Loaded, python: str, home: Path) -> tuple[str, int]:
    roots = [str(home)]
    if spec.plugin is not None:
        return spec.plugin(python, home), 1
    handlers = spec.wanted(python, home)
    if spec.shape == "groups":
        new = settings.merge(loaded.data, handlers, roots, spec.config_keys)
    else:
        new = merge_flat(loaded.data, handlers, spec.script, roots)
    return settings.dumps(new, loaded.text), len(handlers)


def _what(spec: Spec, count: int) -> str:
    return "the plugin" if spec.shape == "plugin" else f"{count} hooks"


def install(spec: Spec, python: str, home: Path, dry_run: bool, out: Out) -> bool:
    loaded = load(spec)
    text, count = _render(spec, loaded, python, home)
    where = tilde(loaded.path)
    already = f"already installed: {_what(spec, count)} for {spec.title} in {where}"
    done = files.without_writing(loaded, text, dry_run, already, out)
    if done is not None:
        return done
    created_dirs = registry.missing_dirs(loaded.path) if loaded.text is None else []
    if spec.shape == "plugin":
        # A file of lookout's own (load_plugin refused anything else): no backup to keep.
        write_plugin(loaded.path, text)
        backup = None
    else:
        backup = files.write_settings(loaded, text)
    # What uninstall gives back (the original bytes) or removes (a file and folders it created).
    registry.remember(loaded.path, spec.name, loaded.text, text, backup, created_dirs)
    note = files.written_note([], backup, loaded)
    out(f"installed {_what(spec, count)} for {spec.title} into {where}{note}")
    return True


def _ours(spec: Spec, loaded: Loaded, roots: list[str]) -> int:
    if spec.shape == "plugin":
        return int(loaded.text is not None)
    if spec.shape == "groups":
        return settings.count_ours(loaded.data, roots)
    return count_flat(loaded.data, spec.script, roots)


def uninstall(spec: Spec, roots: list[str], dry_run: bool, out: Out) -> bool:
    """Take lookout's entries out, as for Claude Code (hooks.uninstall_file): the original bytes
    when nothing else changed the file since; no file (nor the folders made for it) when
    install created it and only lookout's entries are in it."""
    loaded = load(spec)
    where = tilde(loaded.path)
    found = _ours(spec, loaded, roots)
    entry = registry.get(loaded.path)
    if not found:
        out(f"nothing to uninstall for {spec.title} in {where}")
        if entry is not None and not dry_run:
            registry.forget(loaded.path)
        return False
    if spec.shape == "plugin":
        out(f"{'would remove' if dry_run else 'removed'} lookout's plugin {where}")
        if not dry_run:
            os.unlink(loaded.path)
            hooks.remove_created_dirs(entry)
            registry.forget(loaded.path)
        return not dry_run
    if spec.shape == "groups":
        new = settings.unmerge(loaded.data, roots, spec.config_keys)
    else:
        new = unmerge_flat(loaded.data, spec.script, roots)
    assert loaded.text is not None
    if entry is not None and entry.created and _empty(new) and not loaded.path.is_symlink():
        return hooks.remove_created(loaded, entry, found, dry_run, out)
    unchanged = entry is not None and entry.written == registry.digest(loaded.text)
    check = check_flat if spec.shape == "flat" else None
    original = hooks.original_text(entry, spec.config_keys, check) if unchanged else None
    text = settings.dumps(new, loaded.text) if original is None else original
    if dry_run:
        out(files.unified_diff(loaded, text).rstrip("\n"))
        return False
    backup = files.write_settings(loaded, text)
    registry.forget(loaded.path)
    out(f"removed {found} hooks for {spec.title} from {where}{files.suffix(backup)}")
    return True


def _empty(data: dict[str, Any]) -> bool:
    """Nothing left but the shell lookout wrote around its entries (`version: 1`, `hooks: {}`)."""
    rest = {
        k: v
        for k, v in data.items()
        if not (k == "version" and v == 1) and not (k == "hooks" and v == {})
    }
    return not rest


def installed_commands(spec: Spec, roots: list[str]) -> list[tuple[str, str]]:
    """(event, command) of lookout's entries in the agent's file, for doctor; [] when none."""
    loaded = load(spec)
    if spec.shape == "plugin":
        return [("plugin", loaded.text or "")] if loaded.text is not None else []
    groups_shape = spec.shape == "groups"
    check: Callable[[object], bool] = (
        (lambda h: settings.is_ours(h, roots))
        if groups_shape
        else (lambda h: is_ours(h, spec.script, roots))
    )
    found: list[tuple[str, str]] = []
    for event, handler in settings.handlers_in(loaded.data, groups_shape):
        if check(handler):
            text = _command_of(handler) if isinstance(handler, dict) else None
            found.append((event, text or ""))
    return found


# -- doctor ------------------------------------------------------------------------------------


def check(spec: Spec, report: checks.Report) -> int:
    """lookout's entries in the agent's file, and whether their commands run. Says nothing about
    an agent not set up on this machine."""
    if not spec.home.is_dir():
        return 0
    roots = [str(paths.runtime_home())]
    name = f"hooks ({spec.name})"
    where = tilde(spec.path)
    try:
        entries = installed_commands(spec, roots)
    except LookoutError as exc:
        report.add(name, checks.FAIL, str(exc), f"{spec.title} cannot use a broken file")
        return 0
    if not entries:
        report.add(name, checks.INFO, f"not installed (python3 install.py --agent {spec.name})")
        return 0
    if spec.plugin_paths is not None:
        python, script = spec.plugin_paths(entries[0][1])
        report.add(name, checks.OK, f"lookout's plugin {where}")
        commands = [f"{shlex.quote(python)} -I -S {shlex.quote(script)}"]
    else:
        checks.report_events(
            report,
            name,
            where,
            [event for event, _ in entries],
            list(spec.events),
            f"re-run install.py --agent {spec.name}",
        )
        commands = [command for _, command in entries]
    checks.check_commands(report, name, [{"command": c} for c in commands])
    return len(entries)
