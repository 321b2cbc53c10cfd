"""Claude Code: lookout's per-event scripts (hookspec.EVENTS) merged into a settings.json scope
(user, project, local, or --settings FILE), or the plugin (.claude-plugin/, hooks/hooks.json).

Its payloads are the shape lookout's events are read in, so its hooks run runner.run and never
import this module: it is the install and doctor side only, importing the installer lazily as
the other agents' modules do."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from lookout.agents.base import Commentary, Facts, Install, Installer, Payload, Uninstall
    from lookout.install.checks import Report
    from lookout.install.files import Out
    from lookout.install.options import Options
    from lookout.steer.agents import Steering

NAME = "claude"
TITLE = "Claude Code"
STAMPED = False  # records are ordered by when the hook ran
CHILD_HOOKS = False  # it names its process itself (CLAUDE_PID)
SCRIPT = None  # one script per event: hookspec.EVENTS
FACTS: Facts | None = None  # lookout's own events are Claude Code's
SCOPES = ("user", "project", "local")
# What Allow approves (issue 38): every field but the model's own words beside it, as the tools'
# published input schemas mark them (Bash: `{command, description?, timeout?, run_in_background?,
# dangerouslyDisableSandbox?}`; Agent, Task before 2.1: `{description, prompt, subagent_type}`).
COMMENTARY: dict[str, Commentary] = {
    "Bash": {"runs": "command", "fields": frozenset({"description"})},
    "Agent": {"runs": "prompt", "fields": frozenset({"description"})},
    "Task": {"runs": "prompt", "fields": frozenset({"description"})},
}


def translate(data: Payload, name: str | None) -> Payload | None:
    return data  # already the shape events.parse reads


def answer(raw: bytes) -> bytes:
    return b""  # Claude Code reads a hook's stdout into the model's context: nothing


# -- its screen (steering: lookout.steer.core reads its input box before typing) ---------------

_RULE = "─"
_PROMPT = "\u276f"  # its input box's mark (HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT)
# What its input box shows while empty (not a draft of the user's).
_PLACEHOLDERS = ("Press up to edit queued messages",)


def _rule(line: str) -> bool:
    text = line.strip()
    return len(text) >= 10 and set(text) == {_RULE}


def input_box(screen: str) -> str | None:
    """The text in Claude Code's input box ("" when empty), or None when the screen shows no
    input box (a dialog is open, or it is not Claude Code's prompt). The box is the last block
    between two rules that starts with its prompt mark in the first column. `screen` may hold
    the escapes of `capture-pane -e`: what the box shows dim is its placeholder ("Resend your
    message to try again" after a failed turn), no draft of the user's."""
    from lookout.steer.screen import styled_lines

    lines = styled_lines(screen)
    plain = [line for line, _ in lines]
    rules = [i for i, line in enumerate(plain) if _rule(line)]
    if len(rules) < 2:
        return None
    top, bottom = rules[-2], rules[-1]
    box = lines[top + 1 : bottom]
    if not box or not box[0][0].startswith(_PROMPT):
        return None
    first = box[0][1].strip()
    first = first[1:] if first.startswith(_PROMPT) else first
    text = "\n".join([first.strip(), *(kept.strip() for _, kept in box[1:])]).strip()
    return "" if text in _PLACEHOLDERS else text


# How lookout types into it, interrupts it and starts it (lookout.steer.agents.Keys).
STEER: Steering | None = {
    "checked": "2.1.332",
    "queues_while_working": True,  # given to the model at its next tool call, as the user's
    "interrupt": ("Escape",),
    "multiline": True,  # LF (C-j) inserts a newline in its input box
    "program": "claude",
    "processes": ("claude",),
    "reports_interrupt": True,  # its registry turns idle; lookout reconciles from it
    "enter_after_s": 0.05,
    "socket": True,
    "registry": True,  # client_sessions: its status now, the name it gives a session
    "esc_denies": True,  # a permission dialog: "User rejected", the turn stops (tests/e2e)
    "prompt_hook_when_queued": True,  # UserPromptSubmit as it shows "Queued" (tests/e2e)
    "read_input": input_box,
}


# -- install and doctor ---------------------------------------------------------------------------


def home() -> Path:
    from lookout import paths

    return paths.user_settings_path().parent


def present() -> bool:
    """Whether Claude Code is set up here: its home, or `claude` on PATH. Without it doctor
    says nothing of Claude Code's files (a Codex-only user has none)."""
    import shutil

    return home().is_dir() or shutil.which("claude") is not None


def targets(opts: Options) -> list[Path]:
    """The settings file install writes: --settings FILE, or the scope's."""
    from pathlib import Path

    from lookout import paths

    if opts.settings:
        return [Path(os.path.abspath(opts.settings))]
    return [paths.scope_path(opts.scope, opts.project)]


def installer() -> Installer:
    """Its own functions below (install, uninstall, installed, check): its files are its own."""
    from lookout.agents import claude

    return claude


def plan_install(opts: Options, out: Out) -> Install | None:
    if opts.agent not in (NAME, "all"):
        return None
    from lookout.install import files, hooks, runtime
    from lookout.paths import tilde

    (target,) = targets(opts)
    loaded = files.load_settings(target)  # refuse a broken file before touching anything else

    def install(python: str, runtime_home: Path) -> None:
        changed = hooks.install_into(loaded, python, runtime_home, opts.dry_run, out)
        if opts.dry_run:
            return
        if loaded.data.get("disableAllHooks") is True:
            out(f"warning: {tilde(target)} sets disableAllHooks: true, so no hook runs")
        if opts.scope == "project" and not opts.settings:
            out(
                "note: .claude/settings.json is usually committed, and these commands hold this"
                " machine's paths: --scope local keeps them out of git"
            )
        if changed:
            runtime.warn_running(out)

    return install


def plan_uninstall(opts: Options, out: Out) -> Uninstall | None:
    from pathlib import Path

    from lookout import paths
    from lookout.install import files, hooks, registry, runtime

    chosen = opts.agent in (NAME, "all")
    found = targets(opts) if chosen else []
    if opts.purge:
        # The runtime goes away: hooks anywhere that point at it would fail, so clear every file
        # install ever wrote to (any project), and the scopes of this one.
        found += [Path(e.path) for e in registry.load().values() if e.agent == NAME]
        found += [paths.scope_path(s, opts.project) for s in SCOPES]
    unique: list[Path] = []
    for f in found:
        if all(os.path.realpath(f) != os.path.realpath(u) for u in unique):
            unique.append(f)
    files.load_all(unique)  # refuse a broken file before changing anything
    if not unique:
        return None

    def uninstall(roots: list[str]) -> None:
        if opts.purge:
            files.remove_legacy_backups(unique, opts.dry_run, out)
        changed = False
        for target in unique:
            changed |= hooks.uninstall_file(target, roots, opts.dry_run, out)
        if changed and chosen:
            runtime.warn_running(out)

    return uninstall


def installed(project: str) -> bool:
    """lookout's hooks in a settings scope of this project, or the plugin enabled there."""
    from lookout import paths
    from lookout.errors import LookoutError
    from lookout.install import files, settings

    roots = [str(paths.runtime_home())]
    for scope in SCOPES:
        try:
            data = files.load_settings(paths.scope_path(scope, project)).data
        except LookoutError:
            return True  # a file we cannot read: doctor says more; claim nothing
        plugins = data.get("enabledPlugins")
        if settings.count_ours(data, roots) or (
            isinstance(plugins, dict)
            and any(k.split("@")[0] == "lookout" and v is True for k, v in plugins.items())
        ):
            return True
    return False


def check(report: Report, project: str) -> int:
    """Every settings scope, and the plugin; returns how many of lookout's entries they hold
    (the plugin counts one)."""
    from lookout import paths
    from lookout.install import checks

    total = 0
    plugin = False
    seen: set[str] = set()
    quiet = not present()
    for scope in SCOPES:
        path = paths.scope_path(scope, project)
        if os.path.realpath(path) in seen:  # the project is the home directory
            continue
        seen.add(os.path.realpath(path))
        if quiet and not os.path.lexists(path):
            continue  # no Claude Code here: its missing files are no news
        count, enabled = _check_scope(report, scope, path)
        total += count
        plugin |= enabled
    if plugin:
        _check_plugin_python(report)
    if total and plugin:
        report.add(
            "hooks",
            checks.WARN,
            "installed both as a plugin and in settings: every hook runs twice",
            "keep one: python3 install.py --uninstall, or claude plugin uninstall",
        )
    return total + int(plugin)


def _check_scope(report: Report, scope: str, path: Path) -> tuple[int, bool]:
    """Report one settings file; returns (our hook count, lookout plugin enabled there)."""
    from lookout import hookspec
    from lookout.errors import LookoutError
    from lookout.install import checks, files
    from lookout.paths import tilde

    name = f"hooks ({scope})"
    where = tilde(path)
    try:
        loaded = files.load_settings(path)
    except LookoutError as exc:
        report.add(name, checks.FAIL, str(exc), "Claude Code ignores a broken settings file whole")
        return 0, False
    data = loaded.data
    plugins = data.get("enabledPlugins")
    plugin = isinstance(plugins, dict) and any(
        k.split("@")[0] == "lookout" and v is True for k, v in plugins.items()
    )
    if plugin:
        report.add(f"plugin ({scope})", checks.OK, f"the lookout plugin is enabled in {where}")
    if loaded.text is None:
        report.add(name, checks.INFO, f"{where} does not exist")
        return 0, plugin
    ours = checks.ours(data)
    if not ours:
        report.add(name, checks.INFO, f"no lookout hooks in {where}")
        return 0, plugin
    again = f"re-run install.py{'' if scope == 'user' else f' --scope {scope}'}"
    checks.report_events(
        report,
        name,
        where,
        [event for event, _ in ours],
        [event for event, _, _ in hookspec.EVENTS],
        again,
    )
    codex = "are Codex commands (LOOKOUT_AGENT=codex): Claude Code sessions would be recorded"
    checks.report_agent(report, name, ours, NAME, codex + " as Codex ones", again)
    if data.get("disableAllHooks") is True:
        report.add(name, checks.WARN, f"{where} sets disableAllHooks: true: no hook runs")
    runnable = None if scope == "user" else checks.runnable(report)
    checks.check_commands(report, name, [handler for _, handler in ours], runnable)
    return len(ours), plugin


def _check_plugin_python(report: Report) -> None:
    # The plugin's hooks.json runs `python3 -I -S`: whatever python3 the PATH gives Claude Code.
    import shutil
    import subprocess

    from lookout.install import checks

    found = shutil.which("python3")
    if found is None:
        report.add(
            "plugin",
            checks.FAIL,
            "no python3 on PATH: the plugin's hooks cannot start",
            "install Python 3.11 or newer as python3",
        )
        return
    try:
        done = subprocess.run(
            [found, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        version = done.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    if tuple(int(x) for x in version.split(".") if x.isdigit()) < (3, 11):
        report.add(
            "plugin",
            checks.FAIL,
            f"python3 on PATH ({found}) is {version or 'broken'}; lookout needs 3.11+",
            "put Python 3.11 or newer first on PATH as python3, or use python3 install.py instead",
        )
    else:
        report.add("plugin", checks.OK, f"plugin hooks run {found} (Python {version})")
