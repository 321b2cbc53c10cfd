"""The Slack channel's sending side (lookout.channels.slack) against the loopback double
(tests/slack_api.py): Block Kit messages, buttons whose value is the press token, updates in
place, the 3000-character section, its config keys, `channel add`,
check-config and doctor (the app token that cannot open a Socket Mode connection)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout.channels import registry, slack
from lookout.commands.main import main as cli_main
from lookout.config import files
from tests.commands.test_doctor import install, verdicts
from tests.helpers import in_process, write_config
from tests.slack_api import SlackApi

BOT, APP = "xoxb-unit-bot-secret", "xapp-unit-app-secret"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlackApi]:
    monkeypatch.setenv("SLACK_BOT", BOT)
    monkeypatch.setenv("SLACK_APP", APP)
    with SlackApi(BOT, APP, "C0LOOKOUT") as double:
        yield double


def channel(api_url: str, chan: str = "C0LOOKOUT") -> dict[str, Any]:
    return {
        "type": "slack",
        "bot_token_env": "SLACK_BOT",
        "app_token_env": "SLACK_APP",
        "channel": chan,
        "allowed_user_ids": ["U0OWNER"],
        "api_url": api_url,
        "timeout_ms": 5000,
        "content": "full",
    }


def msg(**kw: Any) -> dict[str, Any]:
    return {"title": "demo · done", "body": "took 3s", "kind": "done", "values": {}, **kw}


def test_an_alert_is_a_plain_text_section_and_an_update_replaces_it(api: SlackApi) -> None:
    ch = channel(api.url)
    result, detail, ref = registry.send(ch, msg(), 5)
    assert ref is not None and ref.startswith("C0LOOKOUT/")
    ts = ref.split("/", 1)[1]
    assert (result, detail) == ("sent", f"chat.postMessage ts {ts}")
    (sent,) = api.sent("chat.postMessage")
    assert sent["blocks"] == [
        {"type": "section", "text": {"type": "plain_text", "text": "demo · done\ntook 3s"}}
    ]
    result, detail, _ = registry.send(ch, msg(title="demo · handled", update=True, ref=ref), 5)
    assert (result, detail) == ("sent", f"chat.update {ts}")
    assert api.text(ts) == "demo · handled\ntook 3s"


def test_buttons_carry_the_token_as_their_value(api: SlackApi) -> None:
    buttons = [("Allow", "A" * 22), ("Deny", "B" * 22)]
    result, _, ref = registry.send(channel(api.url), msg(buttons=buttons), 5)
    assert result == "sent" and ref is not None
    ts = ref.split("/", 1)[1]
    assert api.buttons(ts) == [("Allow", "A" * 22), ("Deny", "B" * 22)]
    (sent,) = api.sent("chat.postMessage")
    styles = [b.get("style") for b in sent["blocks"][1]["elements"]]
    assert styles == ["primary", "danger"]


def test_control_characters_are_shown_and_long_text_is_cut_to_the_section() -> None:
    text = slack.section_text("t\x1b[2J", "a\nb\x07" + "x" * 5000, "Allowed")
    assert text.startswith("t\\x1b[2J\na\nb\\x07") and text.endswith("…\n\nAllowed")
    assert len(text) == slack.SECTION_MAX
    # The surface's limit is the section's: a body that fits shows all, one that does not, not.
    from lookout.surfaces import slack as surface

    assert surface.LIMITS.fits("title", ["x" * (slack.SECTION_MAX - 6)])
    assert not surface.LIMITS.fits("title", ["x" * (slack.SECTION_MAX - 5)])


@pytest.mark.parametrize("case", ["wrong-channel", "wrong-token", "unreachable", "no-token"])
def test_failures_say_why_without_the_token(
    api: SlackApi, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ch = channel(api.url, chan="C0ELSEWHERE" if case == "wrong-channel" else "C0LOOKOUT")
    if case == "wrong-token":
        monkeypatch.setenv("SLACK_BOT", "xoxb-other-token-value")
    if case == "unreachable":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        ch["api_url"] = f"http://127.0.0.1:{port}/api/"
    if case == "no-token":
        monkeypatch.delenv("SLACK_BOT")
    result, detail, ref = registry.send(ch, msg(), 5)
    assert (result, ref) == ("failed", None)
    assert BOT not in detail and "other-token-value" not in detail
    expected = {
        "wrong-channel": "chat.postMessage: channel_not_found",
        "wrong-token": "chat.postMessage: invalid_auth",
        "no-token": "environment variable SLACK_BOT is not set",
        "unreachable": "chat.postMessage: cannot connect: URLError",
    }
    assert detail == expected[case]


def config(api_url: str, users: str = '["U0OWNER"]') -> str:
    return (
        f'[channels.team]\ntype = "slack"\nbot_token_env = "SLACK_BOT"\napp_token_env = "SLACK_APP"'
        f'\nchannel = "C0LOOKOUT"\nallowed_user_ids = {users}\napi_url = "{api_url}"\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["team"]\n[remote]\nenabled = true\n'
    )


def test_config_keys_are_checked() -> None:
    write_config(
        '[channels.team]\ntype = "slack"\nbot_token_env = 5\nallowed_user_ids = [7]\n'
        'api_url = "ftp://x"\n'
    )
    ran = in_process(cli_main, ["check-config"])
    assert ran.returncode == 1
    for problem in (
        "missing key 'app_token_env' (the environment variable holding the app token, xapp-)",
        "missing key 'channel' (the channel the bot writes to, e.g. C0123456789)",
        "allowed_user_ids: expected a list of Slack user ids, got [7]",
        "api_url: expected an http(s) URL",
    ):
        assert problem in ran.stdout + ran.stderr, problem


def test_channel_add_writes_the_table_without_tokens(
    api: SlackApi, isolated_env: Path
) -> None:
    ran = in_process(
        cli_main,
        ["channel", "add", "team", "--type", "slack", "--bot-token-env", "SLACK_BOT",
         "--app-token-env", "SLACK_APP", "--channel", "C0LOOKOUT", "--allowed-user", "U0OWNER",
         "--url", api.url],
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    cfg = files.load(None)["channels"]["team"]
    assert (cfg["type"], cfg["allowed_user_ids"], cfg["api_url"]) == (
        "slack",
        ["U0OWNER"],
        api.url,
    )
    text = Path(files.paths.config_path()).read_text()
    assert BOT not in text and APP not in text


def test_check_config_says_when_nobody_can_answer(api: SlackApi) -> None:
    write_config(config(api.url, users="[]"))
    ran = in_process(cli_main, ["check-config"])
    assert "channels.team.allowed_user_ids is empty: nobody's press or reply answers" in (
        ran.stdout + ran.stderr
    )


def test_doctor_says_when_the_app_token_cannot_open_a_connection(
    api: SlackApi, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    install(capsys)
    write_config(config(api.url))
    cli_main(["doctor", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert verdicts(doc, "channel team") == [("ok", "slack: Socket Mode connection opens")]
    monkeypatch.setenv("SLACK_APP", "xapp-revoked")
    cli_main(["doctor", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert verdicts(doc, "channel team") == [
        ("warn", "slack: the app token cannot open a connection: apps.connections.open:"
         " invalid_auth")
    ]  # fmt: skip
