"""Config loading: embedded default, validation messages (pinned whole), project overrides, and
the hook's secret-free cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lookout import store
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
    cfg = config.load(str(sub))
    assert cfg["channels"]["phone"]["url"] == "https://ntfy.sh/global-topic"
    assert [r["when"] for r in cfg["rules"]] == [["done"]]  # arrays replace
    assert cfg["rules"][0]["quiet_hours"] == [22 * 60, 7 * 60]
    assert [r["when"] for r in config.load(str(tmp_path))["rules"]] == [["permission"]]


def test_project_file_errors_name_the_project_file(cfg_file: Path, tmp_path: Path) -> None:
    project = tmp_path / "home" / "api"
    write(
        project / ".claude" / "lookout.toml", '[[rules]]\nwhen = ["loud"]\nchannels = ["desktop"]\n'
    )
    with pytest.raises(config.ConfigError) as exc:
        config.load(str(project))
    assert exc.value.errors == [
        "~/api/.claude/lookout.toml: rules[0].when[0]: expected one of permission, question, "
        "plan, elicitation, input, error, done, idle, subagent_done, session_start, "
        "session_end, message, resolved, got 'loud'"
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
        '[channels.p]\ntype = "ntfy"\nurl = "https://ntfy.sh/t"\ntoken_env = "NTFY_TOKEN"\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["p"]\n',
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
    cache = state / store.CONFIG_CACHE
    assert SECRET not in cache.read_text()
    assert cache.stat().st_mode & 0o777 == 0o600
    before = cache.stat().st_mtime_ns
    assert config.load_cached(str(state), None) == cfg
    assert cache.stat().st_mtime_ns == before  # not re-parsed


def cached_error(state: Path) -> object:
    """The error the cache recorded for the newest entry (what the hooks met)."""
    return json.loads((state / store.CONFIG_CACHE).read_text())["entries"][-1]["error"]


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
    cache = json.loads((state / store.CONFIG_CACHE).read_text())
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
            },
            "d": {"type": "desktop"},
        },
        "rules": [{"when": ["done"], "channels": ["d", "phone"]}],
    }
    assert config.warnings(config.validate(raw)) == []


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
    with pytest.raises(config.ConfigError) as info:
        config.load()
    assert error in info.value.errors[0]


def test_no_suggestion_for_a_word_that_is_not_close(cfg_file: Path) -> None:
    write(cfg_file, '[channels.d]\ntype = "desktop"\nvolume = 3\n')
    with pytest.raises(config.ConfigError) as info:
        config.load()
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
    with pytest.raises(config.ConfigError) as info:
        config.load()
    (error,) = info.value.errors
    assert f"got {shown}" in error
    assert "secret-topic" not in error and "pw" not in error and "top!c" not in error


def test_a_webhook_url_without_scheme_is_shown_without_its_token(cfg_file: Path) -> None:
    write(cfg_file, '[channels.w]\ntype = "webhook"\nurl = "hooks.slack.com/services/T0/B0/XYZ"\n')
    with pytest.raises(config.ConfigError) as info:
        config.load()
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
    assert config.warnings(config.load()) == [warning]


# -- what a project file may set (C1) and where it is looked for (C2) ---------------------------

USER_CONFIG = """
[channels.phone]
type = "ntfy"
url = "https://ntfy.example/users-topic"
token = "tk_USERS_SECRET"

[channels.team]
type = "webhook"
url = "https://hooks.example/users-hook"
enabled = false

[[rules]]
when = ["permission"]
channels = ["phone"]
"""


@pytest.mark.parametrize(
    "text",
    [
        '[[rules]]\nwhen = ["done"]\nchannels = ["phone"]\nprojects = ["api"]\n',
        '[[rules]]\nwhen = ["done"]\nchannels = ["phone"]\nagents = ["claude"]\n'
        "min_duration_s = 60\ncooldown_s = 30\ninclude_subagents = true\n"
        'quiet_hours = "22:00-07:00"\nquiet_kinds = ["done"]\n',
        '[templates.done]\ntitle = "{project} finished"\n',
        "[channels.phone]\nenabled = false\n",
    ],
)
def test_a_project_file_may_narrow_or_quiet_without_trust(
    cfg_file: Path, tmp_path: Path, text: str
) -> None:
    write(cfg_file, USER_CONFIG)
    project = tmp_path / "home" / "api"
    write(project / ".claude" / "lookout.toml", text)
    cfg, pf = config.resolve(str(project))
    assert pf is not None and (pf.ignored, pf.adds, pf.trusted) == (None, [], False)
    assert cfg["channels"]["phone"]["url"] == "https://ntfy.example/users-topic"


@pytest.mark.parametrize(
    ("text", "first"),
    [
        # a program of the repository's choosing
        (
            '[channels.x]\ntype = "command"\nargv = ["/bin/sh", "-c", "id"]\n',
            'channels.x.type = "command"',
        ),
        # the user's token, re-pointed at another server
        ('[channels.phone]\nurl = "http://127.0.0.1:9/exfil"\n', "channels.phone.url = "),
        # any environment variable, sent out
        (
            '[channels.leak]\ntype = "ntfy"\nurl = "http://127.0.0.1:9/t"\n'
            'token_env = "GITHUB_TOKEN"\n',
            'channels.leak.type = "ntfy"',
        ),
        ("[channels.team]\nenabled = true\n", "channels.team.enabled = true"),
        (
            '[channels.w]\nurl_env = "AWS_SECRET"\ntype = "webhook"\n',
            'channels.w.url_env = "AWS_SECRET"',
        ),
        ("[channels.phone]\npriority = 5\n", "channels.phone.priority = 5"),
        ('[channels.team]\nheaders = { X = "y" }\n', "channels.team.headers = "),
        ('[channels.phone]\ncontent = "full"\n', 'channels.phone.content = "full"'),
        ('[channels.phone]\nclick = "https://evil.example"\n', "channels.phone.click = "),
        (
            '[[rules]]\nwhen = ["permission"]\nchannels = ["phone"]\n'
            'escalate_after_s = 5\nescalate_to = ["team"]\n',
            "rules[0].escalate_after_s = 5",
        ),
    ],
)
def test_a_project_file_that_adds_anything_is_ignored_until_trusted(
    cfg_file: Path, tmp_path: Path, text: str, first: str
) -> None:
    write(cfg_file, USER_CONFIG)
    project = tmp_path / "home" / "evil"
    path = write(project / ".claude" / "lookout.toml", text)
    cfg, pf = config.resolve(str(project))
    assert pf is not None and pf.ignored is not None
    assert pf.ignored.startswith(f"not trusted; it sets {first}"), pf.ignored
    assert pf.adds[0].startswith(first)
    # What the hooks, the sender and `lookout test` use is exactly the user's config.
    assert cfg == config.load(str(tmp_path))
    assert cfg["channels"]["phone"]["url"] == "https://ntfy.example/users-topic"
    assert cfg["channels"]["team"]["enabled"] is False
    # Trusted (path + hash in the user's state), it applies; one changed byte and it is ignored.
    store_trust(path)
    trusted, pf = config.resolve(str(project))
    assert pf is not None and (pf.ignored, pf.trusted) == (None, True)
    assert trusted != cfg
    path.write_text(text + "# changed\n")
    again, pf = config.resolve(str(project))
    assert pf is not None and pf.ignored is not None
    assert pf.ignored.startswith("changed since you trusted it")
    assert again == cfg


def store_trust(path: Path) -> None:
    import hashlib

    from lookout import store

    state = Path(os.environ["LOOKOUT_STATE_DIR"])
    store.ensure_dir(str(state))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    store.write_json_atomic(
        str(state / store.TRUST), {"v": 1, "files": {str(path): {"sha256": digest}}}
    )


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    outside = tmp_path / "srv"  # not under $HOME
    write(outside / ".claude" / "lookout.toml", "")
    repo = outside / "checkout"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert config.project_path(str(repo / "src")) is None  # srv/ is above the repository root
    write(repo / ".claude" / "lookout.toml", "")
    assert config.project_path(str(repo / "src")) == str(repo / ".claude" / "lookout.toml")


def test_outside_home_and_any_repository_only_cwd_is_looked_at(tmp_path: Path) -> None:
    # /tmp/.claude/lookout.toml planted by another user must not reach sessions below /tmp.
    shared = tmp_path / "shared"
    write(shared / ".claude" / "lookout.toml", "")
    work = shared / "work"
    work.mkdir()
    assert config.project_path(str(work)) is None
    assert config.project_path(str(shared)) == str(shared / ".claude" / "lookout.toml")


def test_below_home_the_search_still_reaches_a_parent(tmp_path: Path) -> None:
    project = tmp_path / "home" / "work"
    write(project / ".claude" / "lookout.toml", "")
    (project / "a" / "b").mkdir(parents=True)
    assert config.project_path(str(project / "a" / "b")) == str(
        project / ".claude" / "lookout.toml"
    )


@pytest.mark.parametrize(
    ("mode", "dir_mode", "why"),
    [
        (0o666, 0o755, "the file is writable by every user"),
        (0o644, 0o777, "its directory is writable by every user"),
    ],
)
def test_a_project_file_others_can_write_is_ignored(
    tmp_path: Path, mode: int, dir_mode: int, why: str
) -> None:
    project = tmp_path / "home" / "api"
    path = write(project / ".claude" / "lookout.toml", "[channels.desktop]\nenabled = false\n")
    path.chmod(mode)
    path.parent.chmod(dir_mode)
    cfg, pf = config.resolve(str(project))
    assert pf is not None and pf.ignored == why
    assert cfg["channels"]["desktop"]["enabled"] is True


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the file to another uid")
def test_a_project_file_owned_by_someone_else_is_ignored(tmp_path: Path) -> None:
    project = tmp_path / "home" / "api"
    path = write(project / ".claude" / "lookout.toml", "[channels.desktop]\nenabled = false\n")
    os.chown(path, 2002, 2002)
    cfg, pf = config.resolve(str(project))
    assert pf is not None and pf.ignored == "the file is owned by uid 2002, not by you"
    assert cfg["channels"]["desktop"]["enabled"] is True


def test_timeout_ms_has_an_upper_bound(cfg_file: Path) -> None:
    # 2**63-1 used to crash the sender's job with OverflowError (L13).
    assert errors_of(
        '[channels.d]\ntype = "desktop"\ntimeout_ms = 9223372036854775807\n', cfg_file
    ) == [
        f"{G}: channels.d.timeout_ms: expected an integer from 1 to 600000, got 9223372036854775807"
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the file to another uid")
def test_trust_someone_else_wrote_is_no_trust(cfg_file: Path, tmp_path: Path) -> None:
    project = tmp_path / "home" / "evil"
    path = write(project / ".claude" / "lookout.toml", '[channels.x]\ntype = "desktop"\n')
    store_trust(path)
    assert config.resolve(str(project))[1].trusted  # type: ignore[union-attr]
    os.chown(Path(os.environ["LOOKOUT_STATE_DIR"]) / "trust.json", 2002, 2002)
    pf = config.resolve(str(project))[1]
    assert pf is not None and not pf.trusted and pf.ignored is not None


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
