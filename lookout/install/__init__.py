"""`python3 install.py` and `lookout uninstall`: set up lookout's runtime and merge its hooks into a
Claude Code settings file and/or OpenAI Codex's hooks.json or config.toml `notify` (or take them
out again). The one documented writer of someone else's files: it writes one only atomically,
after a backup, and never one it could not parse (see files)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lookout import __version__, paths
from lookout.errors import LookoutError
from lookout.install import agents, codex, files, hooks, registry, runtime
from lookout.install.files import Out
from lookout.paths import tilde


@dataclass(frozen=True)
class Options:
    """What install.py and `lookout uninstall` were asked to do (already checked for conflicts)."""

    agent: str = "claude"  # claude | codex | gemini | copilot | opencode | cursor | all
    scope: str = "user"  # user | project | local
    project: str | None = None
    settings: str | None = None
    python: str | None = None
    codex_notify: bool = False
    dry_run: bool = False
    purge: bool = False
    bridge: bool = False  # also the MQTT client and `lookout bridge` as a service


def targets(opts: Options) -> list[Path]:
    if opts.settings:
        return [Path(os.path.abspath(opts.settings))]
    return [paths.scope_path(opts.scope, opts.project)]


def do_install(opts: Options, out: Out) -> int:
    # Nothing install writes (venv, hook scripts, settings.json, their directories) may be
    # writable by others, whatever the umask: whoever can write them runs code in every session.
    os.umask(os.umask(0o022) | 0o022)
    want_claude = opts.agent in ("claude", "all")
    want_codex = opts.agent in ("codex", "all")
    (target,) = targets(opts)
    # Refuse a broken file before touching anything else.
    loaded = files.load_settings(target) if want_claude else files.Loaded(target, None, {})
    others = [a for a in agents.AGENTS if opts.agent == a]
    if opts.agent == "all":
        # Only the agents set up on this machine: `all` must not create their directories.
        others = [a for a in agents.AGENTS if agents.present(a)]
        for agent in sorted(set(agents.AGENTS) - set(others)):
            out(
                f"{agents.NAMES[agent]}: not set up here ({tilde(agents.home(agent))}"
                " does not exist): skipped"
            )
    mode = ""
    if want_codex:
        files.load_settings(paths.codex_hooks_path())
        codex.load_codex_config(paths.codex_config_path())
    for agent in others:
        agents.load(agent)
    if want_codex:
        mode = codex.codex_mode(opts.codex_notify, out)
    if opts.bridge:
        from lookout.install import bridge

        out(f"bridge: {bridge.check_config()}")  # a missing [fleet] stops here, nothing changed
    home = paths.runtime_home()
    if opts.dry_run:
        python = opts.python or str(paths.venv_python(home))
        out(f"dry run: would install the runtime into {tilde(home)}; nothing is written")
    else:
        python = runtime.ensure_interpreter(home, opts.python, out)
        changed = runtime.install_code(home, python)
        if changed:
            out(f"installed runtime {__version__} into {tilde(home)} (hooks run {tilde(python)})")
        else:
            out(f"runtime {tilde(home)} is up to date")
        runtime.install_wrapper(python, home, out)
        runtime.install_config(out)
    changed = False
    if want_claude:
        changed = hooks.install_into(loaded, python, home, opts.dry_run, out)
    if want_codex:
        codex.install_codex(mode, python, home, opts.dry_run, out)
    if opts.bridge:
        if not opts.dry_run:
            bridge.ensure_client(python, opts.python is None, out)
        bridge.install(python, home, opts.dry_run, out)
    for agent in others:
        agents.install(agent, python, home, opts.dry_run, out)
    if opts.dry_run or not want_claude:
        return 0
    if loaded.data.get("disableAllHooks") is True:
        out(f"warning: {tilde(target)} sets disableAllHooks: true, so no hook runs")
    if opts.scope == "project" and not opts.settings:
        out(
            "note: .claude/settings.json is usually committed, and these commands hold this"
            " machine's paths: --scope local keeps them out of git"
        )
    if changed:
        runtime.warn_running(out)
    return 0


def _remove_tree(path: Path, what: str, dry_run: bool, out: Out) -> None:
    home = Path(os.path.expanduser("~")).resolve()
    real = path.resolve()
    if real == Path("/") or real == home or real in home.parents:
        out(f"warning: not removing {what} {tilde(path)}: refusing a home or root directory")
        return
    if not path.exists():
        return
    out(f"{'would remove' if dry_run else 'removing'} {what} {tilde(path)}")
    if not dry_run:
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


# Before backups moved into the runtime, install wrote them next to the file it changed.
_LEGACY_BACKUP = re.compile(r"\.bak-\d{8}T\d{6}(?:-\d+)?")


def _remove_legacy_backups(targets: list[Path], dry_run: bool, out: Out) -> None:
    """Purge: the `<file>.bak-YYYYmmddTHHMMSS` copies an older lookout left next to the files
    it changed (they hold settings, perhaps secrets, and lookout's old hook commands)."""
    for target in targets:
        real = Path(os.path.realpath(target))
        try:
            names = os.listdir(real.parent)
        except OSError:
            continue
        for name in sorted(names):
            if name.startswith(real.name) and _LEGACY_BACKUP.fullmatch(name[len(real.name) :]):
                old = real.parent / name
                if old.is_file() and not old.is_symlink():
                    out(f"{'would remove' if dry_run else 'removing'} old backup {tilde(old)}")
                    if not dry_run:
                        old.unlink()


def _load_all(targets: list[Path]) -> None:
    """Parse every file first: one that cannot be read stops the uninstall before any change,
    and the error lists them all (a purge that left hooks behind would break those sessions)."""
    broken: list[LookoutError] = []
    for f in targets:
        try:
            files.load_settings(f)
        except LookoutError as exc:
            broken.append(exc)
    if len(broken) == 1:
        raise broken[0]
    if broken:
        raise LookoutError(
            f"{len(broken)} settings files with lookout's hooks cannot be read:\n  "
            + "\n  ".join(str(e) for e in broken),
            hint=f"fix or move them, then run the command again; {files.NOTHING_CHANGED}",
        )


def do_uninstall(opts: Options, out: Out) -> int:
    home = paths.runtime_home()
    roots = [str(home)]
    want_claude = opts.agent in ("claude", "all")
    want_codex = opts.agent in ("codex", "all")
    settings_files = targets(opts) if want_claude else []
    codex_files = [paths.codex_hooks_path(), paths.codex_config_path()]
    if opts.purge and not want_codex:
        # The runtime goes away: Codex's hooks and notify must not point at it either.
        want_codex = any(os.path.lexists(f) for f in codex_files)
    others = [a for a in agents.AGENTS if opts.agent in (a, "all")]
    if opts.purge or opts.agent == "all":
        # With --purge the runtime goes away: no agent's entries may point at it.
        others = [a for a in agents.AGENTS if a in others or os.path.lexists(agents.target(a))]
        if opts.agent == "all":
            others = [a for a in others if os.path.lexists(agents.target(a))]
    if want_codex:
        # Before changing anything: a broken file stops the whole uninstall.
        files.load_settings(codex_files[0])
        codex.load_codex_config(codex_files[1])
    for agent in others:
        agents.load(agent)
    if opts.purge:
        # The runtime goes away: hooks anywhere that point at it would fail, so clear every file
        # install ever wrote to (any project), and the scopes of this one.
        settings_files += [Path(e.path) for e in registry.load().values() if e.agent == "claude"]
        settings_files += [paths.scope_path(s, opts.project) for s in ("user", "project", "local")]
    unique: list[Path] = []
    for f in settings_files:
        if all(os.path.realpath(f) != os.path.realpath(u) for u in unique):
            unique.append(f)
    _load_all(unique)  # refuse a broken file before changing anything
    if opts.purge:
        _remove_legacy_backups([*unique, *codex_files], opts.dry_run, out)
    changed = False
    for target in unique:
        changed |= hooks.uninstall_file(target, roots, opts.dry_run, out)
    from lookout.install import bridge

    bridge.uninstall(opts.dry_run, out)  # the bridge would run a runtime that may be gone
    if opts.purge:
        bridge.stop_running(opts.dry_run, out)  # one started by hand, too
    if want_codex:
        hooks.uninstall_file(codex_files[0], roots, opts.dry_run, out)
        codex.uninstall_notify(codex.load_codex_config(codex_files[1]), opts.dry_run, out)
    for agent in others:
        agents.uninstall(agent, roots, opts.dry_run, out)
    if opts.purge:
        for sub in ("venv", "lookout", "hooks", "bin"):
            _remove_tree(home / sub, "runtime", opts.dry_run, out)
        if registry.backups_root().exists() or registry.registry_path().exists():
            out(
                f"{'would remove' if opts.dry_run else 'removing'} lookout's backups and record"
                f" of installed files in {tilde(home)}"
            )
            if not opts.dry_run:
                registry.remove_all()
        if not opts.dry_run and home.is_dir() and not any(home.iterdir()):
            home.rmdir()
        wrapper = paths.bin_dir() / "lookout"
        try:
            ours = runtime.WRAPPER_MARK in wrapper.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            ours = False
        if ours:
            _remove_tree(wrapper, "command", opts.dry_run, out)
        verb = "would also remove" if opts.dry_run else "also removing"
        out(f"{verb} lookout's state and config:")
        _remove_tree(Path(paths.state_dir()), "state", opts.dry_run, out)
        config = Path(paths.config_path())
        _remove_tree(config, "config", opts.dry_run, out)
        if not opts.dry_run and config.parent.is_dir() and not any(config.parent.iterdir()):
            config.parent.rmdir()
    if changed and want_claude:
        runtime.warn_running(out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """install.py's command line: see install/cli.py (which install.py calls directly)."""
    from lookout.install import cli

    return cli.main(argv)
