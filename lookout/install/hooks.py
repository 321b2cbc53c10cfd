"""lookout's entries in a hooks file (Claude Code's settings.json, Codex's hooks.json: one shape):
the commands they run, and merging them in or taking them out through files' safe writes."""

from __future__ import annotations

import shlex
from pathlib import Path

from lookout import hookspec
from lookout.install import claude as settings
from lookout.install import files
from lookout.install.files import Loaded, Out
from lookout.paths import tilde


def hook_command(python: str, home: Path, script: str, agent: str = "claude") -> str:
    # The client runs it through a shell: quote each path, pin the interpreter (no PATH lookup).
    path = shlex.quote(str(home / "hooks" / script))
    command = f"{shlex.quote(python)} -I -S {path}"
    # Codex's payloads look much like Claude Code's: its commands say which agent runs them.
    if agent == "codex":
        return settings.guarded(path, f"{settings.AGENT_VAR}=codex {command}", term_guard=False)
    return settings.guarded(path, command)


def wanted(python: str, home: Path, agent: str = "claude") -> list[tuple[str, settings.Handler]]:
    events = hookspec.CODEX_EVENTS if agent == "codex" else hookspec.EVENTS
    return settings.wanted_handlers(
        lambda script: hook_command(python, home, script, agent), events
    )


def install_into(
    loaded: Loaded, python: str, home: Path, dry_run: bool, out: Out, agent: str = "claude"
) -> bool:
    """Merge our entries into one settings file (Claude Code's settings.json or Codex's
    hooks.json, the same shape); True if the file changed (or would)."""
    target = loaded.path
    roots = [str(home)]
    handlers = wanted(python, home, agent)
    new = settings.merge(loaded.data, handlers, roots)
    text = settings.dumps(new, loaded.text)
    count = len(handlers)
    if loaded.text is not None and text == loaded.text:
        out(f"already installed: {count} hooks in {tilde(target)}")
        return False
    if dry_run:
        out(files.unified_diff(loaded, text).rstrip("\n"))
        return True
    stale = settings.count_ours(loaded.data, roots)
    backup = files.write_settings(loaded, text)
    first = [f"replaced {stale} from an earlier install"] if stale else []
    out(f"installed {count} hooks into {tilde(target)}{files.written_note(first, backup, loaded)}")
    return True


def uninstall_file(target: Path, roots: list[str], dry_run: bool, out: Out) -> bool:
    loaded = files.load_settings(target)
    found = settings.count_ours(loaded.data, roots)
    if not found:
        out(f"nothing to uninstall in {tilde(target)}")
        return False
    assert loaded.text is not None
    text = settings.dumps(settings.unmerge(loaded.data, roots), loaded.text)
    if dry_run:
        out(files.unified_diff(loaded, text).rstrip("\n"))
        return False
    backup = files.write_settings(loaded, text)
    out(f"removed {found} hooks from {tilde(target)}{files.suffix(backup)}")
    return True
