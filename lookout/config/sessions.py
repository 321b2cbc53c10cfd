"""[sessions]: how lookout judges a session that says nothing. `stuck_after_s`: a working
session with no tool running and no sign of life for this long shows `attention stuck` and sends
one `stuck` alert (docs/statuses.md); 0 turns that off. Pure."""

from __future__ import annotations

from lookout.config.trust import PROJECT_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from lookout.config.check import Checker, KeyPath

SESSIONS_DEFAULTS: dict[str, Any] = {"stuck_after_s": 600}
# Below a second a busy machine's hook delays would read as silence; a day is surely a mistake.
STUCK_RANGE = (1, 86400)


def check_sessions(c: Checker, raw: object) -> dict[str, Any]:
    out = dict(SESSIONS_DEFAULTS)
    path: KeyPath = ("sessions",)
    raw = c.own_table("sessions", raw, tuple(SESSIONS_DEFAULTS), PROJECT_FILE)
    if raw is None:
        return out
    key = (*path, "stuck_after_s")
    value = raw.get("stuck_after_s")
    if "stuck_after_s" in raw and c.expect(key, value, (int, float), "a number of seconds"):
        assert isinstance(value, (int, float))
        low, high = STUCK_RANGE
        if value == 0 or low <= value <= high:
            out["stuck_after_s"] = value
        else:
            c.error(key, f"expected 0 (off) or {low} to {high} seconds, got {value}")
    return out


def stuck_after_s(cfg: Mapping[str, Any] | None) -> float:
    """`[sessions] stuck_after_s` of a validated config, the default without one (a broken
    config silences alerts, not the status)."""
    sessions = (cfg or {}).get("sessions") or {}
    return float(sessions.get("stuck_after_s", SESSIONS_DEFAULTS["stuck_after_s"]))


# The kinds only time passing sends (lookout.sender.timers).
TIMED_KINDS = frozenset({"stuck", "limit_lifted"})


def timed_kinds(cfg: Mapping[str, Any] | None) -> frozenset[str]:
    """Which of the kinds only time passing sends some enabled rule sends (`stuck` only while
    stuck_after_s is on): the sender's timers run for those alone. Light: a hook asks it."""
    if not cfg:
        return frozenset()
    channels = cfg.get("channels") or {}
    kinds: set[str] = set()
    for rule in cfg.get("rules") or []:
        if any((channels.get(name) or {}).get("enabled", True) for name in rule["channels"]):
            kinds.update(TIMED_KINDS.intersection(rule["when"]))
    if not stuck_after_s(cfg):
        kinds.discard("stuck")
    return frozenset(kinds)
