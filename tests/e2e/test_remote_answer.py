"""Answering a permission from afar, with the real client: the deciding hook install.py registers
(with `[remote] enabled = true`) waits for an answer and the client obeys it.

The interactive dialog here (and the dashboard's button in test_remote_dashboard.py); print mode
(`claude -p`), whose dialog nobody can answer, is denied at once, with no wait."""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lookout import hookspec
from lookout.install import hooks as install_hooks
from lookout.install import settings as settings_lib
from lookout.remote import requests
from tests.web.conftest import start_serve

from .harness import PrintRun, Sandbox, wait_for

pytestmark = pytest.mark.e2e

COMMAND = "touch made-remotely"


def enable_remote(sandbox: Sandbox, wait_s: int = 60, extra: str = "") -> dict[str, Any]:
    """Turn remote answers on in the sandbox's config and register the deciding hook exactly as
    the installer does (lookout.install.hooks.remote_wanted, for the sandbox's runtime)."""
    sandbox.config.write_text(f"[remote]\nenabled = true\nwait_s = {wait_s}\n{extra}")
    path = sandbox.home / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    recording = data["hooks"]["PermissionRequest"][0]["hooks"][0]["command"]
    python, *_, script = settings_lib.command_words(recording)
    runtime = Path(script).parent.parent
    old = os.environ.get("LOOKOUT_CONFIG")
    os.environ["LOOKOUT_CONFIG"] = str(sandbox.config)
    try:
        wanted = install_hooks.remote_wanted(python, runtime)
    finally:
        if old is None:
            del os.environ["LOOKOUT_CONFIG"]
        else:
            os.environ["LOOKOUT_CONFIG"] = old
    assert [event for event, _ in wanted] == [hookspec.REMOTE_EVENT]
    new = settings_lib.merge(data, install_hooks.wanted(python, runtime) + wanted, [str(runtime)])
    path.write_text(json.dumps(new, indent=2))
    return wanted[0][1]


def in_background(run: Callable[[], PrintRun]) -> tuple[threading.Thread, list[PrintRun]]:
    out: list[PrintRun] = []
    thread = threading.Thread(target=lambda: out.append(run()), daemon=True)
    thread.start()
    return thread, out


def pending(sandbox: Sandbox, timeout: float = 20) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        recs = requests.load_all(str(sandbox.state_dir))
        return next((r for r in recs if r["status"] == "pending"), None)

    return wait_for(probe, timeout, "a pending request in the state dir")


def answer(sandbox: Sandbox, rec: dict[str, Any], decision: str, nonce: str | None = None) -> Any:
    return requests.answer(
        str(sandbox.state_dir),
        rec["id"],
        decision,
        rec["nonce"] if nonce is None else nonce,
        by="the e2e test",
        source="127.0.0.1",
        user_agent="pytest",
        now_ms=int(time.time() * 1000),
    )


def deciding_runs(run: PrintRun) -> list[Any]:
    return [h for h in run.hook_runs if h.event == "PermissionRequest" and h.stdout]


def test_disabled_means_not_registered(sandbox: Sandbox) -> None:
    text = (sandbox.home / ".claude" / "settings.json").read_text()
    assert hookspec.REMOTE_SCRIPT not in text  # zero added time: no process at all
    run = sandbox.claude_print(f"[[bash: {COMMAND}]]")
    perms = [h for h in run.hook_runs if h.event == "PermissionRequest"]
    assert len(perms) == 1 and perms[0].stdout == ""
    assert not (sandbox.project / "made-remotely").exists()
    assert not (sandbox.state_dir / "requests").exists()


def post(served: Any, rid: str, body: dict[str, Any], token: str | None = None) -> tuple[int, Any]:
    """POST /api/requests/<id> to a real `lookout serve`, as a script would (Bearer token)."""
    host, port = served.base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(
            "POST",
            f"/api/requests/{rid}",
            body=json.dumps(body),
            headers={
                "Authorization": f"Bearer {token or served.token}",
                "Content-Type": "application/json",
                "User-Agent": "e2e-phone/1.0",
            },
        )
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_print_mode_is_denied_at_once_with_remote_on(sandbox: Sandbox) -> None:
    """Nobody can answer a `claude -p` dialog (no alert goes out for it): the deciding hook must
    not hold the run for wait_s, the client denies the call at once, as without [remote]."""
    enable_remote(sandbox, wait_s=60)
    run = sandbox.claude_print(f"[[bash: {COMMAND}]]", timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.seconds < 15, run.seconds  # was: blocked for wait_s (60 s here)
    assert not (sandbox.project / "made-remotely").exists()
    perms = [h for h in run.hook_runs if h.event == "PermissionRequest"]
    assert [(h.exit_code, h.outcome, h.stdout) for h in perms] == [(0, "success", "")] * 2
    assert "needs approval" in json.dumps(run.lines)  # the client's own -p denial
    assert requests.load_all(str(sandbox.state_dir)) == []
    sandbox.assert_no_errors()


# -- interactive: the dialog and the deciding hook race; the first answer wins ------------------


@pytest.fixture
def interactive(sandbox: Sandbox) -> Sandbox:
    from ..receivers import require

    require("tmux")
    sandbox.trust_project(idle_ms=2000)
    enable_remote(sandbox, wait_s=120)
    return sandbox


def status_of(sandbox: Sandbox, rid: str) -> str:
    rec = requests.load(str(sandbox.state_dir), rid)
    return str(rec["status"]) if rec else "missing"


@pytest.mark.parametrize("key", ["Enter", "Escape"])
def test_answered_in_the_terminal_first_a_late_answer_gets_409(
    interactive: Sandbox, key: str
) -> None:
    from .harness import ClaudePane

    with ClaudePane(interactive, "--permission-mode", "manual") as pane:
        session = pane.ready()
        pane.type(f"[[bash: {COMMAND}]]")
        pane.wait_screen("Do you want to proceed?")
        rec = pending(interactive)
        assert rec["session_id"] == session
        time.sleep(0.5)
        pane.keys(key)  # "1. Yes" / Esc at the keyboard
        pressed = time.monotonic()
        wait_for(
            lambda: status_of(interactive, rec["id"]) == "answered_locally",
            10,
            "the request to be marked answered in the terminal",
        )
        took = time.monotonic() - pressed
        with pytest.raises(requests.Refused) as late:
            answer(interactive, rec, "deny")
        said = "allowed in the terminal" if key == "Enter" else "denied in the terminal"
        assert (late.value.status, str(late.value)) == (409, said)
        made = interactive.project / "made-remotely"
        if key == "Enter":  # the approved command runs (after its approval was seen)
            wait_for(made.exists, 20, "the approved command to run")
        else:  # the turn is over, and the command never ran
            wait_for(lambda: interactive.session_status(session)["status"] == "idle", 20, "idle")
            assert not made.exists()
        print(f"{key}: request settled {took:.2f} s after the keypress")
    interactive.assert_no_errors()


def test_answered_from_afar_the_dialog_disappears_and_the_tool_runs(interactive: Sandbox) -> None:
    from .harness import ClaudePane

    with ClaudePane(interactive, "--permission-mode", "manual") as pane:
        session = pane.ready()
        pane.type(f"[[bash: {COMMAND}]]")
        pane.wait_screen("Do you want to proceed?")
        rec = pending(interactive)
        answer(interactive, rec, "allow")
        answered = time.monotonic()
        wait_for(lambda: "Do you want to proceed?" not in pane.screen(), 10, "the dialog to go")
        gone = time.monotonic() - answered
        pane.wait_screen("Allowed by PermissionRequest hook")
        wait_for(lambda: (interactive.project / "made-remotely").exists(), 10, "the tool to run")
        interactive.wait_event(session, "RemoteDecision")
        interactive.wait_event(session, "Stop", timeout=15)
        assert gone < 3, gone
        print(f"dialog gone {gone:.2f} s after the answer")
    interactive.assert_no_errors()


def test_allowed_through_the_api_the_tool_runs(interactive: Sandbox) -> None:
    from .harness import ClaudePane

    served = start_serve(env={**os.environ, **interactive.env()})
    try:
        with ClaudePane(interactive, "--permission-mode", "manual") as pane:
            session = pane.ready()
            pane.type(f"[[bash: {COMMAND}]]")
            rec = pending(interactive)
            assert (rec["tool_name"], rec["summary"]) == ("Bash", COMMAND)
            allow = {"decision": "allow", "nonce": rec["nonce"]}
            # Refused: a wrong token, a wrong nonce; the request stays pending.
            assert post(served, rec["id"], allow, token="x" * 43)[0] == 401
            assert post(served, rec["id"], {**allow, "nonce": "x" * len(rec["nonce"])})[0] == 403
            status, body = post(served, rec["id"], allow)
            assert (status, body["request"]["status"]) == (200, "allowed")
            pane.wait_screen("Allowed by PermissionRequest hook")
            wait_for(lambda: (interactive.project / "made-remotely").exists(), 10, "the tool")
            # A replayed nonce is refused: the request was answered once.
            status, body = post(served, rec["id"], {**allow, "decision": "deny"})
            assert (status, body["error"]) == (409, "already answered: allowed")
            interactive.wait_event(session, "RemoteDecision")
    finally:
        served.stop()
    rows = interactive.records(session)
    remote = [r["remote"] for r in rows if r["event"] == "RemoteDecision"]
    assert remote == [
        {
            "request_id": rec["id"],
            "decision": "allow",
            "by": "the dashboard (127.0.0.1)",
            "source": "127.0.0.1",
            "user_agent": "e2e-phone/1.0",
        }
    ]
    assert rec["nonce"] not in interactive.events_file.read_text()
    interactive.assert_no_errors()


def test_denied_from_afar_claude_reads_who_denied(interactive: Sandbox) -> None:
    from .harness import ClaudePane

    with ClaudePane(interactive, "--permission-mode", "manual") as pane:
        pane.ready()
        pane.type(f"[[bash: {COMMAND}]]")
        answer(interactive, pending(interactive), "deny")
        pane.wait_screen("Denied from lookout by the e2e test.")
    assert not (interactive.project / "made-remotely").exists()
    interactive.assert_no_errors()


def test_allow_always_lets_the_same_command_run_again_and_nothing_else(
    interactive: Sandbox,
) -> None:
    from .harness import ClaudePane

    enable_remote(interactive, wait_s=120, extra="allow_always = true\n")
    prompt = "[[bash: touch a1]] [[bash: touch a1]] [[bash: touch a2]]"
    with ClaudePane(interactive, "--permission-mode", "manual") as pane:
        pane.ready()
        pane.type(prompt)
        first = pending(interactive)
        assert (first["allow_always"], first["summary"]) == (True, "touch a1")
        answer(interactive, first, "allow_always")
        state = str(interactive.state_dir)
        # The same command again runs without asking; the next one asks (denied here).
        second = wait_for(
            lambda: next((r for r in requests.load_all(state) if r["id"] != first["id"]), None),
            20,
            "the next request",
        )
        assert second["summary"] == "touch a2", second
        answer(interactive, second, "deny")
        pane.wait_screen("Denied from lookout by the e2e test.")
    assert (interactive.project / "a1").exists() and not (interactive.project / "a2").exists()
    assert len(requests.load_all(str(interactive.state_dir))) == 2
    interactive.assert_no_errors()
