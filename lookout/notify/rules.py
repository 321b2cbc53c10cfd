"""Which channels an intent goes to: config rules + a small notify state + an injected clock ->
deliveries. Pure: no I/O, no clock of its own; the caller persists the returned state."""

from __future__ import annotations

from lookout import paths
from lookout.words import ATTENTION_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.shapes import Config, Delivery, Escalation, Hold, Intent, Rule

    State = dict[str, Any]  # notify-state.json: episodes alerted and cooldown marks
    Skip = dict[
        str, Any
    ]  # a rule that withheld an intent: {intent, rule, channels, reason, detail}

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
            pattern = paths.expanduser(glob).rstrip("/")
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


def _hhmm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def _seconds(ms: float) -> str:
    s = int(ms // 1000)
    return f"{s}s" if s < 60 else f"{s // 60}m{s % 60:02d}s"


def withheld(rule: Rule, intent: Intent, minute_of_day: int) -> tuple[str, str] | None:
    """Why a rule whose `when` lists the intent's kind does not send it: (the rule key that
    decided, a sentence for `lookout explain`), or None when it sends (cooldown aside)."""
    kind = intent.get("kind")
    if unanswerable(intent) and not rule.get("print_mode"):
        why = "a dialog in print mode (claude -p, opencode run): nobody can answer it"
        return "print_mode", why
    agent = intent.get("agent") or "claude"
    if rule["agents"] is not None and agent not in rule["agents"]:
        return "agents", f"a {agent} session; the rule is for {', '.join(rule['agents'])}"
    if is_subagent_event(intent) and not rule["include_subagents"]:
        return "include_subagents", "an event inside a subagent (include_subagents is false)"
    if rule["projects"] is not None and not _project_match(rule["projects"], intent):
        project = intent.get("project") or "?"
        return "projects", f"project {project} matches none of {', '.join(rule['projects'])}"
    duration = intent.get("duration_ms")
    # Unknown durations pass: better one notification too many than a missed one.
    if (
        rule["min_duration_s"] is not None
        and kind != "resolved"
        and isinstance(duration, (int, float))
        and duration < rule["min_duration_s"] * 1000
    ):
        return "min_duration_s", (
            f"the turn took {_seconds(duration)}, under min_duration_s = {rule['min_duration_s']:g}"
        )
    if (
        rule["quiet_hours"] is not None
        and kind in rule["quiet_kinds"]
        and in_window(minute_of_day, rule["quiet_hours"])
    ):
        return _quiet(rule, minute_of_day)
    return None


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
    intents: list[Intent],
    cfg: Config,
    now_ms: int,
    minute_of_day: int,
    state: State | None,
    skipped: list[Skip] | None = None,
) -> tuple[list[Delivery], State]:
    """One delivery per intent that reaches at least one channel:
    `{"intent", "channels", "updates", "escalate": [{"after_s", "channels"}]}`.
    `updates` are channels that alerted on the episode a `resolved` intent ends. Each rule
    that lists an intent's kind but withholds it adds `{"intent", "rule", "channels",
    "reason", "detail"}` to `skipped`, so that a missing notification can be explained."""
    st = _prune(state or {}, now_ms)
    deliveries: list[Delivery] = []
    for intent in intents:
        delivery = _route(intent, cfg, st, now_ms, minute_of_day, skipped)
        if delivery is not None:
            deliveries.append(delivery)
    return deliveries, st


def _route(
    intent: Intent,
    cfg: Config,
    st: State,
    now_ms: int,
    minute_of_day: int,
    skipped: list[Skip] | None,
) -> Delivery | None:
    """One intent through every rule that lists its kind: where it goes now, what it updates,
    escalates and holds back (None: nowhere). Remembers the episode it alerted on."""
    channels_cfg: dict[str, Any] = cfg["channels"]
    updates = _updates_for(intent, st, channels_cfg)
    chosen: list[str] = []
    escalate: list[Escalation] = []
    holds: list[Hold] = []
    for index, rule in enumerate(cfg["rules"]):
        if intent.get("kind") not in rule["when"]:
            continue
        names = _sends_to(index, rule, intent, st, cfg, now_ms, minute_of_day, skipped)
        if names is None:
            continue
        held = _hold(index, rule, intent, names, channels_cfg)
        if held is not None:
            holds.append(held)
            names = [n for n in names if n not in held["channels"]]
        chosen.extend(n for n in names if n not in chosen and n not in updates)
        escalation = _escalation(rule, intent, channels_cfg)
        if escalation is not None:
            escalate.append(escalation)
    hold = _without(holds, chosen)
    _remember(
        st, intent, [*chosen, *(n for e in [*escalate, *hold] for n in e["channels"])], now_ms
    )
    if not (chosen or updates or escalate or hold):
        return None
    delivery: Delivery = {
        "intent": intent,
        "channels": chosen,
        "updates": updates,
        "escalate": escalate,
    }
    if hold:
        delivery["hold"] = hold
    return delivery


def _sends_to(
    index: int,
    rule: Rule,
    intent: Intent,
    st: State,
    cfg: Config,
    now_ms: int,
    minute_of_day: int,
    skipped: list[Skip] | None,
) -> list[str] | None:
    """The channels one rule sends the intent to (None: it withholds it), each channel it
    leaves out said in `skipped`."""
    names, why, hushed = _apply_rule(
        index, rule, intent, st, cfg["channels"], now_ms, minute_of_day
    )
    if hushed:
        _withheld_by(skipped, intent, index, hushed, _quiet(rule, minute_of_day, loud=True))
    if why is not None:
        _withheld_by(skipped, intent, index, rule["channels"], why)
        return None
    return names


def _withheld_by(
    skipped: list[Skip] | None,
    intent: Intent,
    index: int,
    channels: list[str],
    why: tuple[str, str],
) -> None:
    if skipped is not None:
        skipped.append(
            {
                "intent": intent,
                "rule": index,
                "channels": list(channels),
                "reason": why[0],
                "detail": why[1],
            }
        )


def _escalation(rule: Rule, intent: Intent, channels_cfg: dict[str, Any]) -> Escalation | None:
    """What a sending rule escalates to if the dialog still waits after `escalate_after_s`."""
    if not (
        rule["escalate_after_s"]
        and intent.get("kind") in ATTENTION_KINDS
        and isinstance(intent.get("episode"), str)
        and not unanswerable(intent)
    ):
        return None
    targets = [n for n in rule["escalate_to"] if channels_cfg[n]["enabled"]]
    return {"after_s": rule["escalate_after_s"], "channels": targets} if targets else None


def _remember(st: State, intent: Intent, channels: list[str], now_ms: int) -> None:
    """An attention episode that alerted (now, later or by escalation) is remembered with its
    channels: its `resolved` updates them."""
    episode = intent.get("episode")
    if intent.get("kind") not in ATTENTION_KINDS or not isinstance(episode, str) or not channels:
        return
    st["episodes"][episode] = {
        "channels": list(dict.fromkeys(channels)),
        "ts_ms": now_ms,
        "session_id": intent.get("session_id"),
    }


def _hold(
    index: int, rule: Rule, intent: Intent, names: list[str], channels_cfg: dict[str, Any]
) -> Hold | None:
    """What a sending rule holds back: with `digest_s`, its channels wait to be merged into one
    message per channel; with `grace_s`, its remote channels wait for the dialog to be answered
    at the desk. Attention alerts only (a `done` has nothing to answer)."""
    if intent.get("kind") not in ATTENTION_KINDS or not isinstance(intent.get("episode"), str):
        return None
    if unanswerable(intent):
        return None
    digest = rule.get("digest_s")
    if digest:
        return {"key": "digest_s", "rule": index, "after_s": digest, "channels": names}
    grace = rule.get("grace_s")
    remote = [n for n in names if channels_cfg[n]["remote"]]
    if grace and remote:
        return {"key": "grace_s", "rule": index, "after_s": grace, "channels": remote}
    return None


def _without(holds: list[Hold], chosen: list[str]) -> list[Hold]:
    """A channel another rule sends to at once is not held; one held twice, by the first."""
    seen = set(chosen)
    out: list[Hold] = []
    for h in holds:
        names = [n for n in h["channels"] if n not in seen]
        seen.update(names)
        if names:
            out.append({**h, "channels": names})
    return out


def _updates_for(intent: Intent, st: State, channels_cfg: dict[str, Any]) -> list[str]:
    """For a `resolved` intent: the channels whose alert on that episode can be updated in
    place (the episode is forgotten: it is over)."""
    episode = intent.get("episode")
    if intent.get("kind") != "resolved" or not isinstance(episode, str):
        return []
    alerted = st["episodes"].pop(episode, None)
    if not alerted:
        return []
    return [
        name
        for name in alerted.get("channels", [])
        if name in channels_cfg
        and channels_cfg[name]["enabled"]
        and channels_cfg[name]["updatable"]
    ]


def _apply_rule(
    index: int,
    rule: Rule,
    intent: Intent,
    st: State,
    channels_cfg: dict[str, Any],
    now_ms: int,
    minute_of_day: int,
) -> tuple[list[str], tuple[str, str] | None, list[str]]:
    """One rule that lists the intent's kind: the channels it sends to, or why it withholds
    the intent (the rule key that decided, a sentence), and the loud channels its quiet hours
    silence while it sends to others. Marks its cooldown when it sends."""
    mark = f"{index}:{intent.get('session_id') or ''}"
    why = withheld(rule, intent, minute_of_day) or _cooling_down(rule, intent, st, mark, now_ms)
    names = [n for n in rule["channels"] if channels_cfg[n]["enabled"]]
    hushed: list[str] = []
    if why is None:
        names, why, hushed = _narrow(rule, intent, names, channels_cfg, minute_of_day)
    if why is None and rule["cooldown_s"]:
        st["cooldown"][mark] = now_ms
    return names, why, hushed


def _cooling_down(
    rule: Rule, intent: Intent, st: State, mark: str, now_ms: int
) -> tuple[str, str] | None:
    last = st["cooldown"].get(mark)
    if (
        not rule["cooldown_s"]
        or intent.get("kind") == "resolved"
        or last is None
        or now_ms - last >= rule["cooldown_s"] * 1000
    ):
        return None
    return "cooldown_s", (
        f"cooldown_s = {rule['cooldown_s']:g}: this rule sent for this session"
        f" {_seconds(now_ms - last)} ago"
    )


def _narrow(
    rule: Rule, intent: Intent, names: list[str], channels_cfg: dict[str, Any], minute_of_day: int
) -> tuple[list[str], tuple[str, str] | None, list[str]]:
    """The rule's enabled channels this intent may reach (None: all of them), why none, and
    the loud ones left out."""
    if not names:
        return names, ("enabled", f"its channels are disabled ({', '.join(rule['channels'])})"), []
    if unanswerable(intent):
        # Local channels may show a print-mode dialog; nothing pages a phone for it.
        names = [n for n in names if not channels_cfg[n]["remote"]]
        if not names:
            return names, ("print_mode", "a print-mode dialog goes to desktop and command only"), []
    hushed = []
    if rule["quiet_hours"] is not None and in_window(minute_of_day, rule["quiet_hours"]):
        # A loud channel (a sound) keeps a rule's quiet hours for every kind, whatever
        # quiet_kinds says: a silent alert at 3 a.m. waits for you, a sound wakes the house.
        hushed = [n for n in names if channels_cfg[n]["loud"]]
        names = [n for n in names if n not in hushed]
        if not names:
            return names, _quiet(rule, minute_of_day, loud=True), []
    return names, None, hushed


def _quiet(rule: Rule, minute_of_day: int, loud: bool = False) -> tuple[str, str]:
    start, end = rule["quiet_hours"] or (0, 0)
    said = f"quiet hours {_hhmm(start)}-{_hhmm(end)} (it was {_hhmm(minute_of_day)} local time)"
    return "quiet_hours", said + ("; a sound keeps them for every kind" if loud else "")
