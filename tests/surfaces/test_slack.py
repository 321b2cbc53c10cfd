"""Slack as an answering surface (issue 40), through the real processes: the deciding hook
waits, the recording hook raises the alert, the detached sender posts it to a loopback double of
the Web API and Socket Mode (tests/slack_api.py), and the detached listener, the real slack-sdk
Socket Mode client, takes presses and thread replies from its WebSocket."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout.remote import requests
from lookout.surfaces import slack as listener
from tests.helpers import lock_free, payload, wait_for, write_config
from tests.remote.test_decide import events, finish, record_hook, start, waiting
from tests.slack_api import SlackApi

pytestmark = pytest.mark.real

BOT, APP = "xoxb-1-test-bot-token", "xapp-1-test-app-token"
CHANNEL, OWNER, STRANGER = "C0LOOKOUT", "U0OWNER", "U0STRANGER"
SID = "aaaa1111-0000-4000-8000-000000000001"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, state_dir: Path) -> Iterator[SlackApi]:
    monkeypatch.setenv("LOOKOUT_SLACK_BOT", BOT)
    monkeypatch.setenv("LOOKOUT_SLACK_APP", APP)
    with SlackApi(BOT, APP, CHANNEL) as double:
        yield double
        write_config("# nothing: the listener leaves\n")
        wait_for(lambda: listener_gone(state_dir), 30, "the listener gone")


def configure(api: SlackApi, extra: str = "", users: str = f'["{OWNER}"]') -> None:
    write_config(
        f"""
[remote]
enabled = true
wait_s = 60
{extra}
[channels.team]
type = "slack"
bot_token_env = "LOOKOUT_SLACK_BOT"
app_token_env = "LOOKOUT_SLACK_APP"
channel = "{CHANNEL}"
allowed_user_ids = {users}
api_url = "{api.url}"
content = "full"
[[rules]]
when = ["permission", "question", "done"]
channels = ["team"]
"""
    )


def listener_gone(state_dir: Path) -> bool:
    return lock_free(state_dir / listener.LOCK)


def ask(
    api: SlackApi, state_dir: Path, body: dict[str, Any] | None = None
) -> tuple[Any, dict[str, Any], str]:
    """The deciding hook waits, the recording hook alerts: (hook, request, the message's ts)."""
    body = body or payload("PermissionRequest-Bash")
    deciding = start(body)
    rec = waiting(state_dir)
    record_hook("permission_request.py", body)
    wait_for(lambda: api.sent("chat.postMessage"), 10)
    wait_for(api.connected, 20, "the listener's Socket Mode connection")
    return deciding, rec, api.posted()[0]["ts"]


def acked_in_time(api: SlackApi) -> bool:
    """Every envelope acknowledged, each within Slack's 3 s (the double's own stamps)."""
    return not api.unacked() and all(api.acks[e] - t <= 3.0 for e, t in api.sent_at.items())


def test_allow_from_slack_answers_once_and_updates_the_message(
    api: SlackApi, state_dir: Path
) -> None:
    configure(api)
    deciding, rec, ts = ask(api, state_dir)
    assert api.text(ts) == (
        "demo · needs permission\nBash: touch t.txt\ndescription: mock-requested command"
    )
    buttons = api.buttons(ts)
    assert [label for label, _ in buttons] == ["Allow", "Deny"]
    for _, value in buttons:  # a press token, never the nonce
        assert rec["nonce"] not in value and value
    api.press(ts, buttons[0][1], OWNER)
    out = json.loads(finish(deciding))
    assert out["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    wait_for(lambda: not api.buttons(ts), 5, "the buttons gone")
    assert api.text(ts).endswith(f"\n\nAllowed by Slack user {OWNER}")
    remote = [e["remote"] for e in events(state_dir) if e.get("event") == "RemoteDecision"]
    assert [(r["decision"], r["source"], r["by"]) for r in remote] == [
        ("allow", "slack", f"Slack user {OWNER}")
    ]
    assert acked_in_time(api)
    wait_for(lambda: listener_gone(state_dir), 15)  # nothing pending, steering off: it leaves


def test_strangers_other_channels_forgeries_and_replays_change_nothing(
    api: SlackApi, state_dir: Path
) -> None:
    configure(api)
    deciding, rec, ts = ask(api, state_dir)
    (_, allow), (_, deny) = api.buttons(ts)
    api.press(ts, allow, STRANGER)  # not in allowed_user_ids
    api.press(ts, allow, OWNER, channel="C0OTHER")  # the owner, on another channel's message
    api.press(ts, rec["nonce"], OWNER)  # a guessed value: the nonce
    api.press(ts, allow, OWNER, action_id="someone-elses")  # not a lookout button
    api.press("1.2", allow, OWNER)  # a message this channel never sent
    api.envelope("interactive", {"type": "block_actions", "actions": "garbage"})
    api.envelope("slash_commands", {"command": "/allow"})
    wait_for(lambda: len(api.acks) == 7, 10, "every envelope acknowledged")
    assert acked_in_time(api)
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    assert len(api.buttons(ts)) == 2
    api.press(ts, deny, OWNER)
    out = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert out == {"behavior": "deny", "message": f"Denied from lookout by Slack user {OWNER}."}
    wait_for(lambda: not api.buttons(ts), 5)
    assert api.text(ts).endswith(f"\n\nDenied by Slack user {OWNER}")
    wait_for(lambda: listener_gone(state_dir), 15)
    # Replayed while the next request waits (its listener takes them): they answer neither.
    body = {**payload("PermissionRequest-Bash"), "session_id": "another-session"}
    again = start(body)
    fresh = waiting(state_dir)
    record_hook("permission_request.py", body)
    wait_for(lambda: len(api.sent("chat.postMessage")) == 2, 10)
    wait_for(lambda: api.connections == 2 and api.connected(), 20, "the next listener")
    api.press(ts, deny, OWNER)
    api.press(ts, allow, OWNER)
    wait_for(lambda: len(api.acks) == 10, 10)
    old, new = (requests.load(str(state_dir), r["id"]) for r in (rec, fresh))
    assert old is not None and old["status"] == requests.DENIED
    assert new is not None and new["status"] == requests.PENDING
    remote = [e["remote"] for e in events(state_dir) if e.get("event") == "RemoteDecision"]
    assert [(r["decision"], r["source"]) for r in remote] == [("deny", "slack")]
    again.terminate()
    assert finish(again) == b""
    log = (state_dir / "errors.log").read_text()
    assert f"a press by user {STRANGER} in channel {CHANNEL}, not the owner: ignored" in log
    assert "changed nothing: no such request" in log
    assert "not of a lookout button" in log  # each reason once a second, then a count
    assert BOT not in log and APP not in log


def test_nobody_answers_when_allowed_user_ids_is_empty(api: SlackApi, state_dir: Path) -> None:
    configure(api, users="[]")
    deciding, rec, ts = ask(api, state_dir)
    api.press(ts, api.buttons(ts)[0][1], OWNER)
    wait_for(lambda: len(api.acks) == 1, 10)
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    deciding.terminate()
    assert finish(deciding) == b""
    wait_for(lambda: not api.buttons(ts), 5)  # the outcome shows: answered in the terminal
    assert "terminal" in api.text(ts)


def test_a_two_line_command_offers_no_allow(api: SlackApi, state_dir: Path) -> None:
    configure(api)
    body = payload("PermissionRequest-Bash")
    body["tool_input"] = {**body["tool_input"], "command": "make\nrm -rf ~"}
    deciding, _rec, ts = ask(api, state_dir, body)
    assert [label for label, _ in api.buttons(ts)] == ["Deny"]
    assert "rm -rf" in api.text(ts)
    deciding.terminate()
    finish(deciding)


QUESTION = {
    "tool_name": "AskUserQuestion",
    "tool_input": {
        "questions": [
            {
                "question": "Which colour?",
                "header": "Choice",
                "multiSelect": False,
                "options": [
                    {"label": "Red", "description": "r"},
                    {"label": "Blue", "description": "b"},
                ],
            }
        ]
    },
}


def test_a_question_recorded_late_gets_its_buttons_and_an_option_answers(
    api: SlackApi, state_dir: Path
) -> None:
    configure(api)
    asked = {**payload("PreToolUse-Bash"), **QUESTION}
    record_hook("pre_tool_use.py", asked)
    wait_for(lambda: api.sent("chat.postMessage"), 10)
    ts = api.posted()[0]["ts"]
    assert api.buttons(ts) == []  # sent before its request was recorded
    body = {k: v for k, v in asked.items() if k != "tool_use_id"}
    deciding = start({**body, "hook_event_name": "PermissionRequest"})
    waiting(state_dir)
    wait_for(lambda: api.buttons(ts), 10, "the buttons added")
    buttons = api.buttons(ts)
    assert [label for label, _ in buttons] == ["Red", "Blue", "Deny"]
    assert len(api.sent("chat.postMessage")) == 1  # the same message, not a second alert
    wait_for(api.connected, 20)
    api.press(ts, buttons[1][1], OWNER)
    decision = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert decision["updatedInput"]["answers"] == {"Which colour?": "Blue"}
    wait_for(lambda: not api.buttons(ts), 5)
    assert api.text(ts).endswith(f"Allowed by Slack user {OWNER}: Blue")


def test_thread_replies_and_commands_go_through_the_steering_core(
    api: SlackApi, state_dir: Path
) -> None:
    configure(api, extra="[steer]\nenabled = true")
    record_hook("stop.py", {"session_id": SID, "cwd": "/w/api", "hook_event_name": "Stop"})
    wait_for(lambda: api.sent("chat.postMessage"), 10, "the alert")
    alert = api.posted()[0]["ts"]
    wait_for(api.connected, 20, "a listener (steering on, an alert to reply to)")
    asked = api.reply("!sessions", OWNER)
    wait_for(lambda: api.thread(asked), 20)
    assert api.thread(asked) == ["1 session:\napi (aaaa1111): idle, claude"]
    asked = api.reply("!stop", OWNER, thread_ts=alert)
    wait_for(lambda: len(api.thread(alert)) == 1, 20)
    assert api.thread(alert) == [
        "error: api (aaaa1111) is idle: there is no turn to interrupt\n"
        "hint: lookout say SESSION TEXT starts one"
    ]
    # A stranger, a bot, an edit, a message outside any thread: nothing runs, nothing answers.
    api.reply("!sessions", STRANGER)
    api.reply("hello", OWNER, thread_ts=alert, bot_id="B0")
    api.reply("hello", OWNER, thread_ts=alert, subtype="message_changed")
    api.reply("hello", OWNER)
    wait_for(lambda: len(api.acks) == 6, 10)
    asked = api.reply("!new /etc fix it", OWNER)
    wait_for(lambda: api.thread(asked), 20)
    (text,) = api.thread(asked)
    assert text.startswith("error: /etc is not one of the projects [steer] allows (")
    assert len(api.thread(alert)) == 1
    steered = [e for e in events(state_dir) if e.get("event") == "Steered"]
    assert [(x["steer"]["action"], x["source"]) for x in steered] == [("interrupt", "slack")]
    assert acked_in_time(api)
    # Issue 41: !away [DURATION] and !back turn the away switch, recorded with their source.
    asked = api.reply("!away 2h", OWNER)
    wait_for(lambda: api.thread(asked), 20, "the reply to !away")
    assert api.thread(asked)[0].startswith("away: on until ")
    assert away_now() == (True, "slack")
    asked = api.reply("!back", OWNER)
    wait_for(lambda: api.thread(asked), 20, "the reply to !back")
    assert away_now() == (False, "slack")


def away_now() -> tuple[bool, str]:
    said = json.loads(run_lookout("away", "--json"))
    return said["away"], said["source"]


def run_lookout(*args: str) -> str:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "lookout", *args], capture_output=True,
                          text=True, timeout=60, check=True)  # fmt: skip
    return done.stdout


FLEET = '[fleet]\nmqtt = "mqtt://127.0.0.1:1"\nhost = "{host}"\nhub = "hosta"\n'


def test_a_host_that_is_not_the_hub_never_connects_yet_updates_its_own_alert(
    api: SlackApi, state_dir: Path
) -> None:
    """Issue 42: with [fleet] hub naming another host, B's buttons name B (the hub routes a
    press by it), B opens no Socket Mode connection (Slack would hand B's presses to any of
    them), and B still updates its own message to the outcome."""
    configure(api, extra=FLEET.format(host="hostb"))
    deciding = start(payload("PermissionRequest-Bash"))
    waiting(state_dir)
    record_hook("permission_request.py", payload("PermissionRequest-Bash"))
    wait_for(lambda: api.sent("chat.postMessage"), 10)
    ts = api.posted()[0]["ts"]
    assert all(value.startswith("hostb:") for _, value in api.buttons(ts))
    wait_for(lambda: not listener_gone(state_dir), 10, "the listener, to update")
    deciding.send_signal(signal.SIGTERM)  # answered at the terminal
    assert finish(deciding) == b""
    wait_for(lambda: not api.buttons(ts), 10, "the buttons gone")
    wait_for(lambda: listener_gone(state_dir), 15)
    assert api.opened == 0 and api.connections == 0


def test_an_old_message_is_not_acted_on_and_new_takes_an_agent(
    api: SlackApi, state_dir: Path
) -> None:
    """Slack's steering is Telegram's (lookout.surfaces.chat_steer): a message older than
    [steer] max_age_s (sent while no listener ran) is said not sent; `!new --agent` and `!new`
    alone work as Telegram's /new."""
    configure(api, extra="[steer]\nenabled = true\nmax_age_s = 60")
    record_hook("stop.py", {"session_id": SID, "cwd": "/w/api", "hook_event_name": "Stop"})
    wait_for(lambda: api.sent("chat.postMessage"), 10, "the alert")
    alert = api.posted()[0]["ts"]
    wait_for(api.connected, 20, "a listener (steering on, an alert to reply to)")
    old = f"{time.time() - 3600:.6f}"
    api.reply("go on", OWNER, thread_ts=alert, ts=old)
    wait_for(lambda: api.thread(alert), 20, "the note")
    assert api.thread(alert) == ["not sent: this message is 60 minutes old; send it again"]
    asked = api.reply("!new --agent", OWNER)
    wait_for(lambda: api.thread(asked), 20)
    (text,) = api.thread(asked)
    assert text.startswith("!new --agent needs the agent's name\nReply to a session's alert")
    assert "!new --agent NAME PROJECT TEXT: with that agent" in text
    asked = api.reply("!new", OWNER)
    wait_for(lambda: api.thread(asked), 20)
    assert api.thread(asked)[0].startswith("no project directory matches [steer] projects")
    assert not [e for e in events(state_dir) if e.get("event") == "Steered"]
