"""Config loading: embedded default, validation messages (pinned whole), project overrides, and
the hook's secret-free cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lookout.notify import config

G = "~/.config/lookout/config.toml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def cfg_file(isolated_env: Path) -> Path:
    return Path(os.environ["LOOKOUT_CONFIG"])


def errors_of(text: str, cfg_file: Path) -> list[str]:
    write(cfg_file, text)
    with pytest.raises(config.ConfigError) as exc:
        config.load()
    return exc.value.errors


def test_no_file_means_the_embedded_default() -> None:
    cfg = config.load()
    assert cfg["channels"] == {
        "desktop": {
            "type": "desktop",
            "enabled": True,
            "timeout_ms": 5000,
            "content": "full",
            "app_name": "lookout",
            "urgency": "normal",
            "skip_when_focused": True,
        }
    }
    attention, done = cfg["rules"]
    assert attention["when"] == list(config.ATTENTION_KINDS)
    assert done["when"] == ["done"] and done["min_duration_s"] == 30
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
    cfg = config.load()
    phone = cfg["channels"]["phone"]
    assert phone["content"] == "summary" and phone["timeout_ms"] == 10000
    assert phone["priority"] == {"permission": "urgent", "default": 2}
    assert cfg["channels"]["team"]["format"] == "slack"
    rule = cfg["rules"][0]
    assert rule["quiet_hours"] == [22 * 60, 7 * 60]
    assert rule["quiet_kinds"] == list(config.DEFAULT_QUIET_KINDS)
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
                "webhook, command, apprise, got 'email'"
            ],
        ),
        (
            '[channels.phone]\nurl = "x"\n',
            [
                f"{G}: channels.phone: missing key 'type' (one of desktop, "
                "ntfy, webhook, command, apprise)"
            ],
        ),
        (
            '[channels.d]\ntype = "desktop"\nurgncy = "low"\n',
            [
                f"{G}: channels.d.urgncy: unknown key (expected one of type, "
                "enabled, timeout_ms, content, urgency, app_name, skip_when_focused)"
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
                f"{G}: channels.d.timeout_ms: expected an integer > 0, got 0",
            ],
        ),
        (
            '[channels.n]\ntype = "ntfy"\nurl = "https://ntfy.sh/bad topic"\n',
            [
                f"{G}: channels.n.url: expected http(s)://server/topic with a "
                "topic of letters, digits, - and _, got 'https://ntfy.sh/…'"
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
                "{question}, {reason}, {session_id}, {summary}, {title}, {tool_name})"
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
                "session_end, message, resolved, got 'finished'",
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
                "{reason}, {session_id}, {summary}, {tool_name})"
            ],
        ),
        (
            '[templates.finished]\ntitle = "x"\n',
            [
                f"{G}: templates.finished: unknown kind (expected one of "
                "permission, question, plan, elicitation, input, error, done, idle, subagent_done, "
                "session_start, session_end, message, resolved)"
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
    with pytest.raises(config.LookoutError) as exc:
        config.load()
    assert exc.value.hint == "see config.example.toml for every key"


def test_project_file_overrides_key_by_key(cfg_file: Path, tmp_path: Path) -> None:
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
[channels.phone]
url = "https://ntfy.sh/api-topic"

[[rules]]
when = ["done"]
channels = ["phone"]
""",
    )
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    cfg = config.load(str(sub))
    assert cfg["channels"]["phone"]["url"] == "https://ntfy.sh/api-topic"
    assert cfg["channels"]["phone"]["priority"] == 4  # kept from the global file
    assert [r["when"] for r in cfg["rules"]] == [["done"]]  # arrays replace
    assert config.load(str(tmp_path))["channels"]["phone"]["url"].endswith("global-topic")


def test_project_file_errors_name_the_project_file(cfg_file: Path, tmp_path: Path) -> None:
    project = tmp_path / "home" / "api"
    write(project / ".claude" / "lookout.toml", '[channels.desktop]\nurgency = "loud"\n')
    with pytest.raises(config.ConfigError) as exc:
        config.load(str(project))
    assert exc.value.errors == [
        "~/api/.claude/lookout.toml: channels.desktop.urgency: expected one of low, normal, "
        "critical, got 'loud'"
    ]


def test_project_file_over_the_default(tmp_path: Path) -> None:
    project = tmp_path / "home" / "api"
    write(project / ".claude" / "lookout.toml", "[channels.desktop]\nenabled = false\n")
    assert config.load(str(project))["channels"]["desktop"]["enabled"] is False


def test_home_claude_dir_is_not_a_project_file(tmp_path: Path) -> None:
    write(tmp_path / "home" / ".claude" / "lookout.toml", "rules = 3\n")
    assert config.project_path(str(tmp_path / "home" / "x")) is None


def test_redact_url() -> None:
    assert (
        config.redact_url("https://hooks.slack.com/services/T0/B0/secret")
        == "https://hooks.slack.com/…"
    )
    assert config.redact_url("https://user:pw@h.example:8443/x") == "https://h.example:8443/…"
    assert config.redact_url("not a url") == "…"


def test_warnings(cfg_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NTFY_TOKEN", raising=False)
    write(
        cfg_file,
        '[channels.p]\ntype = "ntfy"\nurl = "https://ntfy.sh/t"\ntoken_env = "NTFY_TOKEN"\n',
    )
    assert config.warnings(config.load()) == [
        "channels.p.token_env: environment variable NTFY_TOKEN is not set"
    ]


# -- the hook's cache --------------------------------------------------------------------------

SECRET = "tk_supersecret"


def test_cache_has_no_secrets_and_is_reused(cfg_file: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write(
        cfg_file,
        f"""
[channels.phone]
type = "ntfy"
url = "https://ntfy.sh/topic-{SECRET}"
token = "{SECRET}"

[[rules]]
when = ["permission"]
channels = ["phone"]
""",
    )
    cfg = config.load_cached(str(state), None)
    assert cfg is not None and cfg["channels"]["phone"]["type"] == "ntfy"
    assert "url" not in cfg["channels"]["phone"] and "token" not in cfg["channels"]["phone"]
    cache = state / config.CACHE_NAME
    assert SECRET not in cache.read_text()
    assert cache.stat().st_mode & 0o777 == 0o600
    before = cache.stat().st_mtime_ns
    assert config.load_cached(str(state), None) == cfg
    assert cache.stat().st_mtime_ns == before  # not re-parsed


def cached_error(state: Path) -> object:
    """The error the cache recorded for the newest entry (what the hooks met)."""
    return json.loads((state / config.CACHE_NAME).read_text())["entries"][-1]["error"]


def test_cache_follows_edits_and_logs_a_broken_config_once(cfg_file: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write(cfg_file, "rules = 3\n")
    assert config.load_cached(str(state), None) is None
    assert config.load_cached(str(state), None) is None
    log = (state / "errors.log").read_text()
    assert log.count("rules: expected an array of tables") == 1
    assert cached_error(state) == f"{G}: rules: expected an array of tables ([[rules]]), got int"
    write(
        cfg_file,
        '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["done"]\n'
        'channels = ["d"]\n# a longer file\n',
    )
    cfg = config.load_cached(str(state), None)
    assert cfg is not None and cfg["rules"][0]["when"] == ["done"]
    assert cached_error(state) is None


def test_cache_without_any_file_is_the_default(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    cfg = config.load_cached(str(state), None)
    assert cfg is not None and list(cfg["channels"]) == ["desktop"]


def test_cache_keeps_one_entry_per_project_file(cfg_file: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    write(
        cfg_file, '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["done"]\nchannels = ["d"]\n'
    )
    api = tmp_path / "home" / "api"
    write(api / ".claude" / "lookout.toml", "[channels.d]\nenabled = false\n")
    web = tmp_path / "home" / "web"
    web.mkdir()
    for _ in range(2):
        for cwd in (str(api), str(web), None):
            assert config.load_cached(str(state), cwd) is not None
    cache = json.loads((state / config.CACHE_NAME).read_text())
    assert [e["project"] for e in cache["entries"]] == [str(api / ".claude" / "lookout.toml"), None]
    assert config.load_cached(str(state), str(api))["channels"]["d"]["enabled"] is False
    assert config.load_cached(str(state), str(web))["channels"]["d"]["enabled"] is True


def test_unreadable_files_are_config_errors(cfg_file: Path) -> None:
    cfg_file.parent.mkdir(parents=True)
    cfg_file.write_bytes(b'[channels.d]\ntype = "desk\xfftop"\n')
    with pytest.raises(config.ConfigError) as exc:
        config.load()
    assert exc.value.errors == [f"{G}: not UTF-8 text (byte 25)"]
    cfg_file.unlink()
    cfg_file.mkdir()
    with pytest.raises(config.ConfigError) as exc:
        config.load()
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
            }
        }
    }
    assert config.warnings(config.validate(raw)) == []


def test_remote_is_off_by_default_and_validated(cfg_file: Path) -> None:
    assert config.load()["remote"] == {
        "enabled": False,
        "wait_s": 300,
        "tools": ["*"],
        "allow_always": False,
        "url": "",
    }
    write(
        cfg_file,
        '[remote]\nenabled = true\nwait_s = 120\ntools = ["Bash", "mcp__*"]\n'
        'url = "https://laptop.tail.ts.net:8787/"\n',
    )
    remote = config.load()["remote"]
    assert (remote["enabled"], remote["wait_s"], remote["tools"]) == (True, 120, ["Bash", "mcp__*"])
    assert remote["url"] == "https://laptop.tail.ts.net:8787"
    errors = errors_of(
        '[remote]\nenabled = "yes"\nwait_s = 5\ntools = []\nurl = "https://h/?token=x"\nfoo = 1\n',
        cfg_file,
    )
    text = "\n".join(errors)
    for key in ("remote.enabled", "remote.wait_s", "remote.tools", "remote.url", "remote.foo"):
        assert key in text, text


def test_a_project_file_may_not_touch_remote(cfg_file: Path, tmp_path: Path) -> None:
    write(cfg_file, "[remote]\nenabled = false\n")
    project = tmp_path / "repo"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "lookout.toml").write_text("[remote]\nenabled = true\n")
    with pytest.raises(config.ConfigError) as exc:
        config.load(str(project))
    assert "remote: is read only from your own config file" in str(exc.value)
    assert config.load(None)["remote"]["enabled"] is False
