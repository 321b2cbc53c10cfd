"""`python3 install.py` and `lookout uninstall`: set up lookout's runtime and put each chosen
agent's hooks into its own files (lookout.agents.*), or take them out again. Every file is read
(and a broken one refused) before anything changes. The one documented writer of someone else's
files: it writes one only atomically, after a backup, and never one it could not parse."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import sys
from pathlib import Path

from lookout import paths, version
from lookout.agents.registry import AGENTS
from lookout.errors import LookoutError
from lookout.install import registry, runtime, runtimes, tmuxconf
from lookout.install.files import Out
from lookout.install.options import Options
from lookout.paths import tilde


def do_install(opts: Options, out: Out) -> int:
    # Nothing install writes (venv, hook scripts, settings.json, their directories) may be
    # writable by others, whatever the umask: whoever can write them runs code in every session.
    os.umask(os.umask(0o022) | 0o022)
    installers = [agent.installer() for agent in AGENTS.values()]
    steps = [step for i in installers if (step := i.plan_install(opts, out))]
    if opts.bridge:
        from lookout.install import bridge

        # A broken [fleet] stops here, nothing changed; none yet: said what to add at the end.
        fleet = bridge.check_config()
        if fleet is not None:
            out(f"bridge: {fleet}")
    home = paths.runtime_home()
    refuse_newer(home, out)  # an older checkout over a newer install: stop before any change
    with contextlib.nullcontext() if opts.dry_run else runtimes.locked(home):
        python, home = _runtime(opts, out)
        if not opts.dry_run:
            say_steer(out)
        for step in steps:
            step(python, home)
        if opts.bridge:
            if not opts.dry_run:
                bridge.ensure_client(python, opts.python is None, out)
            if fleet is None:
                bridge.say_what_to_add(opts.dry_run, out)
            else:
                bridge.install(python, home, opts.dry_run, out)
    return 0


def say_steer(out: Out) -> None:
    """One line: whether `lookout say`, `interrupt` and `start` may type into sessions (issue 33),
    and how to turn them on."""
    from lookout.config import check
    from lookout.config import steer as steer_config

    try:
        cfg = steer_config.load()
    except check.ConfigError:
        out("warning: [steer] in your config is invalid (lookout check-config): steering stays off")
        return
    if cfg.enabled:
        out(
            "steering is on: lookout say, interrupt and start may type into your sessions"
            " ([steer] in your config; docs/steer.md)"
        )
    else:
        out(
            "steering is off: lookout say, interrupt and start refuse until you set enabled ="
            f" true under [steer] in {tilde(paths.config_path())} (docs/steer.md)"
        )


def refuse_newer(home: Path, out: Out) -> None:
    """An installed runtime (or install record) whose files this code cannot read: say so and
    change nothing. With the same formats an older version installs over a newer one as any
    other does."""
    registry.check_format()
    now = runtimes.current(home)
    manifest = runtimes.read_manifest(now) if now is not None else None
    if manifest is None:
        return
    theirs = runtimes.describe(manifest, now)
    mine = version.version()
    newer = runtimes.newer_formats(manifest)
    fmt = manifest.get("format")
    if isinstance(fmt, int) and fmt > runtimes.MANIFEST_FORMAT:
        ours = runtimes.MANIFEST_FORMAT
        newer.insert(0, f"runtime.json (format {fmt}; this version reads {ours})")
    if newer:
        raise LookoutError(
            f"the installed lookout {theirs} is newer than this checkout ({mine}): it"
            f" writes {', '.join(newer)}",
            hint="install from a checkout of that version or newer; to go back anyway, `lookout"
            " uninstall --purge` first (it removes the state and config); nothing changed",
        )
    if _version(str(manifest.get("lookout"))) > _version(mine):
        out(f"note: replacing lookout {theirs} with the older {mine} (same state formats)")


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _runtime(opts: Options, out: Out) -> tuple[str, Path]:
    """The interpreter the hooks run and the runtime directory, installed (or, dry, named)."""
    home = paths.runtime_home()
    if opts.dry_run:
        python = opts.python or str(paths.venv_python(home))
        out(f"dry run: would install the runtime into {tilde(home)}; nothing is written")
        return python, home
    python = runtime.ensure_interpreter(home, opts.python, out)
    done = runtimes.install_runtime(home, python, runtime.CHECKOUT)
    now = version.version()
    if done.switched:
        out(f"installed runtime {now} into {tilde(home)} (hooks run {tilde(python)})")
    else:
        out(f"runtime {tilde(home)} is up to date")
    if done.switched and done.before is not None:
        out(
            f"switched from {_shown(done.before)} to {runtimes.RUNTIMES}/{done.runtime.name}"
            " in one step (the previous one stays until the next install)"
        )
    if done.switched and done.was is not None and _version(done.was) < _version(now):
        changes = done.runtime / runtimes.CHANGELOG
        if not changes.is_file():
            changes = runtime.CHECKOUT / runtimes.CHANGELOG
        out(f"upgraded {done.was} -> {now} (what changed: {tilde(changes)})")
    for name, user in done.kept:
        out(f"kept {_shown(name)}: {user} still runs it")
    if done.switched and done.before is not None:
        _restarts(home, done.runtime, out)
    runtime.install_wrapper(python, home, out)
    runtime.install_config(out)
    return python, home


def _shown(name: str) -> str:
    return name if name == runtimes.LEGACY_NAME else f"{runtimes.RUNTIMES}/{name}"


def _restarts(home: Path, new: Path, out: Out) -> None:
    """The long-lived processes still running older code: the bridge's service is restarted,
    the rest is said (a sender or poller ends by itself when its work is done)."""
    from lookout.install import bridge

    restarted = bridge.restart_service(out)
    seen: set[int] = set()
    for user in runtimes.users(home):
        if not user.long_lived or user.runtime == new.name or user.pid in seen:
            continue
        seen.add(user.pid)
        if user.what.startswith("lookout "):
            if not (user.what == "lookout bridge" and restarted):
                out(f"restart: {user.what} (pid {user.pid}) still runs the previous version")
        else:
            out(
                f"note: {user.what} (pid {user.pid}) finishes its work with the previous version,"
                " then exits"
            )
    if not sys.platform.startswith("linux"):  # no /proc to look at
        out(
            "note: a running `lookout serve` or `lookout bridge` runs the previous version until"
            " you restart it"
        )


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
        _rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def _rmtree(path: Path, tries: int = 5) -> None:
    """Remove a tree that a process the hooks started (a sender finishing its work) may still
    write into for a moment: a directory it filled meanwhile is removed on the next try."""
    import errno
    import time

    for attempt in range(tries):
        try:
            shutil.rmtree(path)
            return
        except OSError as exc:
            if exc.errno != errno.ENOTEMPTY or attempt == tries - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


def do_uninstall(opts: Options, out: Out) -> int:
    registry.check_format()  # a newer lookout's record: stop before any change
    home = paths.runtime_home()
    said: list[str] = []
    out = _unnamed_backups(out) if opts.purge else _noted(out, said)
    # Purge takes lookout's tmux block too (its bindings would run a command that is gone): a
    # damaged block stops it here, before anything changed.
    tmux_conf = tmuxconf.default_file()
    tmux_block = opts.purge and tmuxconf.has_block(tmux_conf)
    installers = [agent.installer() for agent in AGENTS.values()]
    steps = [step for i in installers if (step := i.plan_uninstall(opts, out))]
    for step in steps:
        step([str(home)])
    from lookout.install import bridge

    bridge.uninstall(opts.dry_run, out)  # the bridge would run a runtime that may be gone
    if opts.purge:
        bridge.stop_running(opts.dry_run, out)  # one started by hand, too
        bridge.forget_self(opts.dry_run, out)  # stopped: it leaves the others' view now
        _stop_running(home, opts.dry_run, out)
    if tmux_block:  # before the purge, which takes the backup along with the others
        tmuxconf.remove_block(tmux_conf, opts.dry_run, out)
    if opts.purge:
        _purge(home, opts.dry_run, out)
        return 0
    changed = any(not line.startswith("nothing to uninstall") for line in said)
    _say_other_agents(opts, out)
    if changed:
        _say_kept(home, opts.dry_run, out)  # after a change: a second run says nothing new
    return 0


def _stop_running(home: Path, dry_run: bool, out: Out) -> None:
    """--purge: every lookout process still running from the runtime it removes (`lookout
    serve`, the Telegram poller, the sender, a bridge the step before could not stop), stopped
    and said. Left running, `serve` wrote the state directory back within a second (newuser-4
    defect 6)."""
    if not sys.platform.startswith("linux"):  # no /proc to look at
        out(
            "note: a running `lookout serve` or `lookout bridge` keeps running from the removed"
            " runtime until you stop it"
        )
        return
    found = runtimes.running(home)
    if dry_run:
        for pid, _, what in found:
            out(f"would stop {what} (pid {pid})")
        return
    how = runtimes.stop(found)
    for pid, _, what in found:
        if how[pid] == "killed":
            out(f"stopped {what} (pid {pid}): killed, it did not exit on SIGTERM")
        elif how[pid] == "stopped":
            out(f"stopped {what} (pid {pid})")


def _say_other_agents(opts: Options, out: Out) -> None:
    """A plain uninstall of one agent: the other agents' hooks it leaves, where, and what
    removes them (newuser-4 defect 7: Gemini CLI's stayed, unsaid). Their files are the ones
    install recorded; the agent's own look confirms lookout's hooks are still there."""
    if opts.agent == "all":
        return
    files_of: dict[str, list[str]] = {}
    for entry in registry.load().values():
        if entry.agent != opts.agent and os.path.lexists(entry.path):
            files_of.setdefault(entry.agent, []).append(tilde(entry.path))
    project = opts.project or os.getcwd()
    for name, agent in AGENTS.items():
        if name in files_of and agent.installer().installed(project):
            out(
                f"{'would keep' if opts.dry_run else 'kept'}: hooks for {agent.TITLE} in"
                f" {', '.join(sorted(files_of[name]))} (python3 install.py --uninstall --agent"
                f" {name}, or --agent all, removes them)"
            )


def _noted(out: Out, said: list[str]) -> Out:
    def say(line: str) -> None:
        said.append(line)
        out(line)

    return say


def _unnamed_backups(out: Out) -> Out:
    """--purge removes lookout's backups at its end: a line before must not name one as the way
    back (newuser-3: `removed ~/.tmux.conf (backup: …)`, then the backup was deleted)."""
    marker = f" (backup: {tilde(registry.backups_root())}/"

    def say(line: str) -> None:
        cut = line.find(marker)
        out(line[:cut] if cut >= 0 and line.endswith(")") else line)

    return say


def _say_kept(home: Path, dry_run: bool, out: Out) -> None:
    """What a plain uninstall leaves (newuser-3: it said only what it removed)."""
    wrapper = paths.bin_dir() / "lookout"
    candidates = [
        ("the runtime", home),
        ("the lookout command", wrapper if _our_wrapper(wrapper) else None),
        ("your config", Path(paths.config_path())),
        ("lookout's state", Path(paths.state_dir())),
    ]
    kept = [f"{what} {tilde(path)}" for what, path in candidates if path and path.exists()]
    try:
        if tmuxconf.has_block(tmuxconf.default_file()):
            kept.append(f"the tmux block in {tilde(tmuxconf.default_file())}")
    except LookoutError:
        pass  # a damaged block: `lookout tmux-setup --remove` says what is wrong
    if not kept:
        return
    listed = ", ".join(kept[:-1]) + " and " + kept[-1] if len(kept) > 1 else kept[0]
    out(f"{'would keep' if dry_run else 'kept'}: {listed}")
    out("note: python3 install.py --uninstall --purge removes them too")


def _our_wrapper(wrapper: Path) -> bool:
    try:
        return runtime.WRAPPER_MARK in wrapper.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def _purge(home: Path, dry_run: bool, out: Out) -> None:
    """The runtime, lookout's backups and record, its command, state and config."""
    for sub in ("venv", "hooks", "bin", runtimes.RUNTIMES, runtimes.LEGACY):
        _remove_tree(home / sub, "runtime", dry_run, out)
    for link in (runtimes.CURRENT, runtimes.PREVIOUS, runtimes.LOCK) if not dry_run else ():
        with contextlib.suppress(FileNotFoundError):
            (home / link).unlink()
    if registry.backups_root().exists() or registry.registry_path().exists():
        out(
            f"{'would remove' if dry_run else 'removing'} lookout's backups (also of the files"
            f" changed above) and its record of installed files in {tilde(home)}"
        )
        if not dry_run:
            registry.remove_all()
    if not dry_run and home.is_dir() and not any(home.iterdir()):
        home.rmdir()
    wrapper = paths.bin_dir() / "lookout"
    if _our_wrapper(wrapper):
        _remove_tree(wrapper, "command", dry_run, out)
    verb = "would also remove" if dry_run else "also removing"
    out(f"{verb} lookout's state and config:")
    _remove_tree(Path(paths.state_dir()), "state", dry_run, out)
    config = Path(paths.config_path())
    _remove_tree(config, "config", dry_run, out)
    if not dry_run and config.parent.is_dir() and not any(config.parent.iterdir()):
        config.parent.rmdir()
