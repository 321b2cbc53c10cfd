"""The dashboard's "this week" panel: GET /api/report over the recorded week of
tests/fixtures/ledger, and its script served like the others."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from lookout.web import report
from tests.fixtures.ledger import build
from tests.helpers import FIXTURES
from tests.web.conftest import Client


def test_the_report_needs_the_token(dashboard: Client) -> None:
    status, _, body = dashboard.request("GET", "/api/report", auth=None)
    assert status == 401 and b"lookout serve --url" in body


def test_the_week_by_day(
    dashboard: Client, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.rmtree(state_dir, ignore_errors=True)
    shutil.copytree(FIXTURES / "ledger" / "state", state_dir)
    # The last day of the recorded week, at noon UTC: its seven local days are days 1 to 7.
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        noon = build.BASE_MS / 1000 + 6 * 86400 + 3 * 3600
        monkeypatch.setattr(report.time, "time", lambda: noon)
        status, body = dashboard.json("/api/report")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert status == 200
    assert [d["day"] for d in body["days"]] == [f"2026-11-{n}" for n in range(16, 23)]
    assert [(d["episodes"], d["wait_s"]) for d in body["days"]] == [
        (2, 40.0),  # api1: npm test 30 + 10
        (9, 65.0),  # api2
        (6, 193.0),  # web1
        (1, 300.0),  # web2's rate limit
        (1, 15.0),  # Codex
        (1, 0.1),  # claude -p
        (0, 0.0),  # the open dialog is not counted
    ]
    assert (body["episodes"], body["wait_s"], body["p50_s"]) == (20, 613.1, 9.5)
    assert json.dumps(body["by_project"][0]) == json.dumps(
        {"project": "web", "episodes": 7, "wait_s": 493.0, "p50_s": 25.0, "p95_s": 300.0}
    )


def test_the_page_loads_the_panel(dashboard: Client) -> None:
    _, _, page = dashboard.request("GET", "/", auth=None)
    assert b'<script src="/static/report.js" defer></script>' in page
    status, headers, script = dashboard.request("GET", "/static/report.js", auth=None)
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert b"/api/report" in script and b"innerHTML" not in script
