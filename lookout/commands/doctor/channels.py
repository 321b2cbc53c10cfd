"""doctor: which notification channels can work here (reads and probes; never sends)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lookout import paths
from lookout.sessions import parse_line

if TYPE_CHECKING:
    from lookout.channels.base import Doctor, Finding
    from lookout.install.checks import Report
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

    used = _used(loaded)
    remote = loaded.get("remote") if loaded else None
    ctx: Doctor = {
        "answers": isinstance(remote, dict) and bool(remote.get("enabled")),
        "last": last_sent_or_failed,
    }
    found: list[tuple[str, Finding]] = []
    for kind, of in CHANNELS.items():
        mine = {name: ch for name, ch in used.items() if ch["type"] == kind}
        found += [(kind, finding) for finding in of.doctor(mine, ctx)]
    whole = [(kind, f) for kind, f in found if f[0] is None]
    each = sorted(((f[0] or kind, f) for kind, f in found if f[0] is not None), key=lambda x: x[0])
    for label, (_, status, detail, hint) in whole + each:
        report.add(f"channel {label}", status, detail, hint)


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
