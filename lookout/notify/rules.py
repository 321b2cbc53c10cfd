"""Which channels an intent goes to: config rules + a small notify state + an injected clock ->
deliveries. Pure: no I/O, no clock of its own; the caller persists the returned state."""

from __future__ import annotations

import os

from lookout.notify.config import ATTENTION_KINDS, REMOTE_TYPES, UPDATABLE_TYPES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Config = dict[str, Any]
    Intent = dict[str, Any]
    Delivery = dict[str, Any]
    State = dict[str, Any]

# Episodes and cooldown marks older than this are forgotten (bounded state file).
KEEP_MS = 2 * 24 * 3600 * 1000


def in_window(minute: int, window: list[int] | tuple[int, int]) -> bool:
    start, end = window
    if start < end:
        return start <= minute < end
    return minute >= start or minute < end  # wraps midnight: "22:00-07:00"


def _project_match(globs: list[str], intent: Intent) -> bool:
    from fnmatch import fnmatchcase  # only rules that filter projects pay for it

    project = str(intent.get("project") or "")
    cwd = str(intent.get("cwd") or "")
    for glob in globs:
        if "/" in glob or glob.startswith("~"):
            pattern = os.path.expanduser(glob).rstrip("/")
            if fnmatchcase(cwd, pattern) or fnmatchcase(cwd, pattern + "/*"):
                return True
        elif fnmatchcase(project, glob):
            return True
    return False


def is_subagent_event(intent: Intent) -> bool:
    # Attention raised inside a subagent blocks the whole session: it always counts.
    if intent.get("kind") in ATTENTION_KINDS:
        return False
    return intent.get("agent_id") is not None or intent.get("kind") == "subagent_done"


# Dialogs someone must answer: in print mode (`claude -p`) nobody can, the client denies them.
UNANSWERABLE_IN_PRINT_MODE = frozenset({"permission", "question", "plan", "elicitation", "input"})


def unanswerable(intent: Intent) -> bool:
    """A print-mode dialog: it goes only to rules with `print_mode = true`, and only to the
    desktop and command channels (never pages a phone for what nobody can answer)."""
    if not intent.get("print_mode"):
        return False
    kind = intent.get("kind")
    reason = intent.get("reason") if kind == "resolved" else kind
    return reason in UNANSWERABLE_IN_PRINT_MODE


def rule_matches(rule: dict[str, Any], intent: Intent, minute_of_day: int) -> bool:
    """Everything but the cooldown, which needs the state."""
    kind = intent.get("kind")
    if kind not in rule["when"]:
        return False
    if unanswerable(intent) and not rule.get("print_mode"):
        return False
    if rule["agents"] is not None and (intent.get("agent") or "claude") not in rule["agents"]:
        return False
    if is_subagent_event(intent) and not rule["include_subagents"]:
        return False
    if rule["projects"] is not None and not _project_match(rule["projects"], intent):
        return False
    duration = intent.get("duration_ms")
    # Unknown durations pass: better one notification too many than a missed one.
    if (
        rule["min_duration_s"] is not None
        and kind != "resolved"
        and isinstance(duration, (int, float))
        and duration < rule["min_duration_s"] * 1000
    ):
        return False
    return not (
        rule["quiet_hours"] is not None
        and kind in rule["quiet_kinds"]
        and in_window(minute_of_day, rule["quiet_hours"])
    )


def _prune(state: State, now_ms: int) -> State:
    cooldown = {
        k: v
        for k, v in dict(state.get("cooldown") or {}).items()
        if isinstance(v, int) and now_ms - v < KEEP_MS
    }
    episodes = {
        k: v
        for k, v in dict(state.get("episodes") or {}).items()
        if isinstance(v, dict) and now_ms - int(v.get("ts_ms", 0)) < KEEP_MS
    }
    return {"cooldown": cooldown, "episodes": episodes}


def decide(
    intents: list[Intent], cfg: Config, now_ms: int, minute_of_day: int, state: State | None
) -> tuple[list[Delivery], State]:
    """One delivery per intent that reaches at least one channel:
    `{"intent", "channels", "updates", "escalate": [{"after_s", "channels"}]}`.
    `updates` are channels that alerted on the episode a `resolved` intent ends."""
    st = _prune(state or {}, now_ms)
    channels_cfg: dict[str, Any] = cfg["channels"]
    deliveries: list[Delivery] = []
    for intent in intents:
        kind = intent.get("kind")
        session = str(intent.get("session_id") or "")
        episode = intent.get("episode")
        updates: list[str] = []
        if kind == "resolved" and isinstance(episode, str):
            alerted = st["episodes"].pop(episode, None)
            if alerted:
                updates = [
                    name
                    for name in alerted.get("channels", [])
                    if name in channels_cfg
                    and channels_cfg[name]["enabled"]
                    and channels_cfg[name]["type"] in UPDATABLE_TYPES
                ]
        chosen: list[str] = []
        escalate: list[dict[str, Any]] = []
        for index, rule in enumerate(cfg["rules"]):
            if not rule_matches(rule, intent, minute_of_day):
                continue
            mark = f"{index}:{session}"
            last = st["cooldown"].get(mark)
            if (
                rule["cooldown_s"]
                and kind != "resolved"
                and last is not None
                and now_ms - last < rule["cooldown_s"] * 1000
            ):
                continue
            names = [n for n in rule["channels"] if channels_cfg[n]["enabled"]]
            if unanswerable(intent):
                names = [n for n in names if channels_cfg[n]["type"] not in REMOTE_TYPES]
            if not names:
                continue
            if rule["cooldown_s"]:
                st["cooldown"][mark] = now_ms
            chosen.extend(n for n in names if n not in chosen and n not in updates)
            if (
                rule["escalate_after_s"]
                and kind in ATTENTION_KINDS
                and isinstance(episode, str)
                and not unanswerable(intent)
            ):
                targets = [n for n in rule["escalate_to"] if channels_cfg[n]["enabled"]]
                if targets:
                    escalate.append({"after_s": rule["escalate_after_s"], "channels": targets})
        if kind in ATTENTION_KINDS and isinstance(episode, str) and (chosen or escalate):
            remembered = list(chosen)
            for e in escalate:
                remembered.extend(n for n in e["channels"] if n not in remembered)
            st["episodes"][episode] = {"channels": remembered, "ts_ms": now_ms}
        if chosen or updates or escalate:
            deliveries.append(
                {"intent": intent, "channels": chosen, "updates": updates, "escalate": escalate}
            )
    return deliveries, st
