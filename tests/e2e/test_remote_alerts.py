"""Answered from the alert itself (issue 25), with the real client: Claude Code interactive in
tmux shows its permission dialog; the desktop popup's Allow (real notification daemon, clicked
with xdotool on a private Xvfb screen) or a Telegram button (a loopback double of the Bot API)
answers it, and the terminal's dialog closes. Answered in the terminal first, the Telegram
message loses its buttons within 2 s and says "Allowed in the terminal"."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.receivers import NotificationBus, require
from tests.telegram_api import BotApi, channel_table

from .harness import ClaudePane, Sandbox, wait_for
from .test_remote_answer import COMMAND, enable_remote, pending

pytestmark = pytest.mark.e2e

TOKEN = "123456:AAH-e2e-token"
CHAT, OWNER = 1001, 42
DIALOG = "Do you want to proceed?"


@pytest.fixture
def api() -> Iterator[BotApi]:
    with BotApi(TOKEN, chats=(CHAT,)) as double:
        yield double


def telegram_sandbox(sandbox: Sandbox, api: BotApi) -> dict[str, str]:
    require("tmux")
    sandbox.trust_project(idle_ms=2000)
    enable_remote(
        sandbox,
        wait_s=120,
        extra=f"""
{channel_table(api.url, CHAT, OWNER)}[[rules]]
when = ["permission"]
channels = ["chat"]
""",
    )
    return sandbox.env(LOOKOUT_TG_TOKEN=TOKEN)


def diagnose(sandbox: Sandbox, api: BotApi) -> str:
    """What the state directory and the double saw, for a failure message."""
    state = sandbox.state_dir
    parts = [f"calls: {[(m, p) for _, m, p in api.calls if m != 'getUpdates']}"]
    parts.append(f"getUpdates calls: {len(api.sent('getUpdates'))}")
    for name in ("errors.log", "deliveries.jsonl", "telegram-messages.json"):
        path = state / name
        parts.append(f"{name}: {path.read_text()[-3000:] if path.exists() else None}")
    for path in sorted((state / "requests").glob("*.json")):
        rec = json.loads(path.read_text())
        said = (rec["status"], rec.get("answered"), rec.get("resolved_ms"), rec["pid"])
        parts.append(f"{path.name}: {said}")
    for path in sorted((state / "sessions").glob("*.json")):
        main = json.loads(path.read_text()).get("main") or {}
        parts.append(f"{path.name}: main answered {main.get('answered')}")
    events = state / "events.jsonl"
    for line in events.read_text().splitlines() if events.exists() else ():
        e = json.loads(line)
        said = (e.get(k) for k in ("ts", "event", "tool_name", "outcome", "source", "late"))
        parts.append("  " + " ".join(str(x) for x in said if x))
    return "\n".join(parts)


def test_allow_on_the_desktop_popup_closes_the_dialog(sandbox: Sandbox) -> None:
    require("tmux", *NotificationBus.BINARIES, *NotificationBus.DISPLAY_BINARIES, "stdbuf")
    sandbox.trust_project(idle_ms=2000)
    enable_remote(
        sandbox,
        wait_s=120,
        extra='[channels.desktop]\ntype = "desktop"\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["desktop"]\n',
    )
    with NotificationBus(display=True) as bus:
        env = sandbox.env(DBUS_SESSION_BUS_ADDRESS=bus.address)
        with ClaudePane(sandbox, "--permission-mode", "manual", env=env) as pane:
            session = pane.ready()
            pane.type(f"[[bash: {COMMAND}]]")
            pane.wait_screen(DIALOG)
            rec = pending(sandbox)
            wait_for(lambda: any("allow" in c["actions"] for c in bus.calls), 20, "the alert")
            alert = next(c for c in bus.calls if "allow" in c["actions"])
            assert alert["actions"] == ["default", "Focus", "allow", "Allow", "deny", "Deny"]
            bus.click_alert(at=NotificationBus.ALLOW_AT)
            clicked = time.monotonic()
            wait_for(lambda: DIALOG not in pane.screen(), 10, "the dialog to go")
            gone = time.monotonic() - clicked
            wait_for(lambda: (sandbox.project / "made-remotely").exists(), 10, "the tool to run")
            row = sandbox.wait_event(session, "RemoteDecision")
            assert (row["remote"]["decision"], row["remote"]["source"]) == ("allow", "desktop")
            assert row["remote"]["request_id"] == rec["id"]
            wait_for(
                lambda: any(c["body"] == "Allowed by the desktop alert" for c in bus.calls),
                5,
                "the popup replaced by the outcome",
            )
            print(f"desktop: click -> dialog gone in {gone:.2f} s")
    sandbox.assert_no_errors()


def test_allow_from_telegram_closes_the_dialog(sandbox: Sandbox, api: BotApi) -> None:
    env = telegram_sandbox(sandbox, api)
    with ClaudePane(sandbox, "--permission-mode", "manual", env=env) as pane:
        session = pane.ready()
        pane.type(f"[[bash: {COMMAND}]]")
        pane.wait_screen(DIALOG)
        rec = pending(sandbox)
        wait_for(lambda: api.sent("sendMessage"), 20, "the Telegram message")
        (message,) = api.messages.values()
        (allow, _deny) = api.buttons(CHAT, message["message_id"])
        assert allow[0] == "Allow" and rec["nonce"] not in allow[1]
        api.press(message["message_id"], allow[1], OWNER)
        pressed = time.monotonic()
        wait_for(lambda: DIALOG not in pane.screen(), 10, "the dialog to go")
        gone = time.monotonic() - pressed
        wait_for(lambda: (sandbox.project / "made-remotely").exists(), 10, "the tool to run")
        row = sandbox.wait_event(session, "RemoteDecision")
        assert (row["remote"]["decision"], row["remote"]["source"]) == ("allow", "telegram")
        wait_for(
            lambda: "reply_markup" not in api.messages[(CHAT, message["message_id"])], 5, "edit"
        )
        print(f"telegram: press -> dialog gone in {gone:.2f} s")
    sandbox.assert_no_errors()


def test_answered_in_the_terminal_the_telegram_buttons_go_within_2s(
    sandbox: Sandbox, api: BotApi
) -> None:
    env = telegram_sandbox(sandbox, api)
    with ClaudePane(sandbox, "--permission-mode", "manual", env=env) as pane:
        pane.ready()
        pane.type(f"[[bash: {COMMAND}]]")
        pane.wait_screen(DIALOG)
        wait_for(lambda: api.sent("sendMessage"), 20, "the Telegram message")
        (message,) = api.messages.values()
        key = (CHAT, message["message_id"])
        assert "reply_markup" in api.messages[key]
        # "1. Yes" in the terminal. The client drops a key that comes while the dialog is still
        # settling (seen here about one run in three): press again until the dialog goes.
        for _ in range(5):
            pane.keys("Enter")
            try:
                wait_for(lambda: DIALOG not in pane.screen(), 2, "the dialog to go")
                break
            except AssertionError:
                continue
        assert DIALOG not in pane.screen(), pane.screen()
        answered = time.monotonic()
        try:
            wait_for(lambda: "reply_markup" not in api.messages[key], 10, "the buttons to go")
        except AssertionError:
            raise AssertionError(diagnose(sandbox, api) + "\n" + pane.screen()) from None
        took = time.monotonic() - answered
        said = api.messages[key]["text"]
        assert said.endswith("\n\nAllowed in the terminal"), diagnose(sandbox, api) + "\n" + said
        wait_for(lambda: (sandbox.project / "made-remotely").exists(), 10, "the tool to run")
        print(f"telegram: terminal answer -> buttons gone in {took:.2f} s")
        assert took <= 2.0
    sandbox.assert_no_errors()


# issue 31: a two-line command, as the review and the new-user run sent it, then a short one.
MULTILINE = '[[tool:Bash:{"command":"echo safe\\ntouch HIDDEN.txt","description":"print safe"}]]'


def test_a_multi_line_command_gets_no_allow_on_the_popup_nor_on_telegram(
    sandbox: Sandbox, api: BotApi
) -> None:
    """The popup and the Telegram message show both lines, and only Deny; a real click on the
    popup's Deny denies it (HIDDEN.txt is never made). The next, one-line command gets Allow on
    both, and a real click on the popup's Allow runs it."""
    require("tmux", *NotificationBus.BINARIES, *NotificationBus.DISPLAY_BINARIES, "stdbuf")
    telegram_sandbox(sandbox, api)
    config = sandbox.config.read_text().replace(
        '[[rules]]\nwhen = ["permission"]\nchannels = ["chat"]',
        '[channels.desktop]\ntype = "desktop"\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["chat", "desktop"]',
    )
    sandbox.config.write_text(config)
    with NotificationBus(display=True) as bus:
        env = sandbox.env(DBUS_SESSION_BUS_ADDRESS=bus.address, LOOKOUT_TG_TOKEN=TOKEN)
        with ClaudePane(sandbox, "--permission-mode", "manual", env=env) as pane:
            session = pane.ready()
            pane.type(f"{MULTILINE} [[bash: {COMMAND}]]")
            pane.wait_screen(DIALOG)
            rec = pending(sandbox)
            assert rec["tool_input"]["command"] == "echo safe\ntouch HIDDEN.txt"

            def alert_for(key: str) -> dict[str, Any] | None:
                return next((c for c in bus.calls if key in c["actions"]), None)

            alert = wait_for(lambda: alert_for("deny"), 20, "the popup")
            assert alert["actions"] == ["default", "Focus", "deny", "Deny"]  # no Allow
            assert "echo safe\ntouch HIDDEN.txt" in alert["body"]
            assert f"lookout answer {rec['id']}" in alert["body"]
            wait_for(lambda: api.sent("sendMessage"), 20, "the Telegram message")
            (message,) = api.messages.values()
            assert [b for b, _ in api.buttons(CHAT, message["message_id"])] == ["Deny"]
            assert "Bash: echo safe\ntouch HIDDEN.txt\n" in message["text"]

            bus.click_alert(at=NotificationBus.button_at(alert["actions"], "deny"))
            row = sandbox.wait_event(session, "RemoteDecision")
            assert (row["remote"]["decision"], row["remote"]["source"]) == ("deny", "desktop")
            assert row["remote"]["request_id"] == rec["id"]

            wait_for(
                lambda: any(c["body"] == "Denied by the desktop alert" for c in bus.calls),
                10,
                "the popup replaced by the outcome",
            )  # before the next popup: the daemon stacks them in one window

            # The one-line command: Allow on the popup and on Telegram.
            second = wait_for(lambda: alert_for("allow"), 30, "the second popup")
            assert second["actions"] == ["default", "Focus", "allow", "Allow", "deny", "Deny"]
            assert COMMAND in second["body"]
            wait_for(lambda: len(api.messages) == 2, 20, "the second Telegram message")
            latest = max(api.messages.values(), key=lambda m: m["message_id"])
            assert [b for b, _ in api.buttons(CHAT, latest["message_id"])] == ["Allow", "Deny"]
            bus.click_alert(at=NotificationBus.button_at(second["actions"], "allow"))
            try:
                wait_for(lambda: (sandbox.project / "made-remotely").exists(), 20, "the tool")
            except AssertionError:
                raise AssertionError(
                    f"{bus.signals}\n{[(c['replaces_id'], c['actions']) for c in bus.calls]}\n"
                    + diagnose(sandbox, api)
                ) from None
            assert not (sandbox.project / "HIDDEN.txt").exists()
            row = sandbox.wait_event(session, "RemoteDecision", count=2)
            assert (row["remote"]["decision"], row["remote"]["source"]) == ("allow", "desktop")
    sandbox.assert_no_errors()
