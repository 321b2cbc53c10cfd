"""The dashboard's HTTP side: who gets in, what every response carries, the JSON API."""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lookout.web import auth as web_auth
from lookout.web import routes, server
from lookout.web.hub import Hub
from lookout.web.server import Dashboard
from lookout.web.source import LocalSource
from tests.jump.world import lookout
from tests.web import seed
from tests.web.conftest import TOKEN, Client, Page, read_event, send


class _AnyInt:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, int)


ANY_INT = _AnyInt()

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


def _timeless(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows less what each reader works out from its own clock (a running tool's seconds, from
    its `since`, which stays): two reads a second apart differ there and nowhere else."""
    return [
        {**row, "tool": {k: v for k, v in row["tool"].items() if k != "running_s"}}
        if isinstance(row.get("tool"), dict)
        else row
        for row in rows
    ]


def test_bearer_gets_the_status_json_object(dashboard: Client, state_dir: Path) -> None:
    seed.demo(state_dir)
    before = _timeless(json.loads(lookout("status", "--json").stdout)["sessions"])
    status, body = dashboard.json("/api/sessions")
    assert status == 200
    # Exactly what `lookout status --json` prints (without ?all=1: no ended session), read just
    # before or just after: on a starved machine seconds pass between two reads, and a reader
    # may record what time proved in between (a subagent's end, a silence).
    after = _timeless(json.loads(lookout("status", "--json").stdout)["sessions"])
    assert _timeless(body["sessions"]) in (before, after)
    # How each status is known, and the title (issue 24), in every JSON view.
    assert all({"evidence", "title", "hooks"} <= set(row) for row in body["sessions"])
    assert {row["evidence"] for row in body["sessions"]} <= {"hook", "process"}
    assert body["config_error"] is None
    # ... plus the server's clock and name, for the page.
    assert isinstance(body["now_ms"], int) and body["host"]
    before = _timeless(json.loads(lookout("status", "--json", "--all").stdout)["sessions"])
    _, everything = dashboard.json("/api/sessions?all=1")
    after = _timeless(json.loads(lookout("status", "--json", "--all").stdout)["sessions"])
    assert _timeless(everything["sessions"]) in (before, after)


def sign_in(client: Client, code: str) -> tuple[int, dict[str, str], dict[str, object]]:
    status, headers, body = client.request(
        "POST",
        "/api/login",
        auth=None,
        headers={"Content-Type": "application/json"},
        body=json.dumps({"code": code}).encode(),
    )
    return status, headers, json.loads(body)


def test_a_login_code_works_once_and_gives_a_session_key_not_a_cookie(
    dashboard: Client, state_dir: Path
) -> None:
    # N1: the login link's code is single-use; what the page gets is no cookie and not the token.
    code = web_auth.new_code(str(state_dir), int(time.time() * 1000))
    status, headers, body = sign_in(dashboard, code)
    assert status == 200 and "Set-Cookie" not in headers
    assert set(body) == {"session", "key", "expires_ms", "now_ms"}
    assert TOKEN not in json.dumps(body)
    assert code not in (state_dir / "serve.codes").read_text()  # only its hash is kept
    page = Page(dashboard.port, str(body["session"]), b64decode(str(body["key"])))
    assert page.json("/api/sessions")[0] == 200
    # Neither the session id nor the key is a bearer secret (issue 31 item 3).
    for bearer in [body["session"], body["key"]]:
        headers = {"Authorization": f"Bearer {bearer}"}
        assert dashboard.json("/api/sessions", auth=None, headers=headers)[0] == 401
    status, headers, again = sign_in(dashboard, code)  # from the browser's history, say
    assert status == 401 and "Set-Cookie" not in headers
    assert again["error"] == "this sign-in link was used already or has expired"
    assert sign_in(dashboard, "x" * 32)[0] == 401
    status, headers, page_html = dashboard.request("GET", "/login", auth=None)
    assert status == 200 and "Set-Cookie" not in headers and b"app.js" in page_html


def b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_a_login_code_expires_within_minutes(dashboard: Client, state_dir: Path) -> None:
    then = int(time.time() * 1000) - web_auth.CODE_S * 1000 - 1
    assert web_auth.CODE_S <= 600
    assert sign_in(dashboard, web_auth.new_code(str(state_dir), then))[0] == 401


def test_a_code_made_before_the_server_started_signs_no_one_in(
    dashboard: Client, state_dir: Path
) -> None:
    # Issue 31 item 3: a link opened while another user's server held the port gave that user
    # the code; the dashboard that starts next must not take it.
    assert dashboard.server is not None
    started = dashboard.server.keys.started_ms
    early = web_auth.new_code(str(state_dir), started - 1)
    assert sign_in(dashboard, early)[0] == 401
    assert sign_in(dashboard, web_auth.new_code(str(state_dir), started))[0] == 200


def page_of(dashboard: Client, state_dir: Path) -> Page:
    return Page.sign_in(dashboard.port, web_auth.new_code(str(state_dir), int(time.time() * 1000)))


def test_a_signed_request_works_once_and_only_as_signed(dashboard: Client, state_dir: Path) -> None:
    # Issue 31 item 3: what a page sends is worth nothing sent again, nor for another request.
    page = page_of(dashboard, state_dir)
    target = "/api/sessions?all=1"
    header = page.authorization("GET", target)
    recorded = {"Host": f"127.0.0.1:{dashboard.port}", "Authorization": header}
    assert send(dashboard.port, "GET", target, recorded)[0] == 200
    status, _, body = send(dashboard.port, "GET", target, recorded)  # the replay
    assert (status, json.loads(body)["error"]) == (401, "this request was sent before (a replay)")
    # The same signature on another path, method or body; a forged MAC; a stale clock.
    other = {**recorded, "Authorization": page.authorization("GET", "/api/sessions")}
    assert send(dashboard.port, "GET", "/api/requests?all=1", other)[0] == 401
    jump = "/api/sessions/s1/jump"
    posted = {**recorded, "Content-Type": "application/json"}
    signed = {**posted, "Authorization": page.authorization("POST", jump, b"{}")}
    assert send(dashboard.port, "POST", jump, signed, b'{"x": 1}')[0] == 401
    forged = header.rsplit(" ", 1)[0] + " " + "A" * 43
    assert send(dashboard.port, "GET", target, {**recorded, "Authorization": forged})[0] == 401
    for skew in (-web_auth.SKEW_MS - 1000, web_auth.SKEW_MS + 1000):
        old = page.authorization("GET", target, ts=int(time.time() * 1000) + skew)
        assert send(dashboard.port, "GET", target, {**recorded, "Authorization": old})[0] == 401
    for ts in ["\u00b2", "9" * 5000, "-1"]:  # a digit that int() refuses; too long to parse
        odd = header.split(" ")
        odd[2] = ts
        bad = {**recorded, "Authorization": " ".join(odd)}
        assert send(dashboard.port, "GET", target, bad)[0] == 401, ts[:5]
    # A signed POST with its body works (jump says why it cannot: no such session).
    status, _, body = page.request("POST", jump, b"{}")
    assert (status, json.loads(body)["error"]) == (404, "no session 's1'")


def test_a_server_proves_it_knows_the_key_and_says_why_a_page_is_out(
    dashboard: Client, state_dir: Path, no_notifications: None
) -> None:
    page = page_of(dashboard, state_dir)
    status, body = page.hello()  # asserts the proof
    assert status == 200 and abs(body["now_ms"] - time.time() * 1000) < 60_000
    # The same page against another start of the dashboard (same token, same state): signed
    # out, and told why; nothing it signed before counts there.
    recorded = page.authorization("GET", "/api/requests?all=1")
    hub = Hub(LocalSource(str(state_dir)), lambda: None)
    again = Dashboard("127.0.0.1", 0, hub, TOKEN, str(state_dir))
    threading.Thread(target=again.serve_forever, args=(0.01,), daemon=True).start()
    try:
        port = again.server_address[1]
        moved = Page(port, page.session, page.key)
        status, body = moved.hello()
        assert (status, body["reason"]) == (401, "restarted")
        assert body["error"] == "the dashboard restarted: sign in again"
        status, _, raw = moved.request("GET", "/api/sessions")
        assert (status, json.loads(raw)["reason"]) == (401, "restarted")
        headers = {"Host": f"127.0.0.1:{port}", "Authorization": recorded}
        assert send(port, "GET", "/api/requests?all=1", headers)[0] == 401
    finally:
        again.shutdown()
        again.server_close()
    # An expired session id; one of another token; garbage.
    keys = dashboard.server.keys if dashboard.server else None
    assert keys is not None
    old_id, old_key, _ = keys.new_session(int(time.time() * 1000) - web_auth.SESSION_S * 1000 - 1)
    assert Page(dashboard.port, old_id, old_key).hello()[1]["reason"] == "expired"
    for session in ["ls2.x", "ls1.1.2.3", 7]:
        status, body = _hello(dashboard.port, session)
        assert (status, body["reason"]) == (401, "revoked"), session


def _hello(port: int, session: object) -> tuple[int, Any]:
    body = json.dumps({"session": session, "challenge": "c" * 32}).encode()
    headers = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json"}
    status, _, raw = send(port, "POST", "/api/hello", headers, body)
    return status, json.loads(raw)


def test_a_cookie_carries_no_authority(dashboard: Client, state_dir: Path) -> None:
    # N1: a browser sends cookies to every port of this host; whatever one holds (the old
    # login cookie was the token itself), it reads nothing and changes nothing.
    own = f"http://127.0.0.1:{dashboard.port}"
    same = {"Content-Type": "application/json", "Origin": own, "Sec-Fetch-Site": "same-origin"}
    page = page_of(dashboard, state_dir)
    for cookie in [f"lookout_token={TOKEN}", f"lookout_session={page.session}"]:
        for path in ["/api/sessions", "/api/requests", "/api/stream"]:
            headers = {"Cookie": cookie}
            assert dashboard.request("GET", path, auth=None, headers=headers)[0] == 401, path
        status, _, _ = dashboard.request(
            "POST", "/api/sessions/s1/jump", auth=None, headers={**same, "Cookie": cookie},
            body=b"{}",
        )  # fmt: skip
        assert status == 401


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


@pytest.mark.parametrize(
    "host",
    ["127.evil.example:8787", "127.0.0.1.nip.io", "localhost.evil.example", "127.1", "", "[::1"],
)
def test_names_that_only_look_like_loopback_are_refused(dashboard: Client, host: str) -> None:
    # N8: a DNS-rebinding name such as 127.attacker.tld resolves to loopback but is not ours.
    assert dashboard.request("GET", "/", headers={"Host": host}, auth=None)[0] == 421


def test_a_network_bind_checks_the_host_too(state_dir: Path, no_notifications: None) -> None:
    # N8: on another bind only the names it answers to (its address, host name) pass. Tests
    # stay on loopback, so this is a loopback socket judged as a network bind would be.
    hub = Hub(LocalSource(str(state_dir)), lambda: None)
    server = Dashboard("127.0.0.2", 0, hub, TOKEN, str(state_dir), host_name="box.example")
    server.loopback_only = False
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        for host, expected in [
            (f"127.0.0.2:{port}", 200),
            (f"192.0.2.7:{port}", 200),  # an address literal cannot be a rebinding name
            (f"box.example:{port}", 200),
            (f"BOX.example.:{port}", 200),
            (f"evil.example:{port}", 421),
            (f"127.evil.example:{port}", 421),
        ]:
            conn = http.client.HTTPConnection("127.0.0.2", port, timeout=10)
            conn.request("GET", "/", headers={"Host": host})
            assert conn.getresponse().status == expected, host
            conn.close()
    finally:
        server.shutdown()
        server.server_close()


def test_a_script_with_the_token_needs_no_origin(dashboard: Client) -> None:
    path = "/api/sessions/s1/jump"
    json_body = {"Content-Type": "application/json"}
    status, _, _ = dashboard.request("POST", path, headers=json_body, body=b"{}")
    assert status not in (401, 403)
    assert dashboard.request("POST", path, auth=None, headers=json_body, body=b"{}")[0] == 401


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


def test_jump_answers_why_it_cannot(dashboard: Client, state_dir: Path) -> None:
    headers = {"Content-Type": "application/json"}
    status, _, body = dashboard.request(
        "POST", "/api/sessions/s1/jump", headers=headers, body=b"{}"
    )
    assert (status, json.loads(body)["error"]) == (404, "no session 's1'")
    seed.hook(state_dir, "Stop", "no pane", "/w/plain")
    status, _, body = dashboard.request(
        "POST", "/api/sessions/no%20pane/jump", headers=headers, body=b"{}"
    )
    assert status == 409
    assert json.loads(body) == {
        "error": "plain (no pane) was not started inside tmux (no pane recorded)",
        "hint": "start your agents inside tmux (or kitty/WezTerm with remote control) to jump"
        " to them",
    }


# -- the stream ---------------------------------------------------------------------------------


def test_the_stream_sends_a_snapshot_then_each_change(dashboard: Client, state_dir: Path) -> None:
    seed.hook(state_dir, "UserPromptSubmit", "s1", "/w/api", prompt="go")
    response = dashboard.stream()
    assert response.status == 200
    assert response.getheader("Content-Type") == "text/event-stream; charset=utf-8"
    name, data = read_event(response)
    assert name == "snapshot"
    assert [s["session_id"] for s in data["sessions"]] == ["s1"]
    started = time.monotonic()
    seed.hook(
        state_dir,
        "PermissionRequest",
        "s1",
        "/w/api",
        tool_name="Bash",
        tool_input={"command": "rm -rf build"},
    )
    name, data = read_event(response)
    assert time.monotonic() - started < 1.0
    assert name == "session"
    assert (data["session"]["status"], data["session"]["reason"]) == ("attention", "permission")
    assert data["session"]["summary"] == "rm -rf build"
    assert isinstance(data["now_ms"], int)
    os.unlink(state_dir / "sessions" / "s1.json")
    assert read_event(response) == ("removed", {"session_id": "s1", "now_ms": ANY_INT})
    response.close()


def test_a_quiet_stream_gets_heartbeats(dashboard: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(routes, "HEARTBEAT_S", 0.2)
    response = dashboard.stream()
    assert read_event(response)[0] == "snapshot"
    name, data = read_event(response)
    assert name == "heartbeat" and isinstance(data["now_ms"], int)
    response.close()


def test_a_stream_that_falls_behind_gets_a_fresh_snapshot(dashboard: Client) -> None:
    response = dashboard.stream()
    assert read_event(response)[0] == "snapshot"
    assert dashboard.server is not None
    (sub,) = dashboard.server.hub.subscribers()
    sub.resync = True  # what a full inbox sets (tests/web/test_hub.py)
    sub.put(("heartbeat", {"now_ms": 0}))
    names = [read_event(response)[0]]
    if names[0] != "snapshot":
        names.append(read_event(response)[0])
    assert names in (["snapshot"], ["heartbeat", "snapshot"])
    response.close()


def test_too_many_streams_are_refused(dashboard: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    assert dashboard.server is not None
    monkeypatch.setattr(dashboard.server, "streams", threading.BoundedSemaphore(1))
    first = dashboard.stream()
    assert read_event(first)[0] == "snapshot"
    status, _, body = dashboard.request("GET", "/api/stream")
    assert status == 503 and json.loads(body)["hint"] == "close some dashboard tabs"
    first.close()


def test_the_page_needs_nothing_from_elsewhere() -> None:
    # No CDN, no font service: the page works offline (and the CSP would block them anyway).
    absolute = r"""["'`]?(?:https?:)?//"""
    elsewhere = re.compile(
        rf"(?:src|href)\s*=\s*{absolute}|url\(\s*{absolute}|(?:fetch|EventSource)\(\s*{absolute}"
    )
    for path in Path(routes.STATIC_DIR).iterdir():
        text = path.read_text(encoding="utf-8")
        assert not elsewhere.search(text), path.name
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text
        assert "eval(" not in text and "document.write" not in text
    page = (Path(routes.STATIC_DIR) / "index.html").read_text()
    assert re.findall(r'(?:src|href)="([^"]+)"', page) == [
        "/static/icon.svg", "/static/app.css",
        "/static/auth.js",  # signing in, every request signed (issue 31 item 3)
        "/static/app.js",
        "/static/remote.css", "/static/remote.js",  # the remote answers (issue 15)
        "/static/report.js",  # the "this week" panel (issue 26)
        "/static/steer.css", "/static/steer.js",  # steering ([steer], issue 33)
        "/static/away.js",  # the away switch in the header (issue 41)
        "/static/fleet.js",  # on the fleet's hub: the other hosts' requests (issue 42)
    ]  # fmt: skip


def test_a_refused_post_never_leaves_its_body_for_the_next_request(dashboard: Client) -> None:
    # The body of a refused request is not read: the connection must close, or those bytes
    # would be parsed as the next request on it.
    conn = http.client.HTTPConnection("127.0.0.1", dashboard.port, timeout=10)
    smuggled = b"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    conn.request(
        "POST",
        "/api/sessions/s1/jump",
        body=smuggled,
        headers={"Host": f"127.0.0.1:{dashboard.port}", "Content-Type": "application/json"},
    )
    response = conn.getresponse()
    assert response.status == 401
    assert response.getheader("Connection") == "close"
    response.read()
    conn.close()


def _get_page(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/", headers={"Host": f"127.0.0.1:{port}"})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@pytest.mark.real  # 600 real connections
def test_a_burst_of_idle_connections_is_bounded_and_the_page_answers_right_after(
    dashboard: Client, state_dir: Path
) -> None:
    # N5: 600 unauthenticated connections that never finish their request once took one
    # thread each (the user's process quota with them) and kept the page down for minutes.
    import socket

    from tests.web.test_browser import run_hook

    before = threading.active_count()
    held: list[socket.socket] = []
    most = before
    try:
        for _ in range(600):
            s = socket.create_connection(("127.0.0.1", dashboard.port), timeout=10)
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # ... and never the end
            held.append(s)
            most = max(most, threading.active_count())
        most = max(most, threading.active_count())
        assert most <= before + server.MAX_CONNECTIONS + 2
        # The hook path is a process of its own and never waits on the dashboard.
        run_hook("user_prompt_submit.py", {"session_id": "burst", "hook_event_name":
                 "UserPromptSubmit", "prompt": "hi", "cwd": "/w/burst"})  # fmt: skip
    finally:
        for s in held:
            s.close()
    closed = time.monotonic()
    assert _get_page(dashboard.port) == 200
    assert time.monotonic() - closed < 1.0


def test_a_slow_client_is_cut_at_the_request_deadline(
    dashboard: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # N5: a header line every little while once held a thread forever (30 s per recv).
    import socket

    monkeypatch.setattr(server, "REQUEST_DEADLINE_S", 1.0)
    s = socket.create_connection(("127.0.0.1", dashboard.port), timeout=10)
    try:
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        cut = False
        for _ in range(40):  # 40 lines, 0.25 s apart: 10 s if never cut
            try:
                s.sendall(b"X-a: b\r\n")
                s.settimeout(0.25)
                if s.recv(1) == b"":
                    cut = True
                    break
            except TimeoutError:
                continue
            except OSError:
                cut = True
                break
        assert cut
    finally:
        s.close()
    assert _get_page(dashboard.port) == 200
