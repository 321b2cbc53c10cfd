"""doctor: which notification channels can work here (reads and probes; never sends)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lookout import paths
from lookout.install.checks import FAIL, WARN, Report
from lookout.sessions import parse_line

if TYPE_CHECKING:
    from lookout.channels.base import Doctor, Finding
    from lookout.shapes import Channel, Config


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


def check_channels(report: Report, loaded: Config | None) -> None:
    """Each channel type's doctor: the type as a whole first (the desktop's notifier), then each
    channel some rule sends to, by name."""
    from lookout.channels.registry import CHANNELS

    failed = _inspect(report, loaded)
    used = {name: ch for name, ch in _used(loaded).items() if name not in failed}
    remote = loaded.get("remote") if loaded else None
    ctx: Doctor = {
        "answers": isinstance(remote, dict) and bool(remote.get("enabled")),
        "last": last_sent_or_failed,
        "errors": logged_errors,
    }
    found: list[tuple[str, Finding]] = []
    for kind, of in CHANNELS.items():
        mine = {name: ch for name, ch in used.items() if ch["type"] == kind}
        found += [(kind, finding) for finding in of.doctor(mine, ctx)]
    whole = [(kind, f) for kind, f in found if f[0] is None]
    each = sorted(((f[0] or kind, f) for kind, f in found if f[0] is not None), key=lambda x: x[0])
    for label, (_, status, detail, hint) in whole + each:
        report.add(f"channel {label}", status, detail, hint)
    _check_sender_env(report, used)


def logged_errors(last: int = 2000) -> list[tuple[int, str]]:
    """errors.log's last entries as (epoch ms, text without stamp and pid), oldest first."""
    import calendar
    import time

    path = Path(paths.state_dir()) / "errors.log"
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()[-last:]
    except OSError:
        return []
    out = []
    for line in lines:
        stamp, _, rest = line.partition(" ")
        if not rest.startswith("pid="):
            continue  # a traceback's continuation line
        try:
            when = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
        except ValueError:
            continue
        out.append((when * 1000, rest.partition(" ")[2]))
    return out


def _check_sender_env(report: Report, used: dict[str, Channel]) -> None:
    """A channel's variable set here but not as the running sender has it: that sender started
    (from a hook) before the variable was exported, and sends with its own environment until it
    exits, up to hours while an alert is out (newuser-5 defect 3)."""
    import os

    from lookout import store

    state = paths.state_dir()
    pid = store.holder(os.path.join(state, store.SENDER_LOCK))
    if not pid or not pid.isdigit():
        return
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            raw = fh.read().split(b"\0")
    except OSError:
        return  # not Linux, or it exited: nothing to compare
    theirs = dict(item.decode("utf-8", "replace").partition("=")[::2] for item in raw if item)
    for name, ch in sorted(used.items()):
        for key, var in sorted(ch.items()):
            if not (key.endswith("_env") and isinstance(var, str) and os.environ.get(var)):
                continue
            if theirs.get(var) == os.environ[var]:
                continue
            how = "not set" if var not in theirs else "set to another value"
            report.add(
                f"channel {name}",
                WARN,
                f"the running notification sender (pid {pid}) has an older environment: {var} is"
                f" {how} there, and it sends with it until it exits (up to hours while an alert"
                " is out)",
                f"restart it: kill {pid} (the next alert starts a new one, with the environment of"
                f" the agent whose hook fires: an agent started before you exported {var} lacks"
                " it too; restart that agent)",
            )


def _inspect(report: Report, loaded: Config | None) -> set[str]:
    """What check-config reads beyond each enabled channel's table (its sound pack on disk), rule
    or no rule, as check-config does: a FAIL naming the channel, since check-config exits 1 on
    it and every send to it fails. The names that failed (their type's line would repeat it)."""
    from lookout.channels.registry import CHANNELS
    from lookout.config.check import Checker

    failed: set[str] = set()
    for name, ch in (loaded["channels"] if loaded else {}).items():
        if not ch.get("enabled", True) or ch.get("type") not in CHANNELS:
            continue
        c = Checker(paths.tilde(paths.config_path()))
        CHANNELS[ch["type"]].inspect(c, ("channels", name), ch)
        if c.errors:
            more = f" (and {len(c.errors) - 1} more)" if len(c.errors) > 1 else ""
            hint = "lookout check-config lists every problem; until they are fixed, every send"
            report.add(f"channel {name}", FAIL, f"{c.errors[0]}{more}", f"{hint} to it fails")
            failed.add(name)
    return failed


def _used(loaded: Config | None) -> dict[str, Channel]:
    """The enabled channels some rule sends to (directly or by escalation): only they matter."""
    if loaded is None:
        return {}
    referenced: set[str] = set()
    for rule in loaded["rules"]:
        referenced.update(rule["channels"])
        referenced.update(rule["escalate_to"])
    return {
        name: ch
        for name, ch in loaded["channels"].items()
        if ch.get("enabled", True) and name in referenced
    }
