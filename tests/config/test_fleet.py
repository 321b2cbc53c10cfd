"""`[fleet]`: every key as the issue names it, validated with errors that name file, key and
expectation; checked by `lookout check-config`; never taken from a project file."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from lookout.config import fleet
from lookout.config.check import ConfigError
from lookout.errors import LookoutError
from tests.helpers import lookout, write_config


def errors(raw: object) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        fleet.validate(raw, "config.toml")
    return caught.value.errors


def test_defaults() -> None:
    cfg = fleet.validate({"mqtt": "mqtt://broker.lan"})
    assert (cfg.broker_host, cfg.port, cfg.tls, cfg.url) == (
        "broker.lan",
        1883,
        False,
        "mqtt://broker.lan:1883",
    )
    assert cfg.topic_prefix == "lookout"
    assert cfg.keepalive_s == 30
    assert cfg.content == "summary"
    assert cfg.home_assistant is False
    assert cfg.home_assistant_prefix == "homeassistant"
    assert cfg.username is None and cfg.password() is None
    assert cfg.host == fleet.default_host()
    assert cfg.hub == ""  # no hub: each host answers and steers only its own


def test_the_default_host_is_the_hostname_made_topic_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "dev box+1.lan")
    assert fleet.default_host() == "dev-box-1.lan"
    monkeypatch.setattr(socket, "gethostname", lambda: "")
    assert fleet.default_host() == "localhost"


def test_every_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("x")
    monkeypatch.setenv("MQ_PASSWORD", "pw")
    cfg = fleet.validate(
        {
            "mqtt": "mqtts://10.0.0.5:9883",
            "ca_file": str(ca),
            "username": "laptop",
            "password_env": "MQ_PASSWORD",
            "host": "laptop.home",
            "topic_prefix": "org/team-a/lookout",
            "keepalive_s": 60,
            "content": "none",
            "home_assistant": True,
            "home_assistant_prefix": "ha",
        }
    )
    assert (cfg.tls, cfg.port, cfg.ca_file, cfg.username, cfg.password()) == (
        True,
        9883,
        str(ca),
        "laptop",
        "pw",
    )
    assert (cfg.host, cfg.topic_prefix, cfg.keepalive_s, cfg.content) == (
        "laptop.home",
        "org/team-a/lookout",
        60,
        "none",
    )
    assert cfg.home_assistant and cfg.home_assistant_prefix == "ha"
    assert fleet.validate({"mqtt": "mqtts://b"}).port == 8883


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, "config.toml: fleet: missing key 'mqtt'"),
        ({"mqtt": "http://b"}, "fleet.mqtt: expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"),
        ({"mqtt": "mqtt://b:99999"}, "fleet.mqtt: not a valid URL"),
        ({"mqtt": "mqtt://"}, "fleet.mqtt: no broker host"),
        ({"mqtt": "mqtt://b/x"}, "fleet.mqtt: expected no path, query or fragment"),
        ({"mqtt": 1883}, "fleet.mqtt: expected a non-empty string, got int"),
        ({"mqtt": "mqtt://b", "ca_file": "/x"}, "fleet.ca_file: needs an mqtts:// URL"),
        ({"mqtt": "mqtts://b", "ca_file": "/nonexistent/ca"}, "fleet.ca_file: no such file"),
        ({"mqtt": "mqtt://b", "password_env": "P"}, "fleet.password_env: needs username"),
        ({"mqtt": "mqtt://b", "username": "u", "password_env": "A B"}, "environment variable name"),
        ({"mqtt": "mqtt://b", "host": "a/b"}, "fleet.host: expected letters, digits"),
        ({"mqtt": "mqtt://b", "host": "+"}, "fleet.host: expected letters, digits"),
        ({"mqtt": "mqtt://b", "topic_prefix": "a/+/b"}, "fleet.topic_prefix: expected no wildcard"),
        ({"mqtt": "mqtt://b", "topic_prefix": "$SYS"}, "fleet.topic_prefix: must not start with $"),
        ({"mqtt": "mqtt://b", "topic_prefix": "a//b"}, "fleet.topic_prefix: expected levels"),
        ({"mqtt": "mqtt://b", "topic_prefix": "/a"}, "fleet.topic_prefix: expected levels"),
        ({"mqtt": "mqtt://b", "keepalive_s": 2}, "fleet.keepalive_s: expected 5 to 65535"),
        ({"mqtt": "mqtt://b", "keepalive_s": 30.5}, "fleet.keepalive_s: expected a whole number"),
        ({"mqtt": "mqtt://b", "keepalive_s": True}, "fleet.keepalive_s: expected a whole number"),
        ({"mqtt": "mqtt://b", "content": "all"}, "fleet.content: expected one of full, summary"),
        ({"mqtt": "mqtt://b", "home_assistant": "yes"}, "fleet.home_assistant: expected true"),
        ({"mqtt": "mqtt://b", "home_asistant": True}, "fleet.home_asistant: unknown key"),
        ({"mqtt": "mqtt://b", "home_assistant_prefix": "#"}, "home_assistant_prefix: expected"),
        ({"mqtt": "mqtt://b", "answers": "yes"}, "fleet.answers: expected true or false"),
        ({"mqtt": "mqtt://b", "hub": "a/b"}, "fleet.hub: expected letters, digits"),
        ({"mqtt": "mqtt://b", "hub": ""}, "fleet.hub: expected a non-empty string"),
        ({"mqtt": "mqtt://b", "hub": True}, "fleet.hub: expected a non-empty string, got bool"),
    ],
)
def test_errors_name_the_key_and_the_expectation(raw: dict[str, object], expected: str) -> None:
    found = errors(raw)
    assert any(expected in e for e in found), found
    assert all(e.startswith("config.toml: fleet") for e in found)


def test_credentials_in_the_url_are_refused_and_never_echoed() -> None:
    [error] = errors({"mqtt": "mqtt://bob:hunter2@b"})
    assert "credentials do not belong in the URL" in error
    assert "hunter2" not in error


def test_a_password_key_is_refused() -> None:
    [error] = errors({"mqtt": "mqtt://b", "password": "hunter2"})
    assert "fleet.password: a password does not belong in a config file" in error
    assert "password_env" in error and "hunter2" not in error


def test_an_unset_password_variable_is_an_error_with_a_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NOPE_PW", raising=False)
    cfg = fleet.validate({"mqtt": "mqtt://b", "username": "u", "password_env": "NOPE_PW"})
    with pytest.raises(LookoutError) as caught:
        cfg.password()
    assert "NOPE_PW" in str(caught.value) and caught.value.hint


def test_not_configured() -> None:
    with pytest.raises(fleet.NotConfigured) as caught:
        fleet.load()
    assert "no config file" in str(caught.value) and "[fleet]" in (caught.value.hint or "")
    write_config('[channels.d]\ntype = "desktop"\n')
    with pytest.raises(fleet.NotConfigured, match=r"has no \[fleet\] table"):
        fleet.load()


def test_check_config_validates_fleet() -> None:
    write_config('[fleet]\nmqtt = "mqtt://127.0.0.1:1883"\nhost = "box"\n')
    out = lookout("check-config")
    assert out.returncode == 0, out.stderr
    assert "fleet: ok (mqtt://127.0.0.1:1883 as host box, topics lookout/box/..." in out.stdout

    write_config('[fleet]\nmqtt = "mqtt://127.0.0.1:1883"\nkeepalive_s = 1\ncontent = "x"\n')
    out = lookout("check-config")
    assert out.returncode == 1
    lines = out.stderr.splitlines()
    assert any("fleet.keepalive_s: expected 5 to 65535 seconds, got 1" in x for x in lines)
    assert any("fleet.content: expected one of full, summary, none" in x for x in lines)
    assert all(x.startswith("error: ") for x in lines)


def test_check_config_shows_notify_and_fleet_errors_together() -> None:
    write_config('[fleet]\nmqtt = "ftp://x"\n[channels.d]\ntype = "nope"\n')
    out = lookout("check-config")
    assert out.returncode == 1
    assert "channels.d.type" in out.stderr and "fleet.mqtt" in out.stderr


def test_check_config_warns_about_an_unset_password_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("UNSET_MQ_PW", raising=False)
    write_config('[fleet]\nmqtt = "mqtt://b"\nusername = "u"\npassword_env = "UNSET_MQ_PW"\n')
    out = lookout("check-config")
    assert out.returncode == 0
    assert "warning: fleet.password_env: environment variable UNSET_MQ_PW is not set" in out.stdout


def test_a_project_file_cannot_name_a_broker(tmp_path: Path) -> None:
    # A repository's .claude/lookout.toml is not the user's: it never chooses where state goes.
    project = Path(os.environ["HOME"]) / "src" / "repo"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "lookout.toml").write_text('[fleet]\nmqtt = "mqtt://evil:1883"\n')
    out = lookout("check-config", "--project", str(project))
    assert out.returncode == 1
    assert "lookout.toml: fleet: only your own config file may name a broker" in out.stderr
    with pytest.raises(fleet.NotConfigured):
        fleet.load()


def test_check_config_warns_when_the_user_is_not_the_host() -> None:
    # A config copied from another host: the documented ACL denies every publish.
    write_config('[fleet]\nmqtt = "mqtt://b"\nusername = "hostC"\nhost = "hostB"\n')
    out = lookout("check-config")
    assert out.returncode == 0
    assert (
        "warning: fleet.username (hostC) is not fleet.host (hostB): the broker ACL in"
        " docs/fleet.md lets each user write only the host of its own name"
    ) in out.stdout.splitlines()
    write_config('[fleet]\nmqtt = "mqtt://b"\nusername = "hostB"\nhost = "hostB"\n')
    assert "is not fleet.host" not in lookout("check-config").stdout


@pytest.mark.parametrize(
    ("mqtt", "login", "expected"),
    [
        ("mqtt://broker.example.org:1883", True, "the broker login (fleet-user, password from"),
        ("mqtt://broker.example.org:1883", False, "every session's text crosses the network"),
        ("mqtt://192.168.1.5", False, "every session's text crosses the network"),
        ("mqtt://127.0.0.1:1883", True, None),
        ("mqtt://[::1]:1883", True, None),
        ("mqtt://localhost", True, None),
        ("mqtts://broker.example.org", True, None),
    ],
)
def test_check_config_warns_of_a_cleartext_broker_off_this_machine(
    mqtt: str, login: bool, expected: str | None
) -> None:
    # N7 (security-2.md): a password over plain mqtt:// to another machine got "fleet: ok".
    extra = 'username = "fleet-user"\npassword_env = "FLEET_PW"\n' if login else ""
    write_config(f'[fleet]\nmqtt = "{mqtt}"\nhost = "box"\n{extra}')
    out = lookout("check-config")
    assert out.returncode == 0, out.stderr
    warned = [x for x in out.stdout.splitlines() if x.startswith("warning: fleet.mqtt:")]
    if expected is None:
        assert warned == []
    else:
        (line,) = warned
        assert "is not encrypted" in line and expected in line and "mqtts://" in line


def test_doctor_warns_of_a_cleartext_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    from lookout.commands.doctor import features
    from lookout.fleet import mqtt
    from lookout.install import checks

    def offline() -> None:
        raise LookoutError("no client")  # never reach for the network in a test

    monkeypatch.setattr(mqtt, "require", offline)
    write_config(
        '[fleet]\nmqtt = "mqtt://broker.example.org"\nusername = "u"\npassword_env = "P"\n'
    )
    report = checks.Report()
    features.check_fleet(report)
    warn = [c for c in report.checks if c.status == checks.WARN and "not encrypted" in c.message]
    assert len(warn) == 1 and "mqtts://" in (warn[0].hint or "")


@pytest.mark.parametrize(
    ("mqtt", "answers", "shown"),
    [
        ("mqtt://broker.example.org", True, "mqtt://broker.example.org:1883"),
        ("mqtt://192.168.1.5:1884", True, "mqtt://192.168.1.5:1884"),
        ("mqtt://broker.example.org", False, None),
        ("mqtt://127.0.0.1:1883", True, None),
        ("mqtt://[::1]:1883", True, None),
        ("mqtt://localhost", True, None),
        ("mqtts://broker.example.org", True, None),
    ],
)
def test_check_config_warns_of_answers_over_a_cleartext_broker_off_this_machine(
    mqtt: str, answers: bool, shown: str | None
) -> None:
    # Issue 31: whoever watches the network reads the password and the press tokens.
    write_config(
        f'[fleet]\nmqtt = "{mqtt}"\nhost = "box"\nusername = "box"\npassword_env = "FLEET_PW"\n'
        f"home_assistant = true\nanswers = {'true' if answers else 'false'}\n"
    )
    out = lookout("check-config")
    assert out.returncode == 0, out.stderr
    lines = [x for x in out.stdout.splitlines() if x.startswith("warning: fleet.answers: Home")]
    assert lines == (
        [
            f"warning: fleet.answers: Home Assistant answers over {shown}, which is not"
            " encrypted: whoever can watch that network reads the broker password and the press"
            " tokens, and can approve your commands (use mqtts://)"
        ]
        if shown
        else []
    )


def test_doctor_warns_of_answers_over_a_cleartext_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    from lookout.commands.doctor import features
    from lookout.fleet import mqtt
    from lookout.install import checks

    def offline() -> None:
        raise LookoutError("no client")  # never reach for the network in a test

    monkeypatch.setattr(mqtt, "require", offline)
    for url, expected in (("mqtt://broker.example.org", 1), ("mqtt://127.0.0.1", 0)):
        write_config(
            f'[fleet]\nmqtt = "{url}"\nusername = "u"\npassword_env = "P"\n'
            "home_assistant = true\nanswers = true\n"
        )
        report = checks.Report()
        features.check_fleet(report)
        warn = [
            c for c in report.checks if c.status == checks.WARN and "fleet.answers" in c.message
        ]
        assert len(warn) == expected
        if warn:
            assert "approve your commands" in warn[0].message
            assert warn[0].hint == 'a broker with TLS (mqtt = "mqtts://..."), or answers = false'


def test_a_login_for_another_host_is_said_once() -> None:
    write_config('[fleet]\nmqtt = "mqtt://127.0.0.1"\nhost = "box"\nusername = "other"\n')
    out = lookout("check-config")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("warning: fleet.username (other) is not fleet.host (box)") == 1


AUTHENTICATED = {"mqtt": "mqtt://b", "username": "h", "password_env": "P", "home_assistant": True}


def test_answers_are_off_by_default_and_on_with_an_authenticated_connection() -> None:
    assert fleet.validate(AUTHENTICATED).answers is False
    assert fleet.validate({**AUTHENTICATED, "answers": True}).answers is True


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            {**AUTHENTICATED, "answers": True, "username": None, "password_env": None},
            [
                "config.toml: fleet.answers: needs an authenticated broker connection (username"
                " and password_env): on an anonymous one anybody on the broker could approve"
                " commands"
            ],
        ),
        (
            {"mqtt": "mqtt://b", "username": "h", "answers": True, "home_assistant": True},
            [
                "config.toml: fleet.answers: needs an authenticated broker connection (username"
                " and password_env): on an anonymous one anybody on the broker could approve"
                " commands"
            ],
        ),
        (
            {**AUTHENTICATED, "answers": True, "home_assistant": False},
            [
                "config.toml: fleet.answers: needs home_assistant = true (the buttons are Home"
                " Assistant entities)"
            ],
        ),
    ],
)
def test_answers_are_refused_without_a_login_or_home_assistant(
    raw: dict[str, object], expected: list[str]
) -> None:
    assert errors({k: v for k, v in raw.items() if v is not None}) == expected


def test_check_config_says_answers_and_warns_without_remote(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MQ_PW", "x")
    fleet_table = (
        '[fleet]\nmqtt = "mqtt://127.0.0.1:1883"\nhost = "box"\nusername = "box"\n'
        'password_env = "MQ_PW"\nhome_assistant = true\nanswers = true\n'
    )
    write_config(fleet_table)
    out = lookout("check-config")
    assert out.returncode == 0, out.stderr
    assert "Home Assistant discovery, answers from Home Assistant buttons)" in out.stdout
    assert "warning: fleet.answers: [remote] enabled is not true" in out.stdout
    write_config(fleet_table + "[remote]\nenabled = true\n")
    out = lookout("check-config")
    assert out.returncode == 0 and "fleet.answers" not in out.stdout, out.stdout


def test_check_config_names_the_hub_and_warns_without_a_login() -> None:
    write_config('[fleet]\nmqtt = "mqtt://127.0.0.1"\nhost = "laptop"\nhub = "desktop"\n')
    out = lookout("check-config")
    assert out.returncode == 0, out.stderr
    assert ", hub desktop (may answer and steer this host))" in out.stdout
    assert (
        "warning: fleet.hub: without a login (username and password_env) the broker cannot tell"
        " the hub desktop from anybody else, so no host takes presses or steering from it"
    ) in out.stdout.splitlines()
    write_config(
        '[fleet]\nmqtt = "mqtt://127.0.0.1"\nhost = "desktop"\nhub = "desktop"\n'
        'username = "desktop"\npassword_env = "P"\n'
    )
    out = lookout("check-config")
    assert "the fleet's hub (listens on the shared chat surfaces)" in out.stdout
    assert "fleet.hub:" not in out.stdout
