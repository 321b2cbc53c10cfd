"""The dashboard's steering routes over HTTP (issue 33): who may steer (a signed-in page, the
script token; nobody else: 401), what the API refuses when [steer] is off, the body it takes,
that the text and every check are the core's (surface `dashboard`, its own rate), and that a
steering action that waits never holds up the stream or the other requests. The page itself, in
a real browser against real tmux panes: tests/web/test_steer_browser.py."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from lookout.steer import core
from lookout.steer.shapes import SURFACES, SteerError
from lookout.web import steer as web_steer
from tests.commands.test_main import deliver
from tests.helpers import wait_for, write_config
from tests.jump.world import lookout
from tests.web import seed
from tests.web.conftest import Client, Page, read_event, send

API = "aaaa1111-0000-4000-8000-000000000001"
WEB = "bbbb2222-0000-4000-8000-000000000002"
ON = "[steer]\nenabled = true\n"
SAY = f"/api/sessions/{API}/say"
ROUTES = [
    ("GET", "/api/steer", None),
    ("POST", SAY, b'{"text": "hello"}'),
    ("POST", f"/api/sessions/{API}/interrupt", b"{}"),
    ("POST", "/api/start", b'{"project": "/w/api"}'),
]
JSON = {"Content-Type": "application/json"}


def session(state: Path, sid: str, project: str, event: str = "Stop", **env: str) -> None:
    body: dict[str, Any] = {"session_id": sid, "cwd": f"/w/{project}", "hook_event_name": event}
    if event in ("PreToolUse", "PermissionRequest"):
        body.update(tool_name="Bash", tool_input={"command": "make test"})
    deliver(state, body, **env)


def steered(state: Path) -> list[dict[str, Any]]:
    path = state / store.EVENTS
    lines = path.read_text().splitlines() if path.exists() else []
    return [r for r in map(json.loads, lines) if r["event"] == "Steered"]


def post(client: Client, path: str, value: object, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    status, _, body = client.request(
        "POST", path, headers=JSON, body=json.dumps(value).encode(), **kwargs
    )
    return status, json.loads(body)


def signed_in(client: Client, state_dir: Path) -> Page:
    from lookout.web import auth

    return Page.sign_in(client.port, auth.new_code(str(state_dir), seed_now()))


def seed_now() -> int:
    import time

    return int(time.time() * 1000)


def test_dashboard_is_a_surface_of_the_core() -> None:
    # The rate limit is per surface: the dashboard's requests count against its own.
    assert web_steer.SOURCE == "dashboard" and web_steer.SOURCE in SURFACES


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_a_missing_or_wrong_credential_gets_401_and_steers_nothing(
    dashboard: Client, state_dir: Path, method: str, path: str, body: bytes | None
) -> None:
    write_config(ON)
    session(state_dir, API, "api", LOOKOUT_AGENT="gemini")
    page = signed_in(dashboard, state_dir)
    headers = {"Host": f"127.0.0.1:{dashboard.port}", **(JSON if body else {})}
    signed = page.authorization(method, path, body or b"")
    session_id, ts, nonce, mac = signed.split(" ")[1:]
    for authorization in [
        None,
        f"Bearer {'x' * 43}",
        f"Bearer {dashboard.token}x",
        f"Basic {dashboard.token}",
        f"Lookout {session_id} {ts} {nonce} {'A' * len(mac)}",  # a MAC of nothing
        page.authorization(method, path, b'{"text": "other"}'),  # signs another body
        page.authorization(method, "/api/sessions", body or b""),  # signs another path
        page.authorization("GET" if method == "POST" else "POST", path, body or b""),
    ]:
        sent = {**headers, **({"Authorization": authorization} if authorization else {})}
        status, answer, raw = send(dashboard.port, method, path, sent, body)
        assert status == 401, (authorization, raw)
        assert answer["WWW-Authenticate"] == 'Bearer realm="lookout"'
        assert json.loads(raw)["hint"].startswith("run `lookout serve --url`")
    # A cookie carries nothing, a page's request counts once (a replay is refused).
    cookie = {**headers, "Cookie": f"lookout_token={dashboard.token}", "Origin": "http://evil"}
    assert send(dashboard.port, method, path, cookie, body)[0] == 401
    once = {**headers, "Authorization": page.authorization(method, path, body or b"")}
    assert send(dashboard.port, method, path, once, body)[0] != 401
    status, _, raw = send(dashboard.port, method, path, once, body)
    assert (status, json.loads(raw)["error"]) == (401, "this request was sent before (a replay)")
    # Nothing reached the core: one Steered record at most (the one signed request's refusal).
    assert len(steered(state_dir)) <= 1


def test_no_page_of_another_site_can_forge_one(dashboard: Client, state_dir: Path) -> None:
    # CSRF: what a page of another origin can make a browser send without a preflight is a
    # form post (no Authorization header, text/plain or a form type) with the cookies it has.
    write_config(ON)
    session(state_dir, API, "api", LOOKOUT_AGENT="gemini")
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        headers = {
            "Host": f"127.0.0.1:{dashboard.port}",
            "Content-Type": kind,
            "Origin": "https://evil.example",
            "Cookie": f"lookout_token={dashboard.token}",
        }
        assert send(dashboard.port, "POST", SAY, headers, b'{"text": "hi"}')[0] == 401
    # A preflight for the header it would need is not answered: the browser never sends it.
    preflight = {
        "Host": f"127.0.0.1:{dashboard.port}",
        "Origin": "https://evil.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
    }
    status, headers, _ = send(dashboard.port, "OPTIONS", SAY, preflight)
    assert status >= 400 and not any(h.lower().startswith("access-control") for h in headers)
    assert steered(state_dir) == []


def test_the_script_token_may_steer(dashboard: Client, state_dir: Path) -> None:
    # The owner's token (`lookout serve --token`) reaches the core as the page does.
    write_config(ON)
    session(state_dir, API, "api", LOOKOUT_AGENT="gemini")
    status, answer = post(dashboard, SAY, {"text": "hello"})
    assert (status, answer["reason"]) == (409, "no_way")
    assert answer["error"] == (
        "api (aaaa1111): lookout knows no tmux pane for it (it was not started inside tmux)"
    )
    assert answer["hint"] == "start your agents inside tmux for lookout to type into them"
    (line,) = steered(state_dir)
    assert (line["source"], line["outcome"], line["steer"]["reason"]) == (
        "dashboard",
        "refused",
        "no_way",
    )


def test_a_signed_in_page_may_steer(dashboard: Client, state_dir: Path) -> None:
    write_config(ON)
    session(state_dir, API, "api", "PreToolUse")
    session(state_dir, API, "api", "PermissionRequest")
    page = signed_in(dashboard, state_dir)
    status, _, raw = page.request("POST", SAY, b'{"text": "yes"}')
    answer = json.loads(raw)
    assert (status, answer["reason"]) == (409, "attention")
    assert answer["error"] == (
        "api (aaaa1111) waits on you (permission): lookout will not type into an open dialog"
        " (typed keys would answer it)"
    )
    assert answer["hint"] == (
        "answer the dialog first (lookout jump, the dashboard, or lookout answer)"
    )
    assert [r["source"] for r in steered(state_dir)] == ["dashboard"]


def test_steering_off_shows_nothing_to_offer_and_every_route_refuses(
    dashboard: Client, state_dir: Path, tmp_path: Path
) -> None:
    (tmp_path / "src" / "api").mkdir(parents=True)
    write_config(f'[steer]\nenabled = false\nprojects = ["{tmp_path}/src/*"]\n')
    session(state_dir, API, "api", "PreToolUse", LOOKOUT_AGENT="gemini")
    status, answer = dashboard.json("/api/steer")
    assert status == 200
    assert answer == {
        "enabled": False,
        "source": "~/.config/lookout/config.toml",
        "hint": "add `[steer]` with `enabled = true` to your config (docs/steer.md)",
    }  # and not where it could start sessions
    for path, body in [
        (SAY, {"text": "hello"}),
        (f"/api/sessions/{API}/interrupt", {}),
        ("/api/start", {"project": str(tmp_path / "src" / "api")}),
    ]:
        status, answer = post(dashboard, path, body)
        assert (status, answer["reason"]) == (403, "disabled"), path
        assert answer["error"] == (
            "steering is off ([steer] enabled is not true in ~/.config/lookout/config.toml)"
        )
        assert answer["hint"] == (
            "add `[steer]` with `enabled = true` to your config (docs/steer.md)"
        )
    write_config("# nothing\n")  # no [steer] at all: the default, off
    assert dashboard.json("/api/steer")[1]["enabled"] is False
    assert post(dashboard, SAY, {"text": "hello"})[0] == 403
    assert steered(state_dir) == []
    assert (
        not (state_dir / "steer-rate.json").exists()
        or "dashboard" not in (state_dir / "steer-rate.json").read_text()
    )


def test_get_steer_lists_the_projects_start_takes(
    dashboard: Client, state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    for name in ("api", "web", "shared"):
        (src / name).mkdir(parents=True)
    (src / "notes.txt").write_text("not a directory")
    os.chmod(src / "shared", 0o777)  # others could write it: start refuses it, so not listed
    (tmp_path / "link").symlink_to(src / "web")
    write_config(
        f'[steer]\nenabled = true\nprojects = ["{src}/*", "{tmp_path}/link"]\n'
        'agents = ["claude", "gemini"]\nmax_chars = 500\n'
    )
    # Only claude's program is on this server's PATH (issue 38: the form marks the others).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\n")
    (bin_dir / "claude").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    status, answer = dashboard.json("/api/steer")
    assert status == 200
    home = os.environ["HOME"]
    assert answer == {
        "enabled": True,
        "source": "~/.config/lookout/config.toml",
        "projects": [
            {"path": str(src / n), "name": str(src / n).replace(home, "~", 1)}
            for n in ("api", "web")  # the link resolved to web, listed once
        ],
        "agents": ["claude", "gemini"],
        "not_on_path": ["gemini"],
        "steerable": ["claude", "codex", "gemini", "opencode"],
        "max_chars": 500,
        "per_minute": 20,
    }


def test_a_broken_config_is_said_not_a_traceback(dashboard: Client, state_dir: Path) -> None:
    write_config("[steer]\nenabled = 1\n")
    session(state_dir, API, "api")
    status, answer = dashboard.json("/api/steer")
    assert status == 200 and answer["enabled"] is False
    assert "steer.enabled" in answer["error"]
    status, answer = post(dashboard, SAY, {"text": "hi"})
    assert (status, answer["reason"]) == (409, "error")
    assert "steer.enabled" in answer["error"]


@pytest.mark.parametrize(
    ("path", "body", "error"),
    [
        (SAY, [], 'expected {"text": "...", "via": "pane" or "socket" (optional)}'),
        (SAY, {"text": "hi", "to": "x"}, 'expected {"text": "...", "via": "pane" or'),
        (SAY, {"text": 3}, 'expected {"text": "...", "via": "pane" or "socket" (optional)}: each'),
        (SAY, {}, 'expected {"text": "..."}'),
        (SAY, {"text": "hi", "via": "mqtt"}, 'via must be "pane" or "socket"'),
        (f"/api/sessions/{API}/interrupt", {"now": True}, "expected {}"),
        ("/api/start", {"project": ""}, 'expected {"project": "/path"}: one of'),
        ("/api/start", {"project": "/w", "env": {}}, 'expected {"project": "/path", "agent"'),
    ],
)
def test_a_body_of_another_shape_is_refused(
    dashboard: Client, state_dir: Path, path: str, body: object, error: str
) -> None:
    write_config(ON)
    session(state_dir, API, "api")
    status, answer = post(dashboard, path, body)
    assert status == 400 and answer["error"].startswith(error), answer
    assert steered(state_dir) == []


def test_the_body_is_bounded_whatever_max_chars_allows(dashboard: Client, state_dir: Path) -> None:
    write_config(ON + "max_chars = 100000\n")
    session(state_dir, API, "api", LOOKOUT_AGENT="gemini")
    status, answer = post(dashboard, SAY, {"text": "x" * 70_000})
    assert (status, answer["error"]) == (413, "the body is over 65536 bytes")
    assert steered(state_dir) == []


def test_the_path_names_a_session_by_its_whole_id(dashboard: Client, state_dir: Path) -> None:
    # The page addresses the card it shows: never a prefix, a project or a title.
    write_config(ON)
    session(state_dir, API, "api")
    for key in ("aaaa1111", "api", "nosuch"):
        status, answer = post(dashboard, f"/api/sessions/{key}/say", {"text": "hi"})
        assert (status, answer) == (
            404,
            {"error": f"no session {key!r} is recorded", "reason": "no_session"},
        )
    assert steered(state_dir) == []


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("hi \x1b[31mred", "the message holds a control character (\\x1b U+001B) at character 4"),
        ("rm \u202eboog", "the message holds an invisible formatting character (\\u202e"),
        ("x" * 21, "the message has 21 characters, more than [steer] max_chars (20)"),
        (" \n ", "the message is empty"),
    ],
)
def test_the_text_goes_to_the_core_untouched_and_it_refuses(
    dashboard: Client, state_dir: Path, text: str, error: str
) -> None:
    write_config(ON + "max_chars = 20\n")
    session(state_dir, API, "api", LOOKOUT_AGENT="gemini")
    status, answer = post(dashboard, SAY, {"text": text})
    assert status == 400 and answer["error"].startswith(error), answer
    assert answer["reason"] in ("text", "too_long")
    assert "\x1b" not in answer["error"] and "\u202e" not in answer["error"]


def test_the_dashboard_has_a_rate_of_its_own(dashboard: Client, state_dir: Path) -> None:
    write_config(ON + "per_minute = 2\n")
    session(state_dir, API, "api", LOOKOUT_AGENT="gemini")
    for _ in range(2):
        assert post(dashboard, SAY, {"text": "hi"})[0] == 409  # refused, but each one counts
    status, headers, raw = dashboard.request("POST", SAY, headers=JSON, body=b'{"text": "hi"}')
    answer = json.loads(raw)
    assert (status, answer["reason"], headers["Retry-After"]) == (429, "rate", "60")
    assert answer["error"] == (
        "dashboard: 2 steering actions in the last minute, the most [steer] per_minute allows"
    )
    # The terminal's own count is untouched: it gets past the rate to the session's check.
    done = lookout("say", "api", "hi")
    assert done.returncode == 1 and "no tmux pane" in done.stderr
    table = json.loads((state_dir / "steer-rate.json").read_text())["surfaces"]
    assert (len(table["dashboard"]), len(table["terminal"])) == (2, 1)


def test_start_and_interrupt_reach_the_core_with_the_form_as_it_came(
    dashboard: Client, state_dir: Path, tmp_path: Path
) -> None:
    write_config(f'[steer]\nenabled = true\nprojects = ["{tmp_path}/src/*"]\n')
    session(state_dir, API, "api", LOOKOUT_AGENT="gemini")
    status, answer = post(dashboard, "/api/start", {"project": "/tmp", "prompt": "go"})
    assert (status, answer["reason"]) == (403, "project")
    assert answer["error"].startswith("/tmp is not one of the projects [steer] allows")
    status, answer = post(dashboard, "/api/start", {"project": "/tmp", "agent": "copilot"})
    assert (status, answer["reason"]) == (403, "agent")
    assert answer["error"] == ("[steer] agents does not allow starting copilot (allowed: claude)")
    status, answer = post(dashboard, f"/api/sessions/{API}/interrupt", {})
    assert (status, answer["reason"]) == (409, "idle")
    assert answer["error"] == "api (aaaa1111) is idle: there is no turn to interrupt"


class Held:
    """core.say replaced by one that waits until released: a steering action in progress."""

    def __init__(self) -> None:
        self.entered: list[str] = []
        self.release = threading.Event()

    def __call__(self, session: str, text: str, **kwargs: Any) -> Any:
        self.entered.append(session)
        if not self.release.wait(60):
            raise SteerError("failed", "never released")
        raise SteerError("no_way", f"held {session}")


def test_a_waiting_action_holds_up_neither_the_stream_nor_other_requests(
    dashboard: Client, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(ON)
    ids = [f"cccc{n:04d}-0000-4000-8000-000000000000" for n in range(web_steer.MAX_ACTIONS + 1)]
    for sid in ids:
        session(state_dir, sid, f"p{sid[4:8]}")
    held = Held()
    monkeypatch.setattr(core, "say", held)
    stream = dashboard.stream()
    assert read_event(stream)[0] == "snapshot"
    answers: dict[str, tuple[int, dict[str, Any]]] = {}

    def say(sid: str) -> None:
        answers[sid] = post(dashboard, f"/api/sessions/{sid}/say", {"text": "hi"})

    threads = [threading.Thread(target=say, args=(sid,)) for sid in ids[:-1]]
    try:
        for t in threads:
            t.start()
        wait_for(lambda: len(held.entered) == web_steer.MAX_ACTIONS, 20, "the held actions")
        # Meanwhile: the API answers, a hook's change reaches the open stream.
        assert dashboard.json("/api/sessions")[0] == 200
        seed.hook(state_dir, "UserPromptSubmit", WEB, "/w/web", prompt="go")
        name, data = read_event(stream)
        while name != "session" or data["session"]["session_id"] != WEB:
            name, data = read_event(stream)
        # One action per session; MAX_ACTIONS at once, more are refused at once (not queued).
        status, answer = post(dashboard, f"/api/sessions/{ids[0]}/say", {"text": "again"})
        assert (status, answer["reason"]) == (409, "busy")
        assert answer["error"] == "another steering action on this session is still running"
        status, answer = post(dashboard, f"/api/sessions/{ids[-1]}/say", {"text": "more"})
        assert (status, answer["reason"]) == (429, "busy")
        assert answer["error"] == f"{web_steer.MAX_ACTIONS} steering actions are running already"
    finally:
        held.release.set()
        for t in threads:
            t.join(30)
        stream.close()
    assert {a[1]["error"] for a in answers.values()} == {f"held {s}" for s in ids[:-1]}
    # All released: the bound is free again.
    status, answer = post(dashboard, f"/api/sessions/{ids[-1]}/say", {"text": "more"})
    assert answer["error"] == f"held {ids[-1]}"
