"""The dashboard's HTTP side: who gets in, what every response carries, the JSON API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lookout.commands import view
from lookout.web import server
from tests.web import seed
from tests.web.conftest import TOKEN, Client

API = ["/api/sessions", "/api/sessions/s1/events", "/api/stream"]


@pytest.mark.parametrize("path", API)
def test_every_api_route_needs_the_token(dashboard: Client, path: str) -> None:
    for auth, headers in [
        (None, {}),
        (None, {"Authorization": "Bearer wrong"}),
        (None, {"Cookie": "lookout_token=wrong"}),
        (None, {"Authorization": f"Basic {TOKEN}"}),
    ]:
        status, sent, body = dashboard.request("GET", path, auth=auth, headers=headers)
        assert status == 401, headers
        assert sent["WWW-Authenticate"] == 'Bearer realm="lookout"'
        answer = json.loads(body)
        assert answer["hint"].startswith("run `lookout serve --url`")


def test_the_page_loads_without_the_token_and_carries_no_data(dashboard: Client) -> None:
    for path in ["/", "/static/app.js", "/static/app.css", "/static/icon.svg"]:
        status, headers, body = dashboard.request("GET", path, auth=None)
        assert status == 200, path
        assert b"session_id" not in body or path.endswith(".js")
    _, headers, body = dashboard.request("GET", "/", auth=None)
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert b'<script src="/static/app.js" defer></script>' in body


def test_bearer_gets_the_status_json_object(dashboard: Client, state_dir: Path) -> None:
    seed.demo(state_dir)
    status, body = dashboard.json("/api/sessions")
    assert status == 200
    expected = [view.public(s) for s in view.load_sessions(str(state_dir))]
    # Without ?all=1, like `lookout status --json`: no ended session.
    assert body["sessions"] == [s for s in expected if s["status"] != "ended"]
    assert body["config_error"] is None
    assert isinstance(body["now_ms"], int) and body["host"]
    _, everything = dashboard.json("/api/sessions?all=1")
    assert everything["sessions"] == expected


def test_login_sets_an_httponly_strict_cookie_and_redirects_to_the_page(
    dashboard: Client,
) -> None:
    status, headers, _ = dashboard.request("GET", f"/login?token={TOKEN}", auth=None)
    assert status == 303 and headers["Location"] == "/"
    assert headers["Set-Cookie"] == f"lookout_token={TOKEN}; Path=/; HttpOnly; SameSite=Strict"
    assert dashboard.json("/api/sessions", auth="cookie")[0] == 200
    status, headers, body = dashboard.request("GET", "/login?token=nope", auth=None)
    assert status == 401 and "Set-Cookie" not in headers
    assert b"lookout serve --url" in body
    assert dashboard.request("GET", "/login", auth=None)[0] == 401


def test_every_response_carries_a_strict_csp(dashboard: Client) -> None:
    for path, auth in [("/", None), ("/api/sessions", "bearer"), ("/api/sessions", None)]:
        _, headers, _ = dashboard.request("GET", path, auth=auth)
        assert headers["Content-Security-Policy"] == server.CSP
        assert "script-src 'self';" in server.CSP and "unsafe" not in server.CSP
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Cache-Control"] == "no-store"


def test_only_the_pages_own_files_are_served(dashboard: Client) -> None:
    for path in [
        "/static/../server.py",
        "/static/%2e%2e/server.py",
        "/static/hub.py",
        "/static/.hidden.js",
        "/static/",
        "/nope",
        "/api/sessions/",
    ]:
        assert dashboard.request("GET", path, auth=None)[0] == 404, path


def test_a_foreign_host_name_is_refused_on_a_loopback_bind(dashboard: Client) -> None:
    # DNS rebinding: a page at attacker.example resolving to 127.0.0.1.
    status, _, _ = dashboard.request("GET", "/", headers={"Host": "attacker.example:8787"})
    assert status == 421
    for host in ["localhost:1", "127.0.0.1", "[::1]:8787"]:
        assert dashboard.request("GET", "/", headers={"Host": host}, auth=None)[0] == 200


def test_a_post_with_the_cookie_must_come_from_the_page_itself(dashboard: Client) -> None:
    path = "/api/sessions/s1/jump"
    own = f"http://127.0.0.1:{dashboard.port}"
    json_body = {"Content-Type": "application/json"}
    for headers in [
        {},  # no Origin: refused (fail closed)
        {"Origin": "http://attacker.example"},
        {"Origin": "null"},
        {"Origin": own, "Sec-Fetch-Site": "cross-site"},
        {"Origin": own, "Sec-Fetch-Site": "same-site"},
    ]:
        status, _, body = dashboard.request(
            "POST", path, auth="cookie", headers={**json_body, **headers}, body=b"{}"
        )
        assert status == 403, headers
        assert json.loads(body)["error"] == "cross-origin request refused"
    same = {**json_body, "Origin": own, "Sec-Fetch-Site": "same-origin"}
    status, _, _ = dashboard.request("POST", path, auth="cookie", headers=same, body=b"{}")
    assert status not in (401, 403)
    # A script with the token needs no Origin: a browser never adds a Bearer header by itself.
    status, _, _ = dashboard.request("POST", path, headers=json_body, body=b"{}")
    assert status not in (401, 403)
    assert dashboard.request("POST", path, auth=None, headers=same, body=b"{}")[0] == 401


def test_post_bodies_are_small_json(dashboard: Client) -> None:
    path = "/api/sessions/s1/jump"
    cases = [
        ({"Content-Type": "text/plain"}, b"{}", 415),
        ({"Content-Type": "application/x-www-form-urlencoded"}, b"a=b", 415),
        ({"Content-Type": "application/json"}, b"{not json", 400),
        ({"Content-Type": "application/json"}, b"x" * (server.MAX_BODY + 1), 413),
    ]
    for headers, body, expected in cases:
        assert dashboard.request("POST", path, headers=headers, body=body)[0] == expected


def test_wrong_methods(dashboard: Client) -> None:
    assert dashboard.request("POST", "/api/sessions", body=b"{}")[0] == 405
    assert dashboard.request("GET", "/api/sessions/s1/jump")[0] == 405
    assert dashboard.request("DELETE", "/api/sessions")[0] == 501  # not an HTTP verb we speak


def test_events_newest_first_and_paged(dashboard: Client, state_dir: Path) -> None:
    sid = "paged-1"
    for n in range(120):
        seed.hook(state_dir, "PreToolUse", sid, "/w/p", 200 - n, **seed.bash(f"echo {n}", f"u{n}"))
    seed.hook(state_dir, "Stop", "other", "/w/o", 1)
    pages, before = [], None
    while True:
        query = "limit=50" + (f"&before={before}" if before is not None else "")
        status, body = dashboard.json(f"/api/sessions/{sid}/events?{query}")
        assert status == 200
        pages.append(body["events"])
        before = body["next"]
        if before is None:
            break
    assert [len(p) for p in pages] == [50, 50, 20]
    seqs = [r["seq"] for page in pages for r in page]
    assert seqs == list(range(120, 0, -1))
    assert {r["session_id"] for page in pages for r in page} == {sid}
    assert pages[0][0]["summary"] == "echo 119"


@pytest.mark.parametrize("query", ["limit=0", "limit=201", "limit=x", "before=x"])
def test_events_reject_bad_paging(dashboard: Client, query: str) -> None:
    status, body = dashboard.json(f"/api/sessions/s1/events?{query}")
    assert status == 400 and "error" in body


def test_an_unknown_session_has_no_events(dashboard: Client) -> None:
    assert dashboard.json("/api/sessions/nobody/events") == (200, {"events": [], "next": None})


def test_jump_says_it_is_not_available_yet(dashboard: Client) -> None:
    status, _, body = dashboard.request(
        "POST", "/api/sessions/s1/jump", headers={"Content-Type": "application/json"}, body=b"{}"
    )
    assert status == 501
    assert json.loads(body)["error"] == "jumping is not available yet"
