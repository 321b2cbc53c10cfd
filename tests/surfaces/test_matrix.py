"""Matrix as a two-way channel (issue 40), through the real processes and a REAL homeserver: the
deciding hook waits, the recording hook raises the alert, the detached sender sends it to
Synapse (tests/synapse.py: installed once from PyPI into its own venv, run on loopback) and the
detached listener takes reactions and replies by /sync long polling."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from lookout.remote import requests
from lookout.surfaces import matrix as listener
from tests.helpers import lock_free, payload, wait_for, write_config
from tests.remote.test_decide import events, finish, record_hook, start, waiting
from tests.surfaces.test_slack import away_now
from tests.synapse import Accounts as Hs

pytestmark = pytest.mark.real

ENV = "LOOKOUT_MX_TOKEN"


@pytest.fixture
def room(hs: Hs, monkeypatch: pytest.MonkeyPatch, state_dir: Path) -> Iterator[str]:
    """A fresh room of the bot's, the owner and a stranger in it; the bot's token set."""
    monkeypatch.setenv(ENV, hs.bot.token)
    room_id = hs.bot.create_room(hs.owner, hs.stranger)
    yield room_id
    write_config("# nothing: the listener leaves\n")
    wait_for(lambda: lock_free(state_dir / listener.LOCK), 30, "the listener gone")


def configure(hs: Hs, room_id: str, extra: str = "", top: str = "") -> None:
    write_config(
        f"""{top}
[remote]
enabled = true
wait_s = 60
[channels.room]
type = "matrix"
homeserver = "{hs.synapse.url}"
user_id = "{hs.bot.user_id}"
access_token_env = "{ENV}"
room_id = "{room_id}"
allowed_user_ids = ["{hs.owner.user_id}"]
content = "full"
{extra}
[[rules]]
when = ["permission", "question", "done"]
channels = ["room"]
"""
    )


def bot_messages(hs: Hs, room_id: str) -> list[dict[str, Any]]:
    """The bot's own messages (not edits) in the room, oldest first."""
    return [
        e
        for e in hs.owner.messages(room_id)
        if e["sender"] == hs.bot.user_id
        and e["type"] == "m.room.message"
        and "m.new_content" not in e["content"]
    ]


def replies_to(hs: Hs, room_id: str, event_id: str) -> list[str]:
    """The texts of the bot's replies to event `event_id`, oldest first."""
    return [
        e["content"]["body"]
        for e in hs.owner.messages(room_id)
        if e["sender"] == hs.bot.user_id
        and (e["content"].get("m.relates_to") or {}).get("m.in_reply_to", {}).get("event_id")
        == event_id
    ]


def edits(hs: Hs, room_id: str, event_id: str) -> list[str]:
    """The texts event `event_id` was edited to (m.replace), oldest first."""
    return [
        e["content"]["m.new_content"]["body"]
        for e in hs.owner.messages(room_id)
        if e["type"] == "m.room.message"
        and (e["content"].get("m.relates_to") or {}).get("rel_type") == "m.replace"
        and e["content"]["m.relates_to"].get("event_id") == event_id
    ]


def ask(
    hs: Hs, room_id: str, state_dir: Path, body: dict[str, Any] | None = None
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The deciding hook waits, the recording hook alerts: (hook process, request, message)."""
    body = body or payload("PermissionRequest-Bash")
    deciding = start(body)
    rec = waiting(state_dir)
    record_hook("permission_request.py", body)
    wait_for(lambda: bot_messages(hs, room_id), 15, "the alert")
    return deciding, rec, bot_messages(hs, room_id)[0]


def ignored(state: Path) -> list[str]:
    path = state / "errors.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [x.split(" matrix listener: ", 1)[1] for x in lines if " matrix listener: " in x]


def test_an_owners_allow_reaction_answers_once_and_edits_the_message(
    hs: Hs, room: str, state_dir: Path
) -> None:
    configure(hs, room)
    deciding, rec, message = ask(hs, room, state_dir)
    assert message["content"]["body"] == (
        "demo · needs permission\nBash: touch t.txt\ndescription: mock-requested command\n\n"
        "Answer: react ✅ to allow, ❌ to deny."
    )
    assert rec["nonce"] not in json.dumps(message)
    hs.owner.react(room, message["event_id"], "✅")
    out = json.loads(finish(deciding))
    assert out["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    by = f"Matrix user {hs.owner.user_id}"
    wait_for(lambda: edits(hs, room, message["event_id"]), 10, "the outcome's edit")
    (edited,) = edits(hs, room, message["event_id"])
    assert edited == (
        "demo · needs permission\nBash: touch t.txt\ndescription: mock-requested command\n\n"
        f"Allowed by {by}"
    )  # the answer's lines are gone
    remote = [e["remote"] for e in events(state_dir) if e.get("event") == "RemoteDecision"]
    assert [(r["decision"], r["source"], r["by"]) for r in remote] == [("allow", "matrix", by)]
    # A second reaction (replayed, or the other key) answers nothing more.
    hs.owner.react(room, message["event_id"], "❌")
    wait_for(lambda: lock_free(state_dir / listener.LOCK), 20, "the listener gone")
    assert len([e for e in events(state_dir) if e.get("event") == "RemoteDecision"]) == 1


def test_strangers_other_events_and_garbage_answer_nothing(
    hs: Hs, room: str, state_dir: Path
) -> None:
    configure(hs, room)
    deciding, rec, message = ask(hs, room, state_dir)
    eid = message["event_id"]
    hs.stranger.react(room, eid, "✅")  # in the room, not in allowed_user_ids
    other = hs.owner.say(room, "some other message")
    hs.owner.react(room, other, "✅")  # an event that is no request's
    hs.owner.react(room, eid, "👍")  # a key that answers nothing
    hs.owner.reply(room, eid, "1")  # no option 1 here
    image = {
        "msgtype": "m.image",
        "body": "x.png",
        "m.relates_to": {"m.in_reply_to": {"event_id": eid}},
    }
    hs.owner.send(room, image)  # not text
    hs.stranger.reply(room, eid, "allow")
    wait_for(lambda: len(ignored(state_dir)) >= 4, 20, "the ignored events logged")
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    logged = "\n".join(ignored(state_dir))
    assert f"by user {hs.stranger.user_id}, not the owner" in logged
    assert rec["nonce"] not in logged
    hs.owner.react(room, eid, "❌")
    out = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert out["behavior"] == "deny"
    wait_for(lambda: edits(hs, room, eid), 10, "the outcome's edit")
    assert edits(hs, room, eid)[-1].endswith(f"\n\nDenied by Matrix user {hs.owner.user_id}")


def test_a_two_line_command_offers_no_allow_and_its_allow_reaction_answers_nothing(
    hs: Hs, room: str, state_dir: Path
) -> None:
    configure(hs, room)
    body = payload("PermissionRequest-Bash")
    body = {**body, "tool_input": {**body["tool_input"], "command": "echo one\nrm -rf x"}}  # type: ignore[dict-item]
    deciding, rec, message = ask(hs, room, state_dir, body)
    text = message["content"]["body"]
    assert "✅" not in text and text.endswith("Answer: react ❌ to deny.")
    assert "No Allow here: a value there spans several lines." in text
    hs.owner.react(room, message["event_id"], "✅")
    wait_for(lambda: any("answers nothing here" in x for x in ignored(state_dir)), 20)
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    deciding.send_signal(signal.SIGTERM)  # answered in the terminal: the message says so
    assert finish(deciding) == b""
    wait_for(lambda: edits(hs, room, message["event_id"]), 10, "the outcome's edit")
    assert edits(hs, room, message["event_id"])[-1].endswith("\n\nDenied in the terminal")


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


def test_a_question_is_answered_by_a_numbered_reply(hs: Hs, room: str, state_dir: Path) -> None:
    configure(hs, room)
    deciding, _rec, message = ask(
        hs, room, state_dir, {**payload("PermissionRequest-Bash"), **QUESTION}
    )
    assert message["content"]["body"].endswith(
        "Answer: reply to this message with an option's number:\n1: Red\n2: Blue\n"
        "or react ❌ to deny."
    )
    # A reply with the quoted fallback some clients put before the text.
    fallback = f"> <{hs.bot.user_id}> demo · needs permission\n\n2"
    hs.owner.reply(room, message["event_id"], fallback)
    decision = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert decision["updatedInput"]["answers"] == {"Which colour?": "Blue"}
    wait_for(lambda: edits(hs, room, message["event_id"]), 10, "the outcome's edit")
    assert edits(hs, room, message["event_id"])[-1].endswith(
        f"Allowed by Matrix user {hs.owner.user_id}: Blue"
    )


def test_a_question_alert_sent_before_its_request_gets_its_answers_when_it_comes(
    hs: Hs, room: str, state_dir: Path
) -> None:
    configure(hs, room)
    asked = {**payload("PreToolUse-Bash"), **QUESTION}
    record_hook("pre_tool_use.py", asked)
    wait_for(lambda: bot_messages(hs, room), 15, "the alert")
    (message,) = bot_messages(hs, room)
    assert "Answer:" not in message["content"]["body"]
    body = {k: v for k, v in asked.items() if k != "tool_use_id"}
    deciding = start({**body, "hook_event_name": "PermissionRequest"})
    waiting(state_dir)
    wait_for(lambda: any("Answer:" in t for t in edits(hs, room, message["event_id"])), 15)
    assert len(bot_messages(hs, room)) == 1  # the same message, edited
    hs.owner.reply(room, message["event_id"], "1")
    decision = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert decision["updatedInput"]["answers"] == {"Which colour?": "Red"}


def test_an_encrypted_room_is_refused_with_a_clear_error(
    hs: Hs, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    monkeypatch.setenv(ENV, hs.bot.token)
    secret_room = hs.bot.create_room(hs.owner, encrypted=True)
    configure(hs, secret_room)
    deciding, rec, _ = (start(payload("PermissionRequest-Bash")), waiting(state_dir), None)
    record_hook("permission_request.py", payload("PermissionRequest-Bash"))
    lines = state_dir / store.DELIVERIES
    wait_for(lambda: lines.exists() and '"failed"' in lines.read_text(), 15, "the failed send")
    assert "is end-to-end encrypted" in lines.read_text()
    assert not bot_messages(hs, secret_room)
    deciding.send_signal(signal.SIGTERM)
    assert finish(deciding) == b""
    assert rec["status"] == requests.PENDING


def test_steering_commands_are_replied_in_the_room(hs: Hs, room: str, state_dir: Path) -> None:
    configure(hs, room, top="[steer]\nenabled = true\n")
    record_hook("stop.py", {"session_id": "aaaa1111-0000-4000-8000-000000000001",
                            "cwd": "/w/api", "hook_event_name": "Stop"})  # fmt: skip
    wait_for(lambda: bot_messages(hs, room), 15, "the alert")
    wait_for(lambda: not lock_free(state_dir / listener.LOCK), 10, "a listener (steering is on)")
    asked = hs.owner.say(room, "!sessions")

    def replies() -> list[str]:
        return replies_to(hs, room, asked)

    wait_for(replies, 20, "the reply to !sessions")
    assert replies() == ["1 session:\napi (aaaa1111): idle, claude"]
    hs.stranger.say(room, "!sessions")  # not the owner: nothing
    asked = hs.owner.say(room, "!new /etc fix it")
    wait_for(replies, 20, "the reply to !new")
    assert replies()[0].startswith("error: /etc is not one of the projects [steer] allows (")
    # Issue 41: !away [DURATION] and !back turn the away switch, recorded with their source.
    asked = hs.owner.say(room, "!away 2h")
    wait_for(replies, 20, "the reply to !away")
    assert replies()[0].startswith("away: on until ")
    assert away_now() == (True, "matrix")
    asked = hs.owner.say(room, "!back")
    wait_for(replies, 20, "the reply to !back")
    assert away_now() == (False, "matrix")


def test_with_a_hub_each_request_and_command_is_answered_once_in_the_shared_room(
    hs: Hs, room: str, state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42: two hosts' listeners read one room. `!sessions` is the hub's alone to answer;
    a reaction on hostb's alert is hostb's (the hub, which knows its own event ids, leaves it)."""
    import os

    fleet = '[fleet]\nmqtt = "mqtt://127.0.0.1:1"\nhost = "{host}"\nhub = "hosta"\n'
    fleet += "[steer]\nenabled = true\n"
    configure(hs, room, top=fleet.format(host="hosta"))
    record_hook("stop.py", {"session_id": "aaaa1111-0000-4000-8000-000000000001",
                            "cwd": "/w/api", "hook_event_name": "Stop"})  # fmt: skip
    wait_for(lambda: bot_messages(hs, room), 15, "the hub's alert")
    wait_for(lambda: not lock_free(state_dir / listener.LOCK), 10, "the hub's listener")
    b_state, b_config = tmp_path / "hostb-state", tmp_path / "hostb" / "config.toml"
    with monkeypatch.context() as m:  # hostb: its own state directory and config
        m.setenv("LOOKOUT_STATE_DIR", str(b_state))
        m.setenv("LOOKOUT_CONFIG", str(b_config))
        configure(hs, room, top=fleet.format(host="hostb"))
        body = payload("PermissionRequest-Bash")
        deciding = start(body, env=dict(os.environ))
        waiting(b_state)
        record_hook("permission_request.py", body)
    wait_for(lambda: len(bot_messages(hs, room)) == 2, 15, "hostb's alert")
    b_alert = bot_messages(hs, room)[1]
    assert b_alert["content"]["body"].startswith("hostb · ")
    wait_for(lambda: not lock_free(b_state / listener.LOCK), 10, "hostb's listener")
    asked = hs.owner.say(room, "!sessions")
    hs.owner.react(room, b_alert["event_id"], "✅")
    decision = json.loads(finish(deciding, timeout=30))["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "allow"}
    wait_for(lambda: edits(hs, room, b_alert["event_id"]), 10, "hostb's edit")
    # Each listener said what it left to the other (ignored, with why), after the fact.
    wait_for(lambda: any("the hub's to answer" in x for x in ignored(b_state)), 20, "hostb")
    wait_for(lambda: any("on no request" in x for x in ignored(state_dir)), 20, "the hub")

    def replies() -> list[str]:
        return replies_to(hs, room, asked)

    wait_for(replies, 20, "the hub's reply to !sessions")
    assert replies() == ["1 session:\napi (aaaa1111): idle, claude"]  # the hub's, once
    assert len(edits(hs, room, b_alert["event_id"])) == 1
    assert not any("the hub's to answer" in x for x in ignored(state_dir))
    with monkeypatch.context() as m:  # hostb's listener leaves too
        m.setenv("LOOKOUT_CONFIG", str(b_config))
        write_config("# nothing: the listener leaves\n")
    wait_for(lambda: lock_free(b_state / listener.LOCK), 30, "hostb's listener gone")
