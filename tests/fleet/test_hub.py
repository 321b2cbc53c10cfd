"""One hub for the fleet (issue 42) on a real Mosquitto with the shipped ACL: host `hub` (A, the
fleet's hub), hostB (its requests and sessions answered and steered from the hub) and hostC
(hostile: the shipped ACL's pattern lines only), each with its own state directory and config.
A real deciding hook waits on B; `lookout answer hostB:ID allow` on the hub answers it through
B's bridge; `lookout say hostB:SESSION` types into B's session's pane (a real tmux pane running
the stand-in agent of tests/steer); C, logged in with its own credentials, can neither press,
steer, nor read B's requests; a replayed steer message and one older than 30 s do nothing.
The client side's pure parts (listens, owner, a request message as the hub reads it) first."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import words
from lookout.config import fleet
from lookout.fleet import hub
from lookout.remote import requests
from tests.fleet.test_acl import DOCUMENTED, Fleet, fleet_checks, password
from tests.fleet.test_answers import Hook
from tests.helpers import Output, wait_for
from tests.receivers import require
from tests.steer.test_pane import Panes

ANSWER_S = 2.0  # press (its own ts_ms) -> the request's decision (its own ts_ms) on B
SETUP = "\n[remote]\nenabled = true\nwait_s = 120\n\n[steer]\nenabled = true\n"


def test_only_the_hub_listens_and_every_host_without_one() -> None:
    def cfg(**kw: str) -> fleet.FleetConfig:
        return fleet.validate({"mqtt": "mqtt://b", "host": "laptop", **kw})

    assert hub.listens(None) and hub.listens(cfg())
    assert hub.listens(cfg(hub="laptop")) and not hub.listens(cfg(hub="desktop"))


def test_importing_it_loads_neither_paho_nor_the_config_reader() -> None:
    """A hook or a sender may ask listens(): the module itself stays light."""
    import subprocess
    import sys

    code = (
        "import sys, lookout.fleet.hub as h; h.owner('b:x');"
        "print([m for m in sys.modules if m.startswith(('paho', 'tomllib', 'lookout.config'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert hub.HOST.pattern == fleet.HOST.pattern


def test_owner_splits_a_host_off_only_when_it_is_a_host_name() -> None:
    assert hub.owner("hostB:0123abcd") == ("hostB", "0123abcd")
    assert hub.owner("hostB:~/src/api") == ("hostB", "~/src/api")
    assert hub.owner("api") == ("", "api")
    assert hub.owner("my title: fix") == ("", "my title: fix")  # a space: no host name
    assert hub.owner("hostB:") == ("", "hostB:")


def test_a_request_message_is_read_only_under_its_own_hosts_topic() -> None:
    message = {
        "host": "hostB",
        "title": "api · Bash",
        "project": "api",
        "tool_name": "Bash",
        "hub": {
            "id": "r1",
            "session_id": "s1",
            "agent": "claude",
            "expires_ms": 5,
            "text": "make",
            "allow": True,
            "why": "",
            "tokens": {"allow": "ta", "deny": "td", "always": "tx"},
        },
    }
    body = json.dumps(message).encode()
    got = hub.parse_request("lookout", "lookout/hostB/requests/tok", body)
    assert got is not None
    assert (got["host"], got["id"], got["token"], got["allow"]) == ("hostB", "r1", "tok", True)
    assert got["tokens"] == {"allow": "ta", "deny": "td"}
    # Published under another host's topic (it claims to be hostB): not taken.
    assert hub.parse_request("lookout", "lookout/hostC/requests/tok", body) is None
    assert hub.parse_request("lookout", "lookout/hostB/requests/tok", b"") is None
    ha_only = json.dumps({k: v for k, v in message.items() if k != "hub"}).encode()
    assert hub.parse_request("lookout", "lookout/hostB/requests/tok", ha_only) is None
    no_allow = {**message, "hub": {**message["hub"], "tokens": {"deny": "td"}}}
    got = hub.parse_request("lookout", "lookout/hostB/requests/t", json.dumps(no_allow).encode())
    assert got is not None and got["allow"] is False


def test_the_hub_api_refuses_off_the_hub_without_connecting() -> None:
    cfg = fleet.validate({"mqtt": "mqtt://127.0.0.1:1", "host": "laptop", "hub": "desktop"})
    sent = hub.press(cfg, "hostB", "tok", surface="telegram", by="me")
    assert sent == hub.Sent(
        False,
        "this host (laptop) is not the fleet's hub (desktop): only the hub answers and steers"
        " another host",
    )
    done = hub.steer(cfg, "hostB", "say", session="api", text="x", source="terminal", by="me")
    assert not done.ok and done.lines[0].startswith("error: this host (laptop) is not")


class Client:
    """A paho client with one user's credentials: what it got, and the broker's verdict on each
    QoS 1 publish (MQTT 5: "Not authorized" for one the ACL denies)."""

    def __init__(self, fleet: Fleet, user: str, *subscribe: str) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.lock = threading.Lock()
        self.got: list[tuple[str, bytes]] = []
        self.acks: dict[int, Any] = {}
        self.subscribed = threading.Event()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"{user}-{time.monotonic_ns()}", protocol=5
        )
        self.client.username_pw_set(user, password(user))
        self.client.on_message = self._on
        self.client.on_publish = self._on_publish
        self.client.on_subscribe = lambda *_a: self.subscribed.set()
        self.client.connect("127.0.0.1", fleet.broker.port)
        self.client.loop_start()
        if subscribe:
            self.client.subscribe([(t, 1) for t in subscribe])
            assert self.subscribed.wait(10)

    def _on(self, _c: Any, _u: Any, msg: Any) -> None:
        with self.lock:
            self.got.append((msg.topic, bytes(msg.payload)))

    def _on_publish(self, _c: Any, _u: Any, mid: int, reason: Any, _p: Any) -> None:
        with self.lock:
            self.acks[mid] = reason

    def publish(self, topic: str, body: bytes) -> Any:
        """The broker's reason code for this publish."""
        info = self.client.publish(topic, body, qos=1)
        return wait_for(lambda: self.acks.get(info.mid), 10, f"the PUBACK of {topic}")

    def messages(self, prefix: str) -> list[tuple[str, bytes]]:
        with self.lock:
            return [(t, b) for t, b in self.got if t.startswith(prefix)]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class Three:
    def __init__(self, root: Path) -> None:
        self.fleet = Fleet(root, DOCUMENTED)
        self.a = self.fleet.host("hub", hub="hub")
        self.b = self.fleet.host("hostB", hub="hub")
        self.b.config.write_text(self.b.config.read_text() + SETUP)
        self.c = self.fleet.host("hostC", hub="hub")
        self.clients: list[Client] = []
        self.hooks: list[Hook] = []
        proc = self.b.bridge()
        assert proc.stdout is not None
        self.out = Output(proc.stdout)
        wait_for(
            lambda: "takes presses and steering from the hub hub" in self.out.text(),
            20,
            "hostB's bridge to prove its topics private and take the hub's messages",
        )

    def client(self, user: str, *subscribe: str) -> Client:
        self.clients.append(Client(self.fleet, user, *subscribe))
        return self.clients[-1]

    def hook(self, prompt_id: str) -> Hook:
        """hostB's deciding hook waiting on a request (stopped at close)."""
        self.hooks.append(Hook(self.b, prompt_id))
        return self.hooks[-1]

    def close(self) -> None:
        for h in self.hooks:
            h.stop()
        for c in self.clients:
            c.close()
        self.fleet.close()


@pytest.fixture
def three(tmp_path: Path) -> Iterator[Three]:
    t = Three(tmp_path)
    try:
        yield t
    finally:
        t.close()


def request_for_hub(three: Three, hook: Hook) -> dict[str, Any]:
    """B's retained request message once it carries what the hub needs."""

    def held() -> dict[str, Any] | None:
        for topic, body in three.fleet.retained().items():
            if topic.startswith("lookout/hostB/requests/") and body:
                data = json.loads(body)
                if data.get("hub", {}).get("id") == hook.rec["id"]:
                    return dict(data)
        return None

    return wait_for(held, 15, "hostB's request for the hub")


@pytest.mark.real
def test_the_hub_answers_hostBs_request(three: Three) -> None:
    spy = three.client("spy", "lookout/hostB/press/+")
    hook = three.hook("p1")
    message = request_for_hub(three, hook)
    assert message["hub"]["allow"] is True and "touch t.txt" in message["hub"]["text"]
    assert set(message["hub"]["tokens"]) == {"allow", "deny"}

    out = three.a.lookout("answer", f"hostB:{hook.rec['id']}", "allow")
    assert (out.returncode, out.stderr) == (0, ""), out.stderr
    assert out.stdout.startswith("Allowed by ") and f"hostB:{hook.rec['id']} Bash" in out.stdout
    assert hook.decision() == {"behavior": "allow"}
    rec = requests.load(str(three.b.state), hook.rec["id"])
    assert rec is not None and rec["status"] == requests.ALLOWED
    assert rec["decision"]["source"] == "hub" and "terminal at hub" in rec["decision"]["by"]
    # The press's own stamp (the hub's clock) against the decision's (B's; the same machine).
    [(_, body)] = spy.messages("lookout/hostB/press/")
    took_ms = rec["decision"]["ts_ms"] - json.loads(body)["ts_ms"]
    assert 0 <= took_ms <= ANSWER_S * 1000, took_ms
    # Taken once: the same token again changes nothing, and says so.
    again = three.a.lookout("answer", f"hostB:{hook.rec['id']}", "deny")
    assert again.returncode == 1 and "no request" in again.stderr


@pytest.mark.real
def test_a_host_that_is_not_the_hub_is_told_so(three: Three) -> None:
    out = three.c.lookout("say", "hostB:api", "hello")
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "error: this host (hostC) is not the fleet's hub (hub): only the hub answers and steers"
        " another host",
        "hint: run it on hub, or on hostB itself",
    ]


@pytest.mark.real
def test_hostile_c_can_neither_press_steer_nor_read(three: Three) -> None:
    spy = three.client("spy", "lookout/hostB/#")
    hook = three.hook("p1")
    message = request_for_hub(three, hook)
    token = message["hub"]["tokens"]["allow"]
    c = three.client("hostC", "#", "lookout/+/requests/+", "lookout/hostB/requests/+")
    # Its subscriptions hold nothing of B's but the public topics (retained ones came at once).
    probe = f"lookout/hostC/probe/{secrets.token_hex(4)}"
    c.client.subscribe(probe, qos=1)
    c.publish(probe, b"end")
    wait_for(lambda: c.messages(probe), 10, "C's probe back")
    leaked = [t for t, _ in c.messages("lookout/hostB/") if "/sessions/" not in t]
    assert [t for t in leaked if not t.endswith(("/online", "/summary"))] == []
    stamp = {"ts_ms": words.now_ms(), "nonce": secrets.token_hex(16), "by": "C"}
    press = {**stamp, "surface": "terminal", "scope": ""}
    steer = {**stamp, "action": "say", "session": "api", "text": "rm -rf ~", "source": "terminal"}
    for topic, body in (
        (f"lookout/hostB/press/{token}", press),
        (f"lookout/hostB/press/{message['token']}", b"allow"),
        (f"lookout/hostB/steer/{stamp['nonce']}", steer),
    ):
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        assert str(c.publish(topic, raw)) == "Not authorized", topic
    assert spy.messages("lookout/hostB/press/") == spy.messages("lookout/hostB/steer/") == []
    assert hook.status() == "pending"
    # B's doctor says who the hub is and what its proofs found.
    said = [x["message"] for x in fleet_checks(three.b)]
    assert (
        "the fleet's hub is hub: it listens on the shared chat surfaces, this host does not" in said
    )
    assert any(m.startswith("no other host may read this host's requests or write") for m in said)
    hub_said = [x for x in fleet_checks(three.a) if "the fleet's hub" in x["message"]]
    assert [x["status"] for x in hub_said] == ["ok"], hub_said
    assert "the broker lets it answer and steer every host" in hub_said[0]["message"]


@pytest.mark.real
def test_say_from_the_hub_types_into_hostBs_pane_and_a_replay_does_nothing(
    three: Three, tmp_path: Path
) -> None:
    require("tmux")
    spy = three.client("spy", "lookout/hostB/steer/+", "lookout/hostB/steered/+")
    server = Panes()
    server.env.update({k: v for k, v in three.b.env.items() if k not in ("TMUX", "TMUX_PANE")})
    with server:
        log = tmp_path / "got"
        server.agent(log, "plain")
        out = three.a.lookout("say", "hostB:api", "hello from the hub")
        assert (out.returncode, out.stderr) == (0, ""), out.stderr
        wait_for(lambda: log.exists() and log.read_bytes().endswith(b"\r"), 10, "Enter")
        assert log.read_bytes() == b"hello from the hub\r"
        lines = out.stdout.splitlines()
        assert lines[0].startswith("api (dddd4444): typed into tmux pane ")
        assert lines[1] == "text: hello from the hub"
        [(topic, sent)] = spy.messages("lookout/hostB/steer/")
        steered = json.loads(wait_for(lambda: spy.messages("lookout/hostB/steered/"), 10)[0][1])
        assert steered["ok"] is True and steered["lines"] == lines
        assert 0 <= steered["ts_ms"] - json.loads(sent)["ts_ms"] <= 10_000
        # The hub's own credentials, its message again: seen before, refused, nothing typed.
        hub = three.client("hub")
        assert str(hub.publish(topic, sent)) == "Success"
        # And one older than 30 s by its own stamp (a fresh nonce).
        old = {**json.loads(sent), "nonce": secrets.token_hex(16)}
        old["ts_ms"] = words.now_ms() - 31_000
        assert str(hub.publish(f"lookout/hostB/steer/{old['nonce']}", json.dumps(old).encode()))
        wait_for(lambda: len(spy.messages("lookout/hostB/steered/")) == 3, 10, "two refusals")
        refusals = [json.loads(b) for _, b in spy.messages("lookout/hostB/steered/")[1:]]
        assert [r["ok"] for r in refusals] == [False, False]
        assert "seen before" in refusals[0]["lines"][0]
        assert "more than 30 s" in refusals[1]["lines"][0]
        assert log.read_bytes() == b"hello from the hub\r"
        server.tmux("kill-server")


@pytest.mark.real
def test_a_grant_that_lets_every_host_steer_every_host_fails_closed(tmp_path: Path) -> None:
    """An ACL with a wildcard write grant for every host (`pattern write lookout/+/steer/+`):
    B's probe on the `!probe` pseudo-host is accepted, so B takes nothing from the hub, says why
    once, and doctor fails it with the fix."""
    fleet = Fleet(tmp_path, DOCUMENTED + "pattern write lookout/+/steer/+\n")
    try:
        b = fleet.host("hostB", hub="hub")
        proc = b.bridge()
        assert proc.stdout is not None
        out = Output(proc.stdout)
        wanted = (
            "lets user 'hostB' write other hosts' lookout/+/steer/+: under the same grant every"
            " host may press and steer this one, so it takes nothing from the hub hub"
        )
        wait_for(lambda: wanted in out.text(), 20, "the bridge's refusal")
        assert "takes presses and steering" not in out.text()
        failed = [x for x in fleet_checks(b) if x["status"] == "fail"]
        assert [x["message"] for x in failed] == [f"the broker at {fleet.broker.url} {wanted}"]
        assert "only the hub's user may write" in failed[0]["hint"]
    finally:
        fleet.close()
