"""The dashboard's remote-answer API: GET /api/requests, POST /api/requests/<id> (issue 15)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from lookout.remote import requests
from lookout.web import remote
from tests.helpers import payload

from .conftest import Client


@pytest.fixture(autouse=True)
def fresh_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote, "FAILURES", remote._Failures())


def pending(state: Path, name: str = "PermissionRequest-Bash", **kw: Any) -> dict[str, Any]:
    now = int(time.time() * 1000)
    rec = requests.new_record(payload(name), {}, now, 300, False)
    rec.update(pid=os.getpid(), **kw)  # a live "deciding hook"
    requests.save_new(str(state), rec, now)
    return rec


def post(
    client: Client, rid: str, body: object, auth: str | None = "bearer", **headers: str
) -> tuple[int, dict[str, Any]]:
    status, _, raw = client.request(
        "POST",
        f"/api/requests/{rid}",
        auth=auth,
        headers={"Content-Type": "application/json", **headers},
        body=json.dumps(body).encode(),
    )
    return status, json.loads(raw)


def test_list_needs_the_token_and_shows_what_the_issue_names(
    dashboard: Client, state_dir: Path
) -> None:
    rec = pending(state_dir)
    assert dashboard.json("/api/requests", auth=None)[0] == 401
    dashboard.token, right = "x" * 43, dashboard.token
    assert dashboard.json("/api/requests")[0] == 401  # a wrong token
    dashboard.token = right
    status, body = dashboard.json("/api/requests")
    assert status == 200
    (shown,) = body["requests"]
    assert {k: shown[k] for k in ("id", "nonce", "session_id", "tool_name", "summary")} == {
        "id": rec["id"],
        "nonce": rec["nonce"],
        "session_id": rec["session_id"],
        "tool_name": "Bash",
        "summary": "touch t.txt",
    }
    assert shown["expires_at"].endswith("Z") and shown["status"] == "pending"


def test_allow_once_with_the_nonce_then_409(dashboard: Client, state_dir: Path) -> None:
    rec = pending(state_dir)
    assert post(dashboard, rec["id"], {"decision": "allow", "nonce": "guess"})[0] == 403
    assert post(dashboard, "0" * 20, {"decision": "allow", "nonce": rec["nonce"]})[0] == 404
    assert post(dashboard, rec["id"], {"decision": "maybe", "nonce": rec["nonce"]})[0] == 400
    assert post(dashboard, rec["id"], ["allow"])[0] == 400
    status, body = post(
        dashboard, rec["id"], {"decision": "allow", "nonce": rec["nonce"]}, **{"User-Agent": "ua/1"}
    )
    assert status == 200 and body["request"]["status"] == "allowed"
    saved = requests.load(str(state_dir), rec["id"])
    assert saved["decision"]["source"] == "127.0.0.1"
    assert saved["decision"]["by"] == "the dashboard (127.0.0.1)"
    assert saved["decision"]["user_agent"] == "ua/1"
    status, body = post(dashboard, rec["id"], {"decision": "deny", "nonce": rec["nonce"]})
    assert (status, body["error"]) == (409, "already answered: allowed")
    assert dashboard.json("/api/requests")[1] == {"requests": []}
    everything = dashboard.json("/api/requests?all=1")[1]["requests"]
    assert [(r["status"], r["nonce"]) for r in everything] == [("allowed", None)]


def test_after_a_local_answer_409_answered_in_the_terminal(
    dashboard: Client, state_dir: Path
) -> None:
    rec = pending(state_dir)
    requests.resolve(str(state_dir), rec["id"], requests.ANSWERED_LOCALLY, int(time.time() * 1000))
    status, body = post(dashboard, rec["id"], {"decision": "allow", "nonce": rec["nonce"]})
    assert (status, body["error"]) == (409, "answered in the terminal")


def test_expired_is_refused(dashboard: Client, state_dir: Path) -> None:
    rec = pending(state_dir, expires_ms=int(time.time() * 1000) - 1)
    status, body = post(dashboard, rec["id"], {"decision": "allow", "nonce": rec["nonce"]})
    assert status == 409 and body["error"].startswith("expired")


def test_the_old_login_cookie_answers_nothing(dashboard: Client, state_dir: Path) -> None:
    # N1: a dev server on another port receives every cookie of 127.0.0.1; none has authority,
    # not even with the dashboard's own Origin.
    rec = pending(state_dir)
    body = {"decision": "allow", "nonce": rec["nonce"]}
    ours = {"Origin": f"http://127.0.0.1:{dashboard.port}", "Sec-Fetch-Site": "same-origin"}
    assert post(dashboard, rec["id"], body, auth="cookie", **ours)[0] == 401
    assert dashboard.json("/api/requests", auth="cookie")[0] == 401
    assert requests.load(str(state_dir), rec["id"])["status"] == "pending"


def test_too_many_failures_from_one_address_get_429(dashboard: Client, state_dir: Path) -> None:
    rec = pending(state_dir)
    for i in range(remote.FAIL_LIMIT):
        assert post(dashboard, rec["id"], {"decision": "allow", "nonce": f"guess{i}"})[0] == 403
    status, headers, _ = dashboard.request(
        "POST",
        f"/api/requests/{rec['id']}",
        headers={"Content-Type": "application/json"},
        body=json.dumps({"decision": "allow", "nonce": rec["nonce"]}).encode(),
    )
    assert status == 429 and headers["Retry-After"] == "300"
    assert requests.load(str(state_dir), rec["id"])["status"] == "pending"


def test_the_page_ships_the_answer_script(dashboard: Client) -> None:
    status, _, html = dashboard.request("GET", "/", auth=None)
    assert status == 200 and b"/static/remote.js" in html
    status, headers, js = dashboard.request("GET", "/static/remote.js", auth=None)
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert b"innerHTML" not in js  # session text reaches the page as text only


def test_a_malformed_nonce_is_a_counted_403_without_a_traceback(
    dashboard: Client, state_dir: Path
) -> None:
    # N10: a lone surrogate (valid JSON, not encodable UTF-8) once gave 500 and a traceback.
    rec = pending(state_dir)
    raw = b'{"decision": "allow", "nonce": "\\ud800"}'
    for _ in range(remote.FAIL_LIMIT):
        status, _, body = dashboard.request(
            "POST",
            f"/api/requests/{rec['id']}",
            headers={"Content-Type": "application/json"},
            body=raw,
        )
        assert (status, json.loads(body)["error"]) == (403, "wrong nonce for this request")
    assert post(dashboard, rec["id"], {"decision": "allow", "nonce": rec["nonce"]})[0] == 429
    assert not (state_dir / "errors.log").exists()
    assert requests.load(str(state_dir), rec["id"])["status"] == "pending"
