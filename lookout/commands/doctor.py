"""`lookout doctor`: where the hooks are installed, whether each command can run, whether the config
is valid, the state directory and its permissions, and which notification channels can work here.

Reads and probes only: never writes a file (its import probe runs with -B), never sends anything.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from lookout import hookspec, paths, store
from lookout.commands import view
from lookout.errors import LookoutError
from lookout.install import claude as settings
from lookout.install import codex as codex_config
from lookout.install import files

if TYPE_CHECKING:
    from lookout.fleet.config import FleetConfig
    from lookout.shapes import Config

OK, INFO, WARN, FAIL = "ok", "info", "warn", "fail"
_LABEL = {OK: "ok  ", INFO: "--  ", WARN: "warn", FAIL: "FAIL"}


@dataclass
class Check:
    check: str
    status: str
    message: str
    hint: str | None = None


class Report:
    def __init__(self) -> None:
        self.checks: list[Check] = []

    def add(self, check: str, status: str, message: str, hint: str | None = None) -> None:
        self.checks.append(Check(check, status, message, hint))

    @property
    def problems(self) -> int:
        return sum(c.status == FAIL for c in self.checks)


# --- hooks -----------------------------------------------------------------------------------


def _our_script(handler: dict[str, Any]) -> str | None:
    words: list[str] = []
    command = handler.get("command")
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
    for word in words:
        path = PurePosixPath(word)
        if path.name in settings.OUR_SCRIPTS and path.parent.name == "hooks":
            return word
    return None


def _interpreter(handler: dict[str, Any]) -> str | None:
    command = handler.get("command")
    try:
        words = settings.command_words(command) if isinstance(command, str) else []
    except ValueError:
        return None
    return words[0] if words else None


def import_probe(python: str, runtime: str) -> str | None:
    """None if `python -I -S` can import the hook runner from `runtime`, else what went wrong."""
    code = f"import sys; sys.path.insert(0, {runtime!r}); import lookout.runner"
    try:
        done = subprocess.run(
            [python, "-I", "-S", "-B", "-c", code], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit {done.returncode}"


def check_commands(
    report: Report,
    name: str,
    handlers: list[dict[str, Any]],
    runnable: set[tuple[str, str]] | None = None,
) -> None:
    """Check that each command can run. The import probe runs an interpreter with a runtime on
    its path, so it runs only for the (interpreter, runtime) pairs in `runnable`: the ones the
    user chose (their installed runtime, their own settings). None: these handlers are the
    user's own; everything is probed. A repository's settings are inspected, never executed."""
    probed: dict[tuple[str, str], str | None] = {}
    broken: list[str] = []
    from_path: set[str] = set()
    not_run = 0
    for handler in handlers:
        python = _interpreter(handler)
        script = _our_script(handler)
        if python is None or script is None:
            broken.append(f"cannot parse {handler.get('command')!r}")
            continue
        resolved = python if os.path.isabs(python) else shutil.which(python)
        if not os.path.isabs(python):
            from_path.add(python)
        if resolved is None or not os.access(resolved, os.X_OK):
            broken.append(f"interpreter {python} not found")
            continue
        if not os.path.isfile(script):
            broken.append(f"script {paths.tilde(script)} is missing")
            continue
        runtime = str(Path(script).parent.parent)
        key = (os.path.realpath(resolved), os.path.realpath(runtime))
        if runnable is not None and key not in runnable:
            not_run += 1
            continue
        if key not in probed:
            probed[key] = import_probe(resolved, runtime)
        if probed[key] is not None:
            broken.append(f"{paths.tilde(resolved)} cannot import the runner: {probed[key]}")
    if broken:
        shown = "; ".join(sorted(set(broken))[:3])
        report.add(
            name,
            FAIL,
            f"{len(broken)} hook commands cannot run: {shown}",
            "run python3 install.py again from a lookout checkout",
        )
    elif not_run:
        report.add(
            name,
            OK,
            f"all {len(handlers)} hook commands resolve; {not_run} of them use an interpreter or"
            " runtime the repository chose: found, not run (doctor never runs what a repository"
            " chose)",
        )
    else:
        report.add(name, OK, f"all {len(handlers)} hook commands resolve and import the runner")
    if runnable is None:
        _user_chosen.update(probed)
    if from_path:
        report.add(
            name,
            WARN,
            f"commands run {', '.join(sorted(from_path))} from PATH (slower, may change)",
            "re-run install.py: it pins an absolute interpreter",
        )


# (interpreter, runtime) pairs from the user's own settings, filled by the user scope (which
# diagnose checks first): a project's commands are probed only when they run exactly these.
_user_chosen: set[tuple[str, str]] = set()


def check_scope(report: Report, scope: str, path: Path) -> tuple[int, bool]:
    """Report one settings file; returns (our hook count, lookout plugin enabled there)."""
    name = f"hooks ({scope})"
    where = paths.tilde(path)
    try:
        loaded = files.load_settings(path)
    except LookoutError as exc:
        report.add(name, FAIL, str(exc), "Claude Code ignores a broken settings file whole")
        return 0, False
    data = loaded.data
    plugins = data.get("enabledPlugins")
    plugin = isinstance(plugins, dict) and any(
        k.split("@")[0] == "lookout" and v is True for k, v in plugins.items()
    )
    if plugin:
        report.add(f"plugin ({scope})", OK, f"the lookout plugin is enabled in {where}")
    if loaded.text is None:
        report.add(name, INFO, f"{where} does not exist")
        return 0, plugin
    ours = _ours(data)
    if not ours:
        report.add(name, INFO, f"no lookout hooks in {where}")
        return 0, plugin
    _report_events(
        report,
        name,
        where,
        [event for event, _ in ours],
        [event for event, _, _ in hookspec.EVENTS],
        f"re-run install.py{'' if scope == 'user' else f' --scope {scope}'}",
    )
    codex_style = sum(settings.handler_agent(h) == "codex" for _, h in ours)
    if codex_style:
        report.add(
            name,
            WARN,
            f"{codex_style} of them are Codex commands (LOOKOUT_AGENT=codex): Claude Code"
            " sessions would be recorded as Codex ones",
            f"re-run install.py{'' if scope == 'user' else f' --scope {scope}'}",
        )
    if data.get("disableAllHooks") is True:
        report.add(name, WARN, f"{where} sets disableAllHooks: true: no hook runs")
    runnable = None if scope == "user" else _runnable()
    check_commands(report, name, [handler for _, handler in ours], runnable)
    return len(ours), plugin


def _runnable() -> set[tuple[str, str]]:
    home = paths.runtime_home()
    own = (os.path.realpath(paths.venv_python(home)), os.path.realpath(home))
    return {*_user_chosen, own}


def check_codex(report: Report) -> int:
    """Codex's hooks.json and its config.toml `notify`; returns how many lookout entries they
    hold. Says nothing on a machine without a Codex home."""
    if not paths.codex_home().is_dir():
        return 0
    name = "hooks (codex)"
    found = 0
    hooks_path = paths.codex_hooks_path()
    where = paths.tilde(hooks_path)
    ours: list[tuple[str, dict[str, Any]]] = []
    try:
        loaded = files.load_settings(hooks_path)
    except LookoutError as exc:
        report.add(name, FAIL, str(exc), "Codex cannot use a broken hooks.json")
    else:
        ours = _ours(loaded.data)
    if ours:
        found += len(ours)
        _report_events(
            report,
            name,
            where,
            [event for event, _ in ours],
            [event for event, _, _ in hookspec.CODEX_EVENTS],
            "re-run install.py --agent codex",
        )
        claude_style = sum(settings.handler_agent(h) != "codex" for _, h in ours)
        if claude_style:
            report.add(
                name,
                WARN,
                f"{claude_style} of them lack LOOKOUT_AGENT=codex: Codex sessions may be"
                " recorded as Claude Code ones",
                "re-run install.py --agent codex",
            )
        check_commands(report, name, [handler for _, handler in ours])
        report.add(
            name,
            INFO,
            "Codex runs new or changed hooks only once trusted: type /hooks in codex to check",
        )
    config_path = paths.codex_config_path()
    try:
        config = codex_config.load_codex_config(config_path)
    except LookoutError as exc:
        report.add("notify (codex)", FAIL, str(exc), "Codex will not start with a broken config")
        return found
    argv = codex_config.notify_value(config.data)
    if codex_config.is_ours(argv):
        assert argv is not None
        found += 1
        python, script = argv[0], next(a for a in argv if codex_config.is_ours([a]))
        where = paths.tilde(config_path)
        if not (os.path.isabs(python) and os.access(python, os.X_OK)):
            report.add("notify (codex)", FAIL, f"notify in {where}: interpreter {python} not found")
        elif not os.path.isfile(script):
            report.add(
                "notify (codex)", FAIL, f"notify in {where}: {paths.tilde(script)} is missing"
            )
        else:
            report.add("notify (codex)", OK, f"notify in {where} runs {paths.tilde(script)}")
        if ours:
            report.add(
                "notify (codex)",
                WARN,
                "Codex has both lookout's hooks and its notify: a Codex with hooks records each"
                " turn twice",
                "re-run install.py --agent codex (it keeps one of the two)",
            )
    return found


def check_agents(report: Report) -> int:
    """Gemini CLI, Copilot CLI, Cursor and OpenCode: lookout's entries in each one's file, and
    whether their commands run. Says nothing about an agent not set up on this machine."""
    from lookout.install import agents

    roots = [str(paths.runtime_home())]
    found = 0
    for agent in agents.AGENTS:
        if not agents.present(agent):
            continue
        name = f"hooks ({agent})"
        where = paths.tilde(agents.target(agent))
        try:
            entries = agents.installed_commands(agent, roots)
        except LookoutError as exc:
            report.add(name, FAIL, str(exc), f"{agents.NAMES[agent]} cannot use a broken file")
            continue
        if not entries:
            report.add(name, INFO, f"not installed (python3 install.py --agent {agent})")
            continue
        found += len(entries)
        if agent == "opencode":
            python, script = agents.plugin_paths(entries[0][1])
            report.add(name, OK, f"lookout's plugin {where}")
            commands = [f"{shlex.quote(python)} -I -S {shlex.quote(script)}"]
        else:
            wanted = {
                "gemini": hookspec.GEMINI_EVENTS,
                "copilot": hookspec.COPILOT_EVENTS,
                "cursor": hookspec.CURSOR_EVENTS,
            }[agent]
            _report_events(
                report,
                name,
                where,
                [event for event, _ in entries],
                list(wanted),
                f"re-run install.py --agent {agent}",
            )
            commands = [command for _, command in entries]
        check_commands(report, name, [{"command": c} for c in commands])
    return found


def _ours(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """lookout's handlers in a hooks file (settings.json or hooks.json), with their events."""
    return [
        (event, handler)
        for event, groups in data.get("hooks", {}).items()
        for group in groups
        for handler in group["hooks"]
        if settings.is_ours(handler, [str(paths.runtime_home())])
    ]


def _report_events(
    report: Report, name: str, where: str, present: list[str], wanted: list[str], hint: str
) -> None:
    """`N hooks in FILE`, or which of the wanted events have none of ours."""
    missing = sorted(set(wanted) - set(present))
    if missing:
        report.add(
            name,
            WARN,
            f"{len(present)} hooks in {where}, missing {len(missing)} events"
            f" ({', '.join(missing[:4])}{'...' if len(missing) > 4 else ''})",
            hint,
        )
    else:
        report.add(name, OK, f"{len(present)} hooks in {where}")


def check_plugin_python(report: Report) -> None:
    # The plugin's hooks.json runs `python3 -I -S`: whatever python3 the PATH gives Claude Code.
    found = shutil.which("python3")
    if found is None:
        report.add(
            "plugin",
            FAIL,
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
            FAIL,
            f"python3 on PATH ({found}) is {version or 'broken'}; lookout needs 3.11+",
            "put Python 3.11 or newer first on PATH as python3, or use python3 install.py instead",
        )
    else:
        report.add("plugin", OK, f"plugin hooks run {found} (Python {version})")


# --- config, state, channels -------------------------------------------------------------------


def check_config(report: Report, project: str) -> Config | None:
    path = paths.config_path()
    where = paths.tilde(path)
    from lookout.notify import config

    try:
        loaded, pf = config.resolve(cwd=project)
    except LookoutError as exc:
        report.add("config", FAIL, f"invalid: {exc}", exc.hint)
        return None
    source = where if os.path.exists(path) else f"built-in defaults ({where} does not exist)"
    channels = loaded.get("channels", {})
    rules = loaded.get("rules", [])
    report.add("config", OK, f"{source}: {_n(len(channels), 'channel')}, {_n(len(rules), 'rule')}")
    if pf is not None and pf.ignored is not None:
        directory = paths.tilde(os.path.dirname(os.path.dirname(pf.path)))
        report.add(
            "config",
            WARN,
            f"{paths.tilde(pf.path)}: ignored: {pf.ignored}",
            f"lookout trust {directory} shows what it adds and asks"
            if pf.adds
            else "a project file must be yours and writable only by you",
        )
    return loaded


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def check_state(report: Report) -> None:
    state = Path(paths.state_dir())
    where = paths.tilde(state)
    if not state.exists():
        parent = next((p for p in state.parents if p.exists()), Path("/"))
        if os.access(parent, os.W_OK):
            report.add("state", INFO, f"{where} does not exist yet (the first hook creates it)")
        else:
            report.add("state", FAIL, f"{where} cannot be created: {parent} is not writable")
        return
    unsafe = store.unsafe_reason(str(state))
    if unsafe is not None:
        report.add(
            "state",
            FAIL,
            f"refused: {unsafe}: hooks record nothing there",
            "point LOOKOUT_STATE_DIR at a directory of your own (or unset it)",
        )
        return
    if not state.is_dir():
        report.add("state", FAIL, f"{where} is not a directory")
        return
    mode = stat.S_IMODE(state.stat().st_mode)
    if not os.access(state, os.W_OK | os.X_OK):
        report.add("state", FAIL, f"{where} is not writable by this user")
    elif mode & 0o077:
        report.add(
            "state",
            WARN,
            f"{where} has mode {mode:04o}: others can read your prompts",
            f"chmod 700 {where}",
        )
    else:
        report.add("state", OK, f"{where} (mode {mode:04o})")
    loose = [
        p.name
        for p in state.rglob("*")
        if p.is_file() and not p.is_symlink() and stat.S_IMODE(p.stat().st_mode) & 0o077
    ]
    if loose:
        report.add(
            "state",
            WARN,
            f"{len(loose)} files readable by others ({', '.join(sorted(loose)[:3])})",
            f"chmod -R go= {where}",
        )
    errors = state / store.ERRORS
    if errors.is_file() and errors.stat().st_size:
        with open(errors, encoding="utf-8", errors="replace") as fh:
            lines = [ln.rstrip() for ln in fh if ln.strip()]
        last = next((ln for ln in reversed(lines) if not ln.startswith((" ", "\t"))), "")
        report.add(
            "state",
            WARN,
            f"errors.log has {len(lines)} lines; last: {last[:160]}",
            f"read {paths.tilde(errors)}; delete it once the cause is fixed",
        )


def check_deliveries(report: Report, last: int = 50) -> None:
    """What the background sender recorded: the last failures are usually the whole story."""
    path = Path(paths.state_dir()) / store.DELIVERIES
    if not path.is_file():
        report.add("deliveries", INFO, "no notification sent yet")
        return
    with open(path, "rb") as fh:
        lines = fh.read().splitlines()[-last:]
    records = [r for r in (view.parse_line(raw) for raw in lines) if r is not None]
    failed = [r for r in records if r.get("result") == "failed"]
    sent = sum(1 for r in records if r.get("result") == "sent")
    if not failed:
        report.add("deliveries", OK, f"last {len(records)}: {sent} sent, none failed")
        return
    worst = failed[-1]
    report.add(
        "deliveries",
        WARN,
        f"last {len(records)}: {len(failed)} failed; latest: {worst.get('channel')} "
        f"({worst.get('kind')}) at {worst.get('ts')}: {worst.get('detail')}",
        "lookout tail --deliveries; lookout test CHANNEL",
    )


def last_sent_or_failed(channels: list[str], last: int = 200) -> dict[str, Any] | None:
    """The newest delivery line a hook's sender wrote for one of these channels (sent or
    failed; `lookout test` runs in this shell, so its lines do not count)."""
    if not channels:
        return None
    path = Path(paths.state_dir()) / "deliveries.jsonl"
    try:
        with open(path, "rb") as fh:
            lines = fh.read().splitlines()[-last:]
    except OSError:
        return None
    for raw in reversed(lines):
        r = view.parse_line(raw)
        if (
            r is not None
            and r.get("channel") in channels
            and r.get("result") in ("sent", "failed")
            and r.get("session_id") != "lookout-test"
        ):
            return r
    return None


def desktop_status() -> tuple[bool, str]:
    if sys.platform == "darwin":
        found = shutil.which("osascript")
        return bool(found), "osascript present" if found else "osascript not found"
    send = shutil.which("notify-send")
    bus = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    socket_ok = bool(runtime) and os.path.exists(os.path.join(runtime or "", "bus"))
    parts = [f"notify-send {'at ' + send if send else 'not found'}"]
    parts.append("D-Bus session bus " + ("set" if bus else "found" if socket_ok else "missing"))
    return bool(send) and bool(bus or socket_ok), ", ".join(parts)


def check_channels(report: Report, loaded: Config | None) -> None:
    ok, detail = desktop_status()
    # Only channels some rule sends to (directly or by escalation) matter.
    referenced: set[str] = set()
    for rule in loaded["rules"] if loaded else []:
        referenced.update(rule["channels"])
        referenced.update(rule["escalate_to"])
    defined = loaded["channels"] if loaded else {}
    names = {
        name: ch for name, ch in defined.items() if ch.get("enabled", True) and name in referenced
    }
    desktop_used = any(ch.get("type") == "desktop" for ch in names.values())
    if ok:
        hint = None
    elif "notify-send not found" in detail:
        hint = "apt install libnotify-bin (desktop notifications need notify-send)"
    else:
        hint = "desktop notifications need a graphical session with a D-Bus session bus"
    # The hooks (and so the sender) run in Claude Code's environment, not this shell's: what
    # their last desktop notification did is the better witness.
    desktop = [n for n, ch in names.items() if ch.get("type") == "desktop"]
    last = last_sent_or_failed(desktop)
    if last is not None and last.get("result") == "failed":
        report.add(
            "channel desktop",
            WARN,
            f"the hooks' last desktop notification failed ({last.get('channel')},"
            f" {last.get('ts')}): {last.get('detail')}; in this shell: {detail}",
            "the hooks run with Claude Code's environment, not this shell's: start claude"
            " where DBUS_SESSION_BUS_ADDRESS (or DISPLAY) is set, e.g. in a terminal of your"
            " desktop session (tmux: update-environment, or start the tmux server from there)",
        )
    elif last is not None:
        report.add(
            "channel desktop",
            OK,
            f"the hooks' last desktop notification was sent ({last.get('channel')},"
            f" {last.get('ts')}); in this shell: {detail}",
        )
    else:
        status = OK if ok else (WARN if desktop_used else INFO)
        report.add("channel desktop", status, detail, hint if desktop_used else None)
    for name, ch in sorted(names.items()):
        kind = ch.get("type")
        label = f"channel {name}"
        if kind == "desktop":
            continue
        if kind == "command":
            argv = ch.get("argv") or [""]
            exe = argv[0]
            found = exe if os.path.isabs(exe) and os.access(exe, os.X_OK) else shutil.which(exe)
            if found:
                report.add(label, OK, f"command {found}")
            else:
                report.add(label, WARN, f"command {exe!r} not found on PATH")
        elif kind == "apprise":
            import importlib.util

            if importlib.util.find_spec("apprise"):
                report.add(label, OK, "apprise is installed")
            else:
                report.add(
                    label,
                    WARN,
                    "the apprise package is not installed",
                    "pip install apprise into lookout's environment",
                )
        else:
            missing = [
                ch[key]
                for key in ("token_env", "url_env")
                if ch.get(key) and not os.environ.get(ch[key])
            ]
            if missing:
                report.add(label, WARN, f"{kind}: environment variable {missing[0]} is not set")
            else:
                report.add(label, OK, f"{kind} configured (reached over the network when sent)")


# --- the fleet -------------------------------------------------------------------------------


def check_fleet(report: Report) -> None:
    """With a [fleet]: whether this state directory's bridge runs and the broker answers."""
    from lookout.fleet import bridge, mqtt
    from lookout.fleet import config as fleet_config

    try:
        cfg = fleet_config.load()
    except fleet_config.NotConfigured:
        return
    except LookoutError as exc:
        report.add("fleet", FAIL, f"invalid [fleet]: {exc}", "lookout check-config")
        return
    plain = fleet_config.cleartext(cfg)
    if plain:
        report.add("fleet", WARN, plain, 'a broker with TLS: mqtt = "mqtts://..."')
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
        client = mqtt.new_client(cfg, "doctor")
        start = time.monotonic()
        mqtt.connect(client, cfg, timeout=3.0)
    except LookoutError as exc:
        report.add("fleet", FAIL, f"broker: {exc}", exc.hint)
        return
    took = (time.monotonic() - start) * 1000
    client.disconnect()
    client.loop_stop()
    who = f"as {cfg.username}" if cfg.username else "without a login"
    report.add("fleet", OK, f"broker {cfg.url} answers ({who}, {took:.0f} ms)")
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


# --- the command -----------------------------------------------------------------------------


def diagnose(project: str) -> Report:
    report = Report()
    _user_chosen.clear()
    home = paths.runtime_home()
    if (home / "hooks").is_dir():
        report.add("runtime", OK, f"{paths.tilde(home)}")
    else:
        report.add("runtime", INFO, f"{paths.tilde(home)} not installed (plugin or checkout?)")
    total = 0
    plugin = False
    seen: set[str] = set()
    for scope in ("user", "project", "local"):
        path = paths.scope_path(scope, project)
        if os.path.realpath(path) in seen:  # the project is the home directory
            continue
        seen.add(os.path.realpath(path))
        count, enabled = check_scope(report, scope, path)
        total += count
        plugin |= enabled
    codex = check_codex(report)
    codex += check_agents(report)
    if not total and not plugin and not codex:
        report.add(
            "hooks",
            FAIL,
            "lookout's hooks are not installed in any scope",
            "python3 install.py (or install the plugin: see the README)",
        )
    if plugin:
        check_plugin_python(report)
    if total and plugin:
        report.add(
            "hooks",
            WARN,
            "installed both as a plugin and in settings: every hook runs twice",
            "keep one: python3 install.py --uninstall, or claude plugin uninstall",
        )
    loaded = check_config(report, project)
    check_remote(report, project)
    check_state(report)
    check_channels(report, loaded)
    check_deliveries(report)
    check_fleet(report)
    return report


def check_remote(report: Report, project: str) -> None:
    """[remote] in the config against the deciding hook in the settings: turning it on (or
    changing wait_s) needs install.py to run again, which is easy to forget."""
    from lookout.notify import config
    from lookout.remote.decide import TIMEOUT_MARGIN_S

    try:
        remote = config.load(None)["remote"]
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
                script = _our_script(handler) if isinstance(handler, dict) else None
                if script and PurePosixPath(script).name == hookspec.REMOTE_SCRIPT:
                    deciding.append((scope, handler.get("timeout")))
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
    want = int(remote["wait_s"]) + TIMEOUT_MARGIN_S
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


def render(report: Report) -> str:
    lines = []
    for c in report.checks:
        # Messages quote settings, paths and errors.log lines: never raw control characters.
        message = view.visible(c.message, keep_newlines=True).replace("\n", "\n      ")
        lines.append(f"{_LABEL[c.status]}  {c.check}: {message}")
        if c.hint and c.status in (WARN, FAIL):
            lines.append(f"      hint: {view.visible(c.hint)}")
    n = report.problems
    lines.append("no problems found" if not n else f"{n} problem{'s' if n != 1 else ''} found")
    return "\n".join(lines)


def doctor(*, project: str | None, as_json: bool) -> int:
    report = diagnose(os.path.abspath(project or os.getcwd()))
    if as_json:
        doc = {"ok": not report.problems, "checks": [asdict(c) for c in report.checks]}
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print(render(report))
    return 1 if report.problems else 0
