"""The Matrix channel's sending side (lookout.channels.matrix) against a loopback double of the
client-server API (tests/matrix_api.py): plain text, edits with m.replace, an encrypted room
refused, the event size, the config's keys, and no token in any detail. The answering side runs
against a real Synapse in tests/surfaces/test_matrix.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout.channels import matrix, registry
from lookout.commands import main as cli
from lookout.config import files
from tests.helpers import write_config
from tests.matrix_api import MatrixApi

TOKEN = "syt_bG9va291dGJvdA_unit-secret-token"
ROOM = "!room:localhost"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[MatrixApi]:
    monkeypatch.setenv("MX", TOKEN)
    matrix._CLEAR.clear()  # each double is a new homeserver on a new port; keep no memory
    with MatrixApi(TOKEN, ROOM) as double:
        yield double


def channel(url: str, room: str = ROOM) -> dict[str, Any]:
    return {
        "type": "matrix",
        "homeserver": url,
        "user_id": "@bot:localhost",
        "access_token_env": "MX",
        "room_id": room,
        "allowed_user_ids": ["@me:localhost"],
        "timeout_ms": 5000,
    }


def msg(**kw: Any) -> dict[str, Any]:
    return {"title": "demo · done", "body": "took 3s", "kind": "done", "values": {}, **kw}


def test_an_alert_is_plain_text_and_an_update_edits_it(api: MatrixApi) -> None:
    ch = channel(api.url)
    result, detail, ref = registry.send(ch, msg(), 5)
    assert (result, detail, ref) == ("sent", "m.room.message $ev1", "$ev1")
    assert api.events[0]["content"] == {"msgtype": "m.text", "body": "demo · done\ntook 3s"}
    result, detail, _ = registry.send(ch, msg(title="demo · handled", update=True, ref=ref), 5)
    assert (result, detail) == ("sent", "m.replace $ev1")
    assert api.events[1]["content"] == {
        "msgtype": "m.text",
        "body": "* demo · handled\ntook 3s",
        "m.new_content": {"msgtype": "m.text", "body": "demo · handled\ntook 3s"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": "$ev1"},
    }
    # the room's encryption was looked at once in this process, not before every event
    looks = [c for c in api.calls if "m.room.encryption" in c[1]]
    assert len(looks) == 1


def test_an_encrypted_room_is_refused_with_a_clear_error(
    api: MatrixApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.encrypted = True
    result, detail, ref = registry.send(channel(api.url), msg(), 5)
    assert (result, ref) == ("failed", None)
    assert detail == matrix.ENCRYPTED.format(room=ROOM)
    assert "end-to-end encrypted" in detail
    assert not api.events


def test_failures_say_why_without_the_token(
    api: MatrixApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, detail, _ = registry.send(channel(api.url, room="!other:localhost"), msg(), 5)
    assert result == "failed" and "HTTP 403 M_FORBIDDEN User not in room" in detail
    monkeypatch.setenv("MX", "wrong-token-value")
    result, detail, _ = registry.send(channel(api.url), msg(), 5)
    assert result == "failed" and "HTTP 401 M_UNKNOWN_TOKEN" in detail
    monkeypatch.setenv("MX", TOKEN)
    result, detail, _ = registry.send(channel("http://127.0.0.1:9"), msg(), 5)
    assert result == "failed" and "cannot connect" in detail and TOKEN not in detail
    monkeypatch.delenv("MX")
    assert registry.send(channel(api.url), msg(), 5)[:2] == (
        "failed",
        "environment variable MX is not set",
    )


def test_the_text_stays_within_the_event_size_and_shows_control_characters() -> None:
    text = matrix.text_of("t\x1b[31m", "é" * 40000 + '"' * 1000, "Allowed by Matrix user @me:x")
    assert text.startswith("t\\x1b[31m\n")
    assert text.endswith("…\n\nAllowed by Matrix user @me:x")
    assert matrix.size(text) <= matrix.BODY_MAX
    # an edit carries the text twice: the whole event stays within Matrix's 65536 bytes
    import json

    content = {
        "msgtype": "m.text",
        "body": f"* {text}",
        "m.new_content": {"msgtype": "m.text", "body": text},
        "m.relates_to": {"rel_type": "m.replace", "event_id": "$" + "x" * 255},
    }
    envelope = 1024  # the homeserver's own keys: sender, room_id, hashes, signatures, ...
    size = len(json.dumps(content, ensure_ascii=False).encode())
    assert size + envelope <= matrix.EVENT_MAX


def test_the_config_names_what_is_missing_or_wrong(isolated_env: Path) -> None:
    with pytest.raises(files.ConfigError) as exc:
        files.validate({"channels": {"m": {"type": "matrix"}}, "rules": []})
    assert exc.value.errors == [
        "config.toml: channels.m: missing key 'homeserver' (the homeserver's URL, e.g."
        " https://matrix.example.org)",
        "config.toml: channels.m: missing key 'access_token_env' (the environment variable"
        " holding the bot's access token)",
        "config.toml: channels.m: missing key 'user_id' (the bot account's Matrix id, e.g."
        " @lookout:example.org)",
        "config.toml: channels.m: missing key 'room_id' (the room the bot writes to, e.g."
        " !abc:example.org)",
    ]
    bad = {
        "type": "matrix",
        "homeserver": "matrix.example.org",
        "access_token_env": "MX",
        "user_id": "lookout",
        "room_id": "!abc",  # a room id of room version 12: no server part
        "allowed_user_ids": [42],
    }
    with pytest.raises(files.ConfigError) as exc:
        files.validate({"channels": {"m": bad}, "rules": []})
    assert [e.split(": ", 1)[1] for e in exc.value.errors] == [
        "channels.m.homeserver: expected an http(s) URL, got 'matrix.example.org' (no http:// or"
        " https://)",
        "channels.m.user_id: expected a Matrix id like '@lookout:example.org', got 'lookout'",
        "channels.m.allowed_user_ids: expected a list of Matrix user ids like"
        " '@me:example.org', got [42]",
    ]


def test_channel_add_and_check_config_say_who_answers(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = matrix.EXAMPLE.replace("'", "").split()[1:]
    assert cli.main(argv) == 0
    assert "added channel room (matrix)" in capsys.readouterr().out
    ch = files.load()["channels"]["room"]
    assert (ch["homeserver"], ch["room_id"], ch["allowed_user_ids"]) == (
        "https://matrix.example.org",
        "!abc:example.org",
        ["@me:example.org"],
    )
    assert cli.main(["channel", "add", "r2", "--type", "matrix", "--url", "https://m.x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: a matrix channel needs --url (the homeserver's URL (homeserver))")
    assert "the config file is unchanged" in err
    write_config(
        '[remote]\nenabled = true\n[channels.room]\ntype = "matrix"\n'
        'homeserver = "http://matrix.example.org"\naccess_token_env = "MX_UNSET"\n'
        'user_id = "@bot:example.org"\nroom_id = "!abc:example.org"\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["room"]\n'
    )
    cli.main(["check-config"])
    said = capsys.readouterr()
    err = said.out + said.err
    assert "channels.room.access_token_env: environment variable MX_UNSET is not set" in err
    assert "channels.room.homeserver: http://matrix.example.org is not encrypted: the access" in err
    assert "channels.room.allowed_user_ids is empty: no reaction or reply answers" in err


def test_a_project_file_never_adds_a_matrix_channel(isolated_env: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / ".claude").mkdir()
    (project / ".claude" / "lookout.toml").write_text(
        '[channels.room]\ntype = "matrix"\nhomeserver = "https://evil.example"\n'
        'access_token_env = "MX"\nuser_id = "@x:evil.example"\nroom_id = "!r:evil.example"\n'
        'allowed_user_ids = ["@x:evil.example"]\n'
    )
    try:
        cfg = files.load(str(project))
    except files.ConfigError as exc:
        assert "channels.room" in str(exc.errors)  # refused, and says what it refused
    else:
        assert "room" not in cfg["channels"]


def test_doctor_says_an_encrypted_room_or_a_refused_token(
    api: MatrixApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx: Any = {"answers": True, "last": lambda names: None}
    ch = channel(api.url)
    assert matrix.doctor({"room": ch}, ctx) == [
        ("room", "ok", f"matrix: room {ROOM} reachable, unencrypted", None)
    ]
    matrix._CLEAR.clear()
    api.encrypted = True
    ((name, status, said, hint),) = matrix.doctor({"room": ch}, ctx)
    assert (name, status, hint) == ("room", "warn", "lookout test room")
    assert said == "matrix: " + matrix.ENCRYPTED.format(room=ROOM)
    monkeypatch.setenv("MX", "a wrong token")
    ((_, status, said, _),) = matrix.doctor({"room": ch}, ctx)
    assert status == "warn" and "does not hold an access token" in said
