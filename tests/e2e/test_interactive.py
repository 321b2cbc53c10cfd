"""The real client, interactive, in a private tmux server: dialogs, the idle reminder, /exit, and
the notifications one attention episode sends (a loopback webhook, a real D-Bus daemon)."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

import pytest

from ..receivers import NotificationBus, require, webhook_receiver
from .harness import ClaudePane, ClientLog, Sandbox, describe, sequence, wait_for
from .mock_api import MockAPI

pytestmark = pytest.mark.e2e

COMMAND = "touch lookout-e2e-marker"


@pytest.fixture(autouse=True)
def _needs_tmux() -> None:
    require("tmux")


@pytest.fixture
def interactive(sandbox: Sandbox) -> Sandbox:
    sandbox.trust_project(idle_ms=2000)
    return sandbox


def latest(sandbox: Sandbox, session_id: str) -> dict[str, object]:
    return sandbox.records(session_id)[-1]


def end_session(pane: ClaudePane, sandbox: Sandbox, session_id: str) -> None:
    pane.type("/exit")
    row = sandbox.wait_event(session_id, "SessionEnd", timeout=15)
    assert (row["status"], row["reason"]) == ("ended", "prompt_input_exit"), row
    assert sandbox.session_status(session_id)["status"] == "ended"
    sandbox.assert_no_errors()


def test_permission_episode_attention_within_a_second_and_one_notification_per_channel(
    interactive: Sandbox, tmp_path: Path
) -> None:
    require(*NotificationBus.BINARIES)
    with NotificationBus() as bus, webhook_receiver() as hook:
        interactive.config.write_text(
            f"""
[channels.hook]
type = "webhook"
url = "{hook.url}/lookout"
format = "json"
content = "full"

[channels.desktop]
type = "desktop"
skip_when_focused = false

[[rules]]
when = ["permission"]
channels = ["hook", "desktop"]
"""
        )
        env = interactive.env(DBUS_SESSION_BUS_ADDRESS=bus.address)
        with (
            ClaudePane(interactive, "--permission-mode", "manual", env=env) as pane,
            ClientLog(interactive) as client,
        ):
            session = pane.ready()
            pane.type(f"[[bash: {COMMAND}]]")
            pane.wait_screen("Do you want to proceed?")
            row = interactive.wait_event(session, "PermissionRequest", timeout=20)
            # The hook runs as the dialog is drawn: lookout knows before the ~6 s Notification.
            # Measured on the events' own stamps (the hook's start, the client's `waiting`
            # write), not on the wall clock of a test a busy machine may starve.
            drawn = client.wait(session, lambda status: status == "waiting").written_ms
            fired = datetime.fromisoformat(row["ts"].replace("Z", "+00:00")).timestamp() * 1000
            assert abs(fired - drawn) <= 1000, (fired, drawn)
            assert (row["status"], row["reason"]) == ("attention", "permission"), row
            shown = interactive.session_status(session)
            assert (shown["status"], shown["reason"]) == ("attention", "permission"), shown
            assert shown["tmux_pane"] == pane.pane_id, shown

            # The client's own permission_prompt Notification ~6 s later: the same episode.
            late = interactive.wait_event(
                session, "Notification", timeout=12, notification_type="permission_prompt"
            )
            assert (late["status"], late["reason"]) == ("attention", "permission"), late
            time.sleep(1.5)  # let a (wrong) second send reach the receivers
            interactive.assert_no_errors()
            assert len(hook.requests) == 1, [r.body for r in hook.requests]
            assert COMMAND in hook.requests[0].body.decode(), hook.requests[0].body
            new_alerts = [c for c in bus.calls if c["replaces_id"] == 0]
            assert len(new_alerts) == 1, bus.calls
            assert COMMAND in new_alerts[0]["summary"] + new_alerts[0]["body"], bus.calls

            pane.keys("Enter")  # "1. Yes"
            interactive.wait_event(session, "Stop", timeout=10)
            idle = interactive.wait_event(
                session, "Notification", timeout=10, notification_type="idle_prompt"
            )
            assert idle["status"] == "idle", idle
            assert (interactive.project / "lookout-e2e-marker").exists()
            end_session(pane, interactive, session)

        rows = interactive.records(session)
        # The async PreToolUse may arrive after its PermissionRequest (a busy machine starts its
        # interpreter late): then it changes nothing and records the attention it found.
        first: dict[str, int] = {}
        for r in rows:
            first.setdefault(r["event"], r["seq"])
        late = first["PreToolUse"] > first["PermissionRequest"]
        assert sequence(rows) == [
            ("SessionStart", "idle", None),
            ("UserPromptSubmit", "working", None),
            ("PreToolUse", "attention", "permission") if late else ("PreToolUse", "working", None),
            ("PermissionRequest", "attention", "permission"),
            ("Notification", "attention", "permission"),
            ("PostToolUse", "working", None),
            ("PostToolBatch", "working", None),
            ("Stop", "idle", None),
            ("Notification", "idle", None),
            ("SessionEnd", "ended", "prompt_input_exit"),
        ], describe(rows)
        # Answering and the turn's end send nothing new: no rule for done or idle. (The
        # "handled" note is posted once the alert, which has a Focus button, is closed.)
        assert len(hook.requests) == 1, [r.body for r in hook.requests]
        alerts = [c for c in bus.calls if c["replaces_id"] == 0 and "transient" not in c["hints"]]
        assert len(alerts) == 1, bus.calls


@pytest.mark.parametrize(
    ("mode", "directive", "tool", "reason", "dialog"),
    [
        ("manual", "[[ask: Which colour?]]", "AskUserQuestion", "question", "Enter to select"),
        ("plan", "[[plan: 1. paint it red]]", "ExitPlanMode", "plan", "Exit plan mode?"),
    ],
    ids=["question", "plan"],
)
def test_question_and_plan_raise_attention_until_answered(
    interactive: Sandbox, mode: str, directive: str, tool: str, reason: str, dialog: str
) -> None:
    with ClaudePane(interactive, "--permission-mode", mode) as pane:
        session = pane.ready()
        pane.type(directive)
        pane.wait_screen(dialog)
        row = interactive.wait_event(session, "PreToolUse", timeout=5, tool_name=tool)
        assert (row["status"], row["reason"]) == ("attention", reason), row
        time.sleep(0.5)  # a dialog takes keys a moment after it is drawn
        pane.keys("Enter")  # the first option
        interactive.wait_event(session, "Stop", timeout=10)
        end_session(pane, interactive, session)
    rows = [r for r in interactive.records(session) if r.get("tool_name") != "ToolSearch"]
    seq = sequence(rows)
    first = seq.index(("PreToolUse", "attention", reason))
    assert seq[first + 1] == ("PermissionRequest", "attention", reason), describe(rows)
    assert seq[first + 2 : first + 5] == [
        ("PostToolUse", "working", None),
        ("PostToolBatch", "working", None),
        ("Stop", "idle", None),
    ], describe(rows)


def test_rate_limit_raises_attention_error_until_the_next_prompt(
    interactive: Sandbox, mock_api: MockAPI
) -> None:
    with ClaudePane(interactive, "--permission-mode", "manual") as pane:
        session = pane.ready()
        mock_api.fail_next(429)
        pane.type("hello")
        row = interactive.wait_event(session, "StopFailure", timeout=10)
        assert (row["status"], row["reason"]) == ("attention", "error"), row
        pane.type("hello again")
        wait_for(lambda: latest(interactive, session)["event"] == "Stop", 10, "the next Stop")
        assert latest(interactive, session)["status"] == "idle"
        end_session(pane, interactive, session)
    rows = interactive.records(session)
    assert [json.dumps(r) for r in rows if r.get("duplicate")] == []
