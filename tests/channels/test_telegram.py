"""The Telegram channel's sending side (lookout.channels.telegram) against the Bot API double: plain
text, buttons, edits in place, and no token in any detail."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from lookout.channels import registry, telegram
from tests.telegram_api import BotApi

TOKEN = "123456:AAH-unit-token-secret"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[BotApi]:
    monkeypatch.setenv("TG", TOKEN)
    with BotApi(TOKEN, chats=(1001,)) as double:
        yield double


def channel(api_url: str, chat_id: int = 1001) -> dict[str, Any]:
    return {
        "type": "telegram",
        "token_env": "TG",
        "chat_id": chat_id,
        "allowed_user_ids": [],
        "api_url": api_url,
        "timeout_ms": 5000,
    }


def msg(**kw: Any) -> dict[str, Any]:
    return {"title": "demo · done", "body": "took 3s", "kind": "done", "values": {}, **kw}


def test_an_alert_is_plain_text_and_an_update_edits_it(api: BotApi) -> None:
    ch = channel(api.url)
    result, detail, ref = registry.send(ch, msg(), 5)
    assert (result, detail) == ("sent", f"sendMessage message_id {ref}")
    (sent,) = api.sent("sendMessage")
    assert sent == {"chat_id": 1001, "text": "demo · done\ntook 3s"}
    result, detail, _ = registry.send(ch, msg(title="demo · handled", update=True, ref=ref), 5)
    assert (result, detail) == ("sent", f"editMessageText {ref}")
    assert api.messages[(1001, int(str(ref)))]["text"] == "demo · handled\ntook 3s"


def test_buttons_carry_the_prefix_and_token_only(api: BotApi) -> None:
    buttons = [("Allow", "A" * 22), ("Deny", "B" * 22)]
    result, _, ref = registry.send(channel(api.url), msg(buttons=buttons), 5)
    assert result == "sent"
    assert api.buttons(1001, int(str(ref))) == [
        ("Allow", "lk1:" + "A" * 22),
        ("Deny", "lk1:" + "B" * 22),
    ]


def test_control_characters_are_shown_and_long_text_is_cut() -> None:
    text = telegram.text_of("t\x1b[2J", "a\nb\x07" + "x" * 5000, "Allowed")
    assert text.startswith("t\\x1b[2J\na\nb\\x07") and text.endswith("…\n\nAllowed")
    assert len(text) == telegram.TEXT_MAX
    # Telegram counts UTF-16 code units: an emoji is two, and the cut never splits one.
    wide = telegram.text_of("t", "😀" * 3000, "Allowed")
    assert wide.endswith("…\n\nAllowed") and telegram.units(wide) <= telegram.TEXT_MAX
    assert telegram.units(wide) >= telegram.TEXT_MAX - 1


@pytest.mark.parametrize("case", ["wrong-chat", "wrong-token", "unreachable", "no-token"])
def test_failures_say_why_without_the_token(
    api: BotApi, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ch = channel(api.url, chat_id=5 if case == "wrong-chat" else 1001)
    if case == "wrong-token":
        monkeypatch.setenv("TG", "999:other-token-value")
    if case == "unreachable":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        ch["api_url"] = f"http://127.0.0.1:{port}"
    if case == "no-token":
        monkeypatch.delenv("TG")
    result, detail, ref = registry.send(ch, msg(), 5)
    assert (result, ref) == ("failed", None)
    assert TOKEN not in detail and "other-token-value" not in detail
    expected = {
        "wrong-chat": "sendMessage: 400 Bad Request: chat not found",
        "wrong-token": "sendMessage: 401 Unauthorized",
        "no-token": "environment variable TG is not set",
    }
    if case in expected:
        assert detail == expected[case]
    else:
        assert detail.startswith("sendMessage: cannot connect: ")
