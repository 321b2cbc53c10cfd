"""The pure decision: which intents reach which channels, with an injected clock and state."""

from __future__ import annotations

from typing import Any

import pytest

from lookout.config import check, files
from lookout.notify import rules
from lookout.shapes import Intent
from lookout.words import ATTENTION_KINDS
from tests.helpers import build_intent

T0 = 1_800_000_000_000
NOON = 12 * 60


def cfg(*rule_list: dict[str, Any], channels: dict[str, Any] | None = None) -> dict[str, Any]:
    raw = {
        "channels": channels
        or {
            "desktop": {"type": "desktop"},
            "phone": {"type": "ntfy", "url": "https://ntfy.sh/t"},
            "team": {"type": "webhook", "url": "https://h.example/x"},
        },
        "rules": list(rule_list),
    }
    return files.validate(raw)


def intent(kind: str = "permission", **fields: Any) -> Intent:
    return build_intent(
        kind,
        {
            "cwd": "/home/dev/work/demo",
            "summary": "make",
            "ts_ms": T0,
            "episode": f"s1:{kind}:1" if kind in ATTENTION_KINDS else None,
        },
        fields,
    )


def decide(
    c: dict[str, Any],
    intents: list[dict[str, Any]],
    now_ms: int = T0,
    minute: int = NOON,
    state: dict[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    return rules.decide(intents, c, now_ms, minute, state)


def channels_of(deliveries: list[dict[str, Any]]) -> list[list[str]]:
    return [d["channels"] for d in deliveries]


def test_matching_rules_union_their_channels_once() -> None:
    c = cfg(
        {"when": ["permission"], "channels": ["desktop", "phone"]},
        {"when": ["permission", "done"], "channels": ["phone", "team"]},
    )
    out, _ = decide(c, [intent()])
    assert channels_of(out) == [["desktop", "phone", "team"]]
    assert decide(c, [intent("question")])[0] == []


def test_disabled_channels_are_left_out() -> None:
    c = cfg(
        {"when": ["permission"], "channels": ["desktop", "phone"]},
        channels={
            "desktop": {"type": "desktop", "enabled": False},
            "phone": {"type": "ntfy", "url": "https://ntfy.sh/t"},
        },
    )
    assert channels_of(decide(c, [intent()])[0]) == [["phone"]]


def test_cooldown_with_an_injected_clock() -> None:
    c = cfg({"when": ["permission"], "channels": ["phone"], "cooldown_s": 60})
    out, state = decide(c, [intent()], now_ms=T0)
    assert channels_of(out) == [["phone"]]
    out, state = decide(c, [intent(episode="s1:permission:2")], now_ms=T0 + 59_000, state=state)
    assert out == []
    out, state = decide(c, [intent(session_id="s2")], now_ms=T0 + 59_000, state=state)
    assert channels_of(out) == [["phone"]]  # the cooldown is per session
    out, _ = decide(c, [intent(episode="s1:permission:3")], now_ms=T0 + 60_000, state=state)
    assert channels_of(out) == [["phone"]]


@pytest.mark.parametrize(
    ("minute", "kind", "sent"),
    [
        (23 * 60, "done", False),
        (3 * 60, "done", False),
        (6 * 60 + 59, "done", False),
        (7 * 60, "done", True),
        (21 * 60 + 59, "done", True),
        (23 * 60, "permission", True),  # attention kinds are let through by default
    ],
)
def test_quiet_hours_wrap_midnight(minute: int, kind: str, sent: bool) -> None:
    c = cfg({"when": ["done", "permission"], "channels": ["phone"], "quiet_hours": "22:00-07:00"})
    out, _ = decide(c, [intent(kind)], minute=minute)
    assert bool(out) is sent


def test_quiet_kinds_can_mute_attention_too() -> None:
    c = cfg(
        {
            "when": ["permission"],
            "channels": ["phone"],
            "quiet_hours": "12:00-13:00",
            "quiet_kinds": ["permission"],
        }
    )
    assert decide(c, [intent()], minute=NOON)[0] == []
    assert decide(c, [intent()], minute=13 * 60)[0] != []


def test_a_loud_channel_keeps_quiet_hours_for_every_kind() -> None:
    # A sound at 3 a.m. wakes the house: a loud type's channel (its trait, stamped into the
    # cached config) is silent in a rule's quiet hours whatever quiet_kinds says; the desktop
    # beside it still gets the attention alert, and explain says why the sound did not play.
    c = cfg(
        {"when": ["permission"], "channels": ["desktop", "phone"], "quiet_hours": "22:00-07:00"}
    )
    c["channels"]["phone"]["loud"] = True
    skipped: list[dict[str, Any]] = []
    out, _ = rules.decide([intent()], c, T0, 3 * 60, None, skipped)
    assert channels_of(out) == [["desktop"]]
    assert [(s["channels"], s["reason"]) for s in skipped] == [(["phone"], "quiet_hours")]
    assert skipped[0]["detail"].endswith("; a sound keeps them for every kind")
    assert channels_of(decide(c, [intent()], minute=NOON)[0]) == [["desktop", "phone"]]
    c["channels"]["desktop"]["loud"] = True  # nothing left to send: the rule withholds it
    skipped.clear()
    assert rules.decide([intent()], c, T0, 3 * 60, None, skipped)[0] == []
    assert [(s["channels"], s["reason"]) for s in skipped] == [
        (["desktop", "phone"], "quiet_hours")
    ]


def test_min_duration() -> None:
    c = cfg({"when": ["done"], "channels": ["desktop"], "min_duration_s": 30})
    assert decide(c, [intent("done", duration_ms=29_999)])[0] == []
    assert decide(c, [intent("done", duration_ms=30_000)])[0] != []
    assert decide(c, [intent("done", duration_ms=None)])[0] != []  # unknown: notify


def test_subagent_events_need_include_subagents() -> None:
    c = cfg({"when": ["done", "subagent_done", "permission"], "channels": ["desktop"]})
    sub_done = intent("subagent_done", agent_id="a1", agent_type="Explore")
    assert decide(c, [sub_done])[0] == []
    assert decide(c, [intent("done", agent_id="a1")])[0] == []
    # attention inside a subagent blocks the session: it always counts
    assert decide(c, [intent("permission", agent_id="a1")])[0] != []
    c2 = cfg({"when": ["subagent_done"], "channels": ["desktop"], "include_subagents": True})
    assert decide(c2, [sub_done])[0] != []


def test_projects_globs_match_name_or_path() -> None:
    by_name = cfg({"when": ["permission"], "channels": ["desktop"], "projects": ["de*"]})
    assert decide(by_name, [intent()])[0] != []
    assert decide(by_name, [intent(project="api")])[0] == []
    by_path = cfg({"when": ["permission"], "channels": ["desktop"], "projects": ["/home/dev/work"]})
    assert decide(by_path, [intent()])[0] != []
    assert decide(by_path, [intent(cwd="/home/dev/other/demo")])[0] == []


def test_agents_filter() -> None:
    c = cfg({"when": ["done"], "channels": ["desktop"], "agents": ["codex"]})
    assert decide(c, [intent("done")])[0] == []
    assert decide(c, [intent("done", agent="codex")])[0] != []


@pytest.mark.parametrize("agent", ["gemini", "copilot", "opencode", "cursor"])
def test_agents_filter_selects_every_agent(agent: str) -> None:
    c = cfg({"when": ["permission"], "channels": ["desktop"], "agents": [agent]})
    assert decide(c, [intent("permission", agent=agent)])[0] != []
    assert decide(c, [intent("permission", agent="claude")])[0] == []


def test_resolved_updates_the_channels_that_alerted() -> None:
    c = cfg({"when": ["permission"], "channels": ["desktop", "phone", "team"]})
    _, state = decide(c, [intent()])
    assert state["episodes"]["s1:permission:1"]["channels"] == ["desktop", "phone", "team"]
    resolved = intent("resolved", reason="permission", episode="s1:permission:1", duration_ms=4000)
    out, state = decide(c, [resolved], now_ms=T0 + 4000, state=state)
    # webhooks cannot update in place; desktop and ntfy can
    assert out == [
        {"intent": resolved, "channels": [], "updates": ["desktop", "phone"], "escalate": []}
    ]
    assert state["episodes"] == {}
    assert decide(c, [resolved], state=state)[0] == []  # a second resolve finds nothing


def test_explicit_resolved_rule_sends_as_well() -> None:
    c = cfg(
        {"when": ["permission"], "channels": ["desktop"]},
        {"when": ["resolved"], "channels": ["desktop", "team"]},
    )
    _, state = decide(c, [intent()])
    out, _ = decide(c, [intent("resolved", episode="s1:permission:1")], state=state)
    assert (out[0]["channels"], out[0]["updates"]) == (["team"], ["desktop"])


def test_escalation_is_planned_for_attention_only() -> None:
    c = cfg(
        {
            "when": ["permission", "done"],
            "channels": ["desktop"],
            "escalate_after_s": 120,
            "escalate_to": ["phone"],
        }
    )
    out, state = decide(c, [intent()])
    assert out[0]["escalate"] == [{"after_s": 120.0, "channels": ["phone"]}]
    assert state["episodes"]["s1:permission:1"]["channels"] == ["desktop", "phone"]
    assert decide(c, [intent("done")])[0][0]["escalate"] == []


def test_old_state_is_pruned() -> None:
    c = cfg({"when": ["permission"], "channels": ["phone"], "cooldown_s": 10})
    _, state = decide(c, [intent()])
    later = T0 + rules.KEEP_MS + 1
    _, state = decide(c, [], now_ms=later, state=state)
    assert state == {"cooldown": {}, "episodes": {}}


def test_decide_is_pure() -> None:
    c = cfg({"when": ["permission"], "channels": ["phone"], "cooldown_s": 10})
    state: dict[str, Any] = {"cooldown": {}, "episodes": {}}
    decide(c, [intent()], state=state)
    assert state == {"cooldown": {}, "episodes": {}}


def test_print_mode_dialogs_never_page_remote_channels() -> None:
    everywhere = {
        "when": ["permission", "done"],
        "channels": ["desktop", "phone", "team"],
        "escalate_after_s": 10,
        "escalate_to": ["phone"],
    }
    printed = intent(print_mode=True)
    # Default: a dialog nobody can answer goes nowhere (the event is still recorded).
    assert decide(cfg(everywhere), [printed])[0] == []
    # print_mode = true: the local channels may show it; still no phone, no webhook, no escalation.
    out, _ = decide(cfg({**everywhere, "print_mode": True}), [printed])
    assert [(d["channels"], d["escalate"]) for d in out] == [(["desktop"], [])]
    # Everything else of a print-mode session follows the rules as usual.
    out, _ = decide(cfg(everywhere), [intent("done", print_mode=True)])
    assert channels_of(out) == [["desktop", "phone", "team"]]
    # An interactive session's permission is unaffected.
    out, _ = decide(cfg(everywhere), [intent()])
    assert channels_of(out) == [["desktop", "phone", "team"]]


def test_print_mode_is_a_bool() -> None:
    with pytest.raises(check.ConfigError, match=r"rules\[0\]\.print_mode: expected a bool"):
        cfg({"when": ["permission"], "channels": ["desktop"], "print_mode": "yes"})


# -- why a rule withheld a notification (skipped records, lookout explain) -----------------------


def skips(c: dict[str, Any], intents: list[dict[str, Any]], **kw: Any) -> list[tuple[Any, ...]]:
    found: list[dict[str, Any]] = []
    rules.decide(intents, c, kw.get("now_ms", T0), kw.get("minute", NOON), kw.get("state"), found)
    return [(s["rule"], s["channels"], s["reason"], s["detail"]) for s in found]


@pytest.mark.parametrize(
    ("rule", "sent", "skip"),
    [
        (
            {"when": ["done"], "channels": ["phone"], "min_duration_s": 30},
            intent("done", duration_ms=12_400),
            ("min_duration_s", "the turn took 12s, under min_duration_s = 30"),
        ),
        (
            {"when": ["done"], "channels": ["phone"], "quiet_hours": "22:00-07:00"},
            intent("done"),
            ("quiet_hours", "quiet hours 22:00-07:00 (it was 23:15 local time)"),
        ),
        (
            {"when": ["subagent_done"], "channels": ["phone"]},
            intent("subagent_done", agent_id="a1"),
            ("include_subagents", "an event inside a subagent (include_subagents is false)"),
        ),
        (
            {"when": ["permission"], "channels": ["phone"], "projects": ["api-*"]},
            intent(),
            ("projects", "project demo matches none of api-*"),
        ),
        (
            {"when": ["permission"], "channels": ["phone"], "agents": ["codex"]},
            intent(),
            ("agents", "a claude session; the rule is for codex"),
        ),
    ],
    ids=["min_duration_s", "quiet_hours", "include_subagents", "projects", "agents"],
)
def test_a_withheld_notification_says_which_rule_and_why(
    rule: dict[str, Any], sent: dict[str, Any], skip: tuple[str, str]
) -> None:
    c = cfg({"when": ["permission"], "channels": ["desktop"]}, rule)
    assert skips(c, [sent], minute=23 * 60 + 15) == [(1, ["phone"], *skip)]


def test_cooldown_and_disabled_channels_are_reasons_too() -> None:
    c = cfg(
        {"when": ["done"], "channels": ["phone"], "cooldown_s": 300},
        {"when": ["done"], "channels": ["off"]},
        channels={
            "phone": {"type": "ntfy", "url": "https://ntfy.sh/t"},
            "off": {"type": "desktop", "enabled": False},
        },
    )
    _, state = decide(c, [intent("done")])
    assert skips(c, [intent("done")], now_ms=T0 + 95_000, state=state) == [
        (0, ["phone"], "cooldown_s", "cooldown_s = 300: this rule sent for this session 1m35s ago"),
        (1, ["off"], "enabled", "its channels are disabled (off)"),
    ]


def test_a_rule_for_other_kinds_is_no_skip() -> None:
    c = cfg({"when": ["permission"], "channels": ["phone"]})
    assert skips(c, [intent("done")]) == []
    assert skips(c, [intent("permission")]) == []
