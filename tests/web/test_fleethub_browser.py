"""The hub's dashboard in a real headless Chromium (issue 42): another host's waiting request is a
card with its host and its whole input (invisible characters as visible escapes), Allow and
Deny; a press shows what came of it; the other host's session card gets the message box. The
press and steer are faked; on a real broker: the `real` tests of
tests/web/test_fleethub.py."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout.web import auth
from tests.web.test_browser import until
from tests.web.test_fleethub import (
    ALLOW_TOKEN,
    DELIVERED,
    SID,
    TOKEN_B,
    Calls,
    FleetLike,
    calls,  # noqa: F401
    config,
    feed,
    message,
    serve,
)

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_notifications")]

CARD = f'[data-fleet-request="beta/{TOKEN_B}"]'
TEXT = "rm -rf build &&\n  make \x1b[31m all \u202e"


@pytest.fixture
def hub_page(browser: Any, state_dir: Path) -> Iterator[tuple[Any, FleetLike]]:
    source = FleetLike(config())
    for client, _ in serve(source, state_dir):
        code = auth.new_code(str(state_dir), int(time.time() * 1000))
        browser.get(f"http://127.0.0.1:{client.port}/login#code={code}")
        until(browser, "window.lookout && window.lookout.state() === 'signed-in'", 10)
        yield browser, source


def with_card(hub_page: tuple[Any, FleetLike], body: bytes) -> Any:
    """The page once beta's request `body` came and shows as its card: the browser."""
    browser, source = hub_page
    feed(source, body)
    until(browser, f"document.querySelector('{CARD}')", 10)
    return browser


def test_a_request_of_another_host_shows_whole_with_allow_and_deny(
    hub_page: tuple[Any, FleetLike],
    calls: Calls,  # noqa: F811
) -> None:
    browser = with_card(hub_page, message(text=TEXT))
    shown = browser.execute_script(
        f"const c = document.querySelector('{CARD}');"
        " return {host: c.querySelector('.req-host').textContent,"
        " detail: c.querySelector('.req-detail').textContent,"
        " escapes: [...c.querySelectorAll('.req-detail .esc')].map(e => e.textContent),"
        " folded: c.querySelector('.req-detail').classList.contains('folded'),"
        " allow: !c.querySelector('[data-decision=allow]').disabled,"
        " deny: !c.querySelector('[data-decision=deny]').disabled,"
        " left: c.querySelector('.req-left').textContent,"
        " section: c.closest('section').id + ' ' + c.closest('section').className}"
    )
    assert re.fullmatch(r"answer within \d+m\d\ds", shown.pop("left"))
    assert shown == {
        "host": "beta",
        "detail": "rm -rf build &&\n  make \\x1b[31m all \\u202e",  # every character, visible
        "escapes": ["\\x1b", "\\u202e"],
        "folded": False,
        "allow": True,
        "deny": True,
        "section": "fleet-requests requests fleet-requests",
    }
    # The other host's session card has the message box (its own host runs it).
    until(browser, f"document.querySelector('[data-steer=\"beta/{SID}\"] textarea')", 10)
    browser.find_element("css selector", f"{CARD} [data-decision=allow]").click()
    until(browser, f"document.querySelector('{CARD} .req-result').dataset.kind === 'done'", 10)
    assert (
        browser.execute_script(f"return document.querySelector('{CARD} .req-result').textContent")
        == "answered on beta: allowed"
    )
    ((args, kw),) = calls.press
    assert args[1:] == ("beta", ALLOW_TOKEN) and kw["surface"] == "dashboard"


def test_the_message_box_on_another_hosts_card_shows_its_hosts_two_lines(
    hub_page: tuple[Any, FleetLike],
    calls: Calls,  # noqa: F811
) -> None:
    browser, _ = hub_page
    box = f'[data-steer="beta/{SID}"]'
    until(browser, f"document.querySelector('{box} textarea')", 10)
    field = browser.find_element("css selector", f"{box} textarea")
    field.send_keys("hi")
    field.send_keys("\ue007")  # Enter sends
    until(browser, f"document.querySelector('{box} .steer-result').dataset.kind === 'done'", 10)
    lines = browser.execute_script(
        f"return [...document.querySelectorAll('{box} .steer-result .steer-line')]"
        ".map(line => line.textContent)"
    )
    assert lines == list(DELIVERED.lines)
    ((args, kw),) = calls.steer
    assert args[1:] == ("beta", "say") and (kw["session"], kw["text"]) == (SID, "hi")


def test_allow_is_not_offered_when_its_host_says_the_card_cannot_show_all(
    hub_page: tuple[Any, FleetLike],
    calls: Calls,  # noqa: F811
) -> None:
    browser = with_card(hub_page, message(allow=False))
    allow = browser.find_element("css selector", f"{CARD} [data-decision=allow]")
    assert not allow.is_enabled()
    assert allow.get_attribute("title") == "the command spans lines"
    assert browser.find_element("css selector", f"{CARD} [data-decision=deny]").is_enabled()
