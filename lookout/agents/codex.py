"""OpenAI Codex: Claude Code's per-event scripts in $CODEX_HOME/hooks.json (their commands declare
LOOKOUT_AGENT=codex), or, for a Codex without hooks, the legacy `notify` program in its
config.toml, which gets a completed turn's JSON as its last argument.

Hook side first: stdlib only, all that hooks/codex_notify.py loads. The install and doctor side
below imports codex_config (TOML editing) and the installer inside each function."""

from __future__ import annotations

import os

from lookout import hookspec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from lookout.agents.base import Commentary, Facts, Install, Installer, Payload, Uninstall
    from lookout.install.checks import Report
    from lookout.install.files import Out
    from lookout.install.options import Options
    from lookout.steer.agents import Steering

NAME = "codex"
TITLE = "Codex"
STAMPED = False  # records are ordered by when the hook ran
CHILD_HOOKS = True  # `sh -c <command>` (procs.CHILD_HOOKS)
SCRIPT = None  # Claude Code's per-event scripts
# What Allow approves (issue 38): its exec tool's `justification` (the dialog's "Reason:") comes
# to hooks as the Bash input's `description` (0.169.0's PermissionRequest), beside the command.
COMMENTARY: dict[str, Commentary] = {
    "Bash": {"runs": "command", "fields": frozenset({"description"})},
}
# Codex's Claude-compatible hooks: the same scripts. Codex runs matching hooks concurrently and
# its async semantics differ, so every entry is synchronous. 0.169.0's own events (checked with
# the real client): SessionEnd on quit, Interrupt on Esc (no Stop follows), PreModelRequest
# before every model request (a sign of life); it has no StopFailure and no Notification.
_CLAUDE_NAMED = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SubagentStart",
    "SubagentStop",
    "Stop",
)
EVENTS: tuple[tuple[str, str, bool], ...] = (
    *((name, script, False) for name, script, _ in hookspec.EVENTS if name in _CLAUDE_NAMED),
    ("Interrupt", hookspec.GENERIC_SCRIPT, False),
    ("PreModelRequest", hookspec.GENERIC_SCRIPT, False),
)
# Codex clamps these events' hook timeouts to 3 s, with a warning at every start for more.
TIMEOUTS_S = {"Interrupt": 3, "SessionEnd": 3}


def translate(data: Payload, name: str | None) -> Payload | None:
    """A `notify` delivery: a completed turn (`agent-turn-complete`, kebab-case keys, several of
    them optional) becomes the Stop of that thread's session."""
    kind = data.get("type")
    cwd = data.get("cwd") if isinstance(data.get("cwd"), str) else ""
    thread = data.get("thread-id")
    payload: Payload = {
        "session_id": thread if isinstance(thread, str) and thread else f"codex:{cwd or 'unknown'}",
        "cwd": cwd,
        "hook_event_name": "Stop" if kind == "agent-turn-complete" else f"CodexNotify:{kind}",
        "last_assistant_message": data.get("last-assistant-message") or "",
    }
    if isinstance(data.get("turn-id"), str):
        payload["turn_id"] = data["turn-id"]
    return payload


def answer(raw: bytes) -> bytes:
    return b""


# How lookout types into it, interrupts it and starts it (lookout.steer.agents.Keys).
STEER: Steering | None = {
    "title": "OpenAI Codex",
    "checked": "0.169.0",
    # "Messages to be submitted after next tool call": the model gets it in the running turn,
    # with the command's output (tests/e2e/test_codex_tui.py). Its approval prompt is drawn only
    # after its PermissionRequest hooks return, so lookout records the dialog before it shows.
    "queues_while_working": True,
    "interrupt": ("Escape",),  # "Conversation interrupted" (and sends what was queued)
    "multiline": True,  # a typed LF stays a newline in its input box
    "program": "codex",
    "program_env": "LOOKOUT_CODEX",  # as the installer finds it (codex_config)
    "processes": ("codex",),
    "reports_interrupt": True,  # its Interrupt hook (0.169.0): the session shows idle
}


# -- install and doctor ---------------------------------------------------------------------------

FACTS: Facts | None = None  # Claude Code's events, through the same scripts (see the README)


def home() -> Path:
    from lookout.install import hookfiles

    return hookfiles.agent_home(".codex", "CODEX_HOME")


def hooks_path() -> Path:
    return home() / "hooks.json"


def config_path() -> Path:
    return home() / "config.toml"


def wanted(python: str, runtime: Path) -> list[tuple[str, dict[str, Any]]]:
    from lookout.install import hooks, settings

    handlers = settings.wanted_handlers(
        lambda script: hooks.hook_command(python, runtime, script, NAME), EVENTS
    )
    for event, handler in handlers:
        handler["timeout"] = min(handler["timeout"], TIMEOUTS_S.get(event, handler["timeout"]))
    # With [remote] on, the deciding hook too: it waits only while `lookout away` is on.
    return handlers + hooks.remote_wanted(python, runtime, NAME)


def installer() -> Installer:
    """Its own functions below (install, uninstall, installed, check): its files are its own."""
    from lookout.agents import codex

    return codex


def plan_install(opts: Options, out: Out) -> Install | None:
    if opts.agent not in (NAME, "all"):
        return None
    from lookout.agents import codex_config
    from lookout.install import files
    from lookout.paths import tilde

    if opts.agent == "all" and not home().is_dir() and not codex_config.codex_binary():
        # As for the other agents: `all` installs where the agent is, and creates no home.
        out(f"{TITLE}: not set up here ({tilde(home())} does not exist, no codex on PATH): skipped")
        return None
    files.load_settings(hooks_path())
    codex_config.load_codex_config(config_path())
    mode = codex_config.codex_mode(opts.codex_notify, out, hooks_path(), config_path())
    return lambda python, runtime: install(mode, python, runtime, opts.dry_run, out)


def install(mode: str, python: str, home: Path, dry_run: bool, out: Out) -> None:
    """Codex's hooks ("hooks") or its legacy notify program ("notify"): one way only."""
    from lookout.agents import codex_config as cc
    from lookout.install import files, hooks, settings

    hooks_file = files.load_settings(hooks_path())
    config = cc.load_codex_config(config_path())
    if mode == "hooks":
        handlers = wanted(python, home)
        changed = hooks.install_into(hooks_file, python, home, dry_run, out, NAME, handlers)
        if cc.is_ours(cc.notify_value(config.data)):
            # Upgraded from a Codex without hooks: both would record every turn.
            cc.uninstall_notify(config, dry_run, out)
        if changed and not dry_run:
            out(
                "note: Codex runs new or changed hooks only once you trust them:"
                f" start codex, type /hooks and trust lookout's {len(handlers)} hooks"
            )
        return
    cc.install_notify(config, python, home, dry_run, out)
    if settings.count_ours(hooks_file.data, [str(home)]):
        # One way only: with both, a Codex that has hooks would record every turn twice.
        hooks.uninstall_file(hooks_file.path, [str(home)], dry_run, out)


def plan_uninstall(opts: Options, out: Out) -> Uninstall | None:
    from lookout.agents import codex_config
    from lookout.install import files, hooks

    both = [hooks_path(), config_path()]
    # With --purge the runtime goes away: Codex's hooks and notify must not point at it either.
    chosen = opts.agent in (NAME, "all") or (opts.purge and any(map(os.path.lexists, both)))
    if chosen:
        # Before changing anything: a broken file stops the whole uninstall.
        files.load_settings(both[0])
        codex_config.load_codex_config(both[1])
    if not (chosen or opts.purge):
        return None

    def uninstall(roots: list[str]) -> None:
        if opts.purge:
            files.remove_legacy_backups(both, opts.dry_run, out)
        if chosen:
            hooks.uninstall_file(both[0], roots, opts.dry_run, out)
            config = codex_config.load_codex_config(both[1])
            codex_config.uninstall_notify(config, opts.dry_run, out)

    return uninstall


def installed(project: str) -> bool:
    """lookout's hooks in Codex's hooks.json, or its notify in config.toml."""
    from lookout import paths
    from lookout.agents import codex_config
    from lookout.errors import LookoutError
    from lookout.install import files, settings

    try:
        if settings.count_ours(files.load_settings(hooks_path()).data, [str(paths.runtime_home())]):
            return True
        config = codex_config.load_codex_config(config_path())
    except LookoutError:
        return True  # a file we cannot read: claim nothing
    return codex_config.is_ours(codex_config.notify_value(config.data))


def _check_trust(
    report: Report, name: str, hooks_data: dict[str, Any], config: dict[str, Any]
) -> None:
    """Codex runs a new or changed hook only once the user trusted it (/hooks): its own records,
    `[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash`, in config.toml."""
    from lookout import paths
    from lookout.agents import codex_config
    from lookout.install import checks

    roots = [str(paths.runtime_home())]
    waiting = codex_config.untrusted(hooks_path(), hooks_data, config, roots)
    total = len(checks.ours(hooks_data))
    if not waiting:
        report.add(name, checks.OK, f"Codex trusts all {total} of lookout's hooks")
        return
    shown = ", ".join(sorted(set(waiting)))
    report.add(
        name,
        checks.WARN,
        f"Codex does not run {len(waiting)} of lookout's {total} hooks until you trust them"
        f" (new or changed: {shown})",
        "start codex: answer its 'Hooks need review' prompt, or type /hooks and trust them",
    )


# What Codex 0.169.0's shared background server runs as (`codex app-server --listen unix://
# ... --managed-daemon`): the first interactive `codex` starts it, it outlives that window, and
# every later `codex` runs its threads there, hooks included.
DAEMON_MARK = "--managed-daemon"


def runs_in_daemon(pid: object) -> bool:
    """Whether the process lookout recorded for a Codex session is that shared server: then its
    hooks carry the first window's tmux pane whatever window the session is in, and nothing
    they carry (environment, payload, process tree) says which window it is (checked with
    0.169.0: docs/agents.md). False where it cannot be read."""
    if not isinstance(pid, int):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return False
    return b"app-server" in argv and DAEMON_MARK.encode() in argv


def _check_daemon(report: Report, name: str) -> None:
    """Live Codex sessions run by the shared server: lookout cannot tell their windows apart."""
    from lookout import paths
    from lookout.install import checks
    from lookout.sessions import load_sessions

    shared = [
        row
        for row in load_sessions(paths.state_dir())
        if row["agent"] == NAME and row["status"] != "ended" and runs_in_daemon(row.get("pid"))
    ]
    if shared:
        report.add(
            name,
            checks.WARN,
            f"{len(shared)} Codex session(s) run in Codex's shared background server"
            " (codex app-server): lookout knows neither their windows nor when they end",
            "start codex with --no-daemon (each window then runs its own sessions and hooks)",
        )


def check(report: Report, project: str) -> int:
    """Codex's hooks.json and its config.toml `notify`; returns how many lookout entries they
    hold. Says nothing on a machine without a Codex home."""
    if not home().is_dir():
        return 0
    from lookout.agents import codex_config
    from lookout.errors import LookoutError
    from lookout.install import checks, files
    from lookout.paths import tilde

    name = "hooks (codex)"
    found = 0
    where = tilde(hooks_path())
    ours: list[tuple[str, dict[str, Any]]] = []
    try:
        loaded = files.load_settings(hooks_path())
    except LookoutError as exc:
        report.add(name, checks.FAIL, str(exc), "Codex cannot use a broken hooks.json")
    else:
        ours = checks.ours(loaded.data)
    if ours:
        found += len(ours)
        checks.report_events(
            report,
            name,
            where,
            [event for event, _ in ours],
            [event for event, _, _ in EVENTS],
            "re-run install.py --agent codex",
        )
        claude = "lack LOOKOUT_AGENT=codex: Codex sessions may be recorded as Claude Code ones"
        checks.report_agent(report, name, ours, NAME, claude, "re-run install.py --agent codex")
        checks.check_commands(report, name, [handler for _, handler in ours])
    try:
        config = codex_config.load_codex_config(config_path())
    except LookoutError as exc:
        report.add(
            "notify (codex)", checks.FAIL, str(exc), "Codex will not start with a broken config"
        )
        return found
    if ours:
        _check_trust(report, name, loaded.data, config.data)
        _check_daemon(report, name)
    argv = codex_config.notify_value(config.data)
    if codex_config.is_ours(argv):
        assert argv is not None
        found += 1
        python, script = argv[0], next(a for a in argv if codex_config.is_ours([a]))
        where = tilde(config_path())
        if not (os.path.isabs(python) and os.access(python, os.X_OK)):
            report.add(
                "notify (codex)", checks.FAIL, f"notify in {where}: interpreter {python} not found"
            )
        elif not os.path.isfile(script):
            report.add(
                "notify (codex)", checks.FAIL, f"notify in {where}: {tilde(script)} is missing"
            )
        else:
            report.add("notify (codex)", checks.OK, f"notify in {where} runs {tilde(script)}")
        if ours:
            report.add(
                "notify (codex)",
                checks.WARN,
                "Codex has both lookout's hooks and its notify: a Codex with hooks records each"
                " turn twice",
                "re-run install.py --agent codex (it keeps one of the two)",
            )
    return found
