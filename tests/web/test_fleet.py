"""`lookout serve --fleet`: the dashboard fed by the MQTT fleet (a real Mosquitto, real bridges),
its API and its live stream."""

from __future__ import annotations

import json
import signal
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator

import pytest

from lookout.config import fleet
from lookout.web import auth
from lookout.web.fleet import FleetSource
from lookout.web.hub import Hub
from lookout.web.server import Dashboard
from tests.fleet.conftest import PASSWORD_ENV, Host, broker, hosts  # noqa: F401
from tests.helpers import payload, wait_for
from tests.mosquitto import PASSWORD, USER, Broker
from tests.web.conftest import TOKEN, Client, read_event, start_serve

SID = payload("PermissionRequest-Bash")["session_id"]


@pytest.fixture
def fleet_dashboard(
    broker: Broker,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: object,
) -> Iterator[Client]:
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    cfg = fleet.validate(
        {"mqtt": broker.url, "username": USER, "password_env": PASSWORD_ENV, "host": "viewer"}
    )
    source = FleetSource(cfg)
    source.start()
    hub = Hub(source, lambda: None)
    hub.start()
    server = Dashboard("127.0.0.1", 0, hub, TOKEN, str(tmp_path))
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    try:
        yield Client(server.server_address[1], TOKEN, server)
    finally:
        server.shutdown()
        server.server_close()
        hub.stop()
        source.stop()


def test_the_dashboard_shows_every_host_live(
    hosts: Callable[[str], Host],  # noqa: F811
    fleet_dashboard: Client,
) -> None:
    a, b = hosts("alpha"), hosts("beta")
    proc = a.bridge()
    b.bridge()
    a.hook("session_start", "SessionStart-startup")
    b.hook("session_start", dict(payload("SessionStart-startup"), session_id="beta-1"))

    def listed() -> list[dict[str, object]]:
        return fleet_dashboard.json("/api/sessions")[1]["sessions"]

    sessions = wait_for(lambda: len(s := listed()) == 2 and s)
    assert {(s["host"], s["status"]) for s in sessions} == {("alpha", "idle"), ("beta", "idle")}

    stream = fleet_dashboard.stream()
    assert read_event(stream)[0] == "snapshot"
    a.hook("permission_request", "PermissionRequest-Bash")
    start = time.monotonic()
    name, data = read_event(stream)
    assert time.monotonic() - start < 1.0
    assert name == "session"
    assert (data["session"]["host"], data["session"]["status"]) == ("alpha", "attention")

    proc.send_signal(signal.SIGKILL)  # the Last Will: alpha's sessions become unknown
    name, data = read_event(stream)
    assert (data["session"]["host"], data["session"]["status"]) == ("alpha", "unknown")
    assert data["session"]["reason"] == "host_offline"
    # A timeline stays on its host.
    status, body = fleet_dashboard.json(f"/api/sessions/{SID}/events")
    assert status == 200 and body["events"] == []


def test_lookout_serve_fleet(hosts: Callable[[str], Host]) -> None:  # noqa: F811
    a = hosts("alpha")
    a.hook("permission_request", "PermissionRequest-Bash")
    assert a.lookout("bridge", "--once").returncode == 0
    served = start_serve("--fleet", env=a.env)
    try:
        request = urllib.request.Request(
            f"{served.base}/api/sessions", headers={"Authorization": f"Bearer {served.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            [s] = json.load(response)["sessions"]
        assert (s["host"], s["session_id"], s["status"]) == ("alpha", SID, "attention")
    finally:
        served.stop()


def test_serve_fleet_shows_unknown_while_the_broker_is_away_and_recovers(
    hosts: Callable[[str], Host],  # noqa: F811
    broker: Broker,  # noqa: F811
) -> None:
    """Issue 42: the retry cleared its own "lost" flag before reconnecting, so one failed
    attempt left the page empty, for good, with its live dot on."""
    a = hosts("alpha")
    a.hook("permission_request", "PermissionRequest-Bash")
    a.bridge()
    served = start_serve("--fleet", env=a.env)

    def listed() -> list[dict[str, object]]:
        request = urllib.request.Request(
            f"{served.base}/api/sessions", headers={"Authorization": f"Bearer {served.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)["sessions"]  # type: ignore[no-any-return]

    try:
        wait_for(lambda: [s["status"] for s in listed()] == ["attention"])
        broker.kill()
        [s] = wait_for(lambda: (s := listed()) and s[0]["status"] == "unknown" and s)
        assert (s["host"], s["session_id"], s["reason"]) == ("alpha", SID, "broker_unreachable")
        # The reason in words, once a reconnect has failed: what the broker said.
        wait_for(lambda: "cannot reach the broker" in str(listed()[0]["detail"]))
        broker.start()
        # Back by itself (the bridge republishes, the page reconnects), no restart.
        [s] = wait_for(lambda: (s := listed()) and s[0]["status"] == "attention" and s, timeout=30)
        assert (s["host"], s["session_id"]) == ("alpha", SID)
    finally:
        served.stop()


def test_serve_fleet_without_a_broker_says_so(
    hosts: Callable[[str], Host],  # noqa: F811
    broker: Broker,  # noqa: F811
) -> None:
    a = hosts("alpha")
    broker.kill()
    out = a.lookout("serve", "--fleet", "--port", "0")
    assert out.returncode == 1
    assert out.stderr.startswith("error: cannot reach the broker at mqtt://127.0.0.1:")


@pytest.mark.e2e
def test_the_page_shows_each_host_and_drops_a_pruned_session(
    hosts: Callable[[str], Host],  # noqa: F811
    fleet_dashboard: Client,
    browser: object,
) -> None:
    a, b = hosts("alpha"), hosts("beta")
    a.bridge()
    b.bridge()
    # The same session id on two hosts: two cards, each with its host.
    a.hook("session_start", "SessionStart-startup")
    b.hook("session_start", "SessionStart-startup")
    wait_for(lambda: len(fleet_dashboard.json("/api/sessions")[1]["sessions"]) == 2)
    base = f"http://127.0.0.1:{fleet_dashboard.port}"
    code = auth.new_code(fleet_dashboard.server.state_dir, int(time.time() * 1000))  # type: ignore[union-attr]
    browser.get(f"{base}/login#code={code}")  # type: ignore[attr-defined]

    def metas() -> list[str]:
        # One read in the page: render() replaces the cards on every change.
        script = "return [...document.querySelectorAll('article.session .meta')]" + (
            ".map((e) => e.textContent)"
        )
        return sorted(browser.execute_script(script))  # type: ignore[attr-defined]

    shown = wait_for(lambda: len(m := metas()) == 2 and m)
    assert shown[0].startswith("alpha · ") and shown[1].startswith("beta · ")
    b.hook("session_end", "SessionEnd")
    assert b.lookout("prune", "--older-than", "0").returncode == 0
    assert wait_for(lambda: len(m := metas()) == 1 and m)[0].startswith("alpha · ")
