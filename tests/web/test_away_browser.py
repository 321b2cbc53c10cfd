"""The dashboard's away toggle in a real headless Chromium (issue 41), against a real `lookout
serve`: it shows the switch, a click turns it (with its duration) through the signed POST, and a
change made elsewhere (the terminal) reaches the page through the stream. The HTTP side (401,
the body it takes, the rate): tests/web/test_away.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.web import seed
from tests.web.conftest import Served, browser_sign_in
from tests.web.test_browser import until

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_notifications")]

PRESSED = "document.getElementById('away-toggle').getAttribute('aria-pressed')"


def away() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "lookout", "away", "--json"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    value: dict[str, Any] = json.loads(done.stdout)
    return value


def test_the_header_toggle_turns_the_switch_and_hears_the_terminal(
    browser: Any, state_dir: Path, served: Served
) -> None:
    seed.demo(state_dir)
    browser_sign_in(browser, served)
    until(browser, "!document.getElementById('away').hidden", 20)
    assert browser.execute_script(f"return {PRESSED}") == "false"
    browser.execute_script("document.getElementById('away-for').value = '1h'")
    browser.execute_script("document.getElementById('away-toggle').click()")
    until(browser, f"{PRESSED} === 'true'", 20)
    said = away()
    assert (said["away"], said["source"]) == (True, "dashboard")
    assert said["until_ms"] - said["since_ms"] == 3600 * 1000
    text = browser.execute_script("return document.getElementById('away-state').textContent")
    assert text.startswith("until ")
    # Turned off at the terminal: the page follows through its stream.
    subprocess.run([sys.executable, "-m", "lookout", "away", "off"], check=True, timeout=30)
    until(browser, f"{PRESSED} === 'false'", 20)
    # And on again from the page, until back.
    browser.execute_script("document.getElementById('away-for').value = ''")
    browser.execute_script("document.getElementById('away-toggle').click()")
    until(browser, f"{PRESSED} === 'true'", 20)
    assert away()["until_ms"] is None
