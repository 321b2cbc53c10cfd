"""Steering from the dashboard in a real headless Chromium (issue 33): the card's message box and
Interrupt button and the "New session" form, against real tmux panes running a stand-in agent
(tests/steer/fake_agent.py, which logs every byte it receives) and a stand-in for Claude Code's
inbox socket; each shows back what was delivered, to which session, which way, and the outcome,
or the core's refusal. The real Claude Code: tests/e2e/test_steer.py. The HTTP side (401 on
every route, the API when [steer] is off): tests/web/test_steer.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from tests.helpers import wait_for, write_config
from tests.receivers import require
from tests.steer.test_inbox import SID as INBOX_SID
from tests.steer.test_inbox import FakeClient
from tests.steer.test_pane import SID, Panes, fake_program
from tests.web import seed
from tests.web.conftest import Served, browser_sign_in, start_serve
from tests.web.test_browser import until

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_notifications")]

BOX = '[data-steer="{}"]'
RESULT = """
return [...document.querySelectorAll(arguments[0] + ' .steer-result .steer-line')]
    .map(line => line.textContent);
"""


@pytest.fixture
def panes(state_dir: Path) -> Iterator[Panes]:
    require("tmux")
    write_config("[steer]\nenabled = true\n")
    with Panes() as server:
        yield server


def serve(panes: Panes, **env: str) -> Served:
    """`lookout serve` as a process of that tmux server's user would run it: inside its `main`
    session (where `start` opens windows), with the given environment on top."""
    own = panes.tmux("display-message", "-p", "-t", "main", "#{pane_id}")
    return start_serve(env={**panes.env, "TMUX_PANE": own, **env})


def signed_in(browser: Any, served: Served, session_id: str) -> str:
    """Sign in and wait for the session's message box; its CSS selector."""
    browser_sign_in(browser, served)
    box = BOX.format(session_id)
    until(browser, f"document.querySelector('{box} textarea')", timeout=20)
    return box


def result(browser: Any, box: str, kind: str = "done") -> list[str]:
    """The lines the box shows back, once they are of `kind` (done, error)."""
    until(browser, f"document.querySelector('{box} .steer-result').dataset.kind === '{kind}'", 60)
    return browser.execute_script(RESULT, box)  # type: ignore[no-any-return]


def steered(state: Path) -> list[dict[str, Any]]:
    lines = (state / store.EVENTS).read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["event"] == "Steered"]


def target(panes: Panes, pane: str) -> str:
    return panes.tmux(
        "display-message", "-p", "-t", pane, "#{session_name}:#{window_index}.#{pane_id}"
    )


def test_a_message_from_the_card_is_typed_into_its_pane_and_shown_back(
    browser: Any, panes: Panes, state_dir: Path, tmp_path: Path
) -> None:
    log = tmp_path / "got"
    pane = panes.agent(log, "plain")  # Gemini CLI's stand-in, idle
    served = serve(panes)
    try:
        box = signed_in(browser, served, SID)
        text = 'ship it; echo "$HOME" <b>bold</b> #{pane_id} caf\u00e9 ;'
        field = browser.find_element("css selector", f"{box} textarea")
        field.send_keys(text)
        field.send_keys("\ue007")  # Enter sends
        wait_for(lambda: log.exists() and log.read_bytes().endswith(b"\r"), 20, "Enter")
        assert log.read_bytes() == text.encode() + b"\r"  # exactly the text, then Enter
        assert result(browser, box) == [
            f"api (dddd4444): typed into tmux pane {target(panes, pane)}, then Enter: typed (idle)",
            f"text: {text}",
        ]
        assert (
            browser.execute_script(f"return document.querySelector('{box} textarea').value") == ""
        )
        assert browser.execute_script("return document.getElementById('timeline').hidden")
        (line,) = steered(state_dir)
        assert (line["source"], line["outcome"], line["steer"]["text"]) == (
            "dashboard",
            "typed",
            text,
        )
        # A refusal shows the core's error and hint, and nothing reaches the pane.
        browser.execute_script(f"document.querySelector('{box} textarea').value = 'rm \\u202eboog'")
        browser.find_element("css selector", f"{box} .steer-send").click()
        assert result(browser, box, "error") == [
            "the message holds an invisible formatting character (\\u202e RIGHT-TO-LEFT OVERRIDE)"
            " at character 4 (line 1): lookout never types or sends it",
            "hint: remove it; only printable text and newlines are sent",
        ]
        # The draft stays for the user to fix.
        value = browser.execute_script(f"return document.querySelector('{box} textarea').value")
        assert value == "rm \u202eboog"
        assert log.read_bytes() == text.encode() + b"\r"
    finally:
        served.stop()


def test_interrupt_from_the_card_presses_the_agents_key_and_says_what_it_cannot_know(
    browser: Any, panes: Panes, tmp_path: Path
) -> None:
    log = tmp_path / "got"
    pane = panes.agent(log, "plain", event="PreToolUse")  # working on a command
    served = serve(panes)
    try:
        box = signed_in(browser, served, SID)
        stop = browser.find_element("css selector", f"{box} .steer-stop")
        assert stop.text == "Interrupt" and stop.is_enabled()
        stop.click()
        wait_for(lambda: log.exists() and log.read_bytes() == b"\x1b", 20, "Esc")
        assert result(browser, box) == [
            f"api (dddd4444): Escape pressed in tmux pane {target(panes, pane)}: sent (idle)",
            "note: Gemini CLI reports no hook for a stopped turn: lookout shows it idle, as"
            " interrupted by lookout (evidence steer), until its next hook",
        ]
    finally:
        served.stop()


def test_a_failed_turn_takes_a_message_and_has_no_turn_to_interrupt(
    browser: Any, panes: Panes, tmp_path: Path
) -> None:
    # `attention error` is no dialog (steer.core sends to it): the box says so as the server does.
    panes.agent(tmp_path / "got", "plain", event="StopFailure")
    served = serve(panes)
    try:
        box = signed_in(browser, served, SID)
        text = browser.find_element("css selector", f"{box} textarea")
        assert text.get_attribute("placeholder").startswith("Message to api")
        assert not browser.find_element("css selector", f"{box} .steer-stop").is_enabled()
    finally:
        served.stop()


def test_a_refusal_under_a_card_goes_once_its_status_changes(
    browser: Any, panes: Panes, state_dir: Path, tmp_path: Path
) -> None:
    # Issue 38: refused while a dialog was open; once it is answered (the card turns idle),
    # the red refusal no longer holds and goes.
    from tests.commands.test_main import deliver

    log = tmp_path / "got"
    panes.agent(log, "plain", event="PermissionRequest")
    served = serve(panes)
    try:
        box = signed_in(browser, served, SID)
        browser.find_element("css selector", f"{box} textarea").send_keys("1")
        browser.find_element("css selector", f"{box} .steer-send").click()
        lines = result(browser, box, "error")
        assert lines[0] == (
            "api (dddd4444) waits on you (permission): lookout will not type into an open dialog"
            " (typed keys would answer it)"
        )
        assert browser.find_element("css selector", f"{box} textarea").get_attribute("value") == "1"
        deliver(state_dir, {"session_id": SID, "cwd": "/w/api", "hook_event_name": "Stop"})
        until(
            browser,
            f"!document.querySelector('{box} .steer-result').dataset.kind"
            f" && !document.querySelector('{box} .steer-line')",
            20,
        )
        assert not log.exists() or log.read_bytes() == b""  # nothing was typed
    finally:
        served.stop()


def test_the_new_session_form_starts_one_in_an_allowed_project(
    browser: Any, panes: Panes, state_dir: Path, tmp_path: Path
) -> None:
    project = tmp_path / "src" / "api"
    project.mkdir(parents=True)
    (tmp_path / "src" / "web").mkdir()
    # gemini is allowed, but its program is not on the server's PATH: marked, not offered.
    write_config(
        f'[steer]\nenabled = true\nprojects = ["{tmp_path}/src/*"]\nagents = ["gemini", "claude"]\n'
    )
    argv = tmp_path / "argv.jsonl"
    fake_program(tmp_path / "bin", "claude", argv, report=True)
    served = serve(panes, PATH=f"{tmp_path / 'bin'}:{panes.env['PATH']}")
    try:
        browser_sign_in(browser, served)
        until(browser, "!document.getElementById('newsession-open').hidden", 20)
        browser.find_element("id", "newsession-open").click()
        options = browser.execute_script(
            "return [...document.querySelectorAll('#ns-project option')]"
            ".map(o => [o.value, o.textContent])"
        )
        assert options == [
            [str(project), str(project)],
            [str(project.parent / "web"), str(project.parent / "web")],
        ]
        assert browser.execute_script(
            "return [...document.querySelectorAll('#ns-agent option')]"
            ".map(o => [o.value, o.textContent, o.disabled, o.selected])"
        ) == [["gemini", "gemini (not on PATH)", True, False], ["claude", "claude", False, True]]
        prompt = '-x; $(touch pwned) `id` "q" <i>'
        browser.find_element("id", "ns-prompt").send_keys(prompt)
        browser.find_element("css selector", "#newsession button[type=submit]").click()
        until(browser, "document.getElementById('ns-result').dataset.kind === 'done'", 60)
        lines = browser.execute_script(
            "return [...document.querySelectorAll('#ns-result .steer-line')]"
            ".map(l => l.textContent)"
        )
        assert lines[0].startswith("started claude: tmux main:1.%")
        assert lines[1].startswith("session: api (eeee5555)")
        assert lines[2:] == [f"text: {prompt}"]
        assert [json.loads(x) for x in argv.read_text().splitlines()] == [
            [str(project), "--", prompt]
        ]
        assert not (project / "pwned").exists()
        # The new session's card comes by itself, with its own box.
        until(
            browser,
            f"document.querySelector('{BOX.format('eeee5555-0000-4000-8000-000000000005')}')",
            20,
        )
        (line,) = steered(state_dir)
        assert (line["source"], line["steer"]["action"], line["outcome"]) == (
            "dashboard",
            "start",
            "started",
        )
    finally:
        served.stop()


def test_a_message_through_the_inbox_socket_says_how_claude_code_frames_it(
    browser: Any, state_dir: Path, isolated_env: Path
) -> None:
    write_config("[steer]\nenabled = true\n")
    # Recorded outside tmux: no pane, so the inbox is the way.
    seed.hook(state_dir, "Stop", INBOX_SID, "/w/api")
    client = FakeClient(isolated_env)
    served = start_serve()
    try:
        box = signed_in(browser, served, INBOX_SID)
        field = browser.find_element("css selector", f"{box} textarea")
        field.send_keys("rebase on main first")
        browser.find_element("css selector", f"{box} .steer-send").click()
        assert result(browser, box) == [
            f"api (cccc3333): sent to its inbox socket {client.path}: sent (idle)",
            "text: rebase on main first",
            "note: sent to its inbox: Claude Code shows it to the model as a message from another"
            " Claude session, not as typed by you",
        ]
        assert client.frames()[-1]["message"] == {
            "role": "user",
            "content": "rebase on main first",
        }
    finally:
        served.stop()
        client.close()


def test_steering_off_the_page_offers_nothing(
    browser: Any, state_dir: Path, served: Served
) -> None:
    seed.demo(state_dir)
    browser_sign_in(browser, served)
    until(browser, "document.querySelectorAll('#groups article.session').length === 8")
    until(browser, "window.lookout.steerBox !== undefined")
    assert browser.execute_script("return document.querySelectorAll('.steer').length") == 0
    assert browser.execute_script("return document.getElementById('newsession-open').hidden")
    assert browser.execute_script("return document.getElementById('newsession').hidden")
    # Turned on in the config: the page offers it once it looks again (a new stream, a return
    # to the tab), on live sessions of agents lookout can steer only.
    write_config("[steer]\nenabled = true\n")
    browser.refresh()
    until(browser, "document.querySelectorAll('.steer').length > 0", 20)
    shown = browser.execute_script(
        "return [...document.querySelectorAll('article.session')]"
        ".map(c => [c.querySelector('.project').textContent, Boolean(c.querySelector('.steer'))])"
    )
    assert dict(shown) == {
        "docs": True,
        "api": True,
        "web": True,
        "lookout": True,
        "infra": True,
        "blog": True,
        "notes": True,  # Codex
        "scratch": False,  # ended
    }
    assert not browser.execute_script("return document.getElementById('newsession-open').hidden")


def test_a_draft_and_its_focus_survive_an_update_of_its_card(
    browser: Any, state_dir: Path, served: Served
) -> None:
    write_config("[steer]\nenabled = true\n")
    ids = seed.demo(state_dir)
    browser_sign_in(browser, served)
    box = BOX.format(ids["blog"])
    until(browser, f"document.querySelector('{box} textarea')", 20)
    field = browser.find_element("css selector", f"{box} textarea")
    field.send_keys("half a thought")
    # The session starts working (its card is drawn again) and another one changes too.
    seed.hook(state_dir, "UserPromptSubmit", ids["blog"], "/home/dev/src/blog", prompt="go")
    seed.hook(state_dir, "Stop", ids["infra"], "/home/dev/src/infra")
    until(
        browser,
        f"document.querySelector('[data-id=\"{ids['blog']}\"]').dataset.status === 'working'",
    )
    until(
        browser, f"document.querySelector('[data-id=\"{ids['infra']}\"]').dataset.status === 'idle'"
    )
    state = browser.execute_script(
        f"const t = document.querySelector('{box} textarea');"
        "return [t.value, document.activeElement === t, t.selectionStart,"
        " t.closest('article').dataset.status]"
    )
    assert state == ["half a thought", True, 14, "working"]
    field.send_keys(", finished")  # typing goes on where it was
    assert field.get_attribute("value") == "half a thought, finished"
