"""The notification sections through the loader: the embedded default, validation messages
(pinned whole), project overrides, and the warnings only send time would show."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lookout.config import check, files, notify
from lookout.errors import LookoutError

G = "~/.config/lookout/config.toml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def errors_of(text: str, cfg_file: Path) -> list[str]:
    write(cfg_file, text)
    with pytest.raises(check.ConfigError) as exc:
        files.load()
    return exc.value.errors


@pytest.fixture
def cfg_file(isolated_env: Path) -> Path:
    return Path(os.environ["LOOKOUT_CONFIG"])


def test_no_file_means_the_embedded_default() -> None:
    cfg = files.load()
    assert cfg["channels"] == {
        "desktop": {
            "type": "desktop",
            "enabled": True,
            "timeout_ms": 5000,
            "content": "full",
            "app_name": "lookout",
            "urgency": "normal",
            "skip_when_focused": True,
            "remote": False,
            "updatable": True,
            "loud": False,
        }
    }
    attention, done, silent = cfg["rules"]
    assert attention["when"] == list(notify.ATTENTION_KINDS)
    assert done["when"] == ["done"] and done["min_duration_s"] == 30
    assert silent["when"] == ["stuck", "limit_lifted"]
    assert cfg["sessions"] == {"stuck_after_s": 600}
    assert all(r["channels"] == ["desktop"] for r in cfg["rules"])


def test_full_config_with_defaults_filled_in(cfg_file: Path) -> None:
    write(
        cfg_file,
        """
[channels.phone]
type = "ntfy"
url = "https://ntfy.sh/my-topic"
token_env = "NTFY_TOKEN"
priority = { permission = "urgent", default = 2 }

[channels.team]
type = "webhook"
url_env = "SLACK_URL"
format = "slack"

[[rules]]
when = ["permission", "done"]
channels = ["phone", "team"]
quiet_hours = "22:00-07:00"
""",
    )
    cfg = files.load()
    phone = cfg["channels"]["phone"]
    assert phone["content"] == "summary" and phone["timeout_ms"] == 10000
    assert phone["priority"] == {"permission": "urgent", "default": 2}
    assert cfg["channels"]["team"]["format"] == "slack"
    rule = cfg["rules"][0]
    assert rule["quiet_hours"] == [22 * 60, 7 * 60]
    assert rule["quiet_kinds"] == list(notify.DEFAULT_QUIET_KINDS)
    assert rule["include_subagents"] is False and rule["cooldown_s"] == 0


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            '[channels.phone]\ntype = "ntfy"\nurl = 5\n',
            [f"{G}: channels.phone.url: expected a string, got int"],
        ),
        (
            '[channels.phone]\ntype = "email"\n',
            [
                f"{G}: channels.phone.type: expected one of desktop, ntfy, "
                "webhook, command, apprise, telegram, slack, sound, matrix, got 'email'"
            ],
        ),
        (
            '[channels.phone]\nurl = "x"\n',
            [
                f"{G}: channels.phone: missing key 'type' (one of desktop, "
                "ntfy, webhook, command, apprise, telegram, slack, sound, matrix)"
            ],
        ),
        (
            '[channels.d]\ntype = "desktop"\nurgncy = "low"\n',
            [
                f"{G}: channels.d.urgncy: unknown key (did you mean 'urgency'?) (expected one of "
                "type, enabled, timeout_ms, content, urgency, app_name, skip_when_focused)"
            ],
        ),
        (
            '[channels.d]\ntype = "desktop"\nurgency = { permission = "loud" }\n',
            [
                f"{G}: channels.d.urgency.permission: expected one of low, "
                "normal, critical, got 'loud'"
            ],
        ),
        (
            '[channels.d]\ntype = "desktop"\ntimeout_ms = 0\nenabled = "yes"\n',
            [
                f"{G}: channels.d.enabled: expected a bool, got string",
                f"{G}: channels.d.timeout_ms: expected an integer from 1 to 600000, got 0",
            ],
        ),
        (
            '[channels.n]\ntype = "ntfy"\nurl = "https://ntfy.sh/bad topic"\n',
            [
                f"{G}: channels.n.url: expected http(s)://server/topic with a "
                "topic of letters, digits, - and _, got 'https://ntfy.sh/…' (the topic contains"
                " ' ')"
            ],
        ),
        (
            '[channels.n]\ntype = "ntfy"\nurl = "https://ntfy.sh/t"\npriority = 9\n',
            [
                f"{G}: channels.n.priority: expected 1-5 or one of min, low, "
                "default, high, max, urgent, got 9"
            ],
        ),
        (
            '[channels.w]\ntype = "webhook"\n',
            [f"{G}: channels.w: missing key 'url' or 'url_env'"],
        ),
        (
            '[channels.w]\ntype = "webhook"\nurl = "https://h.example/x"\nformat = "teams"\n',
            [f"{G}: channels.w.format: expected one of json, slack, discord, got 'teams'"],
        ),
        (
            '[channels.c]\ntype = "command"\nargv = ["say", "{title} {secret}"]\n',
            [
                f"{G}: channels.c.argv[1]: unknown placeholder {{secret}} "
                "(expected one of {body}, {cwd}, {duration}, {kind}, {message}, {project}, "
                "{question}, {reason}, {session}, {session_id}, {summary}, {title}, {tool_name}, "
                "{until})"
            ],
        ),
        (
            '[channels.c]\ntype = "command"\nargv = []\n',
            [f"{G}: channels.c.argv: expected a non-empty array"],
        ),
        (
            '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["done", "finished"]\n'
            'channels = ["d", "pager"]\n',
            [
                f"{G}: rules[0].when[1]: expected one of permission, question, plan, "
                "elicitation, input, error, done, idle, subagent_done, session_start, "
                "session_end, message, resolved, stuck, limit_lifted, got 'finished'",
                f"{G}: rules[0].channels[1]: unknown channel 'pager' (defined: d)",
            ],
        ),
        (
            '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["done"]\nchannels = ["d"]\n'
            'quiet_hours = "22-7"\nescalate_after_s = 0\n',
            [
                '~/.config/lookout/config.toml: rules[0].quiet_hours: expected "HH:MM-HH:MM" (two '
                "different times), got '22-7'",
                f"{G}: rules[0].escalate_after_s: expected a number > 0, got 0",
                f"{G}: rules[0]: missing key 'escalate_to' (escalate_after_s needs it)",
            ],
        ),
        (
            '[[rules]]\nchannels = ["desktop"]\n',
            [
                f"{G}: rules[0]: missing key 'when'",
                f"{G}: rules[0].when: expected a non-empty array",
                f"{G}: rules[0].channels[0]: unknown channel 'desktop' "
                "(no [channels.<name>] defined)",
            ],
        ),
        (
            '[templates.done]\ntitle = "{project} {elapsed}"\n',
            [
                f"{G}: templates.done.title: unknown placeholder {{elapsed}} "
                "(expected one of {cwd}, {duration}, {kind}, {message}, {project}, {question}, "
                "{reason}, {session}, {session_id}, {summary}, {tool_name}, {until})"
            ],
        ),
        (
            '[templates.finished]\ntitle = "x"\n',
            [
                f"{G}: templates.finished: unknown kind (expected one of "
                "permission, question, plan, elicitation, input, error, done, idle, subagent_done, "
                "session_start, session_end, message, resolved, stuck, limit_lifted)"
            ],
        ),
        (
            "rules = 3\n",
            [f"{G}: rules: expected an array of tables ([[rules]]), got int"],
        ),
        (
            "[channels.d\n",
            [
                f"{G}: invalid TOML: Expected ']' at the end of a table "
                "declaration (at line 1, column 12)"
            ],
        ),
    ],
    ids=[
        "wrong-type",
        "bad-channel-type",
        "missing-type",
        "unknown-key",
        "urgency-by-kind",
        "bool-and-timeout",
        "ntfy-topic",
        "ntfy-priority",
        "webhook-url",
        "webhook-format",
        "argv-placeholder",
        "argv-empty",
        "rule-refs",
        "rule-values",
        "rule-missing",
        "template-placeholder",
        "template-kind",
        "rules-table",
        "toml-syntax",
    ],
)
def test_errors_name_file_key_and_expectation(
    toml: str, expected: list[str], cfg_file: Path
) -> None:
    assert errors_of(toml, cfg_file) == expected


def test_config_error_is_a_lookout_error_with_a_hint(cfg_file: Path) -> None:
    write(cfg_file, "rules = 3\n")
    with pytest.raises(LookoutError) as exc:
        files.load()
    assert exc.value.hint == "see config.example.toml for every key"


def test_project_file_narrows_key_by_key(cfg_file: Path, tmp_path: Path) -> None:
    write(
        cfg_file,
        """
[channels.phone]
type = "ntfy"
url = "https://ntfy.sh/global-topic"
priority = 4

[[rules]]
when = ["permission"]
channels = ["phone"]
""",
    )
    project = tmp_path / "home" / "work" / "api"
    write(
        project / ".claude" / "lookout.toml",
        """
[[rules]]
when = ["done"]
channels = ["phone"]
quiet_hours = "22:00-07:00"
""",
    )
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    cfg = files.load(str(sub))
    assert cfg["channels"]["phone"]["url"] == "https://ntfy.sh/global-topic"
    assert [r["when"] for r in cfg["rules"]] == [["done"]]  # arrays replace
    assert cfg["rules"][0]["quiet_hours"] == [22 * 60, 7 * 60]
    assert [r["when"] for r in files.load(str(tmp_path))["rules"]] == [["permission"]]


def test_project_file_errors_name_the_project_file(cfg_file: Path, tmp_path: Path) -> None:
    project = tmp_path / "home" / "api"
    write(
        project / ".claude" / "lookout.toml", '[[rules]]\nwhen = ["loud"]\nchannels = ["desktop"]\n'
    )
    with pytest.raises(check.ConfigError) as exc:
        files.load(str(project))
    assert exc.value.errors == [
        "~/api/.claude/lookout.toml: rules[0].when[0]: expected one of permission, question, "
        "plan, elicitation, input, error, done, idle, subagent_done, session_start, "
        "session_end, message, resolved, stuck, limit_lifted, got 'loud'"
    ]


def test_project_file_over_the_default(tmp_path: Path) -> None:
    project = tmp_path / "home" / "api"
    write(project / ".claude" / "lookout.toml", "[channels.desktop]\nenabled = false\n")
    assert files.load(str(project))["channels"]["desktop"]["enabled"] is False


def test_home_claude_dir_is_not_a_project_file(tmp_path: Path) -> None:
    write(tmp_path / "home" / ".claude" / "lookout.toml", "rules = 3\n")
    assert files.project_path(str(tmp_path / "home" / "x")) is None


def test_warnings(cfg_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NTFY_TOKEN", raising=False)
    write(
        cfg_file,
        '[channels.p]\ntype = "ntfy"\nurl = "https://ntfy.sh/t"\ntoken_env = "NTFY_TOKEN"\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["p"]\n',
    )
    assert notify.warnings(files.load()) == [
        "channels.p.token_env: environment variable NTFY_TOKEN is not set"
    ]


def test_unreadable_files_are_config_errors(cfg_file: Path) -> None:
    cfg_file.parent.mkdir(parents=True)
    cfg_file.write_bytes(b'[channels.d]\ntype = "desk\xfftop"\n')
    with pytest.raises(check.ConfigError) as exc:
        files.load()
    assert exc.value.errors == [f"{G}: not UTF-8 text (byte 25)"]
    cfg_file.unlink()
    cfg_file.mkdir()
    with pytest.raises(check.ConfigError) as exc:
        files.load()
    assert exc.value.errors == [f"{G}: cannot read: Is a directory"]


def test_disabled_channels_raise_no_send_time_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NTFY_TOKEN", raising=False)
    raw = {
        "channels": {
            "phone": {
                "type": "ntfy",
                "url": "https://ntfy.sh/t",
                "token_env": "NTFY_TOKEN",
                "enabled": False,
            },
            "d": {"type": "desktop"},
        },
        "rules": [{"when": ["done"], "channels": ["d", "phone"]}],
    }
    assert notify.warnings(files.validate(raw)) == []


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["done"]\nchannels = ["d"]\n'
            "cooldown = 3\n",
            "rules[0].cooldown: unknown key (did you mean 'cooldown_s'?)",
        ),
        (
            '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["done"]\nchannels = ["d"]\n'
            'quiet_hour = "22:00-07:00"\n',
            "rules[0].quiet_hour: unknown key (did you mean 'quiet_hours'?)",
        ),
        ('[channels.d]\ntype = "ntfyy"\n', "got 'ntfyy' (did you mean 'ntfy'?)"),
        (
            '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["permision"]\nchannels = ["d"]\n',
            "got 'permision' (did you mean 'permission'?)",
        ),
        ('[templates.permision]\ntitle = "x"\n', "unknown kind (did you mean 'permission'?)"),
    ],
    ids=["cooldown", "quiet_hour", "type", "kind", "template-kind"],
)
def test_a_near_miss_gets_a_suggestion(cfg_file: Path, text: str, error: str) -> None:
    write(cfg_file, text)
    with pytest.raises(check.ConfigError) as info:
        files.load()
    assert error in info.value.errors[0]


def test_no_suggestion_for_a_word_that_is_not_close(cfg_file: Path) -> None:
    write(cfg_file, '[channels.d]\ntype = "desktop"\nvolume = 3\n')
    with pytest.raises(check.ConfigError) as info:
        files.load()
    assert "did you mean" not in info.value.errors[0]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("ntfy.sh/my-secret-topic", "'ntfy.sh/…' (no http:// or https://)"),
        ("htps://ntfy.sh/my-secret-topic", "'htps://ntfy.sh/…' (the scheme is 'htps', not http"),
        ("https://ntfy.sh/", "'https://ntfy.sh/' (no topic after the server)"),
        ("https://ntfy.sh/" + "x" * 70, "'https://ntfy.sh/…' (the topic has 70 characters"),
        ("https://al:pw@ntfy.sh/top!c", "'https://al:…@ntfy.sh/…' (the topic contains '!')"),
    ],
)
def test_a_bad_ntfy_url_is_shown_with_only_the_secret_hidden(
    cfg_file: Path, url: str, shown: str
) -> None:
    write(cfg_file, f'[channels.n]\ntype = "ntfy"\nurl = "{url}"\n')
    with pytest.raises(check.ConfigError) as info:
        files.load()
    (error,) = info.value.errors
    assert f"got {shown}" in error
    assert "secret-topic" not in error and "pw" not in error and "top!c" not in error


def test_a_webhook_url_without_scheme_is_shown_without_its_token(cfg_file: Path) -> None:
    write(cfg_file, '[channels.w]\ntype = "webhook"\nurl = "hooks.slack.com/services/T0/B0/XYZ"\n')
    with pytest.raises(check.ConfigError) as info:
        files.load()
    assert info.value.errors == [
        f"{G}: channels.w.url: expected an http(s) URL, got 'hooks.slack.com/…'"
        " (no http:// or https://)"
    ]


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        ("", "no [[rules]]: nothing will ever be sent (lookout rule add adds one)"),
        (
            '[channels.off]\ntype = "desktop"\nenabled = false\n[[rules]]\nwhen = ["done"]\n'
            'channels = ["off"]\n',
            "every channel the rules send to is disabled (off): nothing will ever be sent"
            " (set enabled = true in one)",
        ),
    ],
    ids=["empty-file", "only-disabled-channels"],
)
def test_a_config_that_can_never_send_is_warned_about(
    cfg_file: Path, text: str, warning: str
) -> None:
    write(cfg_file, text)
    assert notify.warnings(files.load()) == [warning]


def test_timeout_ms_has_an_upper_bound(cfg_file: Path) -> None:
    # 2**63-1 used to crash the sender's job with OverflowError (L13).
    assert errors_of(
        '[channels.d]\ntype = "desktop"\ntimeout_ms = 9223372036854775807\n', cfg_file
    ) == [
        f"{G}: channels.d.timeout_ms: expected an integer from 1 to 600000, got 9223372036854775807"
    ]


_HOLD_RULE = (
    '[channels.p]\ntype = "ntfy"\nurl = "https://ntfy.sh/t"\n'
    '[[rules]]\nwhen = ["permission"]\nchannels = ["p"]\n'
)


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ("grace_s = 0\n", "rules[0].grace_s: expected a number > 0, got 0"),
        ('grace_s = "30"\n', "rules[0].grace_s: expected a number, got str"),
        ("digest_s = 7200\n", "rules[0].digest_s: expected a number <= 3600, got 7200"),
        (
            "grace_s = 30\ndigest_s = 60\n",
            "rules[0]: grace_s and digest_s exclude each other (a digest already drops what was"
            " answered before it is sent)",
        ),
        ("grace = 30\n", "rules[0].grace: unknown key (did you mean 'grace_s'?)"),
        ("digest = 60\n", "rules[0].digest: unknown key (did you mean 'digest_s'?)"),
    ],
    ids=["zero", "string", "too-long", "both", "grace-typo", "digest-typo"],
)
def test_grace_and_digest_errors(cfg_file: Path, extra: str, error: str) -> None:
    (first,) = errors_of(_HOLD_RULE + extra, cfg_file)
    assert first.startswith(f"{G}: {error}")


def test_grace_and_digest_are_read(cfg_file: Path) -> None:
    write(
        cfg_file,
        _HOLD_RULE + 'grace_s = 30\n[[rules]]\nwhen = ["question"]\n'
        'channels = ["p"]\ndigest_s = 60.5\n',
    )
    cfg = files.load()
    assert [(r["grace_s"], r["digest_s"]) for r in cfg["rules"]] == [(30.0, None), (None, 60.5)]


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        pytest.param(
            '[channels.chat]\ntype = "telegram"\n',
            [
                f"{G}: channels.chat: missing key 'token_env' (the environment variable holding "
                "the bot token)",
                f"{G}: channels.chat: missing key 'chat_id' (the chat the bot writes to, "
                "e.g. 123456789)",
            ],
            id="missing",
        ),
        pytest.param(
            '[channels.chat]\ntype = "telegram"\ntoken_env = "T"\nchat_id = "me"\n'
            'allowed_user_ids = ["bob"]\napi_url = "ftp://x"\ntoken = "123:abc"\n',
            [
                f"{G}: channels.chat.token: unknown key (expected one of type, enabled, "
                "timeout_ms, content, token_env, chat_id, allowed_user_ids, api_url)",
                f"{G}: channels.chat.chat_id: expected an integer, got string",
                f"{G}: channels.chat.allowed_user_ids: expected a list of integers, got ['bob']",
                f"{G}: channels.chat.api_url: expected an http(s) URL, got 'ftp://x' "
                "(the scheme is 'ftp', not http or https)",
            ],
            id="wrong",
        ),
    ],
)
def test_telegram_errors(toml: str, expected: list[str], cfg_file: Path) -> None:
    assert errors_of(toml, cfg_file) == expected


def test_telegram_defaults(cfg_file: Path) -> None:
    write(cfg_file, '[channels.chat]\ntype = "telegram"\ntoken_env = "T"\nchat_id = -100123\n')
    ch = files.load()["channels"]["chat"]
    assert (ch["api_url"], ch["chat_id"], ch["allowed_user_ids"], ch["content"]) == (
        "https://api.telegram.org",
        -100123,
        [],
        "summary",
    )
