"""Answered from ntfy's buttons (issue 40), with the real client: Claude Code interactive in tmux
shows its permission dialog; the alert on a loopback ntfy double (tests/ntfy_api.py) carries
Allow / Deny `http` actions, and a press (what the phone's app sends) closes the dialog with
that outcome. A two-line command's alert offers no Allow."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.ntfy_api import NtfyServer
from tests.receivers import require

from .harness import ClaudePane, Sandbox, wait_for
from .test_remote_answer import COMMAND, enable_remote, pending

pytestmark = pytest.mark.e2e

TOPIC = "lookout-e2e-alerts"
DIALOG = "Do you want to proceed?"
MULTILINE = '[[tool:Bash:{"command":"echo safe\\ntouch HIDDEN.txt","description":"print safe"}]]'


@pytest.fixture
def srv() -> Iterator[NtfyServer]:
    with NtfyServer() as double:
        yield double


def ntfy_sandbox(sandbox: Sandbox, srv: NtfyServer) -> None:
    require("tmux")
    sandbox.trust_project(idle_ms=2000)
    enable_remote(
        sandbox,
        wait_s=120,
        extra=f"""
[channels.phone]
type = "ntfy"
url = "{srv.url}/{TOPIC}"
answers = true
content = "full"
[[rules]]
when = ["permission"]
channels = ["phone"]
""",
    )


def diagnose(sandbox: Sandbox, srv: NtfyServer) -> str:
    state = sandbox.state_dir
    parts = [f"published: {srv.messages}"]
    for name in ("errors.log", "deliveries.jsonl", "ntfy-messages.json"):
        path = state / name
        parts.append(f"{name}: {path.read_text()[-3000:] if path.exists() else None}")
    return "\n".join(parts)


def alerts(srv: NtfyServer) -> list[dict[str, Any]]:
    return [m for m in srv.on(TOPIC) if m.get("actions")]


def labels(alert: dict[str, Any]) -> list[str]:
    return [a["label"] for a in alert.get("actions") or []]


@pytest.mark.parametrize("choice", ["Allow", "Deny"])
def test_a_press_on_ntfy_closes_the_dialog_with_its_outcome(
    sandbox: Sandbox, srv: NtfyServer, choice: str
) -> None:
    ntfy_sandbox(sandbox, srv)
    with ClaudePane(sandbox, "--permission-mode", "manual") as pane:
        session = pane.ready()
        pane.type(f"[[bash: {COMMAND}]]")
        pane.wait_screen(DIALOG)
        rec = pending(sandbox)
        wait_for(lambda: alerts(srv), 20, "the ntfy alert")
        (alert,) = alerts(srv)
        assert labels(alert) == ["Allow", "Deny"]
        action = alert["actions"][labels(alert).index(choice)]
        assert rec["nonce"] not in json.dumps(alert)
        assert srv.press(action) == 200
        pressed = time.monotonic()
        try:
            wait_for(lambda: DIALOG not in pane.screen(), 10, "the dialog to go")
        except AssertionError:
            raise AssertionError(diagnose(sandbox, srv) + "\n" + pane.screen()) from None
        gone = time.monotonic() - pressed
        row = sandbox.wait_event(session, "RemoteDecision")
        assert (row["remote"]["decision"], row["remote"]["source"]) == (choice.lower(), "ntfy")
        assert row["remote"]["request_id"] == rec["id"]
        made = sandbox.project / "made-remotely"
        if choice == "Allow":
            wait_for(made.exists, 10, "the tool to run")
        else:
            wait_for(lambda: sandbox.session_status(session)["status"] == "idle", 20, "idle")
            assert not made.exists()
        outcome = "Allowed" if choice == "Allow" else "Denied"
        wait_for(lambda: "actions" not in srv.shown(TOPIC)[-1], 5, "the outcome")
        assert srv.shown(TOPIC)[-1]["message"].endswith(f"{outcome} by ntfy channel phone")
        print(f"ntfy: {choice} press -> dialog gone in {gone:.2f} s")
    sandbox.assert_no_errors()


def test_a_two_line_command_offers_no_allow_on_ntfy(sandbox: Sandbox, srv: NtfyServer) -> None:
    ntfy_sandbox(sandbox, srv)
    with ClaudePane(sandbox, "--permission-mode", "manual") as pane:
        session = pane.ready()
        pane.type(MULTILINE)
        pane.wait_screen(DIALOG)
        rec = pending(sandbox)
        assert rec["tool_input"]["command"] == "echo safe\ntouch HIDDEN.txt"
        wait_for(lambda: alerts(srv), 20, "the ntfy alert")
        (alert,) = alerts(srv)
        assert labels(alert) == ["Deny"]
        assert "Bash: echo safe\ntouch HIDDEN.txt\n" in alert["message"]
        srv.press(alert["actions"][0])
        row = sandbox.wait_event(session, "RemoteDecision")
        assert (row["remote"]["decision"], row["remote"]["source"]) == ("deny", "ntfy")
        wait_for(lambda: DIALOG not in pane.screen(), 10, "the dialog to go")
        assert not (sandbox.project / "HIDDEN.txt").exists()
    sandbox.assert_no_errors()
