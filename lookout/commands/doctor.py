"""`lookout doctor`: where the hooks are installed, whether each command can run, whether the config
is valid, the state directory and its permissions, and which notification channels can work here.

Reads and probes only: never writes a file (its import probe runs with -B), never sends anything.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import time
from dataclasses import asdict
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from lookout import hookspec, paths, store
from lookout.agents.registry import AGENTS
from lookout.commands import view
from lookout.errors import LookoutError
from lookout.install import files
from lookout.install.checks import FAIL, INFO, OK, WARN, Check, Report, our_script

__all__ = ["FAIL", "INFO", "OK", "WARN", "Check", "Report", "diagnose", "doctor", "render"]

if TYPE_CHECKING:
    from lookout.shapes import Config

_LABEL = {OK: "ok  ", INFO: "--  ", WARN: "warn", FAIL: "FAIL"}


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


# --- the command -----------------------------------------------------------------------------


def diagnose(project: str) -> Report:
    report = Report()
    home = paths.runtime_home()
    if (home / "hooks").is_dir():
        report.add("runtime", OK, f"{paths.tilde(home)}")
    else:
        report.add("runtime", INFO, f"{paths.tilde(home)} not installed (plugin or checkout?)")
    found = sum(agent.check(report, project) for agent in AGENTS.values())
    if not found:
        report.add(
            "hooks",
            FAIL,
            "lookout's hooks are not installed in any scope",
            "python3 install.py (or install the plugin: see the README)",
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
                script = our_script(handler) if isinstance(handler, dict) else None
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
