"""Codex sessions through the same runtime: Codex-shaped hook payloads, and the legacy `notify`
program that gets the turn's JSON as its last argument (never on stdin)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lookout import runner
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
