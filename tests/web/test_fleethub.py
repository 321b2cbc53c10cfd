"""The hub's dashboard (issue 42): the other hosts' waiting requests with Allow/Deny, and the
message box and Interrupt on their cards, through the real HTTP server. No broker here: the
requests come through the live subscription's own message handler (lookout.web.fleet.Waiting,
which reads them with the hub's parser), and lookout.fleet.hub.press/steer are faked, recording
what would have been published. The last tests do it on a real Mosquitto (marked real)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lookout.config import fleet
from lookout.config.fleet import FleetConfig
from lookout.fleet import hub as fleet_hub
from lookout.web import auth, remote
from lookout.web.fleet import Waiting, is_hub
from lookout.web.hub import Hub
from lookout.web.server import Dashboard
from lookout.web.source import LocalSource

from .conftest import TOKEN, Client, Page, read_event, send

SID = "5f0c1b4e-9d2a-4c3b-8e7f-0a1b2c3d4e5f"
TOKEN_B = "a" * 32
ALLOW_TOKEN, DENY_TOKEN = "allow-" + "1" * 20, "deny-" + "2" * 20
COMMAND = "rm -rf build &&\n  make \x1b[31m all"


def config(host: str = "alpha", hub: str = "alpha") -> FleetConfig:
    raw = {"mqtt": "mqtt://127.0.0.1:1883", "host": host, **({"hub": hub} if hub else {})}
    return fleet.validate(raw)


def message(allow: bool = True, text: str = COMMAND, host: str = "beta") -> bytes:
    """A request as host B's bridge publishes it for the hub (lookout.fleet.hub.parse_request)."""
    return json.dumps(
        {
            "host": host,
            "token": TOKEN_B,
            "title": f"{host} · api · Bash",
            "project": "api",
            "tool_name": "Bash",
            "hub": {
                "id": "r1",
                "tokens": {"allow": ALLOW_TOKEN, "deny": DENY_TOKEN},
                "text": text,
                "allow": allow,
                "why": "" if allow else "the command spans lines",
                "session_id": SID,
                "agent": "claude",
                "expires_ms": 4_000_000_000_000,
            },
        }
    ).encode()


def session(host: str, session_id: str, status: str = "working") -> dict[str, Any]:
    return {
        "session_id": session_id,
        "host": host,
        "status": status,
        "reason": None,
        "updated_at": "2026-12-07T20:00:00Z",
        "agent": "claude",
        "project": "api",
    }


class FleetLike:
    """The dashboard's fleet source as the routes see it: sessions by `host/id` and, on the
    hub, the live requests (a Waiting fed by hand, as its subscription feeds it)."""

    def __init__(self, cfg: FleetConfig) -> None:
        self.shown = {f"beta/{SID}": session("beta", SID), "alpha/own": session("alpha", "own")}
        self.fleet = SimpleNamespace(cfg=cfg)  # as lookout.fleet.watch.Fleet has it
        self.waiting: Waiting | None = Waiting(cfg, lambda: None) if is_hub(cfg) else None
        if self.waiting is not None:
            self.waiting.lost.clear()  # "connected"

    def changed(self, force: bool = False) -> set[str]:
        return {"*"} if force else set()

    def sessions(self) -> dict[str, dict[str, Any]]:
        return dict(self.shown)

    def events(
        self, session_id: str, before: int | None, limit: int
    ) -> tuple[list[dict[str, Any]], int | None]:
        return [], None


ANSWERED = fleet_hub.Sent(True, "request r1 answered from the dashboard: allow")
DELIVERED = fleet_hub.Steered(
    True, (f"{SID[:8]}: typed into tmux pane %3, then Enter: delivered (working)", "text: hi")
)


@dataclass
class Calls:
    press: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)
    steer: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)
    sent: fleet_hub.Sent = ANSWERED
    steered: fleet_hub.Steered = DELIVERED


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    made = Calls()
    monkeypatch.setattr(remote, "FAILURES", remote._Failures())

    def press(*args: Any, **kw: Any) -> fleet_hub.Sent:
        made.press.append((args, kw))
        return made.sent

    def steer(*args: Any, **kw: Any) -> fleet_hub.Steered:
        made.steer.append((args, kw))
        return made.steered

    monkeypatch.setattr(fleet_hub, "press", press)
    monkeypatch.setattr(fleet_hub, "steer", steer)
    return made


def serve(source: Any, state_dir: Path) -> Iterator[tuple[Client, Any]]:
    hub = Hub(source, lambda: None)
    hub.start()
    server = Dashboard("127.0.0.1", 0, hub, TOKEN, str(state_dir))
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    try:
        yield Client(server.server_address[1], TOKEN, server), source
    finally:
        server.shutdown()
        server.server_close()
        hub.stop()


@pytest.fixture
def on_hub(state_dir: Path, no_notifications: None) -> Iterator[tuple[Client, FleetLike]]:
    yield from serve(FleetLike(config()), state_dir)


def feed(source: FleetLike, body: bytes, host: str = "beta") -> None:
    assert source.waiting is not None
    source.waiting.take(f"lookout/{host}/requests/{TOKEN_B}", body)


def post(client: Client, path: str, body: object, **headers: str) -> tuple[int, dict[str, Any]]:
    status, _, raw = client.request(
        "POST",
        path,
        headers={"Content-Type": "application/json", **headers},
        body=json.dumps(body).encode(),
    )
    return status, json.loads(raw)


def signed(client: Client, state_dir: Path, path: str, body: object) -> tuple[int, dict[str, Any]]:
    """What the page's script sends: a request signed with its session's key (auth.js)."""
    import time

    page = Page.sign_in(client.port, auth.new_code(str(state_dir), int(time.time() * 1000)))
    status, _, raw = page.request("POST", path, json.dumps(body).encode())
    return status, json.loads(raw)


PRESS = f"/api/fleet/requests/beta/{TOKEN_B}"
SAY = f"/api/fleet/sessions/beta/{SID}/say"
INTERRUPT = f"/api/fleet/sessions/beta/{SID}/interrupt"


def test_the_hub_lists_other_hosts_requests_with_their_whole_input(
    on_hub: tuple[Client, FleetLike], calls: Calls
) -> None:
    client, source = on_hub
    assert client.json("/api/fleet/requests", auth=None)[0] == 401
    assert client.json("/api/fleet/requests")[1] == {"hub": True, "host": "alpha", "requests": []}
    feed(source, message())
    status, body = client.json("/api/fleet/requests")
    assert status == 200
    (shown,) = body["requests"]
    assert shown["host"] == "beta" and shown["token"] == TOKEN_B
    assert shown["detail"] == COMMAND  # all of it, every line and character, as its host sent it
    assert (shown["offers_allow"], shown["why_no_allow"]) == (True, None)
    assert (shown["tool_name"], shown["project"], shown["session_id"]) == ("Bash", "api", SID)
    assert "tokens" not in shown  # the answer tokens stay on the server
    feed(source, b"")  # its host ended it: the retained topic emptied
    assert client.json("/api/fleet/requests")[1]["requests"] == []
    assert calls.press == []


def test_allow_goes_to_the_owning_host_with_its_own_token(
    on_hub: tuple[Client, FleetLike], calls: Calls, state_dir: Path
) -> None:
    client, source = on_hub
    feed(source, message())
    status, body = signed(client, state_dir, PRESS, {"decision": "allow"})
    assert status == 200, body
    assert (body["outcome"], body["decision"], body["host"]) == ("answered", "allow", "beta")
    ((args, kw),) = calls.press
    assert args[1:] == ("beta", ALLOW_TOKEN)
    assert kw == {"surface": "dashboard", "by": "the dashboard (127.0.0.1)"}
    assert args[0].host == "alpha"


def test_deny_sends_the_deny_token_and_allow_is_refused_when_not_offered(
    on_hub: tuple[Client, FleetLike], calls: Calls
) -> None:
    client, source = on_hub
    feed(source, message(allow=False))
    (shown,) = client.json("/api/fleet/requests")[1]["requests"]
    assert (shown["offers_allow"], shown["why_no_allow"]) == (False, "the command spans lines")
    status, body = post(client, PRESS, {"decision": "allow"})
    assert (status, body["outcome"], body["error"]) == (409, "refused", "the command spans lines")
    assert calls.press == []
    status, body = post(client, PRESS, {"decision": "deny"})
    assert (status, body["outcome"]) == (200, "answered")
    assert [c[0][1:] for c in calls.press] == [("beta", DENY_TOKEN)]


@pytest.mark.parametrize(
    ("sent", "status", "outcome"),
    [
        (fleet_hub.Sent(False, "no answer from beta within 5 s (is its bridge running?)"), 504,
         "no_answer"),
        (fleet_hub.Sent(False, "this request was answered already"), 409, "refused"),
    ],
)  # fmt: skip
def test_the_card_says_what_came_of_a_press(
    on_hub: tuple[Client, FleetLike], calls: Calls, sent: Any, status: int, outcome: str
) -> None:
    client, source = on_hub
    feed(source, message())
    calls.sent = sent
    got, body = post(client, PRESS, {"decision": "allow"})
    assert (got, body["outcome"], body["error"]) == (status, outcome, sent.text)


def test_a_press_names_a_waiting_request_or_nothing_is_sent(
    on_hub: tuple[Client, FleetLike], calls: Calls
) -> None:
    client, source = on_hub
    feed(source, message())
    for path, body in [
        (f"/api/fleet/requests/beta/{'b' * 32}", {"decision": "deny"}),  # another token
        (f"/api/fleet/requests/gamma/{TOKEN_B}", {"decision": "deny"}),  # another host
        (PRESS, {"decision": "allow_always"}),
        (PRESS, {"decision": "allow", "token": ALLOW_TOKEN}),
        (PRESS, ["allow"]),
    ]:
        status, answer = post(client, path, body)
        assert status in (400, 404), (path, body, answer)
    feed(source, b"")  # answered elsewhere meanwhile
    assert post(client, PRESS, {"decision": "deny"})[0] == 404
    assert calls.press == []


def test_a_press_needs_the_dashboards_own_credentials(
    on_hub: tuple[Client, FleetLike], calls: Calls
) -> None:
    client, source = on_hub
    feed(source, message())
    raw = b'{"decision": "allow"}'
    base = {"Host": f"127.0.0.1:{client.port}", "Origin": "https://evil.example"}
    for headers in [
        {**base, "Content-Type": "application/json"},
        {**base, "Content-Type": "text/plain", "Cookie": f"lookout_token={client.token}"},
        {**base, "Content-Type": "application/json", "Authorization": f"Bearer {'x' * 43}"},
    ]:
        assert send(client.port, "POST", PRESS, headers, raw)[0] == 401
    assert calls.press == []


def test_the_message_box_and_interrupt_go_to_the_owning_host(
    on_hub: tuple[Client, FleetLike], calls: Calls, state_dir: Path
) -> None:
    client, _ = on_hub
    text = "run the tests\nthen stop \u202e"
    status, body = signed(client, state_dir, SAY, {"text": text})
    assert status == 200, body
    assert body == {"ok": True, "host": "beta", "lines": list(calls.steered.lines)}
    status, body = post(client, INTERRUPT, {})
    assert status == 200
    (say_args, say_kw), (stop_args, stop_kw) = calls.steer
    assert say_args[1:] == ("beta", "say") and stop_args[1:] == ("beta", "interrupt")
    assert say_kw["session"] == SID and say_kw["text"] == text  # exactly as typed
    assert say_kw["source"] == "dashboard" and say_kw["by"] == "the dashboard (127.0.0.1)"
    assert stop_kw["session"] == SID and stop_kw["text"] == ""


def test_a_refusal_from_the_owning_host_shows_its_lines(
    on_hub: tuple[Client, FleetLike], calls: Calls
) -> None:
    client, _ = on_hub
    calls.steered = fleet_hub.Steered(
        False, ("error: steering is off on beta", "hint: set [steer] enabled = true")
    )
    status, body = post(client, SAY, {"text": "hi"})
    assert (status, body["ok"], body["error"]) == (409, False, "error: steering is off on beta")
    assert body["lines"] == ["error: steering is off on beta", "hint: set [steer] enabled = true"]


def test_steering_names_a_session_of_another_host_in_the_fleet(
    on_hub: tuple[Client, FleetLike], calls: Calls
) -> None:
    client, _ = on_hub
    assert post(client, f"/api/fleet/sessions/beta/{'0' * 8}/say", {"text": "hi"})[0] == 404
    assert post(client, f"/api/fleet/sessions/gamma/{SID}/interrupt", {})[0] == 404
    status, body = post(client, "/api/fleet/sessions/alpha/own/say", {"text": "hi"})
    assert (status, body["reason"]) == (400, "local")  # this host's own: /api/sessions/<id>/say
    for bad in [{"text": ""}, {"text": 3}, {"text": "hi", "via": "pane"}, {}]:
        assert post(client, SAY, bad)[0] == 400, bad
    assert post(client, INTERRUPT, {"now": True})[0] == 400
    assert calls.steer == []


@pytest.mark.parametrize("cfg", [config(hub=""), config(hub="gamma"), None])
def test_off_the_hub_nothing_changes(
    state_dir: Path, no_notifications: None, calls: Calls, cfg: FleetConfig | None
) -> None:
    source = FleetLike(cfg) if cfg is not None else LocalSource(str(state_dir))
    for client, _ in serve(source, state_dir):
        assert client.json("/api/fleet/requests")[1] == {"hub": False, "requests": []}
        for path, body in [(PRESS, {"decision": "deny"}), (SAY, {"text": "hi"}), (INTERRUPT, {})]:
            status, answer = post(client, path, body)
            assert status == 403 and "not the fleet's hub" in answer["error"], answer
            if cfg is not None and cfg.hub:  # another host is the hub: the answer names it
                assert answer["hint"].startswith(f"the fleet's hub is {cfg.hub}:")
    assert calls.press == [] and calls.steer == []


def test_a_new_request_reaches_open_pages_at_once(on_hub: tuple[Client, FleetLike]) -> None:
    client, source = on_hub
    stream = client.stream()
    assert read_event(stream)[0] == "snapshot"
    feed(source, message())
    assert read_event(stream)[0] == "requests"  # the page reloads /api/fleet/requests
    feed(source, b"")
    assert read_event(stream)[0] == "requests"


def test_while_the_broker_is_away_nothing_is_offered(
    on_hub: tuple[Client, FleetLike], calls: Calls
) -> None:
    client, source = on_hub
    feed(source, message())
    assert source.waiting is not None
    source.waiting.lost.set()
    source.waiting.problem = "cannot reach the broker at mqtt://127.0.0.1:1883"
    body = client.json("/api/fleet/requests")[1]
    assert body["requests"] == [] and "cannot reach the broker" in body["problem"]
    assert post(client, PRESS, {"decision": "deny"})[0] == 404
    assert calls.press == []


# -- on a real Mosquitto ------------------------------------------------------------------------


@dataclass
class Brokered:
    """Hosts `hub` (A: its dashboard served here from its real fleet source) and B (its bridge
    running), each its own state directory and config, on a real Mosquitto with the
    shipped ACL."""

    client: Client
    b: Any  # tests.fleet.conftest.Host
    broker: Any  # tests.mosquitto.Broker


@pytest.fixture
def brokered(
    tmp_path: Path, state_dir: Path, no_notifications: None, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Brokered]:
    from lookout.config import fleet as fleet_config
    from lookout.web.fleet import FleetSource
    from tests.fleet.conftest import PASSWORD_ENV
    from tests.fleet.test_acl import DOCUMENTED, Fleet, password
    from tests.fleet.test_answers import REMOTE

    hosts = Fleet(tmp_path, DOCUMENTED)  # the shipped ACL: its hub is the host `hub`
    try:
        a = hosts.host("hub", hub="hub")
        b = hosts.host("hostB", hub="hub")
        b.config.write_text(b.config.read_text() + REMOTE)
        b.bridge()
        monkeypatch.setenv("LOOKOUT_CONFIG", str(a.config))
        monkeypatch.setenv(PASSWORD_ENV, password("hub"))
        source = FleetSource(fleet_config.load())
        source.start()
        try:
            for client, _ in serve(source, state_dir):
                yield Brokered(client, b, hosts.broker)
        finally:
            source.stop()
    finally:
        hosts.close()


@pytest.mark.real
def test_an_allow_on_the_hubs_page_answers_the_request_waiting_on_another_host(
    brokered: Brokered, state_dir: Path
) -> None:
    """B's deciding hook waits: A's page (one live subscription) lists B's request with its
    whole input, and an Allow POSTed as the page posts it answers the hook on B."""
    from tests.fleet.test_answers import Hook
    from tests.helpers import wait_for

    client = brokered.client
    hook = Hook(brokered.b, "hub-allow")  # B's request, waiting for an answer
    try:

        def listed() -> dict[str, Any] | None:
            found = client.json("/api/fleet/requests")[1]["requests"]
            return next((r for r in found if r["id"] == hook.rec["id"]), None)

        shown = wait_for(listed, 20, "B's request on the hub's page")
        assert shown["host"] == "hostB" and shown["offers_allow"] is True
        assert shown["detail"] == "touch t.txt"  # all of what runs
        path = f"/api/fleet/requests/hostB/{shown['token']}"
        status, body = signed(client, state_dir, path, {"decision": "allow"})
        assert (status, body["outcome"]) == (200, "answered"), body
        assert hook.decision() == {"behavior": "allow"}
        wait_for(lambda: listed() is None, 10, "the request gone from the page")
    finally:
        hook.stop()


@pytest.mark.real
def test_a_message_from_the_hubs_page_is_judged_by_the_owning_hosts_steer(
    brokered: Brokered, state_dir: Path
) -> None:
    """B's [steer] is off: the message box on B's card gets B's own refusal, in its lines."""
    from tests.helpers import payload, wait_for

    client = brokered.client
    start = payload("SessionStart-startup")
    brokered.b.hook("session_start", start)
    sid = start["session_id"]
    wait_for(
        lambda: any(
            s.get("host") == "hostB" and s["session_id"] == sid
            for s in client.json("/api/sessions")[1]["sessions"]
        ),
        20,
        "B's session on the hub's page",
    )
    status, body = signed(client, state_dir, f"/api/fleet/sessions/hostB/{sid}/say", {"text": "hi"})
    assert (status, body["ok"], body["host"]) == (409, False, "hostB"), body
    error, hint = body["lines"]  # B's own words: its config, not the hub's
    assert error.startswith("error: steering is off") and str(brokered.b.config) in error
    assert hint.startswith("hint: add `[steer]`")


@pytest.mark.real
def test_the_hubs_requests_follow_the_broker_away_and_back(brokered: Brokered) -> None:
    """One subscription for the server's life: while the broker is away nothing is offered and
    the page says why; once it is back, so is B's request, with no restart."""
    from tests.fleet.test_answers import Hook
    from tests.helpers import wait_for

    client = brokered.client
    hook = Hook(brokered.b, "hub-away")
    try:

        def ids() -> list[str]:
            return [r["id"] for r in client.json("/api/fleet/requests")[1]["requests"]]

        wait_for(lambda: ids() == [hook.rec["id"]], 20, "B's request on the hub's page")
        brokered.broker.kill()
        body = wait_for(
            lambda: (got := client.json("/api/fleet/requests")[1]).get("problem") and got, 20
        )
        assert body["requests"] == []
        assert post(client, f"/api/fleet/requests/hostB/{'0' * 32}", {"decision": "deny"})[0] == 404
        brokered.broker.start()
        wait_for(lambda: ids() == [hook.rec["id"]], 30, "B's request back after the broker")
        assert "problem" not in client.json("/api/fleet/requests")[1]
    finally:
        hook.stop()
