"""Codex sessions through the same runtime: Codex-shaped hook payloads, and the legacy `notify`
program that gets the turn's JSON as its last argument (never on stdin)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lookout import runner, store
from lookout.sessions import Row, load_sessions
from tests.helpers import ROOT

THREAD = "b5f6c1c2-1111-2222-3333-444455556666"
TURN = {
    "type": "agent-turn-complete",
    "thread-id": THREAD,
    "turn-id": "12345",
    "cwd": "/Users/alice/projects/example",
    "client": "codex-tui",
    "input-messages": ["Rename `foo` to `bar` and update the callsites."],
    "last-assistant-message": "Rename complete and verified `cargo build` succeeds.",
}

pytestmark = pytest.mark.usefixtures("no_notifications")


def notify(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / "codex_notify.py"), *args],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=False,
    )


def sessions(state_dir: Path) -> list[Row]:
    return load_sessions(str(state_dir))


def lines(state_dir: Path) -> list[dict[str, Any]]:
    path = state_dir / "events.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_a_completed_turn_is_the_threads_stop(state_dir: Path) -> None:
    proc = notify(json.dumps(TURN))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    (record,) = lines(state_dir)
    assert (record["event"], record["agent"], record["session_id"]) == ("Stop", "codex", THREAD)
    assert record["notify"] == ["done"]
    (session,) = sessions(state_dir)
    assert (session["status"], session["agent"], session["project"]) == ("idle", "codex", "example")
    assert session["summary"] == "Rename complete and verified `cargo build` succeeds."


def test_a_turn_that_asks_is_a_question(state_dir: Path) -> None:
    notify(
        json.dumps(dict(TURN, **{"last-assistant-message": "Both work. Which one do you want?"}))
    )
    assert lines(state_dir)[0]["notify"] == ["question"]


def test_the_same_turn_twice_decides_its_outcome_once(state_dir: Path) -> None:
    notify(json.dumps(TURN))
    notify(json.dumps(dict(TURN, client="other")))  # a different delivery of the same turn
    assert [r["notify"] for r in lines(state_dir)] == [["done"], []]


def test_older_codex_payloads_without_ids_or_message(state_dir: Path) -> None:
    old = {
        "type": "agent-turn-complete",
        "turn-id": "1",
        "input-messages": ["x"],
        "last-assistant-message": None,
    }
    assert notify(json.dumps(old)).returncode == 0
    (record,) = lines(state_dir)
    assert record["session_id"] == "codex:unknown"
    assert record["agent"] == "codex" and record["status"] == "idle"


def test_other_notify_types_are_recorded_and_harmless(state_dir: Path) -> None:
    notify(json.dumps({"type": "approval-requested", "thread-id": THREAD, "cwd": "/w/x"}))
    (record,) = lines(state_dir)
    assert record["event"] == "CodexNotify:approval-requested"
    assert record["notify"] == []


@pytest.mark.parametrize(
    "args", [(), ("{not json",), ("--",), ("[1, 2]",)], ids=["none", "junk", "dashes", "array"]
)
def test_bad_arguments_are_logged_never_raised(args: tuple[str, ...], state_dir: Path) -> None:
    proc = notify(*args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert lines(state_dir) == []
    assert "codex notify: argument is not a JSON object" in (state_dir / "errors.log").read_text()


def test_the_previous_notify_program_still_runs_with_the_same_json(
    tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "previous-argv.json"
    previous = [
        sys.executable,
        "-c",
        "import json, sys; open(sys.argv[1], 'w').write(json.dumps(sys.argv[2:]))",
        str(out),
    ]
    payload = json.dumps(TURN)
    assert notify("--", *previous, payload).returncode == 0
    deadline = time.monotonic() + 10
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert json.loads(out.read_text()) == [payload]
    assert lines(state_dir)[0]["session_id"] == THREAD


def test_a_missing_previous_program_does_not_lose_the_turn(state_dir: Path) -> None:
    assert notify("--", "/nonexistent/notifier", json.dumps(TURN)).returncode == 0
    assert lines(state_dir)[0]["event"] == "Stop"
    assert "nonexistent" in (state_dir / "errors.log").read_text()


def codex_hook(event: str, **fields: Any) -> dict[str, Any]:
    body = {
        "session_id": "019a-codex",
        "transcript_path": None,
        "cwd": "/w/api",
        "hook_event_name": event,
        "model": "gpt-5-codex",
        "permission_mode": "default",
    }
    if event != "SessionStart":
        body["turn_id"] = "t1"
    body.update(fields)
    return body


def test_codex_hook_payloads_give_the_same_statuses(state_dir: Path) -> None:
    sequence = [
        ("session_start.py", codex_hook("SessionStart", source="startup"), "idle", None),
        ("user_prompt_submit.py", codex_hook("UserPromptSubmit", prompt="fix it"), "working", None),
        (
            "pre_tool_use.py",
            codex_hook(
                "PreToolUse",
                tool_name="shell",
                tool_input={"command": ["cargo", "test"]},
                tool_use_id="c1",
            ),
            "working",
            None,
        ),
        (
            "permission_request.py",
            codex_hook(
                "PermissionRequest", tool_name="shell", tool_input={"command": ["cargo", "test"]}
            ),
            "attention",
            "permission",
        ),
        (
            "post_tool_use.py",
            codex_hook(
                "PostToolUse",
                tool_name="shell",
                tool_input={"command": ["cargo", "test"]},
                tool_use_id="c1",
                tool_response="ok",
            ),
            "working",
            None,
        ),
        (
            "stop.py",
            codex_hook("Stop", stop_hook_active=False, last_assistant_message="Tests pass."),
            "idle",
            None,
        ),
    ]
    for script, body, status, reason in sequence:
        proc = subprocess.run(
            [sys.executable, "-I", "-S", str(ROOT / "hooks" / script)],
            input=json.dumps(body).encode(),
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
        (session,) = sessions(state_dir)
        assert (session["status"], session["reason"]) == (status, reason), script
        assert session["agent"] == "codex"
    assert [r["notify"] for r in lines(state_dir)][-1] == ["done"]
    assert lines(state_dir)[3]["summary"] == "cargo test"


def test_record_notify_in_process(state_dir: Path) -> None:
    runner.record_notify(
        "codex", json.dumps(TURN), 1_800_000_000_000, str(state_dir), {"CLAUDE_PID": "1"}
    )
    (record,) = lines(state_dir)
    assert record["pid"] is None  # Codex's notify child is not a Claude process


# -- 0.169.0's interactive events, through the installed scripts (LOOKOUT_AGENT=codex) ---------

FIXTURE = ROOT / "tests" / "fixtures" / "codex" / "payloads"
# Which script each event runs, as install.py --agent codex registers it.
SCRIPTS = {
    "UserPromptSubmit": "user_prompt_submit.py",
    "PreToolUse": "pre_tool_use.py",
    "PermissionRequest": "permission_request.py",
    "PostToolUse": "post_tool_use.py",
    "SessionEnd": "session_end.py",
    "Stop": "stop.py",
    "Interrupt": "event.py",
    "PreModelRequest": "event.py",
}


def captured(event: str, **fields: Any) -> dict[str, Any]:
    """A payload the real 0.169.0 sent, as one thread's (the fixtures' own ids)."""
    body: dict[str, Any] = json.loads((FIXTURE / f"{event}.json").read_text())
    body["session_id"], body["turn_id"] = "01a2-thread", "01a2-turn"
    if event == "SessionEnd":
        del body["turn_id"]
    body.update(fields)
    return body


def run_codex(state_dir: Path, event: str, **fields: Any) -> Row:
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / SCRIPTS[event])],
        input=json.dumps(captured(event, **fields)).encode(),
        capture_output=True,
        env={**os.environ, "LOOKOUT_AGENT": "codex"},
        timeout=30,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    (session,) = sessions(state_dir)
    return session


def escalated(state_dir: Path, command: str) -> Row:
    """A prompt, then a command Codex asks about: its PreToolUse (the command alone), then its
    PermissionRequest (the command and the model's justification)."""
    run_codex(state_dir, "UserPromptSubmit", prompt="build it")
    bash = {"tool_name": "Bash", "tool_input": {"command": command}}
    run_codex(state_dir, "PreToolUse", **bash, tool_use_id="call_1")
    asked = {"command": command, "description": "it needs the network"}
    return run_codex(state_dir, "PermissionRequest", tool_name="Bash", tool_input=asked)


def test_an_approved_command_ends_its_permission_by_what_runs(state_dir: Path) -> None:
    session = escalated(state_dir, "sleep 8")
    assert (session["status"], session["reason"]) == ("attention", "permission")
    # Approved: its PostToolUse carries the command without the justification; the same call.
    after = run_codex(
        state_dir,
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "sleep 8"},
        tool_use_id="call_1",
        tool_response="",
    )
    assert (after["status"], after["detail"]) == ("working", "Thinking")
    ended = [r for r in lines(state_dir) if r["event"] == "PostToolUse"]
    assert ended[-1]["notify"] == ["resolved"] and ended[-1]["answer"] == "allowed"


def test_another_command_does_not_end_the_permission(state_dir: Path) -> None:
    escalated(state_dir, "sleep 8")
    after = run_codex(
        state_dir,
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "sleep 9"},
        tool_use_id="call_2",
        tool_response="",
    )
    assert (after["status"], after["reason"]) == ("attention", "permission")


def test_esc_at_the_approval_prompt_ends_the_attention_and_the_turn(state_dir: Path) -> None:
    escalated(state_dir, "touch made")
    session = run_codex(state_dir, "Interrupt")
    assert (session["status"], session["reason"], session["detail"]) == ("idle", None, None)
    assert session["evidence"] == "hook"
    (record,) = [r for r in lines(state_dir) if r["event"] == "Interrupt"]
    assert record["notify"] == ["resolved"] and record["answer"] == "denied in the terminal"


def test_esc_while_a_command_runs_makes_the_session_idle(state_dir: Path) -> None:
    run_codex(state_dir, "UserPromptSubmit", prompt="wait")
    bash = {"tool_name": "Bash", "tool_input": {"command": "sleep 30"}, "tool_use_id": "c9"}
    assert run_codex(state_dir, "PreToolUse", **bash)["detail"] == "Bash"
    session = run_codex(state_dir, "Interrupt")
    assert (session["status"], session["detail"], session["evidence"]) == ("idle", None, "hook")
    assert [r["notify"] for r in lines(state_dir)][-1] == []  # the user stopped it: no alert


def test_a_model_request_after_a_dialog_says_it_was_answered(state_dir: Path) -> None:
    escalated(state_dir, "curl example.org")
    # A hook's deny (or any answer without the tool's PostToolUse): Codex asks its model again.
    session = run_codex(state_dir, "PreModelRequest")
    assert (session["status"], session["detail"]) == ("working", "Thinking")
    (record,) = [r for r in lines(state_dir) if r["event"] == "PreModelRequest"]
    assert record["notify"] == ["resolved"] and "answer" not in record  # how: not known


def test_a_model_request_is_a_sign_of_life(state_dir: Path) -> None:
    run_codex(state_dir, "UserPromptSubmit", prompt="think")
    prompted = store.read_session(str(state_dir), "01a2-thread")
    after = run_codex(state_dir, "PreModelRequest")
    assert (after["status"], after["detail"]) == ("working", None)
    asked = store.read_session(str(state_dir), "01a2-thread")
    assert prompted is not None and asked is not None
    # What stuck detection reads (lookout.silence.heard_ms): the request's hook ran later.
    assert asked["heard_ms"] > prompted["heard_ms"]
    assert lines(state_dir)[-1]["event"] == "PreModelRequest"


def test_a_quit_codex_session_ends(state_dir: Path) -> None:
    run_codex(state_dir, "UserPromptSubmit", prompt="hi")
    run_codex(state_dir, "Stop", last_assistant_message="hello")
    session = run_codex(state_dir, "SessionEnd")
    assert (session["status"], session["reason"]) == ("ended", "other")


def test_request_user_input_is_a_question(state_dir: Path) -> None:
    run_codex(state_dir, "UserPromptSubmit", prompt="rename it")
    asked = {
        "questions": [
            {
                "id": "name",
                "header": "Name",
                "question": "Which name should the module get?",
                "options": [{"label": "core", "description": "short"}],
            }
        ]
    }
    session = run_codex(
        state_dir, "PreToolUse", tool_name="request_user_input", tool_input=asked, tool_use_id="q1"
    )
    assert (session["status"], session["reason"]) == ("attention", "question")
    assert session["summary"] == "Which name should the module get?"
    after = run_codex(
        state_dir,
        "PostToolUse",
        tool_name="request_user_input",
        tool_input=asked,
        tool_use_id="q1",
        tool_response="core",
    )
    assert (after["status"], after["reason"]) == ("working", None)
