"""Answers from Home Assistant (issue 25, `[fleet] answers = true`) on a real Mosquitto with the
documented ACL: a real `lookout bridge` publishes each open request as two `button` entities
(checked against HA's button discovery schema), a client logged in as Home Assistant's user
presses one exactly as HA does (its payload_press on its command_topic), and the real deciding
hook (hooks/remote_answer.py, as the client runs it) prints the answer. Withdrawal, replays,
another host's presses and broken channels never answer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lookout.fleet import answers
from lookout.remote import requests
from tests.fleet.conftest import Host
from tests.fleet.test_acl import DOCUMENTED, Fleet, password
from tests.helpers import FIXTURES, PAYLOADS, ROOT, Output, shape, wait_for

# A real broker, real sender/poller processes or a real hook sequence: the full suite, not --fast.
pytestmark = pytest.mark.real

BUTTON_SCHEMA = json.loads((FIXTURES / "home-assistant" / "mqtt-button.schema.json").read_text())
REMOTE = "\n[remote]\nenabled = true\nwait_s = 120\n"
WITHDRAWN_S = 2.0  # the bound: a request ended anywhere loses its buttons within 2 s


class HomeAssistant:
    """An MQTT client with Home Assistant's login: keeps the discovery configs it sees (retained
    and live) and presses a button the way HA's MQTT button does."""

    def __init__(self, fleet: Fleet, user: str = "ha") -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.lock = threading.Lock()
        self.configs: dict[str, bytes] = {}
        self.attributes: dict[str, bytes] = {}
        self.acks: dict[int, Any] = {}
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=f"ha-{time.monotonic_ns()}",
            protocol=mqtt.MQTTv5,
        )
        self.client.username_pw_set(user, password(user))
        self.client.on_message = self._on
        self.client.on_publish = self._on_publish
        self.client.connect("127.0.0.1", fleet.broker.port)
        self.client.loop_start()
        self.client.subscribe("homeassistant/button/#", qos=1)
        self.client.subscribe("lookout/+/requests/+", qos=1)

    def _on(self, _c: Any, _u: Any, msg: Any) -> None:
        with self.lock:
            into = self.configs if msg.topic.startswith("homeassistant/") else self.attributes
            into[msg.topic] = bytes(msg.payload)

    def _on_publish(self, _c: Any, _u: Any, mid: int, reason: Any, _p: Any) -> None:
        with self.lock:
            self.acks[mid] = reason

    def buttons(self) -> dict[str, dict[str, Any]]:
        """unique_id -> config of every button HA would show now (empty config = removed)."""
        with self.lock:
            return {json.loads(b)["unique_id"]: json.loads(b) for b in self.configs.values() if b}

    def press(self, config: dict[str, Any], payload: str | None = None, **kw: Any) -> Any:
        """Publish the button's payload_press to its command_topic (or another payload), as
        HA's mqtt button does: QoS and retain from the config. The broker's reason code."""
        info = self.client.publish(
            config["command_topic"],
            config["payload_press"] if payload is None else payload,
            qos=config["qos"],
            retain=kw.get("retain", config["retain"]),
        )
        info.wait_for_publish(10)
        return wait_for(lambda: self.acks.get(info.mid), 10, "the broker's PUBACK")

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class Hook:
    """The deciding hook as the client runs it, for one PermissionRequest."""

    def __init__(
        self, host: Host, prompt_id: str, command: str = "touch t.txt", described: bool = False
    ) -> None:
        body = json.loads((PAYLOADS / "PermissionRequest-Bash.json").read_text())
        body["prompt_id"] = prompt_id
        body["tool_input"]["command"] = command
        if not described:  # one line, so a button's name can hold all of it (issue 31)
            del body["tool_input"]["description"]
        self.host = host
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(ROOT / "hooks" / "remote_answer.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=host.env,
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(body).encode())
        self.proc.stdin.close()
        self.proc.stdin = None
        self.rec = wait_for(self._pending, 20, "the hook's pending request")

    def _pending(self) -> dict[str, Any] | None:
        return next(
            (r for r in requests.load_all(str(self.host.state)) if r["pid"] == self.proc.pid),
            None,
        )

    @property
    def token(self) -> str:
        return answers.token(self.rec)

    def status(self) -> str:
        rec = requests.load(str(self.host.state), self.rec["id"])
        return str(rec["status"]) if rec else "missing"

    def decision(self, timeout: float = 15) -> dict[str, Any] | None:
        """What the hook printed (None: nothing, the dialog decides); it exits 0, silent."""
        out, err = self.proc.communicate(timeout=timeout)
        assert (self.proc.returncode, err) == (0, b"")
        return json.loads(out)["hookSpecificOutput"]["decision"] if out else None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Setup:
    def __init__(self, root: Path) -> None:
        self.fleet = Fleet(root, DOCUMENTED)
        self.host = self.fleet.host("hostA", home_assistant=True, answers=True)
        self.host.config.write_text(self.host.config.read_text() + REMOTE)
        self.ha = HomeAssistant(self.fleet)
        self.hooks: list[Hook] = []
        self.out: Output | None = None

    def bridge(self) -> subprocess.Popen[str]:
        proc = self.host.bridge()
        assert proc.stdout is not None
        self.out = Output(proc.stdout)
        return proc

    def hook(self, prompt_id: str, command: str = "touch t.txt", described: bool = False) -> Hook:
        self.hooks.append(Hook(self.host, prompt_id, command, described))
        return self.hooks[-1]

    def buttons_of(self, hook: Hook, timeout: float = 10) -> dict[str, dict[str, Any]]:
        """{"allow": config, "deny": config} once HA has both buttons of this request."""

        def both() -> dict[str, dict[str, Any]] | None:
            found = {
                c["payload_press"]: c
                for c in self.ha.buttons().values()
                if c["command_topic"].endswith("/" + hook.token)
            }
            return found if len(found) == 2 else None

        return wait_for(both, timeout, "both buttons of the request")

    def wait_withdrawn(self, hook: Hook) -> float:
        """Seconds until HA has no button of this request left."""
        start = time.monotonic()
        wait_for(
            lambda: not any(hook.token in c["command_topic"] for c in self.ha.buttons().values()),
            10,
            "the buttons to be withdrawn",
        )
        return time.monotonic() - start

    def remote_decisions(self) -> list[dict[str, Any]]:
        path = self.host.state / "events.jsonl"
        if not path.exists():
            return []
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        return [r["remote"] for r in rows if r.get("event") == "RemoteDecision"]

    def close(self) -> None:
        for h in self.hooks:
            h.stop()
        self.ha.close()
        self.fleet.close()


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    s = Setup(tmp_path)
    try:
        yield s
    finally:
        s.close()


def test_a_press_answers_exactly_that_request(setup: Setup) -> None:
    setup.bridge()
    first = setup.hook("p1", "make deploy TOKEN=abc123secret")
    second = setup.hook("p2", "npm test")
    buttons = setup.buttons_of(first)
    other = setup.buttons_of(second)
    for config in [*buttons.values(), *other.values()]:
        jsonschema.validate(config, BUTTON_SCHEMA)
        assert config["device"]["identifiers"] == ["lookout_hostA"]
    assert buttons["allow"]["name"] == f"Allow demo · Bash: make deploy TOKEN={shape(12)}"
    assert buttons["deny"]["name"] == f"Deny demo · Bash: make deploy TOKEN={shape(12)}"
    # One opaque token per request, bound to it, never its nonce.
    assert buttons["allow"]["command_topic"] == f"lookout/hostA/press/{first.token}"
    assert first.token != second.token
    assert first.rec["nonce"] not in json.dumps(setup.ha.configs | setup.ha.attributes, default=str)
    attributes = json.loads(setup.ha.attributes[f"lookout/hostA/requests/{first.token}"])
    assert (attributes["title"], attributes["summary"]) == (
        "demo · Bash",
        f"make deploy TOKEN={shape(12)}",
    )
    assert attributes["allow"] is True

    pressed = time.monotonic()
    assert not setup.ha.press(buttons["allow"]).is_failure
    assert first.decision() == {"behavior": "allow"}
    took = time.monotonic() - pressed
    assert second.status() == "pending"  # the other request is untouched
    assert setup.wait_withdrawn(first) < WITHDRAWN_S
    assert setup.buttons_of(second) == other

    assert not setup.ha.press(other["deny"]).is_failure
    assert second.decision() == {
        "behavior": "deny",
        "message": "Denied from lookout by Home Assistant.",
    }
    setup.wait_withdrawn(second)
    assert setup.remote_decisions() == [
        {
            "request_id": first.rec["id"],
            "decision": "allow",
            "by": "Home Assistant",
            "source": "home_assistant",
            "user_agent": f"MQTT via {setup.fleet.broker.url}",
        },
        {
            "request_id": second.rec["id"],
            "decision": "deny",
            "by": "Home Assistant",
            "source": "home_assistant",
            "user_agent": f"MQTT via {setup.fleet.broker.url}",
        },
    ]
    # Emptied, not left behind: nothing of either request stays retained on the broker.
    assert not [t for t in setup.fleet.retained() if "/press/" in t or "request_" in t]
    assert not [t for t in setup.fleet.retained() if t.startswith("lookout/hostA/requests/")]
    print(f"press -> hook exit {took * 1000:.0f} ms")


def test_answered_in_the_terminal_withdraws_the_buttons_and_a_late_press_changes_nothing(
    setup: Setup,
) -> None:
    setup.bridge()
    hook = setup.hook("p1")
    buttons = setup.buttons_of(hook)
    # "No" or Esc at the dialog: the client sends the hook SIGTERM.
    hook.proc.send_signal(signal.SIGTERM)
    assert hook.decision() is None
    assert hook.status() == "answered_locally"
    assert setup.wait_withdrawn(hook) < WITHDRAWN_S
    assert not setup.ha.press(buttons["allow"]).is_failure
    assert setup.out is not None
    wait_for(lambda: "not open here" in setup.out.text(), 10, "the bridge to say so")  # type: ignore[union-attr]
    assert hook.status() == "answered_locally" and setup.remote_decisions() == []


def test_a_request_its_name_cannot_hold_gets_only_deny(setup: Setup) -> None:
    """issue 31: an entity's name is one short line. A request it cannot hold whole (two lines
    here, as every Bash call with a description) gets a Deny button only, and an `allow`
    published on its press topic anyway (an automation, a hand) changes nothing."""
    setup.bridge()
    hook = setup.hook("p1", "echo safe\ntouch HIDDEN.txt", described=True)

    def deny_only() -> dict[str, dict[str, Any]] | None:
        found = {
            c["payload_press"]: c
            for c in setup.ha.buttons().values()
            if c["command_topic"].endswith("/" + hook.token)
        }
        return found if found else None

    found = wait_for(deny_only, 10, "the request's button")
    assert set(found) == {"deny"}
    assert found["deny"]["name"] == "Deny demo · Bash: echo safe …"
    attributes = json.loads(setup.ha.attributes[f"lookout/hostA/requests/{hook.token}"])
    assert attributes["allow"] is False and set(attributes["buttons"]) == {"deny"}
    assert not setup.ha.press({**found["deny"], "payload_press": "allow"}).is_failure
    assert setup.out is not None
    wait_for(lambda: "which offers only Deny" in setup.out.text(), 10, "the bridge to see it")  # type: ignore[union-attr]
    assert hook.status() == "pending"
    assert not setup.ha.press(found["deny"]).is_failure
    assert hook.decision() == {
        "behavior": "deny",
        "message": "Denied from lookout by Home Assistant.",
    }


def test_a_replayed_press_changes_nothing(setup: Setup) -> None:
    setup.bridge()
    hook = setup.hook("p1")
    buttons = setup.buttons_of(hook)
    setup.ha.press(buttons["deny"])
    assert hook.decision() == {
        "behavior": "deny",
        "message": "Denied from lookout by Home Assistant.",
    }
    # The same press again, and the other button, at once (before the buttons are withdrawn).
    setup.ha.press(buttons["deny"])
    setup.ha.press(buttons["allow"])
    setup.wait_withdrawn(hook)
    # The same dialog asked again: same request id, new nonce, so a new token. The old
    # request's press does not answer the new one.
    again = setup.hook("p1")
    assert again.rec["id"] == hook.rec["id"] and again.token != hook.token
    setup.buttons_of(again)
    setup.ha.press(buttons["allow"])
    rec = requests.load(str(setup.host.state), again.rec["id"])
    assert rec is not None and rec["status"] == "pending"
    assert [d["decision"] for d in setup.remote_decisions()] == ["deny"]
    again.proc.send_signal(signal.SIGTERM)
    assert again.decision() is None


def test_another_hosts_press_changes_nothing(setup: Setup) -> None:
    setup.bridge()
    hook = setup.hook("p1")
    buttons = setup.buttons_of(hook)
    # hostB's login may not write hostA's topics: the broker refuses the press (MQTT 5).
    intruder = HomeAssistant(setup.fleet, user="hostB")
    try:
        reason = intruder.press(buttons["allow"])
        assert reason.is_failure and str(reason) == "Not authorized"
        # On its own subtree it may publish, with hostA's token: hostA never listens there.
        forged = {**buttons["allow"], "command_topic": f"lookout/hostB/press/{hook.token}"}
        assert not intruder.press(forged).is_failure
    finally:
        intruder.close()
    # What hostA's bridge decides for a topic outside its own, should one ever reach it.
    out = answers.take_press(
        str(setup.host.state),
        _cfg(setup.host),
        {hook.token: hook.rec["id"]},
        f"lookout/hostB/press/{hook.token}",
        b"allow",
        False,
    )
    assert (out.answered, out.text.endswith("not this host's: ignored")) == (False, True)
    # A junk press from HA after both: once the bridge has seen it, it has seen all it will see.
    setup.ha.press(buttons["allow"], payload="PRESS")
    assert setup.out is not None
    wait_for(lambda: "a press with payload" in setup.out.text(), 10, "the bridge to see it")  # type: ignore[union-attr]
    assert "not this host's" not in setup.out.text()
    assert hook.status() == "pending" and setup.remote_decisions() == []
    hook.proc.send_signal(signal.SIGTERM)
    assert hook.decision() is None


def _cfg(host: Host) -> Any:
    import tomllib

    from lookout.config import fleet

    return fleet.validate(tomllib.loads(host.config.read_text())["fleet"])


def test_a_broken_channel_never_answers(setup: Setup) -> None:
    hook = setup.hook("p1")
    tok = hook.token
    topic = f"lookout/hostA/press/{tok}"
    # A retained press left on the broker before the bridge listens: stale, never an answer.
    setup.ha.press({"command_topic": topic, "payload_press": "allow", "qos": 1, "retain": True})
    proc = setup.bridge()
    buttons = setup.buttons_of(hook)
    assert setup.out is not None
    wait_for(lambda: "retained press (stale)" in setup.out.text(), 10, "the stale press")  # type: ignore[union-attr]
    wait_for(lambda: topic not in setup.fleet.retained(), 10, "the stale press to be cleared")
    # Payloads that are not a button of ours.
    for junk in ("PRESS", "ALLOW", "", "allow\n", "allow_always", "deny " * 3):
        setup.ha.press(buttons["allow"], payload=junk)
    wait_for(lambda: setup.out.text().count("a press with payload") >= 6, 10, "the junk")  # type: ignore[union-attr]
    # The broker dies while the request waits: presses go nowhere, nothing is answered.
    setup.fleet.broker.kill()
    wait_for(lambda: "lost the connection" in setup.out.text(), 10, "the bridge to notice")  # type: ignore[union-attr]
    assert hook.status() == "pending" and hook.proc.poll() is None
    # Back without its retained messages: the bridge publishes the buttons again.
    setup.fleet.broker.start()
    setup.ha.close()
    setup.ha = HomeAssistant(setup.fleet)
    assert setup.buttons_of(hook, timeout=30) == buttons
    # The bridge stopped cleanly: its buttons are unavailable (online = false), and a press
    # then reaches no one.
    proc.terminate()
    proc.wait(10)
    setup.ha.press(buttons["allow"])
    assert hook.status() == "pending" and setup.remote_decisions() == []
    assert (
        not (setup.host.state / "errors.log").exists()
        or "press failed" not in (setup.host.state / "errors.log").read_text()
    )
    hook.proc.send_signal(signal.SIGTERM)
    assert hook.decision() is None


def test_answers_off_publishes_no_button_and_clears_what_was_published(setup: Setup) -> None:
    proc = setup.bridge()
    hook = setup.hook("p1")
    setup.buttons_of(hook)
    proc.terminate()
    proc.wait(10)
    # Switched off: the next start (here --once) removes them; nobody listens for presses.
    setup.host.write_config(home_assistant=True)
    setup.host.config.write_text(setup.host.config.read_text() + REMOTE)
    out = setup.host.lookout("bridge", "--once")
    assert out.returncode == 0, out.stderr
    setup.wait_withdrawn(hook)
    assert hook.status() == "pending"
    hook.proc.send_signal(signal.SIGTERM)
    assert hook.decision() is None


# -- what the buttons say, and which requests get them (pure) ---------------------------------


def _rec(**over: Any) -> dict[str, Any]:
    base = {
        "id": "a" * 20,
        "nonce": "n" * 32,
        "project": "api",
        "tool_name": "Bash",
        "summary": "npm test",
        "detail": "npm test",
        "status": "pending",
        "expires_ms": 2**62,
        "pid": os.getpid(),
        "questions": None,
        "too_large": False,
    }
    return {**base, **over}


def test_texts_are_masked_one_line_and_escaped() -> None:
    detail = "curl -H 'Authorization: Bearer sk-live-PRIVATE' x\nsecond line"
    title, summary = answers.texts(_rec(project="a\x1b[2Jb", detail=detail), "summary")
    assert title == "a\\x1b[2Jb · Bash"
    assert summary == "curl -H 'Authorization: Bearer \u2039secret, 15 chars\u203a' x …"
    assert answers.texts(_rec(), "none") == ("api · Bash", "")
    long = answers.entity_name("Allow", "api · Bash", "x" * 300)
    assert len(long) == answers.NAME_CHARS and long.endswith("…")


def test_the_token_is_per_request_and_not_the_nonce() -> None:
    tok = answers.token(_rec())
    assert len(tok) == 32 and "n" * 8 not in tok
    assert answers.token(_rec(nonce="m" * 32)) != tok
    assert answers.token(_rec(id="b" * 20)) == tok  # the nonce names the request, not its id


@pytest.mark.parametrize(
    ("over", "expected"),
    [
        ({}, True),
        ({"questions": [{"question": "Which?", "options": ["a", "b"]}]}, False),
        ({"too_large": True}, False),
        ({"status": "answered_locally"}, False),
        ({"expires_ms": 1}, False),
    ],
)
def test_which_requests_get_buttons(over: dict[str, Any], expected: bool) -> None:
    assert answers.answerable(_rec(**over), int(time.time() * 1000)) is expected


def test_an_emptied_request_topic_reads_as_no_attributes() -> None:
    """When a request ends its request topic (the buttons' attributes) is emptied, a moment before
    Home Assistant has removed the buttons: their attributes template turns that empty payload
    into `{}`, which Home Assistant 2024.1.6 otherwise logged as "Erroneous JSON" for every
    request. The JSON goes through as is: scripts/real_home_assistant.py finds the buttons in a
    real Home Assistant by their `token` attribute, and its log clean."""
    from lookout.config import fleet

    cfg = fleet.validate({"mqtt": "mqtt://127.0.0.1:1883", "host": "hostA"})
    tok = answers.token(_rec())
    configs = answers.discovery(cfg, tok, _rec())
    assert [c["json_attributes_topic"] for _, c in configs] == [answers.request_topic(cfg, tok)] * 2
    for _, config in configs:
        assert config["json_attributes_template"] == "{{ value if value else '{}' }}"
        jsonschema.validate(config, BUTTON_SCHEMA)
