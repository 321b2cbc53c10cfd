"""`lookout ack` and the reconciling `lookout status`, through the real entry point, on state the
real runner recorded."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from lookout import store

from .test_main import deliver, lookout

pytestmark = pytest.mark.usefixtures("no_notifications")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
# The call in permission-esc.jsonl / permission-approved-running.jsonl (Claude Code 2.1.332).
ESC_CALL = {"command": "touch probe-marker", "description": "mock command"}
ESC_AT_MS = 1795659905000  # 2026-11-26T02:25:05Z: the dialog opened; the Esc came 2 s later


def dialog(
    state: Path, tmp_path: Path, sid: str, fixture: str, project: str = "demo", **tool: Any
) -> None:
    """A permission dialog recorded by the runner, whose transcript is a captured one."""
    transcript = tmp_path / f"{sid}.jsonl"
    shutil.copyfile(FIXTURES / fixture, transcript)
    base = {
        "session_id": sid,
        "transcript_path": str(transcript),
        "cwd": f"/home/dev/{project}",
        "prompt_id": "p1",
    }
    call = tool or {"tool_name": "Bash", "tool_input": ESC_CALL}
    env = {"CLAUDE_PID": str(os.getpid()), "CLAUDE_CODE_ENTRYPOINT": "cli"}
    t = ESC_AT_MS
    deliver(state, {**base, "hook_event_name": "SessionStart", "source": "startup"}, t - 900, **env)
    deliver(state, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "go"}, t - 800, **env)
    pre = {**base, "hook_event_name": "PreToolUse", "tool_use_id": "toolu_mock_000002", **call}
    deliver(state, pre, t - 500, **env)
    deliver(state, {**base, "hook_event_name": "PermissionRequest", **call}, t - 400, **env)


def statuses() -> dict[str, tuple[str, str | None]]:
    sessions = json.loads(lookout("status", "--json").stdout)["sessions"]
    return {s["session_id"]: (s["status"], s["reason"]) for s in sessions}


def events(state: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (state / store.EVENTS).read_text().splitlines()]


def test_status_ends_a_dialog_the_transcript_shows_was_escaped(
    state_dir: Path, tmp_path: Path
) -> None:
    dialog(state_dir, tmp_path, "s-esc", "permission-esc.jsonl")
    dialog(state_dir, tmp_path, "s-open", "permission-approved-running.jsonl", project="api")
    assert statuses() == {"s-esc": ("idle", None), "s-open": ("attention", "permission")}
    reconciled = [e for e in events(state_dir) if e["event"] == "Reconciled"]
    assert [(e["session_id"], e["source"], e["outcome"]) for e in reconciled] == [
        ("s-esc", "transcript", "rejected")
    ]
    assert "Reconciled" in lookout("tail").stdout


def test_ack_without_a_session_clears_the_only_one_waiting(state_dir: Path, tmp_path: Path) -> None:
    dialog(state_dir, tmp_path, "s-open", "permission-approved-running.jsonl", project="api")
    table = lookout("status").stdout
    assert "attention permission" in table
    assert "lookout ack api" in table  # status says how
    done = lookout("ack")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "api: attention permission (touch probe-marker) → idle"
    assert statuses() == {"s-open": ("idle", None)}
    last = events(state_dir)[-1]
    assert (last["event"], last["source"], last["outcome"]) == ("Ack", "user", "ack")
    assert "lookout ack" not in lookout("status").stdout
    again = lookout("ack", "api")
    assert (again.returncode, again.stdout.strip()) == (0, "api: nothing waits on you (idle)")


def test_ack_needs_a_name_when_several_wait(state_dir: Path, tmp_path: Path) -> None:
    dialog(state_dir, tmp_path, "aaaa1111", "permission-approved-running.jsonl", project="api")
    dialog(state_dir, tmp_path, "bbbb2222", "permission-approved-running.jsonl", project="web")
    done = lookout("ack")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: 2 sessions wait on you: api, web",
        "hint: name one: lookout ack SESSION",
    ]
    assert lookout("ack", "bbbb").returncode == 0
    assert statuses() == {"aaaa1111": ("attention", "permission"), "bbbb2222": ("idle", None)}


def test_ack_errors(state_dir: Path, tmp_path: Path) -> None:
    none = lookout("ack")
    assert (none.returncode, none.stderr.splitlines()[0]) == (1, "error: no session waits on you")
    dialog(state_dir, tmp_path, "aaaa1111", "permission-approved-running.jsonl", project="api")
    unknown = lookout("ack", "nosuch")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("error: no session 'nosuch' is recorded\nhint: ")
    assert "usage: lookout ack [-h] [SESSION]" in lookout("ack", "--help").stdout


def test_a_titled_session_is_named_by_its_title_everywhere(state_dir: Path, tmp_path: Path) -> None:
    # newuser-3 defect 7: the row said `billing-fix` (the client's /rename), while the hint,
    # `ack`, `explain` and `tail` said `api`, its project.
    from tests.test_client_sessions import capture, write_entry

    dialog(state_dir, tmp_path, "s-open", "permission-approved-running.jsonl", project="api")
    write_entry(
        capture(
            "waiting-permission",
            sessionId="s-open",
            statusUpdatedAt=ESC_AT_MS - 400,
            name="billing-fix",
            nameSource="user",
        )
    )
    table = lookout("status").stdout.splitlines()
    assert table[1].startswith("billing-fix ")
    assert table[-1] == "answered already? `lookout ack billing-fix` clears it"
    explained = lookout("explain", "billing-fix")
    assert explained.stdout.startswith("billing-fix s-open (/home/dev/api): "), explained.stderr
    tailed = lookout("tail", "--session", "billing-fix").stdout.splitlines()
    assert tailed and all(line[9:].startswith("billing-fix ") for line in tailed), tailed
    done = lookout("ack", "billing-fix")
    assert done.stdout == "billing-fix: attention permission (touch probe-marker) → idle\n"
    assert lookout("ack", "billing-fix").stdout == "billing-fix: nothing waits on you (idle)\n"
