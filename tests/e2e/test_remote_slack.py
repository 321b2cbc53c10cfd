"""Answered from Slack (issue 40), with the real client: Claude Code interactive in tmux shows
its permission dialog; the Slack channel, added by the installed `lookout channel add --type
slack` (which puts slack-sdk into lookout's runtime), posts the request with Block Kit buttons to
a loopback double of the Web API (tests/slack_api.py); the listener the sender starts, slack-sdk's
real Socket Mode client, takes the press from the double's WebSocket, and the dialog closes with
the true outcome. A two-line command offers no Allow."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.receivers import require
from tests.slack_api import SlackApi

from .harness import ClaudePane, Sandbox, wait_for
from .test_remote_alerts import MULTILINE
from .test_remote_answer import COMMAND, enable_remote, pending

pytestmark = pytest.mark.e2e

BOT, APP = "xoxb-e2e-bot-token", "xapp-e2e-app-token"
CHANNEL, OWNER = "C0LOOKOUT", "U0OWNER"
DIALOG = "Do you want to proceed?"


@pytest.fixture
def api() -> Iterator[SlackApi]:
    with SlackApi(BOT, APP, CHANNEL) as double:
        yield double


def slack_sandbox(sandbox: Sandbox, api: SlackApi) -> dict[str, str]:
    """[remote] on, the slack channel added by the installed `lookout channel add`, a rule."""
    require("tmux")
    sandbox.trust_project(idle_ms=2000)
    enable_remote(sandbox, wait_s=120)
    pip = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
    env = sandbox.env(SLACK_BOT=BOT, SLACK_APP=APP, **pip)
    added = subprocess.run(
        [*sandbox.install.lookout, "channel", "add", "team", "--type", "slack",
         "--bot-token-env", "SLACK_BOT", "--app-token-env", "SLACK_APP", "--channel", CHANNEL,
         "--allowed-user", OWNER, "--url", api.url, "--content", "full"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert added.returncode == 0, added.stdout + added.stderr
    with sandbox.config.open("a") as f:
        f.write('\n[[rules]]\nwhen = ["permission"]\nchannels = ["team"]\n')
    return env


def ask(pane: ClaudePane, sandbox: Sandbox, api: SlackApi, prompt: str) -> tuple[str, str]:
    """The dialog is up and its Slack message posted: (the message's ts, the request's id)."""
    pane.type(prompt)
    pane.wait_screen(DIALOG)
    rec = pending(sandbox)
    wait_for(lambda: api.sent("chat.postMessage"), 20, "the Slack message")
    wait_for(api.connected, 30, "the listener's Socket Mode connection")
    return api.posted()[0]["ts"], str(rec["id"])


@pytest.mark.parametrize("decision", ["allow", "deny"])
def test_a_press_on_slack_closes_the_dialog_with_its_outcome(
    sandbox: Sandbox, api: SlackApi, decision: str
) -> None:
    env = slack_sandbox(sandbox, api)
    with ClaudePane(sandbox, "--permission-mode", "manual", env=env) as pane:
        session = pane.ready()
        ts, rid = ask(pane, sandbox, api, f"[[bash: {COMMAND}]]")
        buttons = dict(api.buttons(ts))
        assert list(buttons) == ["Allow", "Deny"]
        api.press(ts, buttons[decision.capitalize()], OWNER)
        pressed = time.monotonic()
        wait_for(lambda: DIALOG not in pane.screen(), 10, "the dialog to go")
        gone = time.monotonic() - pressed
        row = sandbox.wait_event(session, "RemoteDecision")
        remote = row["remote"]
        assert (remote["decision"], remote["source"], remote["request_id"]) == (
            decision,
            "slack",
            rid,
        )
        made = sandbox.project / "made-remotely"
        if decision == "allow":
            wait_for(made.exists, 10, "the tool to run")
        else:
            pane.wait_screen(f"Denied from lookout by Slack user {OWNER}")
            wait_for(lambda: sandbox.session_status(session)["status"] == "idle", 20, "idle")
            assert not made.exists()
        wait_for(lambda: not api.buttons(ts), 5, "the message updated to the outcome")
        word = "Allowed" if decision == "allow" else "Denied"
        assert api.text(ts).endswith(f"{word} by Slack user {OWNER}")
        assert all(api.acks[e] - t <= 3.0 for e, t in api.sent_at.items())
        print(f"slack: {decision} press -> dialog gone in {gone:.2f} s")
    sandbox.assert_no_errors()


def test_a_two_line_command_offers_no_allow_on_slack(sandbox: Sandbox, api: SlackApi) -> None:
    env = slack_sandbox(sandbox, api)
    with ClaudePane(sandbox, "--permission-mode", "manual", env=env) as pane:
        session = pane.ready()
        ts, _rid = ask(pane, sandbox, api, MULTILINE)
        assert [label for label, _ in api.buttons(ts)] == ["Deny"]
        assert "Bash: echo safe\ntouch HIDDEN.txt\n" in api.text(ts)
        api.press(ts, api.buttons(ts)[0][1], OWNER)
        wait_for(lambda: DIALOG not in pane.screen(), 10, "the dialog to go")
        row = sandbox.wait_event(session, "RemoteDecision")
        assert (row["remote"]["decision"], row["remote"]["source"]) == ("deny", "slack")
        wait_for(lambda: sandbox.session_status(session)["status"] == "idle", 20, "idle")
        assert not (sandbox.project / "HIDDEN.txt").exists()
    sandbox.assert_no_errors()
