"""The whole remote answer, for real: Claude Code interactive in tmux shows its permission dialog,
`lookout serve` serves the request, a real headless Chromium (signed in with the one-time link)
clicks Allow, and the dialog in the terminal goes away as the tool runs. And the other order:
answered in the terminal first, the page says so ("allowed in the terminal") and a late POST gets
409."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT
from tests.web.conftest import browser_sign_in, start_serve

from .harness import ClaudePane, Sandbox, wait_for
from .test_remote_answer import COMMAND, enable_remote, pending

pytestmark = pytest.mark.e2e

DOCS = ROOT / "docs"


@pytest.fixture
def interactive(sandbox: Sandbox) -> Sandbox:
    from ..receivers import require

    require("tmux")
    sandbox.trust_project(idle_ms=2000)
    enable_remote(sandbox, wait_s=120)
    return sandbox


def serve_for(sandbox: Sandbox) -> Any:
    env = {**os.environ, **sandbox.env()}
    return start_serve(env=env)


def css(driver: Any, selector: str, timeout: float = 10) -> Any:
    from selenium.webdriver.common.by import By

    return wait_for(
        lambda: next(iter(driver.find_elements(By.CSS_SELECTOR, selector)), None),
        timeout,
        f"{selector} on the page",
    )


def phone(driver: Any) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True},
    )


def test_clicking_allow_in_chromium_closes_the_dialog_and_runs_the_tool(
    interactive: Sandbox,
    browser: Any,
    tmp_path: Path,
) -> None:
    served = serve_for(interactive)
    try:
        with ClaudePane(interactive, "--permission-mode", "manual") as pane:
            session = pane.ready()
            pane.type(f"[[bash: {COMMAND}]]")
            pane.wait_screen("Do you want to proceed?")
            rec = pending(interactive)
            phone(browser)
            browser_sign_in(browser, served, served.login)  # the one-time link, then the page
            browser.get(f"{served.base}/#request={rec['id']}")
            card = css(browser, f'[data-request-id="{rec["id"]}"][data-status="pending"]')
            assert COMMAND in card.text and "Bash" in card.text
            shot = tmp_path / "remote-answer-phone.png"
            browser.save_screenshot(str(shot))
            if os.environ.get("LOOKOUT_UPDATE_SCREENSHOTS") == "1":
                shutil.copyfile(shot, DOCS / "remote-answer-phone.png")
            css(browser, f'[data-request-id="{rec["id"]}"] button[data-decision="allow"]').click()
            clicked = time.monotonic()
            wait_for(lambda: "Do you want to proceed?" not in pane.screen(), 10, "the dialog to go")
            gone = time.monotonic() - clicked
            pane.wait_screen("Allowed by PermissionRequest hook")
            wait_for(
                lambda: (interactive.project / "made-remotely").exists(), 10, "the tool to run"
            )
            row = interactive.wait_event(session, "RemoteDecision")
            assert row["remote"]["decision"] == "allow"
            assert row["remote"]["by"] == "the dashboard (127.0.0.1)"
            assert "HeadlessChrome" in row["remote"]["user_agent"]
            css(browser, f'[data-request-id="{rec["id"]}"][data-status="allowed"]')
            print(f"click -> dialog gone in {gone:.2f} s")
            assert gone < 5
    finally:
        served.stop()
    interactive.assert_no_errors()


def test_answered_in_the_terminal_first_the_page_says_so_and_a_post_gets_409(
    interactive: Sandbox, browser: Any
) -> None:
    served = serve_for(interactive)
    try:
        with ClaudePane(interactive, "--permission-mode", "manual") as pane:
            pane.ready()
            pane.type(f"[[bash: {COMMAND}]]")
            pane.wait_screen("Do you want to proceed?")
            rec = pending(interactive)
            browser_sign_in(browser, served, served.login)
            browser.get(f"{served.base}/#request={rec['id']}")
            css(browser, f'[data-request-id="{rec["id"]}"] button[data-decision="allow"]')
            pane.keys("Enter")  # "1. Yes" in the terminal
            done = f'[data-request-id="{rec["id"]}"][data-status="answered_locally"]'
            card = css(browser, done, 10)
            assert "allowed in the terminal" in card.text  # Yes: not only "answered"
            assert not card.find_elements("css selector", "button")
            host, port = served.base.removeprefix("http://").split(":")
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.request(
                "POST",
                f"/api/requests/{rec['id']}",
                body=json.dumps({"decision": "deny", "nonce": rec["nonce"]}),
                headers={
                    "Authorization": f"Bearer {served.token}",
                    "Content-Type": "application/json",
                },
            )
            response = conn.getresponse()
            assert response.status == 409
            assert json.loads(response.read())["error"] == "allowed in the terminal"
            wait_for(lambda: (interactive.project / "made-remotely").exists(), 10, "the tool")
    finally:
        served.stop()
    interactive.assert_no_errors()


def test_a_question_answered_with_an_option_button(interactive: Sandbox, browser: Any) -> None:
    served = serve_for(interactive)
    try:
        with ClaudePane(interactive, "--permission-mode", "manual") as pane:
            session = pane.ready()
            pane.type("[[ask: Which colour?]]")
            pane.wait_screen("Enter to select")
            rec = pending(interactive)
            assert rec["tool_name"] == "AskUserQuestion"
            browser_sign_in(browser, served, served.login)
            browser.get(f"{served.base}/#request={rec['id']}")
            card = css(browser, f'[data-request-id="{rec["id"]}"][data-status="pending"]')
            assert "Which colour?" in card.text
            css(browser, f'[data-request-id="{rec["id"]}"] button[data-option="Blue"]').click()
            pane.wait_screen("Which colour? → Blue", 10)
            assert "Enter to select" not in pane.screen()
            row = interactive.wait_event(session, "RemoteDecision")
            assert row["remote"]["decision"] == "allow"
    finally:
        served.stop()
    interactive.assert_no_errors()
