"""Issue 26's "Done when" with the real client: dialogs approved in an interactive session (tmux)
become a suggestion; `lookout suggest --apply` lets a real `claude -p` run the same command
without a dialog; `--revert` restores settings.json byte for byte. The session's events.jsonl is
the recording kept in tests/fixtures/ledger-real (LOOKOUT_RECORD_FIXTURE=DIR writes it again)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from ..helpers import ROOT
from ..receivers import require
from .harness import ClaudePane, Sandbox, describe, sequence

pytestmark = pytest.mark.e2e

COMMAND = "touch made-by-claude"
RULE = f"Bash({COMMAND})"


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


def approve_twice(sandbox: Sandbox) -> str:
    """One interactive session: the same command asked and approved twice (Enter: "1. Yes")."""
    with ClaudePane(sandbox, "--permission-mode", "manual") as pane:
        session = pane.ready()
        for n in (1, 2):
            pane.type(f"[[bash: {COMMAND}]]")
            pane.wait_screen("Do you want to proceed?")
            sandbox.wait_event(session, "PermissionRequest", count=n, timeout=10)
            time.sleep(0.5)  # a dialog takes keys a moment after it is drawn
            pane.keys("Enter")
            sandbox.wait_event(session, "Stop", count=n, timeout=15)
        pane.type("/exit")
        sandbox.wait_event(session, "SessionEnd", timeout=15)
    sandbox.assert_no_errors()
    return session


def hand_count(rows: list[dict[str, Any]]) -> list[float]:
    """Each dialog's wait, counted from the raw records: PermissionRequest to its PostToolUse."""
    waits, opened = [], None
    for row in rows:
        if row["event"] == "PermissionRequest":
            opened = row["ts_ms"]
        elif row["event"] == "PostToolUse" and opened is not None:
            waits.append((row["ts_ms"] - opened) / 1000)
            opened = None
    return waits


def test_apply_lets_claude_p_run_the_command_and_revert_restores_the_file(
    sandbox: Sandbox,
) -> None:
    require("tmux")
    sandbox.trust_project(idle_ms=60000)
    session = approve_twice(sandbox)
    rows = sandbox.records(session)
    keep = os.environ.get("LOOKOUT_RECORD_FIXTURE")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sandbox.events_file, Path(keep) / "events.jsonl")

    # The report's figures are the hand count of the recording.
    waits = hand_count(rows)
    assert len(waits) == 2, describe(rows)
    report = json.loads(lookout(sandbox, "report", "--json").stdout)
    assert report["episodes"] == 2, report
    assert report["wait_s"] == pytest.approx(sum(waits), abs=0.002), (report, waits)
    assert report["by_reason"][0]["reason"] == "permission", report

    found = json.loads(lookout(sandbox, "suggest", "--json").stdout)["suggestions"]
    (mine,) = [s for s in found if s["rule"] == RULE]
    assert mine["count"] == 2, found
    assert mine["wait_s"] == pytest.approx(sum(waits), abs=0.002), (mine, waits)

    settings = sandbox.home / ".claude" / "settings.json"
    before = settings.read_bytes()
    lookout(sandbox, "suggest", "--apply", mine["id"], "--scope", "user")
    assert RULE in json.loads(settings.read_text())["permissions"]["allow"]

    (sandbox.project / "made-by-claude").unlink()
    run = sandbox.claude_print(f"[[bash: {COMMAND}]]")
    assert run.returncode == 0, run.stderr
    sandbox.wait_event(run.session_id, "SessionEnd")
    printed = sandbox.records(run.session_id)
    events = [r["event"] for r in printed]
    assert "PermissionRequest" not in events, describe(printed)
    assert ("PostToolUse", "working", None) in sequence(printed), describe(printed)
    assert (sandbox.project / "made-by-claude").exists()

    lookout(sandbox, "suggest", "--revert", mine["id"])
    assert settings.read_bytes() == before


def test_the_recorded_fixture_is_in_the_checkout() -> None:
    # The committed recording the report's unit test counts by hand (tests/commands).
    assert (ROOT / "tests" / "fixtures" / "ledger-real" / "events.jsonl").is_file()
