"""doctor: the optional features, the fleet's bridge and broker and remote answers."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from lookout import hookspec, paths
from lookout.errors import LookoutError
from lookout.install import files
from lookout.install.checks import FAIL, INFO, OK, WARN, Report, our_script

if TYPE_CHECKING:
    from lookout.config.fleet import FleetConfig


def check_fleet(report: Report) -> None:
    """With a [fleet]: whether this state directory's bridge runs and the broker answers."""
    from lookout.config import fleet
    from lookout.fleet import access, bridge, mqtt

    try:
        cfg = fleet.load()
    except fleet.NotConfigured:
        return
    except LookoutError as exc:
        report.add("fleet", FAIL, f"invalid [fleet]: {exc}", "lookout check-config")
        return
    plain = fleet.cleartext(cfg)
    if plain:
        report.add("fleet", WARN, plain, 'a broker with TLS: mqtt = "mqtts://..."')
    plain_answers = fleet.cleartext_answers(cfg)
    if plain_answers:
        report.add(
            "fleet",
            WARN,
            plain_answers,
            'a broker with TLS (mqtt = "mqtts://..."), or answers = false',
        )
    state = paths.tilde(paths.state_dir())
    pid = bridge.running_pid(paths.state_dir())
    if pid is not None:
        report.add("fleet", OK, f"bridge runs (pid {pid}) for {state} as host {cfg.host}")
    else:
        report.add(
            "fleet",
            WARN,
            f"no bridge runs for {state}: other hosts see {cfg.host} as offline",
            "lookout bridge (python3 install.py --bridge runs it as a service)",
        )
    try:
        mqtt.require()
        found = access.check(cfg, timeout=3.0)  # what the broker's ACL lets this host do
    except LookoutError as exc:
        report.add("fleet", FAIL, f"broker: {exc}", exc.hint)
        return
    for ok, message, hint in found:
        report.add("fleet", OK if ok else FAIL, message, hint)
    check_fleet_limits(report, cfg)


def check_fleet_limits(report: Report, cfg: FleetConfig) -> None:
    """N6: what a viewer of this fleet drops to stay bounded (a host flooding the bus)."""
    from lookout.fleet import limits, watch

    try:
        dropped = watch.gather(cfg, timeout=3.0).budget.report()
    except LookoutError as exc:
        report.add("fleet", WARN, f"cannot read the fleet: {exc}", exc.hint)
        return
    for line in limits.describe(dropped):
        report.add(
            "fleet",
            WARN,
            f"viewers drop what is over the fleet limits: {line}",
            "a host publishing this is not a lookout bridge: remove its retained messages",
        )


def check_remote(report: Report, project: str) -> None:
    """[remote] in the config against the deciding hook in the settings: turning it on (or
    changing wait_s) needs install.py to run again, which is easy to forget."""
    from lookout.config.files import load

    try:
        remote = load(None)["remote"]
    except LookoutError:
        return  # check_config already said what is wrong
    deciding: list[tuple[str, Any]] = []
    for scope in ("user", "project", "local"):
        path = paths.scope_path(scope, project)
        try:
            data = files.load_settings(path).data
        except LookoutError:
            continue
        for group in data.get("hooks", {}).get(hookspec.REMOTE_EVENT, []):
            for handler in group["hooks"]:
                script = our_script(handler) if isinstance(handler, dict) else None
                if script and PurePosixPath(script).name == hookspec.REMOTE_SCRIPT:
                    deciding.append((scope, handler.get("timeout")))
    # Codex's, which waits only while away (check_away says more of it).
    deciding += [(title.lower(), timeout) for title, timeout in _away_hooks().items()]
    if not remote["enabled"]:
        if deciding:
            report.add(
                "remote",
                WARN,
                "the deciding hook is registered but [remote] is off (it exits at once)",
                "re-run python3 install.py to take it out",
            )
        return
    if not deciding:
        report.add(
            "remote",
            WARN,
            "[remote] enabled = true, but the deciding hook is not registered: nothing waits"
            " for a remote answer",
            "re-run python3 install.py",
        )
        return
    want = int(remote["wait_s"]) + hookspec.TIMEOUT_MARGIN_S
    wrong = [f"{scope}: {timeout}" for scope, timeout in deciding if timeout != want]
    if wrong:
        report.add(
            "remote",
            WARN,
            f"the deciding hook's timeout ({', '.join(wrong)} s) does not follow wait_s"
            f" = {remote['wait_s']} (want {want} s)",
            "re-run python3 install.py",
        )
        return
    tools = ", ".join(remote["tools"])
    report.add(
        "remote",
        OK,
        f"remote answers are on: requests wait up to {remote['wait_s']} s (tools: {tools})",
    )
    if not remote["url"]:
        report.add("remote", INFO, "alerts carry no link to the request (set [remote] url)")


def check_away(report: Report) -> None:
    """The away switch (issue 41): whether it is on, and which agents it makes wait (those whose
    deciding hook is installed, with [remote] on)."""
    from lookout import away
    from lookout.config.files import load

    switch = away.read(paths.state_dir())
    try:
        remote = load(None)["remote"]
    except LookoutError:
        remote = {"enabled": False}
    timeouts = _away_hooks() if remote["enabled"] else {}  # check_remote checks each timeout
    waits = " and ".join(timeouts)
    said = f"away is {away.said(switch)}"
    if switch["away"] and not timeouts:
        why = "[remote] is off" if not remote["enabled"] else "no deciding hook is installed"
        report.add(
            "away",
            WARN,
            f"{said}, but it makes no agent wait: {why}",
            "[remote] enabled = true, then python3 install.py --agent codex",
        )
    elif switch["away"]:
        report.add(
            "away",
            OK,
            f"{said}: it makes {waits} wait up to {remote['wait_s']} s for an answer from afar"
            " before its own prompt",
        )
    elif timeouts:
        report.add(
            "away",
            INFO,
            f"{said}: {waits} asks at its own prompt at once (`lookout away on` makes it wait"
            " for an answer from afar)",
        )
    else:
        report.add("away", INFO, f"{said} (it makes Codex wait once [remote] is on and installed)")


def _away_hooks() -> dict[str, object]:
    """The agents the switch makes wait: title -> their deciding hook's timeout."""
    from lookout.agents import codex

    found: dict[str, object] = {}
    try:
        data = files.load_settings(codex.hooks_path()).data
    except LookoutError:
        return found  # the agent's own check says what is wrong with it
    for group in data.get("hooks", {}).get(hookspec.REMOTE_EVENT, []):
        for handler in group["hooks"]:
            script = our_script(handler) if isinstance(handler, dict) else None
            if script and PurePosixPath(script).name == hookspec.REMOTE_SCRIPT:
                found[codex.TITLE] = handler.get("timeout")
    return found


def check_client_registry(report: Report) -> None:
    """Claude Code's own session registry (lookout.client_sessions): whether this client writes
    it, files lookout cannot use, and sessions that run without lookout's hooks (and why)."""
    from lookout import client_sessions
    from lookout.agents import claude
    from lookout.sessions import load_sessions

    survey = client_sessions.survey()
    if not survey["files"] and not claude.present():
        return  # no Claude Code here (a Codex-only user): nothing to say of its registry
    where = paths.tilde(survey["directory"])
    provided = (
        f"written by Claude Code {client_sessions.CHECKED_VERSION} (the version lookout was "
        "checked with) and later; older clients write none, and lookout then relies on hooks, "
        "transcripts and processes alone"
    )
    if not survey["files"]:
        report.add("client registry", INFO, f"{where}: no session files ({provided})")
    else:
        report.add(
            "client registry",
            OK,
            f"{where}: {survey['live']} of {survey['files']} session files describe a running "
            f"client ({provided})",
        )
    for note in survey["notes"]:
        report.add(
            "client registry",
            WARN,
            f"{where}/{note}",
            "nothing else changes: lookout falls back to hooks, transcripts and processes",
        )
    for row in load_sessions(paths.state_dir()):
        if row["hooks"] or row["status"] == "ended":
            continue
        report.add(
            "client registry",
            WARN,
            f"session {row['title']!r} ({row['session_id'][:8]}, {row['cwd'] or '?'}) runs "
            f"without lookout's hooks: {_why_no_hooks(row['cwd'])}",
            "lookout shows it from the client's registry alone (evidence: client); "
            "restart it after `lookout doctor` shows the hooks installed",
        )


def _why_no_hooks(cwd: str | None) -> str:
    """The likely reason a running Claude Code session fires none of lookout's hooks."""
    import json

    candidates = [str(paths.user_settings_path())]
    if cwd:
        candidates += [f"{cwd}/.claude/settings.json", f"{cwd}/.claude/settings.local.json"]
    for path in candidates:
        try:
            with open(path, encoding="utf-8") as f:
                settings = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(settings, dict) and settings.get("disableAllHooks") is True:
            return f"{paths.tilde(path)} sets disableAllHooks"
    return (
        "it was started before lookout's hooks were installed, or with `--settings` / "
        "`--setting-sources` that leave them out, or a managed policy allows only managed hooks"
    )


def check_steer(report: Report) -> None:
    """[steer] (issue 33): off, or on and what `say`, `interrupt` and `start` can reach here."""
    import shutil

    from lookout.config import steer
    from lookout.steer import agents

    try:
        cfg = steer.load()
    except LookoutError as exc:
        report.add("steer", FAIL, f"invalid [steer]: {exc}", "lookout check-config")
        return
    if not cfg.enabled:
        report.add(
            "steer", INFO, "steering is off: say, interrupt and start refuse", steer.HOW_TO_ENABLE
        )
        return
    report.add("steer", OK, steer.describe(cfg).removeprefix("steer: "))
    if shutil.which("tmux") is None:
        report.add(
            "steer", WARN, "tmux is not on PATH: nothing can be typed or started", "install tmux"
        )
    if not cfg.project_dirs():
        report.add(
            "steer",
            WARN,
            f"no directory matches [steer] projects ({', '.join(cfg.projects)}): start has none",
            "name existing directories (globs allowed) in projects",
        )
    for warning in cfg.escapes():
        report.add("steer", WARN, f"projects: {warning}", steer.ESCAPE_HINT)
    from lookout.steer.launch import unsafe_dir

    for directory in cfg.project_dirs():
        why = unsafe_dir(directory)
        if why is not None:
            report.add(
                "steer",
                WARN,
                f"start refuses {paths.tilde(directory)}: {why}",
                "list only your own directories in [steer] projects",
            )
    for name in cfg.agents:
        keys = agents.keys(name)
        if keys is not None and agents.program(keys) is None:
            report.add(
                "steer",
                WARN,
                f"{keys.title}'s program ({keys.program}) is not on PATH: start --agent {name}"
                " cannot run it",
                f"install {keys.title}, or run lookout where it is on PATH",
            )
