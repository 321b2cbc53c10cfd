"""Answers from Home Assistant (issue 25, `[fleet] answers = true`) on a real Mosquitto with the
documented ACL: a real `lookout bridge` publishes each open request as two `button` entities
(checked against HA's button discovery schema), a client logged in as Home Assistant's user
presses one exactly as HA does (its payload_press on its command_topic), and the real deciding
hook (hooks/remote_answer.py, as the client runs it) prints the answer. Withdrawal, replays,
another host's presses and broken channels never answer."""

from __future__ import annotations

import json
import os
import re
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

    SUBSCRIBE = ("homeassistant/button/#", "lookout/+/requests/+")

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
        self.client.subscribe([(topic, 1) for topic in self.SUBSCRIBE])

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
    first = setup.hook("p1", "make up TOKEN=abc123secret")
    second = setup.hook("p2", "npm test")
    buttons = setup.buttons_of(first)
    other = setup.buttons_of(second)
    for config in [*buttons.values(), *other.values()]:
        jsonschema.validate(config, BUTTON_SCHEMA)
        # No device: another host's config could rename it, and HA prefixes entity names with it.
        assert "device" not in config
        assert config["availability"][0]["topic"] == "lookout/hostA/online"
    assert buttons["allow"]["name"] == f"Allow hostA · demo · Bash: make up TOKEN={shape(12)}"
    assert buttons["deny"]["name"] == f"Deny hostA · demo · Bash: make up TOKEN={shape(12)}"
    # One opaque token per request, bound to it, never its nonce.
    assert buttons["allow"]["command_topic"] == f"lookout/hostA/press/{first.token}"
    assert first.token != second.token
    assert first.rec["nonce"] not in json.dumps(setup.ha.configs | setup.ha.attributes, default=str)
    attributes = json.loads(setup.ha.attributes[f"lookout/hostA/requests/{first.token}"])
    assert (attributes["title"], attributes["summary"]) == (
        "demo · Bash",
        f"make up TOKEN={shape(12)}",
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
    assert found["deny"]["name"] == "Deny hostA · demo · Bash: echo safe …"
    attributes = json.loads(setup.ha.attributes[f"lookout/hostA/requests/{hook.token}"])
    assert attributes["allow"] is False and set(attributes["buttons"]) == {"deny"}
    assert not setup.ha.press({**found["deny"], "payload_press": "allow"}).is_failure
    assert setup.out is not None
    wait_for(lambda: "offers only Deny" in setup.out.text(), 10, "the bridge to see it")  # type: ignore[union-attr]
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


def ignored(out: str, what: str) -> int:
    """How many ignored presses the bridge's lines starting with `what` count."""
    n = 0
    for line in out.splitlines():
        held = re.match(r"bridge: (\d+) press(?:es)? ignored in [\d.]+ s, the last: (.*)", line)
        if held and held.group(2).startswith(what):
            n += int(held.group(1))
        elif line.startswith(f"bridge: {what}"):
            n += 1
    return n


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
    junk = ("PRESS", "ALLOW", "", "allow\n", "allow_always", "deny " * 3)
    for body in junk:
        setup.ha.press(buttons["allow"], payload=body)
    # Said at most once a second, with a count: the empty press that cleared the stale one too.
    wait_for(lambda: ignored(setup.out.text(), "a press with payload") >= len(junk) + 1, 10, "junk")  # type: ignore[union-attr]
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


# -- issue 31: another fleet host never learns a press token, nor answers through a lure -------

TOKEN_SHAPE = re.compile(rb"[0-9a-f]{32}")
OLD_ACL = (  # the ACL docs/fleet.md shipped before issue 31: every host read all of lookout/#
    "pattern readwrite lookout/%u/#\n"
    "pattern readwrite homeassistant/+/lookout_%u/#\n"
    "pattern write lookout/!sync/#\n"
    "pattern read lookout/#\n"
    "user ha\n"
    "topic read homeassistant/#\n"
    "topic readwrite homeassistant/status\n"
    "topic write lookout/+/press/#\n"
)


class Hostile(HomeAssistant):
    """A fleet host gone bad (its own login, the shipped ACL): subscribes to everything and
    keeps every message the broker lets it read; publishes with the broker's answer."""

    SUBSCRIBE = ("#",)

    def __init__(self, fleet: Fleet, user: str) -> None:
        self.seen: list[tuple[str, bytes]] = []
        self.user = user
        super().__init__(fleet, user)

    def _on(self, _c: Any, _u: Any, msg: Any) -> None:
        with self.lock:
            self.seen.append((msg.topic, bytes(msg.payload)))

    def topics(self) -> set[str]:
        with self.lock:
            return {t for t, _ in self.seen}

    def tokens(self) -> set[str]:
        """Every token-shaped string in any topic or payload it saw."""
        with self.lock:
            seen = list(self.seen)
        found: set[str] = set()
        for topic, body in seen:
            found |= {m.decode() for m in TOKEN_SHAPE.findall(topic.encode() + b" " + body)}
        return found

    def sync(self) -> None:
        """Return once everything the broker had for it is delivered: a marker it publishes now
        comes back after every message queued for it before (retained ones included)."""
        marker = f"lookout/{self.user}/mark/{time.monotonic_ns()}"
        self.client.publish(marker, b"", qos=1)
        wait_for(lambda: marker in self.topics(), 10, "the marker to come back")

    def publish(self, topic: str, body: object, retain: bool = False) -> Any:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.press(
            {"command_topic": topic, "payload_press": data, "qos": 1, "retain": retain}
        )


def automation(topic: str, body: bytes) -> tuple[str, str] | None:
    """The phone automation of docs/remote.md, for one message on lookout/+/requests/+: the
    notification's title and the topic its Allow publishes to (None for an emptied request)."""
    if not body:
        return None
    host = topic.split("/")[-3]
    press_topic = "/press/".join(topic.rsplit("/requests/", 1))
    return f"{host}: {json.loads(body).get('title')}", press_topic


def test_the_documented_automation_takes_the_press_topic_from_the_topic() -> None:
    """What automation() runs is what docs/remote.md says, and nothing a host wrote into the
    payload decides where a press goes."""
    docs = (ROOT / "docs" / "remote.md").read_text()
    assert "host: \"{{ trigger.topic.split('/')[-3] }}\"" in docs
    assert "press_topic: \"{{ trigger.topic.rsplit('/requests/', 1) | join('/press/') }}\"" in docs
    assert 'title: "{{ host }}: {{ trigger.payload_json.title }}"' in docs
    assert '- action: "LOOKOUT_ALLOW:{{ press_topic }}"' in docs
    assert "payload_json.command_topic" not in docs and "payload_json.host" not in docs
    lure = json.dumps({"host": "hostA", "command_topic": "lookout/hostA/press/x"}).encode()
    assert automation("lookout/hostB/requests/x", lure) == ("hostB: None", "lookout/hostB/press/x")
    assert automation("lookout/requests/requests/t", b"{}") == (
        "requests: None",
        "lookout/requests/press/t",
    )


def test_a_hostile_host_learns_no_token_and_no_lure_answers_another_hosts_request(
    setup: Setup,
) -> None:
    """Security review S2 on the shipped ACL: hostB reads all it may (`#`), then publishes lures
    in its own subtree, a Home Assistant button (HA presses it for the user) and a request for
    the phone automation, naming hostA with a harmless text and every token it saw. Home
    Assistant follows each lure as a user's tap would make it. Nothing answers hostA's request;
    `status --fleet` still shows hostA on every host; HA's press on the genuine button answers."""
    fleet, host = setup.fleet, setup.host
    host.hook("session_start", "SessionStart-startup")
    evil = Hostile(fleet, "hostB")
    setup.bridge()
    hook = setup.hook("p1", "rm -rf ~/proj ~/.ssh")
    genuine = setup.buttons_of(hook)
    # hostB sees hostA's public state (its subscription works), live and retained...
    wait_for(lambda: "lookout/hostA/online" in evil.topics(), 10, "hostB to see hostA")
    wait_for(lambda: "lookout/hostA/summary" in evil.topics(), 10, "hostA's summary")
    wait_for(
        lambda: any(t.startswith("lookout/hostA/sessions/") for t in evil.topics()), 10, "sessions"
    )
    # ...and after the request was published everywhere HA reads, none of its private topics.
    wait_for(lambda: f"lookout/hostA/requests/{hook.token}" in setup.ha.attributes, 10, "request")
    late = Hostile(fleet, "hostB")  # a later subscriber gets the retained messages
    for spy in (evil, late):
        spy.sync()
        assert hook.token not in spy.tokens(), "hostB learned hostA's press token"
        assert not [t for t in spy.topics() if "/requests/" in t or "/press/" in t]
        assert not [t for t in spy.topics() if t.startswith("homeassistant/button/lookout_hostA")]

    # hostB's lures, for each token it saw (none of them hostA's) and a made-up one.
    candidates = sorted(evil.tokens() | late.tokens() | {"0" * 32})
    for i, cand in enumerate(candidates):
        target = f"lookout/hostA/press/{cand}"
        assert evil.publish(target, b"allow").is_failure  # the ACL: never on hostA's topics
        lure = {
            "name": "Allow hostA · demo · Bash: npm test",
            "unique_id": f"lookout_hostA_request_{cand}_allow",
            "command_topic": target,
            "payload_press": "allow",
            "qos": 1,
            "retain": False,
            "device": {"identifiers": ["lookout_hostA"], "name": "lookout hostA"},
        }
        config = f"homeassistant/button/lookout_hostB/lure_{i}/config"
        assert not evil.publish(config, lure, retain=True).is_failure
        request = {"host": "hostA", "title": "demo · Bash", "summary": "npm test", "token": cand}
        request["command_topic"] = target
        assert not evil.publish(f"lookout/hostB/requests/{cand}", request, retain=True).is_failure
    # Home Assistant follows every lure: the button's press, and the automation's Allow.
    wait_for(lambda: len(setup.ha.buttons()) >= 2 + len(candidates), 10, "HA to see the lures")
    wait_for(
        lambda: (
            len([t for t in setup.ha.attributes if t.startswith("lookout/hostB/")])
            >= len(candidates)
        ),
        10,
        "HA to see the lure requests",
    )
    taps = 0
    for config in setup.ha.buttons().values():
        is_lure = config not in [*genuine.values()]
        if is_lure and config["unique_id"].startswith("lookout_hostA_request_"):
            assert not setup.ha.press(config).is_failure  # HA may write every host's press topic
            taps += 1
    for topic, body in list(setup.ha.attributes.items()):
        shown = automation(topic, body)
        if topic.startswith("lookout/hostB/") and shown is not None:
            title, press_topic = shown
            assert title.startswith("hostB: ")  # the phone names the host that asked
            assert press_topic.startswith("lookout/hostB/press/")
            tap = {
                "command_topic": press_topic,
                "payload_press": "allow",
                "qos": 1,
                "retain": False,
            }
            assert not setup.ha.press(tap).is_failure
            taps += 1
    assert taps == 2 * len(candidates)
    # The lure buttons' presses reached hostA's bridge and changed nothing.
    out = setup.out
    assert out is not None
    wait_for(
        lambda: (
            ignored(out.text(), "a press for a request that is not open here") >= len(candidates)
        ),
        10,
        "the bridge to see the lures' presses",
    )
    assert hook.status() == "pending" and setup.remote_decisions() == []

    # `status --fleet` keeps working, on a viewer and on the hostile host alike.
    for user in ("hostD", "hostB"):
        view = fleet.host(user).fleet()
        assert "hostA" in [h["host"] for h in view["hosts"]]
        assert any(s["host"] == "hostA" for s in view["sessions"])

    # The genuine button still answers: a Deny, so no lure (all Allow) can have answered first.
    assert not setup.ha.press(genuine["deny"]).is_failure
    assert hook.decision() == {
        "behavior": "deny",
        "message": "Denied from lookout by Home Assistant.",
    }
    assert [d["decision"] for d in setup.remote_decisions()] == ["deny"]
    evil.sync()
    assert hook.token not in evil.tokens()  # the press went where hostB cannot read either
    assert "answers are off" not in out.text()
    evil.close()
    late.close()


def test_an_acl_that_lets_every_host_read_the_requests_turns_answers_off(
    tmp_path: Path,
) -> None:
    """The ACL shipped before issue 31 (`pattern read lookout/#`) gives every host hostA's press
    tokens: the bridge says so and publishes no button (fails closed), and doctor fails it. The
    shipped ACL passes both."""
    from tests.fleet.test_acl import fleet_checks

    for acl, safe in ((OLD_ACL, False), (DOCUMENTED, True)):
        root = tmp_path / ("shipped" if safe else "old")
        root.mkdir()
        fleet = Fleet(root, acl)
        try:
            host = fleet.host("hostA", home_assistant=True, answers=True)
            host.config.write_text(host.config.read_text() + REMOTE)
            hook = Hook(host, "p1")
            proc = host.bridge()
            assert proc.stdout is not None
            out = Output(proc.stdout)
            wait_for(lambda: "bridge: connected" in out.text(), 10, "the bridge to connect")
            checks = fleet_checks(host)
            # A clean stop publishes `online = false` last: all it published is on the broker.
            proc.terminate()
            proc.wait(10)
            held = fleet.retained()
            buttons = [t for t in held if t.startswith("homeassistant/button/lookout_hostA/")]
            tokens = [t for t in held if t.startswith("lookout/hostA/requests/")]
            last = checks[-1]
            if safe:
                assert (len(buttons), len(tokens)) == (2, 1)
                assert "answers are off" not in out.rest()
                assert last["status"] == "ok" and last["message"].startswith(
                    "no other host may read this host's press tokens (lookout/hostA/requests/..."
                )
            else:
                assert (buttons, tokens) == ([], [])
                text = out.rest()
                assert (
                    "lets user 'hostA' read other hosts' lookout/+/requests/... and"
                    " lookout/+/press/...: under the same grant every host may read this host's"
                    " press tokens, so Home Assistant answers are off" in text
                )
                assert (
                    "give them lookout/+/online, lookout/+/summary and lookout/+/sessions/+" in text
                )
                assert "answers are off" in (host.state / "errors.log").read_text()
                assert last["status"] == "fail" and "answers are off" in last["message"]
            assert hook.status() == "pending"
            hook.stop()
        finally:
            fleet.close()


def test_a_flood_of_bogus_presses_is_a_few_log_lines(setup: Setup) -> None:
    """Security review S9: 10,000 bogus presses were 10,056 lines on the bridge's stdout. Now at
    most one a second per reason, with a count, and none is lost; a real press still answers."""
    setup.bridge()
    hook = setup.hook("p1")
    buttons = setup.buttons_of(hook)
    # Mosquitto queues at most 20 in flight + 1,000 QoS 1 messages for one client (its
    # defaults) and drops the rest: more than that could be lost on a loaded machine, before
    # the bridge sees them, and the count below would never add up.
    n = 1_000
    started = time.monotonic()
    infos = [
        setup.ha.client.publish(f"lookout/hostA/press/{i:032x}", b"allow", qos=1) for i in range(n)
    ]
    for info in infos:
        info.wait_for_publish(30)
    out = setup.out
    assert out is not None
    what = "a press for a request that is not open here"
    wait_for(lambda: ignored(out.text(), what) == n, 60, "every bogus press to be counted")
    took = time.monotonic() - started
    lines = [x for x in out.text().splitlines() if what in x]
    # The first at once, then one per second that had any: bounded by the time it took.
    assert len(lines) <= 2 + took, (len(lines), took)
    assert setup.ha.press(buttons["allow"]).is_failure is False
    assert hook.decision() == {"behavior": "allow"}
    print(f"{n} bogus presses: {len(lines)} lines in {took:.1f} s")
