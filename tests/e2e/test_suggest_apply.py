"""Issue 26's "Done when" with the real client: dialogs approved in interactive sessions (tmux)
are counted by `lookout report` as a hand count of the records says, and become a suggestion;
`lookout suggest --apply` lets a real `claude -p` run the same command without a dialog, and
`--revert` restores settings.json byte for byte. The sessions' events.jsonl is the recording
kept in tests/fixtures/ledger-real (LOOKOUT_RECORD_FIXTURE=DIR writes it again)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ..helpers import FIXTURES
from ..receivers import require
from .harness import ClaudePane, Sandbox, describe, wait_for

pytestmark = pytest.mark.e2e

COMMAND = "touch made-by-claude"
RULE = f"Bash({COMMAND})"
WEEK = FIXTURES / "ledger" / "state"  # the synthetic week: npm test approved 4 times


def lookout(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*sandbox.install.lookout, *args],
        cwd=sandbox.project,
        env=sandbox.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"lookout {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def approve_once(sandbox: Sandbox, before: list[str]) -> str:
    """One interactive session that asks for the command and gets it approved (Enter: "1. Yes",
    which allows it this once). One session each: the same dialog again within 3 s of the first
    is taken for a duplicate hook (machine.DUPLICATE_WINDOW_MS; see the report)."""
    with ClaudePane(sandbox, "--permission-mode", "manual") as pane:
        pane.wait_screen("\u276f", 20)
        session = wait_for(
            lambda: next(
                (
                    str(r["session_id"])
                    for r in sandbox.records()
                    if r["event"] == "SessionStart" and r["session_id"] not in before
                ),
                None,
            ),
            20,
            "this session's SessionStart",
        )
        time.sleep(0.3)  # the input box takes keys a moment after it is drawn
        pane.type(f"[[bash: {COMMAND}]]")
        sandbox.wait_event(session, "PermissionRequest", timeout=15)
        pane.wait_screen("Do you want to proceed?")
        time.sleep(0.5)  # a dialog takes keys a moment after it is drawn
        pane.keys("Enter")
        sandbox.wait_event(session, "Stop", timeout=15)
        pane.type("/exit")
        sandbox.wait_event(session, "SessionEnd", timeout=15)
    sandbox.assert_no_errors()
    return session


def _ts(row: dict[str, Any]) -> float:
    return datetime.fromisoformat(row["ts"].replace("Z", "+00:00")).timestamp()


def hand_count(rows: list[dict[str, Any]]) -> list[float]:
    """Each dialog's wait, counted from the raw records: from the PermissionRequest to the first
    record after it that ended the episode (the one whose notify holds `resolved`: a
    PostToolUse, a PostToolBatch, or a reader's `Reconciled` from the client's own registry)."""
    waits = []
    for row in rows:
        if row["event"] == "PermissionRequest":
            ends = [
                _ts(r)
                for r in rows
                if r["session_id"] == row["session_id"]
                and "resolved" in (r.get("notify") or [])
                and _ts(r) >= _ts(row)
            ]
            waits.append(round(min(ends) - _ts(row), 3))
    return waits


def test_interactive_approvals_are_counted_and_suggested(sandbox: Sandbox) -> None:
    require("tmux")
    sandbox.trust_project(idle_ms=60000)
    sessions: list[str] = []
    for _ in range(2):
        sessions.append(approve_once(sandbox, sessions))
    rows = [r for s in sessions for r in sandbox.records(s)]
    keep = os.environ.get("LOOKOUT_RECORD_FIXTURE")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sandbox.events_file, Path(keep) / "events.jsonl")

    waits = hand_count(rows)
    assert len(waits) == 2, describe(rows)
    report = json.loads(lookout(sandbox, "report", "--json").stdout)
    assert report["episodes"] == 2, report
    assert report["wait_s"] == pytest.approx(sum(waits), abs=0.002), (report, waits)
    assert [r["reason"] for r in report["by_reason"]] == ["permission"], report

    found = json.loads(lookout(sandbox, "suggest", "--json").stdout)["suggestions"]
    # Which record ended each episode: the one that raised `resolved`.
    closers = [r["event"] for r in rows if "resolved" in (r.get("notify") or [])]
    if "PostToolBatch" in closers and not found:
        # The client runs PostToolUse and PostToolBatch hooks at once; when the batch's record
        # lands first it closes the episode, and the ledger cannot tell an approval from a
        # refusal (lookout.ledger._answer: "unknown"). Known gap (docs/report.md).
        pytest.xfail(f"episodes closed by {closers}: the approvals are not recognised")
    (mine,) = [s for s in found if s["rule"] == RULE]
    assert mine["count"] == 2, found
    assert mine["wait_s"] == pytest.approx(sum(waits), abs=0.002), (mine, waits)


def test_apply_lets_claude_p_run_the_command_and_revert_restores_the_file(
    sandbox: Sandbox,
) -> None:
    shutil.copytree(WEEK, sandbox.state_dir, dirs_exist_ok=True)
    found = json.loads(lookout(sandbox, "suggest", "--json").stdout)["suggestions"]
    (mine,) = [s for s in found if s["rule"] == "Bash(npm test)"]
    settings = sandbox.home / ".claude" / "settings.json"
    before = settings.read_bytes()
    lookout(sandbox, "suggest", "--apply", mine["id"], "--scope", "user")
    assert "Bash(npm test)" in json.loads(settings.read_text())["permissions"]["allow"]

    run = sandbox.claude_print("[[bash: npm test]]")
    assert run.returncode == 0, run.stderr
    sandbox.wait_event(run.session_id, "SessionEnd")
    printed = sandbox.records(run.session_id)
    events = [r["event"] for r in printed]
    assert "PermissionRequest" not in events, describe(printed)
    # It ran: no package.json here, so npm fails, after the client let it run.
    assert {"PostToolUse", "PostToolUseFailure"} & set(events), describe(printed)
    sandbox.assert_no_errors()

    lookout(sandbox, "suggest", "--revert", mine["id"])
    assert settings.read_bytes() == before

    # The control: without the rule the very same prompt opens the dialog (and is refused).
    again = sandbox.claude_print("[[bash: npm test]]")
    sandbox.wait_event(again.session_id, "SessionEnd")
    assert "PermissionRequest" in [r["event"] for r in sandbox.records(again.session_id)]
