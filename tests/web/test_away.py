"""The dashboard's away switch over HTTP (issue 41): a signed-in page reads and turns it (nobody
else: 401), it is recorded with `dashboard` as its source, the stream says when it changes (also
when it runs out or the terminal turns it), and its snapshot carries it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from lookout.web.hub import Hub
from lookout.web.server import Dashboard
from lookout.web.source import LocalSource
from tests.jump.world import lookout
from tests.web.conftest import TOKEN, Client, Page, read_event, send
from tests.web.test_steer import signed_in


@pytest.fixture
def dashboard_away(state_dir: Path, no_notifications: None) -> Iterator[Client]:
    """A dashboard as `lookout serve` builds it: its hub watches this host's away switch."""
    hub = Hub(LocalSource(str(state_dir)), lambda: None, None, str(state_dir))
    hub.start()
    server = Dashboard("127.0.0.1", 0, hub, TOKEN, str(state_dir))
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield Client(server.server_address[1], TOKEN, server)
    finally:
        server.shutdown()
        server.server_close()
        hub.stop()


def post(page: Page, value: object) -> tuple[int, dict[str, Any]]:
    status, _, body = page.request("POST", "/api/away", json.dumps(value).encode())
    return status, json.loads(body)


def away_lines(state: Path) -> list[dict[str, Any]]:
    path = state / store.EVENTS
    lines = path.read_text().splitlines() if path.exists() else []
    return [r for r in map(json.loads, lines) if r["event"] == "Away"]


def test_a_signed_page_turns_it_and_the_stream_says_so(
    dashboard_away: Client, state_dir: Path
) -> None:
    page = signed_in(dashboard_away, state_dir)
    assert page.json("/api/away") == (
        200,
        {"away": False, "since_ms": None, "until_ms": None, "source": None},
    )
    stream = dashboard_away.stream()
    name, snapshot = read_event(stream)
    assert (name, snapshot["away"]["away"]) == ("snapshot", False)
    status, body = post(page, {"away": True, "for": "1h"})
    assert (status, body["away"], body["source"], body["changed"]) == (200, True, "dashboard", True)
    assert body["until_ms"] - body["since_ms"] == 3600 * 1000
    name, data = read_event(stream)
    while name == "heartbeat":
        name, data = read_event(stream)
    assert (name, data["away"]["away"], data["away"]["source"]) == ("away", True, "dashboard")
    # The terminal turns it off: the page hears it too.
    lookout("away", "off")
    name, data = read_event(stream)
    while name == "heartbeat":
        name, data = read_event(stream)
    assert (name, data["away"]["away"], data["away"]["source"]) == ("away", False, "terminal")
    assert [(r["outcome"], r["source"]) for r in away_lines(state_dir)] == [
        ("on", "dashboard"),
        ("off", "terminal"),
    ]
    status, body = post(page, {"away": False})
    assert (status, body["changed"]) == (200, False)  # already off: nothing recorded
    assert len(away_lines(state_dir)) == 2


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"away": "yes"}, "expected {"),
        ({"away": True, "until": "1h"}, "expected {"),
        ({"away": False, "for": "1h"}, '"for" goes with "away": true'),
        ({"away": True, "for": "soon"}, "invalid duration 'soon'"),
        ([True], "expected {"),
    ],
)
def test_a_bad_body_is_refused_and_changes_nothing(
    dashboard_away: Client, state_dir: Path, value: object, error: str
) -> None:
    page = signed_in(dashboard_away, state_dir)
    status, body = post(page, value)
    assert status == 400 and body["error"].startswith(error)
    assert away_lines(state_dir) == []


def test_without_a_credential_nothing_is_read_or_turned(
    dashboard_away: Client, state_dir: Path
) -> None:
    headers = {"Host": f"127.0.0.1:{dashboard_away.port}", "Content-Type": "application/json"}
    assert send(dashboard_away.port, "GET", "/api/away", headers)[0] == 401
    body = b'{"away": true}'
    assert send(dashboard_away.port, "POST", "/api/away", headers, body)[0] == 401
    cookie = {**headers, "Cookie": f"lookout_token={dashboard_away.token}", "Origin": "http://evil"}
    assert send(dashboard_away.port, "POST", "/api/away", cookie, body)[0] == 401
    assert away_lines(state_dir) == []


def test_the_dashboards_rate_holds_for_the_switch(dashboard_away: Client, state_dir: Path) -> None:
    from tests.helpers import write_config

    write_config("[steer]\nper_minute = 2\n")
    page = signed_in(dashboard_away, state_dir)
    assert post(page, {"away": True})[0] == 200
    assert post(page, {"away": False})[0] == 200
    status, body = post(page, {"away": True})
    assert (status, body["reason"]) == (429, "rate")
    assert len(away_lines(state_dir)) == 2
