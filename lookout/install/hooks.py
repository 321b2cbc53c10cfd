"""lookout's entries in a hooks file of Claude Code's shape (its settings.json, and the same shape
in another agent's file):
the commands they run, and merging them in or taking them out through files' safe writes."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from lookout import hookspec, words
from lookout.errors import LookoutError
from lookout.install import files, registry, settings
from lookout.install.files import Loaded, Out
from lookout.paths import tilde


def hook_command(python: str, home: Path, script: str, agent: str = "claude") -> str:
    # The client runs it through a shell: quote each path, pin the interpreter (no PATH lookup).
    path = shlex.quote(str(home / "hooks" / script))
    command = f"{shlex.quote(python)} -I -S {path}"
    # Another agent running Claude Code's scripts (its payloads much like Claude Code's): its
    # commands say which agent runs them.
    if agent != "claude":
        return settings.guarded(path, f"{settings.AGENT_VAR}={agent} {command}", term_guard=False)
    return settings.guarded(path, command)


def wanted(python: str, home: Path) -> list[tuple[str, settings.Handler]]:
    """Claude Code's entries: one per event, and the deciding hook when [remote] is on."""
    handlers = settings.wanted_handlers(lambda script: hook_command(python, home, script))
    return handlers + remote_wanted(python, home)


def remote_wanted(
    python: str, home: Path, agent: str = "claude"
) -> list[tuple[str, settings.Handler]]:
    """The deciding hook, only with `[remote] enabled = true` in the user's own config: a second
    PermissionRequest entry, synchronous, whose timeout follows wait_s. Claude Code's always
    waits; Codex's (its PermissionRequest hooks run before its prompt and hold it) waits only
    while the away switch is on (lookout.remote.decide)."""
    remote = remote_config()
    if not remote.get("enabled"):
        return []
    handler: settings.Handler = {
        "type": "command",
        "command": hook_command(python, home, hookspec.REMOTE_SCRIPT, agent),
        "timeout": int(remote["wait_s"]) + hookspec.TIMEOUT_MARGIN_S,
    }
    return [(hookspec.REMOTE_EVENT, handler)]


def remote_config() -> dict[str, Any]:
    """[remote] from the global config; off when the config is missing or broken."""
    from lookout.config import check, files

    try:
        cfg = files.load(None)
    except check.ConfigError:
        return {"enabled": False, "broken": True}
    remote: dict[str, Any] = cfg["remote"]
    return remote


def install_into(
    loaded: Loaded,
    python: str,
    home: Path,
    dry_run: bool,
    out: Out,
    agent: str = "claude",
    handlers: list[tuple[str, settings.Handler]] | None = None,
) -> bool:
    """Merge our entries (`handlers`; Claude Code's by default) into one settings file (Claude
    Code's settings.json, or another agent's file of the same shape); True if the file changed
    (or would)."""
    target = loaded.path
    roots = [str(home)]
    if handlers is None:
        handlers = wanted(python, home)
    new = settings.merge(loaded.data, handlers, roots)
    text = settings.dumps(new, loaded.text)
    count = len(handlers)
    done = files.without_writing(
        loaded, text, dry_run, f"already installed: {count} hooks in {tilde(target)}", out
    )
    if done is not None:
        return done
    stale = settings.count_ours(loaded.data, roots)
    created_dirs = registry.missing_dirs(target) if loaded.text is None else []
    backup = files.write_settings(loaded, text)
    # Before the first install: what uninstall gives back, and what purge must visit.
    registry.remember(target, agent, loaded.text, text, backup, created_dirs)
    first = [f"replaced {stale} from an earlier install"] if stale else []
    out(f"installed {count} hooks into {tilde(target)}{files.written_note(first, backup, loaded)}")
    _say_remote(handlers, out, agent)
    return True


def _say_remote(handlers: list[tuple[str, settings.Handler]], out: Out, agent: str) -> None:
    deciding = [h for _, h in handlers if hookspec.REMOTE_SCRIPT in str(h.get("command"))]
    if deciding:
        *some, last = answer_surfaces()
        # Codex's prompt waits for its hook: only while you said you are away (`lookout away`).
        when = " while `lookout away` is on" if agent in words.ANSWERED_WHEN_AWAY else ""
        out(
            f"remote answers are on: a permission request waits{when} up to"
            f" {remote_config()['wait_s']} s for {', '.join(some)} or {last}"
        )


def answer_surfaces() -> list[str]:
    """Where a waiting request can be answered with this config: always `lookout answer` and
    the dashboard; the desktop popup and Telegram when a rule sends permission alerts to such a
    channel; Home Assistant with [fleet] answers = true."""
    from lookout.config import check, files
    from lookout.config import fleet as fleet_config

    found = ["`lookout answer`", "the dashboard"]
    try:
        cfg = files.load(None)
    except check.ConfigError:
        return found

    from lookout.surfaces import home_assistant
    from lookout.surfaces import registry as answering

    surfaces = {
        s.NAME
        for rule in cfg["rules"]
        if {"permission", "question"} & set(rule["when"])
        for name in rule["channels"] + rule["escalate_to"]
        if name in cfg["channels"] and cfg["channels"][name].get("enabled", True)
        if (s := answering.of(cfg["channels"][name])) is not None
    }

    found += [s.LABEL for name, s in answering.SURFACES.items() if name in surfaces]
    try:
        if fleet_config.load().answers:
            found.append(home_assistant.LABEL)
    except (fleet_config.NotConfigured, check.ConfigError):
        pass
    return found


def uninstall_file(target: Path, roots: list[str], dry_run: bool, out: Out) -> bool:
    """Take our entries out of one file, giving back what was there before lookout: the
    original bytes when nothing else changed since, no file at all when install created it."""
    loaded = files.load_settings(target)
    found = settings.count_ours(loaded.data, roots)
    entry = registry.get(target)
    if not found:
        out(f"nothing to uninstall in {tilde(target)}")
        if entry is not None and not dry_run:
            registry.forget(target)
        return False
    assert loaded.text is not None
    data = settings.unmerge(loaded.data, roots)
    unchanged = entry is not None and entry.written == registry.digest(loaded.text)
    if entry is not None and entry.created and not data and not target.is_symlink():
        return remove_created(loaded, entry, found, dry_run, out)
    original = original_text(entry) if unchanged else None
    text = settings.dumps(data, loaded.text) if original is None else original
    if dry_run:
        out(files.unified_diff(loaded, text).rstrip("\n"))
        return False
    backup = files.write_settings(loaded, text)
    registry.forget(target)
    out(f"removed {found} hooks from {tilde(target)}{files.suffix(backup)}")
    return True


def original_text(
    entry: registry.Entry | None,
    config_keys: Collection[str] = (),
    check: Callable[[object], object] | None = None,
) -> str | None:
    """The file as it was before lookout (its own formatting, escapes and key order), when the
    file still holds exactly what lookout last wrote."""
    if entry is None or entry.original is None:
        return None
    try:
        # Bytes, not read_text: universal newlines would turn a CRLF original into LF (L14).
        original = Path(entry.original).read_bytes().decode("utf-8")
        # A backup that does not parse (as the file's own shape) is not given back.
        files.load_settings_text(original, config_keys, check)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return original


def remove_created(
    loaded: Loaded, entry: registry.Entry, found: int, dry_run: bool, out: Out
) -> bool:
    """Install created this file and only our entries are in it: remove it, and the
    directories install created for it if they are empty."""
    where = tilde(loaded.path)
    if dry_run:
        out(f"would remove {where} (install created it; only lookout's hooks are in it)")
        return False
    text = (loaded.text or "").encode("utf-8")
    if loaded.path.read_bytes() != text:
        # Someone (a running Claude Code?) wrote it since we read it: never clobber that.
        raise LookoutError(
            f"{where}: changed while lookout was reading it",
            hint=f"run the command again; {files.NOTHING_CHANGED}",
        )
    registry.backup(loaded.path, text, 0o600)
    os.unlink(loaded.path)
    remove_created_dirs(entry)
    registry.forget(loaded.path)
    out(f"removed {where} ({found} hooks; install had created it)")
    return True


def remove_created_dirs(entry: registry.Entry | None) -> None:
    """The directories install created for a file it has just removed, innermost first, each
    only if empty: anything else in one is someone else's."""
    for directory in entry.created_dirs if entry is not None else []:
        try:
            os.rmdir(directory)
        except OSError:
            break
