"""Telegram as a two-way channel (issue 25), through the real processes: the deciding hook waits,
the recording hook raises the alert, the detached sender sends it to a loopback double of the Bot
API (tests/telegram_api.py) and the detached poller takes presses by getUpdates long polling."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from lookout.remote import requests
from lookout.surfaces import telegram as poller
from tests.helpers import lock_free, payload, shape, wait_for, write_config
from tests.remote.test_decide import events, finish, record_hook, start, waiting
from tests.telegram_api import BotApi, channel_table

# A real broker, real sender/poller processes or a real hook sequence: the full suite, not --fast.
pytestmark = pytest.mark.real

TOKEN = "123456:AAH-test-token-for-the-double"
CHAT, OTHER_CHAT, OWNER, STRANGER = 1001, 2002, 42, 99


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[BotApi]:
    monkeypatch.setenv("LOOKOUT_TG_TOKEN", TOKEN)
    with BotApi(TOKEN, chats=(CHAT, OTHER_CHAT)) as double:
        yield double


def configure(api: BotApi, extra: str = "") -> None:
    # content "full": Allow needs all of the input in the message (issue 31)
    write_config(
        f"""
[remote]
enabled = true
wait_s = 60
{channel_table(api.url, CHAT, OWNER)}{extra}
[[rules]]
when = ["permission", "question", "done"]
channels = ["chat"]
"""
    )


def ask(
    api: BotApi, state_dir: Path, body: dict[str, Any] | None = None
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The deciding hook waits, the recording hook alerts: (hook process, request, message)."""
    body = body or payload("PermissionRequest-Bash")
    deciding = start(body)
    rec = waiting(state_dir)
    record_hook("permission_request.py", body)
    wait_for(lambda: api.sent("sendMessage"), 10)
    message = next(iter(api.messages.values()))
    return deciding, rec, message


def poller_gone(state_dir: Path) -> bool:
    return lock_free(state_dir / poller.LOCK)


def test_the_poller_never_holds_the_senders_lock(api: BotApi, state_dir: Path) -> None:
    configure(api)
    deciding, _rec, _message = ask(api, state_dir)
    wait_for(lambda: not poller_gone(state_dir), 5)
    # The sender is done and gone: later jobs must find sender.lock free, poller or not.
    wait_for(lambda: lock_free(state_dir / store.SENDER_LOCK), 10)
    assert not poller_gone(state_dir)
    deciding.send_signal(signal.SIGTERM)
    assert finish(deciding) == b""
    wait_for(lambda: poller_gone(state_dir), 10)


def last_edit(api: BotApi) -> dict[str, Any]:
    return api.sent("editMessageText")[-1]


def test_one_poller_per_state_dir(api: BotApi, state_dir: Path) -> None:
    configure(api)
    deciding, _rec, _message = ask(api, state_dir)
    wait_for(lambda: not poller_gone(state_dir), 5)
    started = time.monotonic()
    assert poller.main([str(state_dir)]) == 0  # a second one: the lock is held, it leaves
    assert time.monotonic() - started < poller.LONG_POLL_S
    poller.ensure_poller(str(state_dir))  # and one started now leaves as well
    deciding.send_signal(signal.SIGTERM)
    assert finish(deciding) == b""
    wait_for(lambda: poller_gone(state_dir), 10)
    assert not (state_dir / "errors.log").exists()  # no 409 from a second getUpdates


def test_allow_from_telegram_answers_that_request_and_edits_the_message(
    api: BotApi, state_dir: Path
) -> None:
    configure(api)
    deciding, rec, message = ask(api, state_dir)
    assert message["chat"]["id"] == CHAT
    assert message["text"] == (
        "demo · needs permission\nBash: touch t.txt\ndescription: mock-requested command"
    )
    buttons = api.buttons(CHAT, message["message_id"])
    assert [label for label, _ in buttons] == ["Allow", "Deny"]
    for _, data in buttons:  # opaque: never the nonce, within Telegram's 64 bytes
        assert rec["nonce"] not in data and len(data.encode()) <= 64

    query = api.press(message["message_id"], buttons[0][1], OWNER)
    out = json.loads(finish(deciding))
    assert out["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    wait_for(lambda: api.queries[query] is not None, 5)
    assert api.queries[query] == f"Allowed by Telegram user {OWNER}"
    wait_for(lambda: api.sent("editMessageText"), 5)
    edited = api.messages[(CHAT, message["message_id"])]
    assert edited["text"].endswith(f"\n\nAllowed by Telegram user {OWNER}")
    assert "reply_markup" not in edited  # the buttons are gone
    lines = state_dir / store.DELIVERIES
    wait_for(lambda: '"update":true' in lines.read_text(), 10)  # the rule's "handled" update
    update = [json.loads(x) for x in lines.read_text().splitlines() if '"update":true' in x]
    assert [(u["result"], u["detail"]) for u in update] == [
        ("skipped", "replaced by its request's outcome")
    ]
    assert api.messages[(CHAT, message["message_id"])]["text"].endswith(
        f"Allowed by Telegram user {OWNER}"
    )
    remote = [e["remote"] for e in events(state_dir) if e.get("event") == "RemoteDecision"]
    assert [(r["decision"], r["source"], r["by"]) for r in remote] == [
        ("allow", "telegram", f"Telegram user {OWNER}")
    ]
    wait_for(lambda: poller_gone(state_dir), 10)  # nothing pending: no poller


def test_presses_from_elsewhere_or_replayed_change_nothing(api: BotApi, state_dir: Path) -> None:
    configure(api)
    deciding, rec, message = ask(api, state_dir)
    mid = message["message_id"]
    (_, allow), (_, deny) = api.buttons(CHAT, mid)
    refused = [
        api.press(mid, allow, STRANGER),  # a user not in allowed_user_ids
        api.press(mid, allow, OWNER, chat_id=OTHER_CHAT),  # the same data, from another chat
        api.press(mid, "lk1:" + rec["nonce"][:22], OWNER),  # a guessed token
        api.press(mid, "not ours", OWNER),
    ]
    wait_for(lambda: all(api.queries[q] is not None for q in refused), 10)
    assert [api.queries[q] for q in refused] == [
        "Not answered: this bot takes answers only from its owner",
        "Not answered: this bot takes answers only from its owner",
        "Not answered: no such request",
        "Not answered: not a lookout button",
    ]
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    assert "reply_markup" in api.messages[(CHAT, mid)]

    api.press(mid, deny, OWNER)
    out = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert out == {"behavior": "deny", "message": f"Denied from lookout by Telegram user {OWNER}."}
    wait_for(lambda: poller_gone(state_dir), 10)
    # Replayed while nothing waits (no poller runs): the next request's poller takes them, and
    # they answer neither the old request nor the new one.
    replays = [api.press(mid, deny, OWNER), api.press(mid, allow, OWNER)]
    body = {**payload("PermissionRequest-Bash"), "session_id": "another-session"}
    again = start(body)
    fresh = waiting(state_dir)
    record_hook("permission_request.py", body)
    wait_for(lambda: all(api.queries[q] is not None for q in replays), 10)
    assert {api.queries[q] for q in replays} == {"Not answered: no such request"}
    old, new = (requests.load(str(state_dir), r["id"]) for r in (rec, fresh))
    assert old is not None and old["status"] == requests.DENIED
    assert new is not None and new["status"] == requests.PENDING
    again.send_signal(signal.SIGTERM)
    assert finish(again) == b""


def test_answered_in_the_terminal_edits_the_message_within_2s(api: BotApi, state_dir: Path) -> None:
    configure(api)
    deciding, _rec, message = ask(api, state_dir)
    wait_for(lambda: not poller_gone(state_dir), 5)
    started = time.monotonic()
    deciding.send_signal(signal.SIGTERM)  # "No" or Esc at the terminal's dialog
    assert finish(deciding) == b""
    wait_for(lambda: "reply_markup" not in api.messages[(CHAT, message["message_id"])], 2.0)
    assert time.monotonic() - started <= 2.0
    assert api.messages[(CHAT, message["message_id"])]["text"].endswith(
        "\n\nDenied in the terminal"
    )
    wait_for(lambda: poller_gone(state_dir), 10)


def test_a_question_gets_one_button_per_option(api: BotApi, state_dir: Path) -> None:
    configure(api)
    body = {
        **payload("PermissionRequest-Bash"),
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
    deciding, _rec, message = ask(api, state_dir, body)
    buttons = api.buttons(CHAT, message["message_id"])
    assert [label for label, _ in buttons] == ["Red", "Blue", "Deny"]
    api.press(message["message_id"], buttons[1][1], OWNER)
    decision = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert decision["updatedInput"]["answers"] == {"Which colour?": "Blue"}


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


def test_a_question_alert_sent_before_its_request_gets_the_buttons_when_it_comes(
    api: BotApi, state_dir: Path
) -> None:
    """PreToolUse raised the question's alert and its PermissionRequest came later (7 of 9
    questions had no buttons): the message gets its keyboard once the request is recorded."""
    configure(api)
    asked = {**payload("PreToolUse-Bash"), **QUESTION}
    record_hook("pre_tool_use.py", asked)
    wait_for(lambda: api.sent("sendMessage"), 10)
    (message,) = api.messages.values()
    # Sent once its wait for the request (answers.FIND_WAIT_S) was over: no buttons yet.
    assert "reply_markup" not in message
    body = {k: v for k, v in asked.items() if k != "tool_use_id"}
    deciding = start({**body, "hook_event_name": "PermissionRequest"})
    waiting(state_dir)
    key = (CHAT, message["message_id"])
    wait_for(lambda: "reply_markup" in api.messages[key], 10)
    buttons = api.buttons(*key)
    assert [label for label, _ in buttons] == ["Red", "Blue", "Deny"]
    assert len(api.sent("sendMessage")) == 1  # the same message, not a second alert
    api.press(message["message_id"], buttons[0][1], OWNER)
    decision = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert decision["updatedInput"]["answers"] == {"Which colour?": "Red"}
    wait_for(lambda: "reply_markup" not in api.messages[key], 5)
    assert api.messages[key]["text"].endswith("Allowed by Telegram user 42: Red")


def test_a_broken_channel_never_answers(api: BotApi, state_dir: Path) -> None:
    configure(api)
    deciding, rec, _message = ask(api, state_dir)
    api.down = True  # the Bot API fails from now on: getUpdates errors, nothing answers
    wait_for(lambda: len(api.sent("getUpdates")) >= 2, 10)
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    deciding.send_signal(signal.SIGTERM)
    assert finish(deciding) == b""
    assert not [e for e in events(state_dir) if e.get("event") == "RemoteDecision"]
    wait_for(lambda: poller_gone(state_dir), 10)


def test_without_its_token_the_channel_fails_and_nothing_waits_on_it(
    api: BotApi, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(api)
    monkeypatch.delenv("LOOKOUT_TG_TOKEN")
    body = payload("PermissionRequest-Bash")
    deciding = start(body)
    rec = waiting(state_dir)
    record_hook("permission_request.py", body)
    lines = state_dir / store.DELIVERIES
    wait_for(lambda: lines.exists() and "failed" in lines.read_text(), 10)
    (line,) = [json.loads(x) for x in lines.read_text().splitlines()]
    assert line["detail"] == "environment variable LOOKOUT_TG_TOKEN is not set"
    assert api.calls == []
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    deciding.send_signal(signal.SIGTERM)
    finish(deciding)


def test_a_plain_alert_is_masked_and_shows_control_characters_as_text(
    api: BotApi, state_dir: Path
) -> None:
    configure(api)
    body = {
        **payload("PermissionRequest-Bash"),
        "tool_input": {
            "command": "curl -H 'Authorization: Bearer sk-abcdef1234567890' \x1b]52;c;x\x07"
        },
    }
    record_hook("permission_request.py", body)  # no deciding hook: a plain alert
    wait_for(lambda: api.sent("sendMessage"), 10)
    (sent,) = api.sent("sendMessage")
    assert "sk-abcdef1234567890" not in sent["text"] and shape(19) in sent["text"]
    assert "\x1b" not in sent["text"] and "\\x1b" in sent["text"]
    assert "reply_markup" not in sent and "parse_mode" not in sent


class HostileApi(BotApi):
    """S6: an API (or whoever serves the api_url) that answers getUpdates at once with
    `self.reply` whatever the offset: the same update again and again, or garbage."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reply: object = None

    def m_getUpdates(self, p: dict[str, Any]) -> Any:
        if self.reply is not None:
            return self.reply
        return super().m_getUpdates(p)


def polls_from(api: BotApi, n: int, since: float) -> list[float]:
    """The time stamps of the first n getUpdates calls the API got at or after `since`."""
    wait_for(lambda: len([t for t, m, _ in api.calls if m == "getUpdates" and t >= since]) >= n, 60)
    return [t for t, m, _ in api.calls if m == "getUpdates" and t >= since][:n]


@pytest.mark.parametrize("reply", ["the same update", "junk updates", "not a list"])
def test_the_poller_backs_off_when_the_api_repeats_an_update_or_sends_garbage(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch, reply: str
) -> None:
    # The review's hostile API made the poller call getUpdates 1,947 times and
    # answerCallbackQuery 1,905 times in about 8 s.
    monkeypatch.setenv("LOOKOUT_TG_TOKEN", TOKEN)
    with HostileApi(TOKEN, chats=(CHAT,)) as api:
        configure(api)
        qid = "31337"
        api.queries[qid] = None
        press = {"id": qid, "from": {"id": STRANGER}, "data": "lk1:x",
                 "message": {"message_id": 1, "chat": {"id": CHAT}}}  # fmt: skip
        api.reply = {
            "the same update": [{"update_id": 7, "callback_query": press}],
            "junk updates": [{"update_id": "8"}, 5, {"callback_query": press}, {"update_id": 7}],
            "not a list": {"no": "list"},
        }[reply]
        since = time.monotonic()
        deciding, rec, message = ask(api, state_dir)
        stamps = polls_from(api, 5, since)
        gaps = [b - a for a, b in itertools.pairwise(stamps)]
        # From the first call with nothing new on, each waits twice as long as the one before
        # (0.5 s, 1 s, 2 s...): four calls take 3.5 s or more, not a few milliseconds.
        assert sum(gaps) >= 3.5, gaps
        acks = [p for p in api.sent("answerCallbackQuery") if p["callback_query_id"] == qid]
        assert len(acks) == (1 if reply == "the same update" else 0)  # one press, handled once
        now = requests.load(str(state_dir), rec["id"])
        assert now is not None and now["status"] == requests.PENDING
        # A well-behaved API again: the owner's press still answers.
        api.reply = None
        (_, _allow), (_, deny) = api.buttons(CHAT, message["message_id"])
        api.press(message["message_id"], deny, OWNER)
        out = json.loads(finish(deciding, timeout=60))["hookSpecificOutput"]["decision"]
        assert out["behavior"] == "deny"
        wait_for(lambda: poller_gone(state_dir), 60)


def refused_in_log(state_dir: Path) -> tuple[int, int]:
    """(refused presses the poller logged, lines it took), from ignored.log."""
    path = state_dir / "ignored.log"
    lines = (
        [x for x in path.read_text().splitlines() if " telegram poller: " in x]
        if path.exists()
        else []
    )
    n = 0
    for line in lines:
        text = line.split(" telegram poller: ", 1)[1]
        held = re.match(r"(\d+) press(?:es)? ignored in [\d.]+ s, the last: ", text)
        n += int(held.group(1)) if held else 1
    return n, len(lines)


def test_refused_presses_are_logged_at_most_once_a_second_with_a_count(
    api: BotApi, state_dir: Path
) -> None:
    """Issue 31 (review S9): a refused press is logged, a flood of them as a line a second with
    the count, so nothing is lost and the log does not grow with the flood. A stranger's press is
    no failure of lookout's: ignored.log, which doctor does not warn of, not errors.log."""
    configure(api)
    deciding, _rec, message = ask(api, state_dir)
    mid = message["message_id"]
    (_, allow), _deny = api.buttons(CHAT, mid)
    n = 300
    started = time.monotonic()
    queries = [api.press(mid, allow, STRANGER) for _ in range(n)]
    wait_for(lambda: all(api.queries[q] is not None for q in queries), 60, "every press acked")
    wait_for(lambda: refused_in_log(state_dir)[0] == n, 30, "every refused press counted")
    took = time.monotonic() - started
    _logged, lines = refused_in_log(state_dir)
    assert lines <= 2 + took, (lines, took)
    first = (state_dir / "ignored.log").read_text().splitlines()[0]
    assert first.endswith(
        f"telegram poller: channel chat: a press by user {STRANGER} in chat {CHAT}, not the owner:"
        " ignored"
    )
    assert not (state_dir / "errors.log").exists()
    deciding.send_signal(signal.SIGTERM)
    assert finish(deciding) == b""


def test_a_user_taken_out_of_allowed_user_ids_answers_nothing_from_then_on(
    api: BotApi, state_dir: Path
) -> None:
    """The poller lives as long as requests wait (and with [steer], for days): it reads the
    channel again, so revoking a user counts without restarting it."""
    configure(api)
    deciding, rec, message = ask(api, state_dir)
    mid = message["message_id"]
    (_, allow), _ = api.buttons(CHAT, mid)
    wait_for(lambda: not poller_gone(state_dir), 5)
    # The poller has read the channel: a stranger's press is refused as not the owner's.
    first = api.press(mid, "not ours", STRANGER)
    wait_for(lambda: api.queries[first] is not None, 10)
    assert api.queries[first] == "Not answered: this bot takes answers only from its owner"
    config = Path(os.environ["LOOKOUT_CONFIG"])
    config.write_text(config.read_text().replace(f"[{OWNER}]", f"[{STRANGER}]"))

    def read_again() -> bool:  # the stranger is now the owner: the same press gets further
        press = api.press(mid, "not ours", STRANGER)
        wait_for(lambda: api.queries[press] is not None, 10)
        return api.queries[press] == "Not answered: not a lookout button"

    wait_for(read_again, 30, "the poller to read the channel again")
    press = api.press(mid, allow, OWNER)
    wait_for(lambda: api.queries[press] is not None, 10)
    assert api.queries[press] == "Not answered: this bot takes answers only from its owner"
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    deciding.send_signal(signal.SIGTERM)
    assert finish(deciding) == b""


def test_codex_while_away_is_answered_by_its_buttons_and_present_gets_none(
    api: BotApi, state_dir: Path
) -> None:
    """Issue 41: a Codex request while away is the same alert with the same buttons as Claude
    Code's, and a press answers it in Codex's format; while present, no request is coming, so
    the alert goes out without buttons, and no request is recorded."""
    import subprocess
    import sys

    from tests.remote.test_decide import codex_env, codex_record, codex_request

    configure(api, "")
    subprocess.run([sys.executable, "-m", "lookout", "away", "on"], check=True, timeout=30)
    body = codex_request()
    deciding = start(body, codex_env())
    waiting(state_dir)
    codex_record(body)
    wait_for(lambda: api.sent("sendMessage"), 10)
    message = next(iter(api.messages.values()))
    assert (
        message["text"]
        == "app · needs permission\nBash: touch made_by_q1\ndescription: probe needs it"
    )
    buttons = api.buttons(CHAT, message["message_id"])
    assert [label for label, _ in buttons] == ["Allow", "Deny"]
    api.press(message["message_id"], buttons[0][1], OWNER)
    assert json.loads(finish(deciding)) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }
    wait_for(lambda: poller_gone(state_dir), 10)

    subprocess.run([sys.executable, "-m", "lookout", "away", "off"], check=True, timeout=30)
    other = codex_request(session_id="01a25152-ec0f-7933-9a3d-000000000002")
    assert finish(start(other, codex_env()), timeout=10) == b""  # present: at once, nothing
    codex_record(other)
    wait_for(lambda: len(api.sent("sendMessage")) == 2, 10)
    latest = api.sent("sendMessage")[-1]
    assert "reply_markup" not in latest
    assert not [
        r for r in requests.load_all(str(state_dir)) if r["session_id"] == other["session_id"]
    ]
