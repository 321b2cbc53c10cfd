"""`lookout test [CHANNEL...]` and `lookout check-config`: exact output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lookout.commands.main import main
from tests.helpers import write_config
from tests.receivers import ntfy_receiver, webhook_receiver


def test_check_config_without_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["check-config", "--project", str(tmp_path)]) == 0
    assert capsys.readouterr().out == (
        "~/.config/lookout/config.toml: not found, using the built-in default (desktop alerts "
        "for attention, and for turns of 30 s or more)\n"
    )


def test_check_config_ok_with_project_file_and_warnings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NTFY_TOKEN", raising=False)
    write_config(
        '[channels.phone]\ntype = "ntfy"\nurl = "https://ntfy.sh/t"\n'
        'token_env = "NTFY_TOKEN"\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["phone"]\n'
    )
    project = tmp_path / "home" / "api"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "lookout.toml").write_text(
        '[[rules]]\nwhen = ["permission", "error"]\nchannels = ["phone"]\n'
    )
    assert main(["check-config", "--project", str(project)]) == 0
    assert capsys.readouterr().out == (
        "~/.config/lookout/config.toml: ok (1 channel(s), 1 rule(s))\n"
        "~/api/.claude/lookout.toml: ok (it narrows your config)\n"
        "warning: channels.phone.token_env: environment variable NTFY_TOKEN is not set\n"
    )


def test_check_config_says_an_untrusted_project_file_is_ignored_and_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project = tmp_path / "home" / "evil"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "lookout.toml").write_text(
        '[channels.x]\ntype = "command"\nargv = ["/bin/sh", "-c", "id"]\n'
        '[[rules]]\nwhen = ["session_start"]\nchannels = ["x"]\n'
    )
    assert main(["check-config", "--project", str(project)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "warning: ~/evil/.claude/lookout.toml: ignored: not trusted; it sets"
        ' channels.x.type = "command" (and 1 more)',
        "hint: lookout trust ~/evil shows what it adds and asks",
    ]


def test_check_config_errors_exit_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write_config(
        '[channels.phone]\ntype = "ntfy"\nurl = 5\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["phone"]\ncooldown_s = "1m"\n'
    )
    assert main(["check-config", "--project", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "error: ~/.config/lookout/config.toml: channels.phone.url: expected a string, got int\n"
        "error: ~/.config/lookout/config.toml: rules[0].cooldown_s: expected a number, "
        "got string\n"
    )


def test_test_sends_through_each_channel(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, state_dir: Path
) -> None:
    with webhook_receiver() as hook, ntfy_receiver(token="tk_right") as ntfy:
        write_config(
            f'[channels.team]\ntype = "webhook"\nurl = "{hook.url}/x"\n'
            'format = "slack"\n'
            f'[channels.phone]\ntype = "ntfy"\nurl = "{ntfy.url}/t"\n'
            'token = "tk_wrong"\n'
            '[channels.off]\ntype = "desktop"\nenabled = false\n'
        )
        assert main(["test", "--project", str(tmp_path / "demo")]) == 1
        assert hook.requests[0].json() == {
            "text": "*demo · lookout test*\nNotifications from lookout reach you through 'team'."
        }
    assert capsys.readouterr().out == (
        "skipped off (disabled; `lookout test off` tests it anyway)\n"
        f"team: sent (HTTP 200 {hook.url}/…)\nphone: failed (HTTP 401: unauthorized (code 40101))\n"
    )
    lines = [json.loads(x) for x in (state_dir / "deliveries.jsonl").read_text().splitlines()]
    assert [(x["channel"], x["result"], x["session_id"]) for x in lines] == [
        ("team", "sent", "lookout-test"),
        ("phone", "failed", "lookout-test"),
    ]
    assert "tk_wrong" not in (state_dir / "deliveries.jsonl").read_text()


def test_test_one_named_channel(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with webhook_receiver() as hook:
        write_config(
            f'[channels.a]\ntype = "webhook"\nurl = "{hook.url}/a"\n'
            f'[channels.b]\ntype = "webhook"\nurl = "{hook.url}/b"\nenabled = false\n'
        )
        assert main(["test", "b", "--project", str(tmp_path)]) == 0
        assert [r.path for r in hook.requests] == ["/b"]  # named: tested even if disabled


def test_test_unknown_channel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "pager", "--project", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        "error: unknown channel 'pager' (configured: desktop)\n"
        "hint: lookout check-config shows the config lookout reads\n"
    )


def test_test_with_a_broken_config_raises_the_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config("rules = 3\n")
    assert main(["test", "--project", str(tmp_path)]) == 1
    assert capsys.readouterr().err.splitlines()[0] == "error: " + (
        "~/.config/lookout/config.toml: rules: expected an array of tables ([[rules]]), got int"
    )


def test_test_with_only_disabled_channels_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_config('[channels.off]\ntype = "desktop"\nenabled = false\n')
    assert main(["test", "--project", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        "error: every channel is disabled (off)\n"
        "hint: set enabled = true in [channels.off], or test it anyway: lookout test off\n"
    )


def test_test_without_any_channel_says_how_to_add_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_config("# nothing yet\n")
    assert main(["test", "--project", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no channel to test: the config defines none\n")
    assert "hint: add one: lookout channel add NAME --type " in err


def test_test_names_the_disabled_channels_it_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, state_dir: Path
) -> None:
    with webhook_receiver() as hook:
        write_config(
            f'[channels.hook]\ntype = "webhook"\nurl = "{hook.url}/x"\n'
            '[channels.off]\ntype = "desktop"\nenabled = false\n'
        )
        assert main(["test", "--project", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "skipped off (disabled; `lookout test off` tests it anyway)"
    assert out[1].startswith("hook: sent (HTTP 200 ")


def test_check_config_warns_when_nothing_can_ever_be_sent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_config('[channels.off]\ntype = "desktop"\nenabled = false\n'
                 '[[rules]]\nwhen = ["permission"]\nchannels = ["off"]\n')  # fmt: skip
    assert main(["check-config", "--project", str(tmp_path)]) == 0
    assert capsys.readouterr().out == (
        "~/.config/lookout/config.toml: ok (1 channel(s), 1 rule(s))\n"
        "warning: every channel the rules send to is disabled (off): nothing will ever be sent"
        " (set enabled = true in one)\n"
    )


def test_test_shows_a_servers_error_body_without_raw_escapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tests.receivers import Receiver

    osc52 = b"\x1b]52;c;ZXZpbA==\x07 bad request"
    with Receiver(respond=lambda req: (400, osc52)) as hook:
        write_config(f'[channels.hook]\ntype = "webhook"\nurl = "{hook.url}/x"\n')
        assert main(["test", "hook", "--project", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert out == "hook: failed (HTTP 400: \\x1b]52;c;ZXZpbA==\\x07 bad request)\n"


TELEGRAM = (
    '[channels.chat]\ntype = "telegram"\ntoken_env = "TG_TOKEN"\nchat_id = {chat}\n{extra}'
    '[[rules]]\nwhen = ["permission"]\nchannels = ["chat"]\n{remote}'
)


def test_check_config_warns_about_a_telegram_api_in_clear_text_and_anyone_answering(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # S6 (security-3.md): the bot token is in every Bot API call's path; a plain http api_url
    # off this machine hands it (and the Allow button) to whoever serves or reads it.
    monkeypatch.setenv("TG_TOKEN", "123:abc")
    remote = "[remote]\nenabled = true\n"
    write_config(
        TELEGRAM.format(
            chat=-1001, extra='api_url = "http://tg-proxy.example.net:8080/x"\n', remote=remote
        )
    )
    assert main(["check-config", "--project", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "warning: channels.chat.api_url: http://tg-proxy.example.net:8080/… is not encrypted: "
        "the bot token (part of every call's URL) crosses the network in clear text, and "
        "whoever holds it can answer your requests (use https://)",
        "warning: channels.chat.allowed_user_ids is empty: a press from anyone in chat -1001 "
        "answers a permission request (set it to your Telegram user id)",
    ]
    # https, a loopback API (the Bot API double, a local proxy), a user list: nothing to say;
    # without [remote] no press answers anything, so the empty list is no risk yet.
    for extra, rem in [
        ('api_url = "https://api.example.net"\nallowed_user_ids = [7]\n', remote),
        ('api_url = "http://127.0.0.1:8081"\nallowed_user_ids = [7]\n', remote),
        ('api_url = "http://localhost:8081"\nallowed_user_ids = [7]\n', remote),
        ('api_url = "http://[::1]:8081"\nallowed_user_ids = [7]\n', remote),
        ("", ""),
    ]:
        write_config(TELEGRAM.format(chat=-1001, extra=extra, remote=rem))
        assert main(["check-config", "--project", str(tmp_path)]) == 0
        assert "warning" not in capsys.readouterr().out, extra
