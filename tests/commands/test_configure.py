"""`lookout channel add|remove` and `lookout rule add|remove`, through the real entry point: the
file keeps every byte it had, the result is the config asked for, and bad input changes nothing."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import pytest

from lookout import paths
from lookout.commands import main as cli
from lookout.config import files, notify
from lookout.install import registry

COMMENTED = """\
# my config: keep these words
[channels.desktop]
type = "desktop"   # on the laptop
urgency = { permission = "critical", default = "normal" }

[[rules]]
when = ["permission"]   # only this
channels = ["desktop"]

[templates.done]
title = "{project} is done"
"""


@pytest.fixture
def config_file(isolated_env: Path) -> Path:
    return Path(os.environ["LOOKOUT_CONFIG"])


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("command", "table"), [("channel", "[channels.NAME]"), ("rule", "[[rules]]")]
)
def test_channel_and_rule_say_which_file_they_edit_and_need_an_action(
    config_file: Path, capsys: pytest.CaptureFixture[str], command: str, table: str
) -> None:
    with pytest.raises(SystemExit) as helped:
        cli.main([command, "--help"])
    assert helped.value.code == 0
    said = " ".join(capsys.readouterr().out.split())  # argparse wraps it to the terminal
    assert f"Add or remove a {table} table in {paths.tilde(str(config_file))} " in said
    with pytest.raises(SystemExit) as refused:
        cli.main([command])
    assert refused.value.code == 2
    assert "the following arguments are required: ACTION" in capsys.readouterr().err


def test_channel_add_without_a_config_starts_from_the_default(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run(
        capsys, "channel", "add", "phone", "--type", "ntfy", "--url", "https://ntfy.sh/s3cr3t-t0pic",
        "--token-env", "NTFY_TOKEN",
    )  # fmt: skip
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "added channel phone (ntfy) to ~/.config/lookout/config.toml (new file: the default"
        " config plus this)",
        "note: no rule sends to phone yet, e.g.: lookout rule add --when permission,question,plan"
        " --channels phone",
        "note: channels.phone.token_env: environment variable NTFY_TOKEN is not set",
        "try it: lookout test phone",
    ]
    text = config_file.read_text()
    assert text.startswith(notify.DEFAULT_TEXT + "\n[channels.phone]\n")
    assert stat.S_IMODE(config_file.stat().st_mode) == 0o600
    cfg = files.load()
    assert cfg["rules"] == files.load(path=str(config_file.parent / "none.toml"))["rules"]
    phone = cfg["channels"]["phone"]
    assert (phone["url"], phone["token_env"]) == ("https://ntfy.sh/s3cr3t-t0pic", "NTFY_TOKEN")


def test_add_appends_and_keeps_every_byte_then_remove_gives_the_file_back(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    put(config_file, COMMENTED)
    rc, out, _ = run(
        capsys, "channel", "add", "team", "--type", "webhook", "--url-env", "SLACK_WEBHOOK_URL",
        "--format", "slack",
    )  # fmt: skip
    assert rc == 0 and out.startswith("added channel team (webhook) to ~/.config/lookout/")
    after_channel = config_file.read_text()
    assert after_channel == (
        COMMENTED + '\n[channels.team]\ntype = "webhook"\nurl_env = "SLACK_WEBHOOK_URL"\n'
        'format = "slack"\n'
    )
    rc, out, _ = run(
        capsys, "rule", "add", "--when", "done, error", "--channels", "team", "--min-duration",
        "5m", "--quiet-hours", "22:00-07:00", "--cooldown", "1h",
    )  # fmt: skip
    assert rc == 0
    assert out.startswith("added rules[1] to ~/.config/lookout/config.toml: done, error → team")
    assert config_file.read_text().startswith(after_channel)
    rule = files.load()["rules"][1]
    assert (rule["when"], rule["channels"], rule["min_duration_s"], rule["cooldown_s"]) == (
        ["done", "error"],
        ["team"],
        300,
        3600,
    )
    assert rule["quiet_hours"] == [22 * 60, 7 * 60]
    assert run(capsys, "rule", "remove", "1")[0] == 0
    assert config_file.read_text() == after_channel
    rc, out, _ = run(capsys, "channel", "remove", "team")
    assert rc == 0 and out.startswith("removed channel team from ~/.config/lookout/config.toml")
    assert config_file.read_text() == COMMENTED


def test_rule_add_takes_grace_and_digest(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # newuser-3-truth: grace_s / digest_s had to be added to the TOML by hand.
    put(config_file, COMMENTED)
    rc, out, _ = run(capsys, "rule", "add", "--when", "permission", "--channels", "desktop",
                     "--grace-s", "30")  # fmt: skip
    assert rc == 0, out
    rc, out, _ = run(capsys, "rule", "add", "--when", "question", "--channels", "desktop",
                     "--digest-s", "1m")  # fmt: skip
    assert rc == 0, out
    assert config_file.read_text() == (
        COMMENTED + '\n[[rules]]\nwhen = [\n    "permission",\n]\nchannels = [\n    "desktop",\n]\n'
        "grace_s = 30\n"
        '\n[[rules]]\nwhen = [\n    "question",\n]\nchannels = [\n    "desktop",\n]\n'
        "digest_s = 60\n"
    )
    rules = files.load()["rules"]
    assert [(r["grace_s"], r["digest_s"]) for r in rules] == [(None, None), (30, None), (None, 60)]
    before = config_file.read_bytes()
    for extra, says in [
        (["--grace-s", "30", "--digest-s", "60"], "grace_s and digest_s exclude each other"),
        (["--grace-s", "2h"], "rules[3].grace_s: expected a number <= 3600, got 7200"),
    ]:
        rc, _, err = run(capsys, "rule", "add", "--when", "done", "--channels", "desktop", *extra)
        assert rc == 1 and says in err and "the config file is unchanged" in err, err
    assert config_file.read_bytes() == before


def test_remove_a_table_in_the_middle_with_its_sub_tables(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    put(config_file, COMMENTED.replace("[[rules]]", '[channels.old]\ntype = "desktop"\n'
        '[channels.old.urgency]\ndone = "low"\n\n[[rules]]'))  # fmt: skip
    assert run(capsys, "channel", "remove", "old")[0] == 0
    assert config_file.read_text() == COMMENTED


def test_a_channel_a_rule_uses_is_not_removed(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    put(config_file, COMMENTED)
    rc, out, err = run(capsys, "channel", "remove", "desktop")
    assert (rc, out) == (1, "")
    assert err == (
        "error: channel 'desktop' is still used by rules[0].channels\n"
        "hint: remove it from those rules first (lookout rule remove N); the config file is"
        " unchanged\n"
    )
    assert config_file.read_text() == COMMENTED


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (
            ["channel", "add", "phone", "--type", "ntfy", "--url", "ntfy.sh/topic"],
            "error: ~/.config/lookout/config.toml: channels.phone.url: expected http(s)://",
        ),
        (
            ["channel", "add", "hook", "--type", "webhook"],
            "error: ~/.config/lookout/config.toml: channels.hook: missing key 'url' or 'url_env'",
        ),
        (
            ["channel", "add", "my phone", "--type", "desktop"],
            "error: ~/.config/lookout/config.toml: channels.my phone: channel names use letters,",
        ),
        (
            ["channel", "add", "desktop", "--type", "desktop"],
            "error: channel 'desktop' already exists in ~/.config/lookout/config.toml",
        ),
        (
            ["rule", "add", "--when", "permision", "--channels", "desktop"],
            "error: ~/.config/lookout/config.toml: rules[1].when[0]: expected one of permission,",
        ),
        (
            ["rule", "add", "--when", "done", "--channels", "phone"],
            "error: ~/.config/lookout/config.toml: rules[1].channels[0]: unknown channel 'phone'",
        ),
        (["rule", "remove", "3"], "error: no rules[3] in ~/.config/lookout/config.toml"),
        (["channel", "remove", "nope"], "error: no channel 'nope' in ~/.config/lookout/config"),
    ],
    ids=[
        "ntfy-url-without-scheme",
        "webhook-without-url",
        "bad-name",
        "existing-name",
        "unknown-kind",
        "unknown-channel",
        "no-such-rule",
        "no-such-channel",
    ],
)
def test_invalid_input_changes_nothing(
    argv: list[str], error: str, config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    put(config_file, COMMENTED)
    before = config_file.stat()
    rc, out, err = run(capsys, *argv)
    assert (rc, out) == (1, "")
    assert err.startswith(error), err
    assert "\nhint: " in err and "the config file is unchanged" in err
    assert config_file.read_text() == COMMENTED
    assert config_file.stat().st_mtime_ns == before.st_mtime_ns
    assert registry.backups_of(config_file) == []


@pytest.mark.parametrize(
    "text",
    [
        'channels = { desktop = { type = "desktop" } }\n',  # inline: a table cannot join it
        "[channels.desktop]\ntype = 5\n",  # already invalid
        "[channels\n",  # not TOML
    ],
    ids=["inline-channels", "invalid-config", "not-toml"],
)
def test_a_file_lookout_cannot_append_to_is_left_alone(
    text: str, config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    put(config_file, text)
    rc, out, err = run(capsys, "channel", "add", "d2", "--type", "desktop")
    assert (rc, out) == (1, "")
    assert err.startswith("error: ~/.config/lookout/config.toml") and "hint: " in err
    assert config_file.read_text() == text


def test_writes_go_through_a_symlink_keep_the_mode_and_back_up_privately(
    isolated_env: Path, config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = put(isolated_env / "dotfiles" / "lookout.toml", COMMENTED)
    real.chmod(0o640)
    config_file.parent.mkdir(parents=True)
    config_file.symlink_to(real)
    rc, out, _ = run(capsys, "channel", "add", "d2", "--type", "desktop", "--disabled")
    assert rc == 0 and "(backup: ~/.local/share/lookout/backups/" in out
    assert config_file.is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert tomllib.loads(real.read_text())["channels"]["d2"] == {
        "type": "desktop",
        "enabled": False,
    }
    (backup,) = registry.backups_of(config_file)
    assert backup.read_text() == COMMENTED and stat.S_IMODE(backup.stat().st_mode) == 0o600


def test_dry_run_prints_the_diff_and_writes_nothing(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    put(config_file, COMMENTED)
    rc, out, _ = run(
        capsys, "channel", "add", "log", "--type", "command", "--command",
        "logger -t lookout '{title}: {body}'", "--dry-run",
    )  # fmt: skip
    assert rc == 0
    assert "+[channels.log]\n" in out and '+    "{title}: {body}",\n' in out
    assert config_file.read_text() == COMMENTED


def test_a_table_the_cut_cannot_take_out_exactly_is_refused(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A value line that looks like a header would end the cut early: the re-parse notices.
    text = COMMENTED + '\n[channels.odd]\ntype = "desktop"\napp_name = """\n[not a header]\n"""\n'
    put(config_file, text)
    assert files.load()["channels"]["odd"]["app_name"] == "[not a header]\n"
    rc, out, err = run(capsys, "channel", "remove", "odd")
    assert (rc, out) == (1, "")
    assert err.startswith("error: ~/.config/lookout/config.toml: channel 'odd' cannot be")
    assert config_file.read_text() == text


def test_channel_add_telegram_writes_the_chat_and_its_users(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    put(config_file, COMMENTED)
    rc, out, err = run(
        capsys, "channel", "add", "bot", "--type", "telegram", "--token-env", "TELEGRAM_BOT_TOKEN",
        "--chat-id", "-100123", "--allowed-user-id", "42", "--allowed-user-id", "43",
        "--url", "http://127.0.0.1:8081",
    )  # fmt: skip
    assert (rc, err) == (0, "")
    assert out.startswith("added channel bot (telegram) to ~/.config/lookout/config.toml")
    assert config_file.read_text().startswith(COMMENTED)  # every byte it had
    table = tomllib.loads(config_file.read_text())["channels"]["bot"]
    assert table == {
        "type": "telegram",
        "token_env": "TELEGRAM_BOT_TOKEN",
        "chat_id": -100123,
        "allowed_user_ids": [42, 43],
        "api_url": "http://127.0.0.1:8081",
    }
    channel = files.load()["channels"]["bot"]
    assert (channel["chat_id"], channel["allowed_user_ids"]) == (-100123, [42, 43])


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--type", "telegram", "--token-env", "TELEGRAM_BOT_TOKEN"], "needs --token-env"),
        (["--type", "telegram", "--chat-id", "1"], "needs --token-env"),
        (["--type", "ntfy", "--url", "https://ntfy.sh/x", "--chat-id", "1"], "for --type telegram"),
    ],
)
def test_channel_add_telegram_without_what_it_needs_changes_nothing(
    config_file: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    put(config_file, COMMENTED)
    rc, out, err = run(capsys, "channel", "add", "bot", *argv)
    assert (rc, out) == (1, "")
    assert err.startswith("error: ") and says in err
    assert "\nhint: " in err and "the config file is unchanged" in err
    assert config_file.read_text() == COMMENTED


def test_rule_add_names_the_kinds_only_time_sends(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 32: a stuck session and a lifted usage limit are kinds a rule can name.
    put(config_file, COMMENTED)
    rc, out, _ = run(
        capsys, "rule", "add", "--when", "stuck,limit_lifted", "--channels", "desktop"
    )
    assert rc == 0, out
    assert files.load()["rules"][-1]["when"] == ["stuck", "limit_lifted"]
