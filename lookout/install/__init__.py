"""`python3 install.py` and `lookout uninstall`: set up lookout's runtime and merge its hooks into a
Claude Code settings file and/or OpenAI Codex's hooks.json or config.toml `notify` (or take them
out again). The one documented writer of someone else's files: it writes one only atomically,
after a backup, and never one it could not parse (see files)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lookout import __version__, paths
from lookout.install import agents, codex, files, hooks, runtime
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


def targets(opts: Options) -> list[Path]:
    if opts.settings:
        return [Path(os.path.abspath(opts.settings))]
    return [paths.scope_path(opts.scope, opts.project)]


def do_install(opts: Options, out: Out) -> int:
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
    if want_claude:
        hooks.install_into(loaded, python, home, opts.dry_run, out)
    if want_codex:
        codex.install_codex(mode, python, home, opts.dry_run, out)
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
        # The runtime goes away: hooks anywhere that point at it would fail, so clear all scopes.
        settings_files += [paths.scope_path(s, opts.project) for s in ("user", "project", "local")]
    unique: list[Path] = []
    for f in settings_files:
        if all(os.path.realpath(f) != os.path.realpath(u) for u in unique):
            unique.append(f)
    for f in unique:
        files.load_settings(f)  # refuse a broken file before changing anything
    changed = False
    for target in unique:
        changed |= hooks.uninstall_file(target, roots, opts.dry_run, out)
    if want_codex:
        hooks.uninstall_file(codex_files[0], roots, opts.dry_run, out)
        codex.uninstall_notify(codex.load_codex_config(codex_files[1]), opts.dry_run, out)
    for agent in others:
        agents.uninstall(agent, roots, opts.dry_run, out)
    if opts.purge:
        for sub in ("venv", "lookout", "hooks", "bin"):
            _remove_tree(home / sub, "runtime", opts.dry_run, out)
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
    """install.py's entry point; its options are declared with the CLI's in commands.main."""
    from lookout.commands.main import install_main

    return install_main(argv)
