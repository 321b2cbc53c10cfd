"""What each surface says happened is what happened (issue 31, item 5), with the real client:
Claude Code interactive in tmux, the Telegram Bot API double, and (where it says so) the real
lxqt-notificationd on a private Xvfb screen, clicked with xdotool.

- The same command asked again after Esc is a new request: it waits, with buttons, and one
  alert goes out for it.
- Every terminal answer (Yes, Yes-don't-ask-again, No, Esc) and every surface answer ends with
  each surface saying what the client did, for a new command and for the same one asked again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from lookout.remote import requests
from tests.receivers import require
from tests.telegram_api import BotApi

from .harness import ClaudePane, Sandbox, wait_for
from .test_remote_alerts import CHAT, DIALOG, OWNER, TOKEN
from .test_remote_alerts import diagnose as alerts_diagnose
from .test_remote_answer import enable_remote

pytestmark = pytest.mark.e2e


@pytest.fixture
def api() -> Iterator[BotApi]:
    with BotApi(TOKEN, chats=(CHAT,)) as double:
        yield double


def remote_sandbox(sandbox: Sandbox, api: BotApi, extra: str = "") -> dict[str, str]:
    require("tmux")
    sandbox.trust_project(idle_ms=2000)
    enable_remote(
        sandbox,
        wait_s=120,
        extra=f"""
[channels.chat]
type = "telegram"
token_env = "LOOKOUT_TG_TOKEN"
chat_id = {CHAT}
allowed_user_ids = [{OWNER}]
api_url = "{api.url}"
[[rules]]
when = ["permission", "question", "plan"]
channels = ["chat"]
{extra}""",
    )
    return sandbox.env(LOOKOUT_TG_TOKEN=TOKEN)


def diagnose(sandbox: Sandbox, api: BotApi) -> str:
    keys = ("ts", "event", "status", "episode", "outcome", "tool_use_id")
    rows = [{k: r.get(k) for k in keys if k in r} for r in sandbox.records()]
    return alerts_diagnose(sandbox, api) + "\nevents:\n" + "\n".join(map(json.dumps, rows))


def records(sandbox: Sandbox) -> list[dict[str, Any]]:
    return requests.load_all(str(sandbox.state_dir))


def new_request(sandbox: Sandbox, seen: set[str], timeout: float = 20) -> dict[str, Any]:
    """The first request record not in `seen` (pending or not: the caller checks)."""
    rec = wait_for(
        lambda: next((r for r in records(sandbox) if r["id"] not in seen), None),
        timeout,
        "a new request record",
    )
    seen.add(rec["id"])
    return rec


def messages_with_buttons(api: BotApi) -> list[dict[str, Any]]:
    return [m for m in api.messages.values() if m.get("reply_markup")]


def answer_dialog(pane: ClaudePane, *keys: str) -> None:
    """Keys at the dialog; the client drops a key that comes while the dialog is still settling
    (about one run in three): press again until the dialog goes."""
    for _ in range(5):
        pane.keys(*keys)
        try:
            wait_for(lambda: DIALOG not in pane.screen(), 2, "the dialog to go")
            return
        except AssertionError:
            continue
    raise AssertionError(f"the dialog stayed:\n{pane.screen()}")


def idle(pane: ClaudePane, sandbox: Sandbox, session: str, count: int) -> None:
    """Wait for the `count`-th Stop of the session (the turn is over, the prompt is back)."""
    wait_for(
        lambda: len([r for r in sandbox.records(session) if r["event"] == "Stop"]) >= count,
        30,
        f"Stop #{count}",
    )
    time.sleep(0.3)  # the input box takes keys a moment after the turn ends


def test_the_same_command_after_esc_is_a_new_request_with_buttons(
    sandbox: Sandbox, api: BotApi
) -> None:
    env = remote_sandbox(sandbox, api)
    seen: set[str] = set()
    with ClaudePane(sandbox, "--permission-mode", "manual", env=env) as pane:
        session = pane.ready()
        pane.type("[[bash: touch again-A]]")
        pane.wait_screen(DIALOG)
        first = new_request(sandbox, seen)
        wait_for(lambda: messages_with_buttons(api), 20, "the first Telegram message")
        answer_dialog(pane, "Escape")
        wait_for(
            lambda: (
                requests.load(str(sandbox.state_dir), first["id"])["status"]
                == requests.ANSWERED_LOCALLY
            ),
            10,
            "the first request settled",
        )
        pane.type("hello")
        idle(pane, sandbox, session, 1)
        pane.type("[[bash: touch again-A]]")
        pane.wait_screen(DIALOG)
        again = new_request(sandbox, seen)
        assert again["summary"] == "touch again-A"
        # It waits for an answer, with buttons: the Telegram message of this request has them.
        try:
            message = wait_for(
                lambda: next(
                    (
                        m
                        for m in api.messages.values()
                        if m["message_id"] != 1 and m.get("reply_markup")
                    ),
                    None,
                ),
                20,
                "the second Telegram message, with buttons",
            )
        except AssertionError:
            raise AssertionError(diagnose(sandbox, api) + "\n" + pane.screen()) from None
        rec = requests.load(str(sandbox.state_dir), again["id"])
        assert rec is not None and rec["status"] == requests.PENDING, diagnose(sandbox, api)
        time.sleep(1.0)  # was: marked answered_locally 134 ms after it opened
        rec = requests.load(str(sandbox.state_dir), again["id"])
        assert rec is not None and rec["status"] == requests.PENDING, diagnose(sandbox, api)
        # One alert for one dialog.
        assert len(api.sent("sendMessage")) == 2, api.sent("sendMessage")
        (allow, _deny) = api.buttons(CHAT, message["message_id"])
        api.press(message["message_id"], allow[1], OWNER)
        wait_for(lambda: DIALOG not in pane.screen(), 10, "the dialog to go")
        wait_for(lambda: (sandbox.project / "again-A").exists(), 10, "the tool to run")
        key = (CHAT, message["message_id"])
        wait_for(lambda: "reply_markup" not in api.messages[key], 5, "the buttons to go")
        assert api.messages[key]["text"].endswith("Allowed by Telegram user 42")
        print(json.dumps([m["text"] for m in api.messages.values()], indent=1))
    sandbox.assert_no_errors()
