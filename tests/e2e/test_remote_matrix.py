"""Answered from Matrix (issue 40), with the real client and a real homeserver: Claude Code
interactive in tmux shows its permission dialog, lookout's sender posts the request into a room
of a real Synapse (tests/synapse.py), and the owner's ✅ or ❌ reaction, taken by the listener's
/sync, closes the dialog with the true outcome. A two-line command offers no ✅, and a ✅ on it
answers nothing."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.synapse import Accounts

from .harness import ClaudePane, Sandbox, wait_for
from .test_remote_answer import COMMAND, enable_remote, pending

pytestmark = pytest.mark.e2e

DIALOG = "Do you want to proceed?"
MULTILINE = '[[tool:Bash:{"command":"echo safe\\ntouch HIDDEN.txt","description":"print safe"}]]'


def matrix_sandbox(sandbox: Sandbox, hs: Accounts) -> tuple[dict[str, str], str]:
    """The sandbox's config with a matrix channel in a fresh room: (the client's env, room)."""
    from tests.receivers import require

    require("tmux")
    room = hs.bot.create_room(hs.owner, hs.stranger)
    sandbox.trust_project(idle_ms=2000)
    enable_remote(
        sandbox,
        wait_s=120,
        extra=f"""
[channels.room]
type = "matrix"
homeserver = "{hs.synapse.url}"
user_id = "{hs.bot.user_id}"
access_token_env = "LOOKOUT_MX_TOKEN"
room_id = "{room}"
allowed_user_ids = ["{hs.owner.user_id}"]
content = "full"
[[rules]]
when = ["permission"]
channels = ["room"]
""",
    )
    return sandbox.env(LOOKOUT_MX_TOKEN=hs.bot.token), room


def alerts(hs: Accounts, room: str) -> list[dict[str, Any]]:
    return [
        e
        for e in hs.owner.messages(room)
        if e["sender"] == hs.bot.user_id
        and e["type"] == "m.room.message"
        and "m.new_content" not in e["content"]
    ]


def edited(hs: Accounts, room: str, event_id: str) -> list[str]:
    return [
        e["content"]["m.new_content"]["body"]
        for e in hs.owner.messages(room)
        if (e["content"].get("m.relates_to") or {}).get("rel_type") == "m.replace"
        and e["content"]["m.relates_to"].get("event_id") == event_id
    ]


def diagnose(sandbox: Sandbox) -> str:
    parts = []
    for name in ("errors.log", "deliveries.jsonl", "matrix-messages.json"):
        path = sandbox.state_dir / name
        parts.append(f"{name}: {path.read_text()[-3000:] if path.exists() else None}")
    return "\n".join(parts)


@pytest.mark.parametrize("key", ["✅", "❌"])
def test_a_reaction_in_the_room_closes_the_dialog_with_its_outcome(
    sandbox: Sandbox, hs: Accounts, key: str
) -> None:
    env, room = matrix_sandbox(sandbox, hs)
    with ClaudePane(sandbox, "--permission-mode", "manual", env=env) as pane:
        session = pane.ready()
        pane.type(f"[[bash: {COMMAND}]]")
        pane.wait_screen(DIALOG)
        rec = pending(sandbox)
        try:
            wait_for(lambda: alerts(hs, room), 20, "the Matrix message")
        except AssertionError:
            raise AssertionError(diagnose(sandbox)) from None
        (message,) = alerts(hs, room)
        body = message["content"]["body"]
        assert body.endswith("Answer: react ✅ to allow, ❌ to deny.")
        assert rec["nonce"] not in json.dumps(message)
        hs.stranger.react(room, message["event_id"], key)  # in the room, not an approver
        hs.owner.react(room, message["event_id"], key)
        reacted = time.monotonic()
        wait_for(lambda: DIALOG not in pane.screen(), 15, "the dialog to go")
        gone = time.monotonic() - reacted
        row = sandbox.wait_event(session, "RemoteDecision")
        decision = "allow" if key == "✅" else "deny"
        assert (row["remote"]["decision"], row["remote"]["source"], row["remote"]["by"]) == (
            decision,
            "matrix",
            f"Matrix user {hs.owner.user_id}",
        )
        made = sandbox.project / "made-remotely"
        if key == "✅":
            wait_for(made.exists, 15, "the tool to run")
            outcome = f"Allowed by Matrix user {hs.owner.user_id}"
        else:
            pane.wait_screen(f"Denied from lookout by Matrix user {hs.owner.user_id}")
            assert not made.exists()
            outcome = f"Denied by Matrix user {hs.owner.user_id}"
        wait_for(lambda: edited(hs, room, message["event_id"]), 10, "the outcome's edit")
        assert edited(hs, room, message["event_id"])[-1].endswith(f"\n\n{outcome}")
        print(f"matrix {key}: reaction -> dialog gone in {gone:.2f} s")
    errors = sandbox.state_dir / "errors.log"  # the stranger's reaction, said and ignored: only it
    lines = errors.read_text().splitlines() if errors.exists() else []
    stranger = f"a m.reaction by user {hs.stranger.user_id}, not the owner: ignored"
    assert all(line.endswith(stranger) for line in lines), lines


def test_a_two_line_command_offers_no_allow_and_a_check_mark_answers_nothing(
    sandbox: Sandbox, hs: Accounts
) -> None:
    env, room = matrix_sandbox(sandbox, hs)
    with ClaudePane(sandbox, "--permission-mode", "manual", env=env) as pane:
        pane.ready()
        pane.type(MULTILINE)
        pane.wait_screen(DIALOG)
        rec = pending(sandbox)
        wait_for(lambda: alerts(hs, room), 20, "the Matrix message")
        (message,) = alerts(hs, room)
        body = message["content"]["body"]
        assert "echo safe\\ntouch HIDDEN.txt" in body or "touch HIDDEN.txt" in body
        assert "✅" not in body and body.endswith("Answer: react ❌ to deny.")
        hs.owner.react(room, message["event_id"], "✅")
        state = sandbox.state_dir / "errors.log"
        wait_for(
            lambda: state.exists() and "answers nothing here" in state.read_text(),
            20,
            "the ✅ said as ignored",
        )
        assert DIALOG in pane.screen()
        from lookout.remote import requests

        now = requests.load(str(sandbox.state_dir), rec["id"])
        assert now is not None and now["status"] == requests.PENDING
        hs.owner.react(room, message["event_id"], "❌")
        pane.wait_screen(f"Denied from lookout by Matrix user {hs.owner.user_id}")
    assert not (sandbox.project / "HIDDEN.txt").exists()
