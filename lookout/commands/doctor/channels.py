"""doctor: which notification channels can work here (reads and probes; never sends)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lookout import paths
from lookout.config.notify import telegram_warnings
from lookout.install.checks import INFO, OK, WARN, Report
from lookout.sessions import parse_line

if TYPE_CHECKING:
    from lookout.shapes import Config


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
        r = parse_line(raw)
        if (
            r is not None
            and r.get("channel") in channels
            and r.get("result") in ("sent", "failed")
            and r.get("session_id") != "lookout-test"
        ):
            return r
    return None


def desktop_status() -> tuple[bool, str]:
    """Which notifier the platform layer found and what it can do."""
    from lookout.platform import current

    return current.get().notifier()


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
    remote = loaded.get("remote") if loaded else None
    answers = isinstance(remote, dict) and bool(remote.get("enabled"))
    if ok:
        hint = None
    elif "no notifier found" in detail:
        hint = "brew install alerter (Focus action) or terminal-notifier"
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
            risks = telegram_warnings(name, ch, answers) if kind == "telegram" else []
            if missing:
                report.add(label, WARN, f"{kind}: environment variable {missing[0]} is not set")
            elif not risks:
                report.add(label, OK, f"{kind} configured (reached over the network when sent)")
            for risk in risks:
                report.add(label, WARN, risk.removeprefix(f"channels.{name}."))
