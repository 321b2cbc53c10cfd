"""Each channel against a real counterpart: notify-send to a real notification daemon on a private
D-Bus bus, ntfy and webhooks to loopback receivers following their wire formats, commands run
without a shell."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from lookout import templates
from lookout.channels import base, registry, webhook
from lookout.config import files, notify
from tests.receivers import NotificationBus, ntfy_receiver, require, webhook_receiver

INJECTION = "$(touch pwned) ; rm -rf ~ `id`"
TOKEN = "tk_0123456789secret"


def channel(raw: dict[str, Any]) -> dict[str, Any]:
    name = "c"
    return files.validate({"channels": {name: raw}})["channels"][name]


def msg_for(kind: str = "permission", content: str = "full", **fields: Any) -> dict[str, Any]:
    intent: dict[str, Any] = {
        "kind": kind,
        "session_id": "s1",
        "agent": "claude",
        "agent_id": None,
        "project": "demo",
        "cwd": "/w/demo",
        "reason": kind if kind in notify.ATTENTION_KINDS else None,
        "tool_name": "Bash",
        "summary": "rm -rf build/",
        "message": "",
        "duration_ms": None,
        "episode": "s1:permission:1",
        "ts": "2026-11-25T22:00:00.000Z",
        "ts_ms": 0,
    }
    intent.update(fields)
    title, body = templates.render_texts(intent, templates.DEFAULTS, content)
    return {
        "title": title,
        "body": body,
        "kind": kind,
        "intent": intent,
        "values": templates.values(intent, content),
        "update": False,
    }


def fake_program(directory: Path, name: str, script: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!{sys.executable}\n{script}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# -- desktop -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bus() -> Iterator[NotificationBus]:
    require(*NotificationBus.BINARIES)
    with NotificationBus() as b:
        yield b


def test_notify_send_reaches_a_real_daemon(
    bus: NotificationBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
    ch = channel(
        {
            "type": "desktop",
            "urgency": {"permission": "critical", "default": "low"},
            "app_name": "lookout-test",
        }
    )
    start = len(bus.calls)
    result, detail, ref = registry.send(ch, msg_for(), 5)
    assert result == "sent" and ref is not None and ref.isdigit()
    assert detail == f"notify-send id {ref}"
    call = bus.wait_calls(start + 1)[start]
    assert (call["app_name"], call["summary"], call["body"], call["urgency"]) == (
        "lookout-test",
        "demo · needs permission",
        "Bash: rm -rf build/",
        2,
    )

    # update in place: same id, low urgency, transient
    update = msg_for("resolved", reason="permission", duration_ms=4000)
    update.update(update=True, ref=ref)
    assert registry.send(ch, update, 5)[0] == "sent"
    call = bus.wait_calls(start + 2)[start + 1]
    assert (call["replaces_id"], call["summary"], call["body"], call["urgency"]) == (
        int(ref),
        "demo · permission handled",
        "after 4s",
        0,
    )
    assert call["hints"]["transient"]["data"] is True


def test_notify_send_title_starting_with_dash(
    bus: NotificationBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
    start = len(bus.calls)
    msg = msg_for(project="-u critical", summary="--help")
    assert registry.send(channel({"type": "desktop"}), msg, 5)[0] == "sent"
    call = bus.wait_calls(start + 1)[start]
    assert (call["summary"], call["body"], call["urgency"]) == (
        "-u critical · needs permission",
        "Bash: --help",
        1,
    )


def test_desktop_without_notify_send(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert registry.send(channel({"type": "desktop"}), msg_for(), 5) == (
        "failed",
        "notify-send not found on PATH",
        None,
    )


def test_desktop_that_hangs_is_cut_at_its_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_program(tmp_path / "bin", "notify-send", "import time; time.sleep(30)\n")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    start = time.monotonic()
    assert registry.send(channel({"type": "desktop"}), msg_for(), 0.5) == (
        "failed",
        "timed out after 0.5s",
        None,
    )
    assert time.monotonic() - start < 5


def test_macos_osascript_gets_texts_as_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "argv.json"
    fake_program(
        tmp_path / "bin",
        "osascript",
        f"import json, sys\nopen({str(log)!r}, 'w').write(json.dumps(sys.argv[1:]))\n",
    )
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("LOOKOUT_PLATFORM", "macos")  # no alerter/terminal-notifier on PATH
    msg = msg_for(summary='say "hi" & quit')
    assert registry.send(channel({"type": "desktop"}), msg, 5)[0] == "sent"
    argv = json.loads(log.read_text())
    assert argv[-2:] == ["demo · needs permission", 'Bash: say "hi" & quit']
    assert 'say "hi"' not in " ".join(argv[:-2])  # never interpolated into the script


# -- ntfy --------------------------------------------------------------------------------------


def test_ntfy_json_publish_with_unicode_title_and_token() -> None:
    with ntfy_receiver(token=TOKEN) as rx:
        ch = channel(
            {
                "type": "ntfy",
                "url": f"{rx.url}/my-topic",
                "token": TOKEN,
                "tags": ["robot"],
                "click": "https://example.invalid/x",
                "priority": {"permission": "urgent", "default": 2},
            }
        )
        msg = msg_for(project="démo ✅")
        msg["sequence_id"] = "lookout-abc"
        result, detail, ref = registry.send(ch, msg, 5)
        assert (result, ref) == ("sent", "lookout-abc")
        assert detail == f"HTTP 200 {rx.url}/…"
        (req,) = rx.requests
        assert (req.method, req.path) == ("POST", "/")
        assert req.headers["authorization"] == f"Bearer {TOKEN}"
        assert rx.messages == [
            {
                "id": rx.messages[0]["id"],
                "time": rx.messages[0]["time"],
                "event": "message",
                "topic": "my-topic",
                "title": "démo ✅ · needs permission",
                "message": "Bash: rm -rf build/",
                "priority": 5,
                "tags": ["robot"],
                "click": "https://example.invalid/x",
                "sequence_id": "lookout-abc",
            }
        ]


def test_ntfy_basic_auth_and_default_priorities() -> None:
    with ntfy_receiver(token="alice:pw") as rx:
        ch = channel({"type": "ntfy", "url": f"{rx.url}/t", "token": "alice:pw"})
        assert registry.send(ch, msg_for("done", reason=None), 5)[0] == "sent"
        assert registry.send(ch, msg_for("question"), 5)[0] == "sent"
        assert [m["priority"] for m in rx.messages] == [3, 4]


def test_ntfy_token_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    with ntfy_receiver(token=TOKEN) as rx:
        ch = channel({"type": "ntfy", "url": f"{rx.url}/t", "token_env": "MY_NTFY"})
        monkeypatch.delenv("MY_NTFY", raising=False)
        assert registry.send(ch, msg_for(), 5) == (
            "failed",
            "environment variable MY_NTFY is not set",
            None,
        )
        monkeypatch.setenv("MY_NTFY", TOKEN)
        assert registry.send(ch, msg_for(), 5)[0] == "sent"


@pytest.mark.parametrize(
    ("token", "detail"),
    [
        (None, "HTTP 403: forbidden (code 40301)"),
        ("tk_wrong", "HTTP 401: unauthorized (code 40101)"),
    ],
    ids=["anonymous", "wrong-token"],
)
def test_ntfy_auth_errors_are_failures(token: str | None, detail: str) -> None:
    with ntfy_receiver(token=TOKEN) as rx:
        raw: dict[str, Any] = {"type": "ntfy", "url": f"{rx.url}/t"}
        if token:
            raw["token"] = token
        assert registry.send(channel(raw), msg_for(), 5) == ("failed", detail, None)
        assert rx.messages == []


def test_ntfy_update_lowers_priority_and_keeps_sequence() -> None:
    with ntfy_receiver() as rx:
        ch = channel({"type": "ntfy", "url": f"{rx.url}/t"})
        msg = msg_for("resolved", duration_ms=1000)
        msg.update(update=True, sequence_id="lookout-seq", ref="lookout-seq")
        assert registry.send(ch, msg, 5)[0] == "sent"
        assert (rx.messages[0]["priority"], rx.messages[0]["sequence_id"]) == (2, "lookout-seq")


def test_ntfy_that_hangs_is_cut_at_its_timeout() -> None:
    with ntfy_receiver(delay_s=30) as rx:
        start = time.monotonic()
        result = registry.send(channel({"type": "ntfy", "url": f"{rx.url}/t"}), msg_for(), 0.5)
        assert result == ("failed", "timed out after 0.5s", None)
        assert time.monotonic() - start < 5


def test_connection_refused_names_no_secret() -> None:
    with webhook_receiver() as rx:
        dead = rx.url
    result, detail, _ = registry.send(
        channel({"type": "webhook", "url": f"{dead}/services/T0/{TOKEN}"}), msg_for(), 2
    )
    assert result == "failed"
    assert detail.startswith(f"cannot connect to {dead}/…: ")
    assert TOKEN not in detail


# -- webhooks ----------------------------------------------------------------------------------


def test_slack_webhook() -> None:
    with webhook_receiver() as rx:
        ch = channel(
            {"type": "webhook", "url": f"{rx.url}/services/T0/B0/{TOKEN}", "format": "slack"}
        )
        result, detail, _ = registry.send(ch, msg_for(summary="a <b> & c"), 5)
        assert (result, detail) == ("sent", f"HTTP 200 {rx.url}/…")
        (req,) = rx.requests
        assert req.path == f"/services/T0/B0/{TOKEN}"
        assert req.headers["content-type"] == "application/json"
        assert req.json() == {"text": "*demo · needs permission*\nBash: a &lt;b&gt; &amp; c"}


def test_discord_webhook_204_and_no_mentions() -> None:
    with webhook_receiver(status=204) as rx:
        ch = channel({"type": "webhook", "url": f"{rx.url}/api/webhooks/1/x", "format": "discord"})
        long = msg_for("done", message="@everyone " + "x" * 3000, duration_ms=1000)
        assert registry.send(ch, long, 5)[0] == "sent"
        body = rx.requests[0].json()
        assert body["allowed_mentions"] == {"parse": []}
        assert body["content"].startswith("**demo · done in 1s**\n@everyone")
        assert len(body["content"]) <= 2000


def test_json_webhook_with_headers_and_url_env(monkeypatch: pytest.MonkeyPatch) -> None:
    with webhook_receiver() as rx:
        monkeypatch.setenv("HOOK_URL", f"{rx.url}/in")
        ch = channel({"type": "webhook", "url_env": "HOOK_URL", "headers": {"X-Auth": "s3cret"}})
        assert registry.send(ch, msg_for(), 5)[0] == "sent"
        req = rx.requests[0]
        assert req.headers["x-auth"] == "s3cret"
        assert req.json() == {
            "title": "demo · needs permission",
            "message": "Bash: rm -rf build/",
            "kind": "permission",
            "reason": "permission",
            "project": "demo",
            "session_id": "s1",
            "agent": "claude",
            "episode": "s1:permission:1",
            "duration_ms": None,
            "ts": "2026-11-25T22:00:00.000Z",
        }


def test_webhook_error_status_is_a_failure() -> None:
    with webhook_receiver(status=403) as rx:  # Slack's answer for a revoked webhook
        ch = channel({"type": "webhook", "url": f"{rx.url}/x"})
        assert registry.send(ch, msg_for(), 5) == ("failed", "HTTP 403: invalid_token", None)


# -- command / apprise -------------------------------------------------------------------------


def test_command_gets_text_as_arguments_and_no_shell_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "argv.json"
    recorder = fake_program(
        tmp_path / "bin",
        "recorder",
        "import json, os, sys\n"
        f"open({str(log)!r}, 'w').write(json.dumps([sys.argv[1:], os.environ['LOOKOUT_BODY']]))\n",
    )
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    ch = channel(
        {
            "type": "command",
            "argv": [str(recorder), "{title}", "{message}", "--", "{{literal}} {summary}"],
        }
    )
    msg = msg_for("done", message=INJECTION, summary=INJECTION, tool_name=None, duration_ms=2000)
    assert registry.send(ch, msg, 5)[0] == "sent"
    argv, body_env = json.loads(log.read_text())
    # {message} is Claude's markdown made plain (backquotes dropped); {summary} is verbatim
    plain = "$(touch pwned) ; rm -rf ~ id"
    assert argv == ["demo · done in 2s", plain, "--", "{literal} " + INJECTION]
    assert body_env == plain
    assert not (work / "pwned").exists() and not (tmp_path / "pwned").exists()
    assert Path(os.environ["HOME"]).exists()


def test_command_failure_reports_exit_code_and_stderr(tmp_path: Path) -> None:
    prog = fake_program(
        tmp_path / "bin", "fails", "import sys\nsys.stderr.write('boom\\n')\nsys.exit(3)\n"
    )
    ch = channel({"type": "command", "argv": [str(prog)]})
    assert registry.send(ch, msg_for(), 5) == ("failed", "fails exited with 3: boom", None)


def test_apprise_missing_is_a_clear_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "apprise", None)
    ch = channel({"type": "apprise", "urls": [f"json://127.0.0.1:1/{TOKEN}"]})
    assert registry.send(ch, msg_for(), 5) == (
        "failed",
        "the optional 'apprise' package is not installed "
        "(pip install apprise into lookout's environment)",
        None,
    )


def test_redact_replaces_every_secret() -> None:
    text = f"bad https://h.example/x/{TOKEN} and {TOKEN}"
    assert (
        base.redact(text, [f"https://h.example/x/{TOKEN}", TOKEN])
        == "bad https://h.example/… and …"
    )


def test_macos_cannot_update_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_program(tmp_path / "bin", "osascript", "pass\n")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("LOOKOUT_PLATFORM", "macos")  # no alerter/terminal-notifier on PATH
    msg = msg_for("resolved", reason="permission")
    msg.update(update=True, ref="1")
    assert registry.send(channel({"type": "desktop"}), msg, 5) == (
        "skipped",
        "osascript cannot replace a notification",
        None,
    )


def test_apprise_json_url_to_a_loopback_receiver() -> None:
    pytest.importorskip("apprise", reason="the optional apprise extra is not installed")
    with webhook_receiver() as rx:
        port = rx.url.rsplit(":", 1)[1]
        ch = channel({"type": "apprise", "urls": [f"json://127.0.0.1:{port}/hook"]})
        result, detail, _ = registry.send(ch, msg_for(), 10)
        assert (result, detail) == ("sent", "apprise (1 url(s))")
        body = rx.requests[0].json()
        assert (body["title"], body["message"]) == (
            "demo · needs permission",
            "Bash: rm -rf build/",
        )


def test_apprise_failure_is_reported() -> None:
    pytest.importorskip("apprise", reason="the optional apprise extra is not installed")
    with webhook_receiver(status=403) as rx:
        port = rx.url.rsplit(":", 1)[1]
        ch = channel({"type": "apprise", "urls": [f"json://127.0.0.1:{port}/hook"]})
        assert registry.send(ch, msg_for(), 10) == ("failed", "apprise reported a failure", None)


# -- what a server, a token or a message can do (L2, L3, L4) --------------------------------


@contextlib.contextmanager
def redirecting(to: str) -> Iterator[str]:
    """A loopback server answering every call with a 302 to `to`: its URL."""

    class Redirect(BaseHTTPRequestHandler):
        def redirect(self) -> None:
            self.send_response(302)
            self.send_header("Location", to)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_PUT = redirect

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_a_redirect_is_refused_and_the_token_never_reaches_the_other_origin() -> None:
    with webhook_receiver() as other:
        with redirecting(f"{other.url}/landed") as url:
            ch = channel({"type": "ntfy", "url": f"{url}/mytopic", "token": TOKEN})
            result, detail, _ref = registry.send(ch, msg_for(), 5)
        assert (result, detail) == (
            "failed",
            "HTTP 302: redirect refused (set the URL the server redirects to)",
        )
        assert other.requests == []


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ({"type": "telegram", "token_env": "T_TOKEN", "chat_id": 1}, "sendMessage: HTTP 302"),
        (
            {
                "type": "matrix",
                "access_token_env": "T_TOKEN",
                "user_id": "@bot:x",
                "room_id": "!r:x",
            },
            "GET /rooms/%21r%3Ax/state/m.room.encryption/: HTTP 302",
        ),
    ],
)
def test_a_chat_api_that_redirects_gets_no_token_elsewhere(
    kind: dict[str, Any], said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token rides in the path (Telegram) or a header (Matrix): a redirect is not followed."""
    monkeypatch.setenv("T_TOKEN", TOKEN)
    with webhook_receiver() as other:
        with redirecting(f"{other.url}/landed") as url:
            key = "api_url" if kind["type"] == "telegram" else "homeserver"
            ch = channel({**kind, key: url})
            result, detail, _ref = registry.send(ch, msg_for(), 5)
        assert result == "failed" and detail.startswith(said), detail
        assert TOKEN not in detail
        assert other.requests == []


def test_a_token_with_a_newline_is_refused_without_quoting_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NTFY_TOKEN", "tk_LEAKEDTOKEN12345\n")
    ch = channel({"type": "ntfy", "url": "http://127.0.0.1:9/t", "token_env": "NTFY_TOKEN"})
    assert registry.send(ch, msg_for(), 5) == (
        "failed",
        "environment variable NTFY_TOKEN holds whitespace or control characters",
        None,
    )


def test_a_url_with_a_space_is_refused_without_quoting_it() -> None:
    ch = channel({"type": "webhook", "url": "http://127.0.0.1:9/services/T0/B0/SuperSecret Token"})
    result, detail, _ = registry.send(ch, msg_for(), 5)
    assert (result, detail) == ("failed", "the URL holds whitespace or control characters")


def test_redact_url() -> None:
    assert (
        base.redact_url("https://hooks.slack.com/services/T0/B0/secret")
        == "https://hooks.slack.com/…"
    )
    assert base.redact_url("https://user:pw@h.example:8443/x") == "https://h.example:8443/…"
    assert base.redact_url("not a url") == "…"


def test_redaction_covers_pieces_of_a_secret_in_exception_text() -> None:
    text = "ValueError: Invalid header value b'Bearer tk_LEAKEDTOKEN12345\\n'"
    assert "LEAKED" not in base.redact(text, ["tk_LEAKEDTOKEN12345\n"])
    text = "InvalidURL: URL can't contain control characters. '/services/T0ABC/B0ABC/SuperSecret'"
    out = base.redact(text, ["https://hooks.slack.com/services/T0ABC/B0ABC/SuperSecret"])
    assert "SuperSecret" not in out and "T0ABC" not in out


def test_desktop_text_has_no_nul_and_no_markup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "argv.json"
    fake_program(
        tmp_path / "bin",
        "notify-send",
        f"import json, sys\nopen({str(log)!r}, 'w').write(json.dumps(sys.argv[1:]))\nprint(7)\n",
    )
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    msg = msg_for()
    msg["title"] = "proj\x00ect · needs permission"
    msg["body"] = 'Finished <a href="https://evil.example/login">re-auth</a> & <img src="x"/>'
    assert registry.send(channel({"type": "desktop"}), msg, 5)[0] == "sent"
    argv = json.loads(log.read_text())
    assert argv[-2:] == [
        "proj ect · needs permission",
        'Finished &lt;a href="https://evil.example/login"&gt;re-auth&lt;/a&gt; &amp; '
        '&lt;img src="x"/&gt;',
    ]


# -- remote answers: an alert links to the request's page, never carries a decision ------------

LINK = "https://laptop.tail.ts.net:8787/#request=0123456789abcdef0123"


def test_ntfy_links_to_the_request_page_with_a_view_action() -> None:
    with ntfy_receiver() as rx:
        ch = channel({"type": "ntfy", "url": f"{rx.url}/t"})
        assert registry.send(ch, msg_for(url=LINK), 5)[0] == "sent"
        (sent,) = rx.messages
        assert sent["click"] == LINK
        assert [{k: v for k, v in a.items() if k != "id"} for a in sent["actions"]] == [
            {"action": "view", "label": "Answer", "url": LINK, "clear": True}
        ]
        assert "nonce" not in json.dumps(sent)


@pytest.mark.parametrize(
    ("fmt", "where"),
    [("json", "url"), ("slack", "text"), ("discord", "content")],
)
def test_webhooks_carry_the_link(fmt: str, where: str) -> None:
    body = webhook.body(fmt, msg_for(url=LINK))
    assert LINK in str(body[where])
    plain = webhook.body(fmt, msg_for())
    assert "request=" not in json.dumps(plain)


@pytest.mark.parametrize(
    ("raw", "key", "what"),
    [
        ({"type": "apprise"}, "urls", "Apprise service URLs"),
        ({"type": "command"}, "argv", "the program and its arguments, no shell"),
    ],
)
def test_a_list_a_type_needs_is_missing_or_empty(raw: dict[str, Any], key: str, what: str) -> None:
    with pytest.raises(files.ConfigError) as missing:
        channel(raw)
    assert missing.value.errors == [f"config.toml: channels.c: missing key {key!r} ({what})"]
    with pytest.raises(files.ConfigError) as empty:
        channel({**raw, key: []})
    assert empty.value.errors == [f"config.toml: channels.c.{key}: expected a non-empty array"]
    assert channel({**raw, key: ["x", "y"]})[key] == ["x", "y"]
