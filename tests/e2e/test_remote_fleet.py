"""Issue 42, one bot for the fleet, through the real processes: a real Mosquitto with the shipped
ACL, three hosts (the hub, hostb, hostc) each with its own state directory, config and bridge,
and one Telegram bot (the Bot API double) or one Slack app (its Web API and Socket Mode double)
for all of them. hostb's request is answered by a press on hostb's alert, taken by the hub's
poller and forwarded to hostb's bridge; a reply to hostb's alert is typed into hostb's session's
pane (real tmux). Only the hub polls: at most one getUpdates at a time in the whole fleet."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from lookout.surfaces import telegram as poller
from tests.chat_fleet import (
    CHAT,
    HUB,
    OWNER,
    SLACK_APP,
    SLACK_BOT,
    SLACK_CHANNEL,
    SLACK_OWNER,
    B,
    C,
    ChatHost,
    CountingBot,
    Fleet,
    slack_channel,
    telegram_channel,
)
from tests.commands.test_main import deliver
from tests.helpers import payload, wait_for
from tests.receivers import require
from tests.remote.test_decide import finish, start
from tests.slack_api import SlackApi
from tests.steer.test_pane import SID, Panes

pytestmark = pytest.mark.e2e

RUNS = 5  # presses measured; the bound is on their p95, by the events' own stamps


@pytest.fixture
def bot() -> Iterator[CountingBot]:
    with CountingBot() as api:
        yield api


@pytest.fixture
def fleet(tmp_path: Path, bot: CountingBot) -> Iterator[Fleet]:
    require("mosquitto")
    f = Fleet(tmp_path, telegram_channel(bot.url))
    try:
        yield f
    finally:
        f.close()  # and waits for every poller, listener and sender to leave


def _events(state: Path, name: str) -> list[dict[str, Any]]:
    path = state / store.EVENTS
    lines = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
    return [e for e in lines if e.get("hook_event_name") == name or e.get("event") == name]


def _ms(stamp: str) -> float:
    """An event's `ts` (ISO 8601, UTC, in ms) in ms since the epoch."""
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000


def _alert(bot: CountingBot, before: int) -> dict[str, Any]:
    wait_for(lambda: len(bot.sent("sendMessage")) > before, 20, "the alert")
    mid = max(m for _, m in bot.messages)
    return bot.messages[(CHAT, mid)]


def _ask(b: ChatHost) -> subprocess.Popen[bytes]:
    """hostb is asked a permission: its deciding hook waits on the request (returned), its
    recording hook raises the alert."""
    body = payload("PermissionRequest-Bash")
    deciding = start(body, env=b.env)
    wait_for(lambda: list((b.state / "requests").glob("*.json")), 20, "the request")
    b.hook("permission_request", body)
    return deciding


def test_a_press_at_the_hub_answers_hostb_and_only_the_hub_polls(
    fleet: Fleet, bot: CountingBot
) -> None:
    b = fleet[B]
    fleet[C].bridge_ready()
    b.bridge_ready()
    fleet.start_poller(HUB)
    wait_for(lambda: bot.polling == 1, 20, "the hub's poller polling")
    took = []
    for n in range(RUNS):
        body = {**payload("PermissionRequest-Bash"), "session_id": f"bbbb{n:04d}-0000-4000-8000-0"}
        body["tool_input"] = {"command": f"touch t{n}.txt"}
        deciding = start(body, env=b.env)
        wait_for(lambda: list((b.state / "requests").glob("*.json")), 20, "the request")
        before = len(bot.sent("sendMessage"))
        b.hook("permission_request", body)
        message = _alert(bot, before)
        assert message["text"].startswith(f"{B} · ")
        data = dict(bot.buttons(CHAT, message["message_id"]))["Allow"]
        assert data.startswith(f"lk:{B}:") and len(data.encode()) <= 64
        query, pressed_ms = bot.pressed(message["message_id"], data)
        out = json.loads(finish(deciding, timeout=30))
        assert out["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
        decided = _events(b.state, "RemoteDecision")[-1]
        took.append(_ms(decided["ts"]) - pressed_ms)
        # The hub acknowledges the press with hostb's outcome; hostb edits its own message.
        wait_for(lambda q=query: bot.queries[q], 10, "the press acknowledged")
        assert (bot.queries[query] or "").startswith(f"Allowed by Telegram user {OWNER}")
        mid = message["message_id"]
        wait_for(lambda m=mid: "reply_markup" not in bot.messages[(CHAT, m)], 10, "the edit")
        assert f"\n\nAllowed by Telegram user {OWNER}" in bot.messages[(CHAT, mid)]["text"]
    took.sort()
    p95 = took[min(len(took) - 1, int(0.95 * len(took)))]
    assert p95 <= 1000, took
    # One poller in the whole fleet: hostb and hostc never polled, never two at once.
    assert bot.most_polling == 1
    for name in (B, C):
        assert not (fleet[name].state / store.TELEGRAM_WANTED).exists()
    assert (fleet[HUB].state / store.TELEGRAM_WANTED).exists()


def test_a_reply_at_the_hub_to_hostbs_alert_is_typed_into_its_pane(
    fleet: Fleet, bot: CountingBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require("tmux")
    f, b = fleet, fleet[B]
    b.bridge_ready()
    fleet.start_poller(HUB)
    for key, value in b.env.items():  # the stand-in agent's hooks report to hostb
        monkeypatch.setenv(key, value)
    with Panes() as panes:
        try:
            log = tmp_path / "got"
            panes.agent(log, "plain")  # its Stop hook raises hostb's alert from its pane
            alert = _alert(bot, 0)
            assert alert["text"].startswith(f"{B} · ")
            mid = alert["message_id"]
            channel = f.channel_name(B)
            wait_for(lambda: poller.alert_session(str(b.state), channel, mid), 10, "remembered")
            text = "make it so"
            asked = bot.message(text, OWNER, reply_to=mid)
            wait_for(lambda: bot.replies(asked), 30, "the hub's reply")
            (said,) = bot.replies(asked)
            wait_for(lambda: log.exists() and log.read_bytes().endswith(b"\r"), 10, "Enter")
            assert log.read_bytes() == text.encode() + b"\r"
            first, second = said.splitlines()
            assert first.startswith("api (dddd4444): typed into tmux pane ") and first.endswith(
                ", then Enter: typed (idle)"
            ), said
            assert second == f"text: {text}"
            (steered,) = _events(b.state, "Steered")
            assert (steered["source"], steered["session_id"]) == ("telegram", SID)
            # A turn runs: /stop as a reply to hostb's alert presses Esc in that pane.
            body = {"session_id": SID, "cwd": "/w/api", "hook_event_name": "PreToolUse",
                    "tool_name": "Bash", "tool_input": {"command": "sleep 30"}}  # fmt: skip
            deliver(b.state, body)
            asked = bot.message("/stop", OWNER, reply_to=mid)
            wait_for(lambda: bot.replies(asked), 30, "the hub's reply to /stop")
            assert "Escape pressed in tmux pane" in bot.replies(asked)[0]
        finally:
            panes.tmux("kill-server")
    assert bot.most_polling == 1


def test_a_press_of_hostbs_button_after_its_request_ended_changes_nothing(
    fleet: Fleet, bot: CountingBot
) -> None:
    b = fleet[B]
    b.bridge_ready()
    fleet.start_poller(HUB)
    deciding = _ask(b)
    message = _alert(bot, 0)
    data = dict(bot.buttons(CHAT, message["message_id"]))["Deny"]
    deciding.send_signal(signal.SIGTERM)  # answered at the terminal first
    assert finish(deciding) == b""
    mid = message["message_id"]
    wait_for(lambda: "reply_markup" not in bot.messages[(CHAT, mid)], 10, "hostb's edit")
    query, _ = bot.pressed(mid, data)
    wait_for(lambda: bot.queries[query], 15, "the press acknowledged")
    assert (bot.queries[query] or "").startswith("Not answered"), bot.queries[query]
    assert _events(b.state, "RemoteDecision") == []


@pytest.fixture
def slack_fleet(tmp_path: Path) -> Iterator[tuple[SlackApi, Fleet]]:
    """The fleet with one Slack app: hostb's bridge ready, the hub's listener connected."""
    require("mosquitto")
    with SlackApi(SLACK_BOT, SLACK_APP, SLACK_CHANNEL) as api:
        f = Fleet(tmp_path, slack_channel(api.url))
        try:
            f[B].bridge_ready()
            f.start_listener(HUB)
            wait_for(api.connected, 20, "the hub's Socket Mode connection")
            yield api, f
        finally:
            f.close()


def test_a_click_at_the_hub_answers_hostb_through_one_socket_mode_connection(
    slack_fleet: tuple[SlackApi, Fleet],
) -> None:
    """The same through Slack: one Socket Mode connection in the whole fleet (Slack would hand
    a click to any of an app's connections), the hub's; hostb updates its own message."""
    api, f = slack_fleet
    b = f[B]
    deciding = _ask(b)
    wait_for(lambda: api.sent("chat.postMessage"), 20, "hostb's alert")
    ts = api.posted()[-1]["ts"]
    value = dict(api.buttons(ts))["Allow"]
    assert value.startswith(f"{B}:")
    api.press(ts, value, SLACK_OWNER)
    out = json.loads(finish(deciding, timeout=30))
    assert out["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    wait_for(lambda: not api.buttons(ts), 10, "hostb's update")
    assert f"\n\nAllowed by Slack user {SLACK_OWNER}" in api.text(ts)
    assert api.opened == 1 and api.connections == 1  # the hub's, and no other


def test_a_thread_reply_at_the_hub_to_hostbs_slack_alert_is_typed_into_its_pane(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slack_fleet: tuple[SlackApi, Fleet]
) -> None:
    """Slack's event of a thread reply carries only the thread's ts: the hub fetches the parent
    (conversations.replies), reads its host from its title, and hostb's bridge types the text."""
    require("tmux")
    from lookout.surfaces import slack as listening

    api, f = slack_fleet
    b = f[B]
    for key, value in b.env.items():  # the stand-in agent's hooks report to hostb
        monkeypatch.setenv(key, value)
    with Panes() as panes:
        try:
            log = tmp_path / "got"
            panes.agent(log, "plain")  # its Stop hook raises hostb's alert
            wait_for(lambda: api.sent("chat.postMessage"), 20, "hostb's alert")
            alert = api.posted()[-1]
            ts, ref = alert["ts"], f"{SLACK_CHANNEL}/{alert['ts']}"
            assert str(alert["text"]).startswith(f"{B} · ")
            channel = f.channel_name(B)
            remembered = lambda: listening.alert_session(str(b.state), channel, ref)  # noqa: E731
            wait_for(remembered, 10, "remembered")
            text = "make it so"
            api.reply(text, SLACK_OWNER, thread_ts=ts)
            wait_for(lambda: api.thread(ts), 30, "the hub's answer in the thread")
            (said,) = api.thread(ts)
            wait_for(lambda: log.exists() and log.read_bytes().endswith(b"\r"), 10, "Enter")
            assert log.read_bytes() == text.encode() + b"\r"
            first, second = said.splitlines()
            assert first.startswith("api (dddd4444): typed into tmux pane "), said
            assert second == f"text: {text}"
            (steered,) = _events(b.state, "Steered")
            assert (steered["source"], steered["session_id"]) == ("slack", SID)
            assert api.sent("conversations.replies")  # the hub asked for the parent
            # The hub's own Socket Mode connection is the fleet's one.
            assert api.opened == 1 and api.connections == 1
        finally:
            panes.tmux("kill-server")


def test_a_press_forwarded_to_a_silent_host_does_not_hold_the_hubs_poller(
    fleet: Fleet, bot: CountingBot
) -> None:
    """hostb's bridge is not running: the hub waits up to 5 s for its answer to a press, on a
    worker thread; the poller meanwhile answers the owner's /sessions, and the press is
    acknowledged when the wait ends."""
    b = fleet[B]
    fleet.start_poller(HUB)
    wait_for(lambda: bot.polling == 1, 20, "the hub's poller polling")
    deciding = _ask(b)
    message = _alert(bot, 0)
    data = dict(bot.buttons(CHAT, message["message_id"]))["Allow"]
    query, _ = bot.pressed(message["message_id"], data)
    asked = bot.message("/sessions", OWNER)
    wait_for(lambda: bot.replies(asked), 30, "the hub's answer to /sessions")
    assert bot.queries[query] is None  # the press still waits for hostb: the poller went on
    wait_for(lambda: bot.queries[query], 30, "the press acknowledged")
    assert (bot.queries[query] or "").startswith("Not answered"), bot.queries[query]
    deciding.send_signal(signal.SIGTERM)
    assert finish(deciding) == b""
    assert _events(b.state, "RemoteDecision") == []
