"""Issue 26's "Done when" with the real client: dialogs approved in interactive sessions (tmux)
are counted by `lookout report` as a hand count of the records says, and become a suggestion;
`lookout suggest --apply` (this project's settings) lets a real `claude -p` run the same
command without a dialog, and `--revert` takes it away again. Issue 32 item 1: with a reader
polling `lookout status` the counts are the same. The sessions' events.jsonl are the recordings
kept in tests/fixtures/ledger-real and ledger-reader (LOOKOUT_RECORD_FIXTURE=DIR writes them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
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
    # Whichever record ended each episode (the call's PostToolUse, or the batch's record that
    # the client runs at the same time), the approvals count (docs/report.md).
    (mine,) = [s for s in found if s["rule"] == RULE]
    assert mine["count"] == 2, found
    assert mine["wait_s"] == pytest.approx(sum(waits), abs=0.002), (mine, waits)


def test_apply_lets_claude_p_run_the_command_and_revert_restores_the_file(
    sandbox: Sandbox,
) -> None:
    """`--apply` writes this project's .claude/settings.local.json (the rule runs the project's
    test script: never for every project); a real `claude -p` then runs the command with no
    dialog; `--revert` takes the file and the folder away again. At user scope it is refused
    and ~/.claude/settings.json stays as it was."""
    shutil.copytree(WEEK, sandbox.state_dir, dirs_exist_ok=True)
    found = json.loads(lookout(sandbox, "suggest", "--json").stdout)["suggestions"]
    (mine,) = [s for s in found if s["rule"] == "Bash(npm test)"]
    assert mine["runs_repo_code"] is True
    user = sandbox.home / ".claude" / "settings.json"
    before = user.read_bytes()
    refused = subprocess.run(
        [*sandbox.install.lookout, "suggest", "--apply", mine["id"], "--scope", "user"],
        cwd=sandbox.project,
        env=sandbox.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1 and "hint:" in refused.stderr, refused.stderr
    assert user.read_bytes() == before

    assert not (sandbox.project / ".claude").exists()
    lookout(sandbox, "suggest", "--apply", mine["id"])
    local = sandbox.project / ".claude" / "settings.local.json"
    assert json.loads(local.read_text())["permissions"]["allow"] == ["Bash(npm test)"]

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
    assert not (sandbox.project / ".claude").exists()
    assert user.read_bytes() == before

    # The control: without the rule the very same prompt opens the dialog (and is refused).
    again = sandbox.claude_print("[[bash: npm test]]")
    sandbox.wait_event(again.session_id, "SessionEnd")
    assert "PermissionRequest" in [r["event"] for r in sandbox.records(again.session_id)]


READER_COMMANDS = ("touch r-a.txt", "touch r-b.txt", "touch r-c.txt", "touch r-d.txt")


class StatusPoller:
    """A reader, as the tmux status line or the dashboard is one: `lookout status --json` every
    0.2 s (after the previous call returned) for as long as it runs."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.calls = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.is_set():
            subprocess.run(
                [*self.sandbox.install.lookout, "status", "--json"],
                cwd=self.sandbox.project,
                env=self.sandbox.env(),
                capture_output=True,
                timeout=60,
            )
            self.calls += 1
            self.stop.wait(0.2)

    def __enter__(self) -> StatusPoller:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=90)


def test_a_reader_polling_status_does_not_change_what_is_counted(sandbox: Sandbox) -> None:
    """Issue 32 item 1: with a reader polling `lookout status --json` every 0.2 s, the client's
    registry flips before the hooks land and the reader records it first (the episode ended by
    `client busy`, or opened by `client waiting` before the PermissionRequest). 20 real approvals
    of four commands: report and suggest count exactly what they count with no reader."""
    require("tmux")
    sandbox.trust_project(idle_ms=60000)
    # One prompt, twenty calls (the mock scripts a turn from its first prompt): twenty dialogs.
    commands = [READER_COMMANDS[n % len(READER_COMMANDS)] for n in range(20)]
    with (
        StatusPoller(sandbox) as poller,
        ClaudePane(sandbox, "--permission-mode", "manual") as pane,
    ):
        session = pane.ready()
        pane.type(" ".join(f"[[bash: {c}]]" for c in commands))
        for n in range(len(commands)):
            sandbox.wait_event(session, "PermissionRequest", timeout=30, count=n + 1)
            pane.wait_screen("Do you want to proceed?", 30)
            time.sleep(0.5)  # a dialog takes keys a moment after it is drawn
            pane.keys("Enter")
            sandbox.wait_event(session, "PostToolUse", timeout=30, count=n + 1)
        sandbox.wait_event(session, "Stop", timeout=30)
        pane.type("/exit")
        sandbox.wait_event(session, "SessionEnd", timeout=30)
    sandbox.assert_no_errors()
    keep = os.environ.get("LOOKOUT_RECORD_FIXTURE")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sandbox.events_file, Path(keep) / "events.jsonl")
    rows = sandbox.records(session)
    raced = [
        (r["event"], r.get("outcome"), r.get("notify"))
        for r in rows
        if r["event"] == "Reconciled" and r.get("notify")
    ]
    ran = [r for r in rows if r["event"] == "PostToolUse" and r.get("tool_name") == "Bash"]
    assert len(ran) == 20, describe(rows)  # every approval ran
    why = f"{poller.calls} status calls; the reader recorded first: {raced}"

    report = json.loads(lookout(sandbox, "report", "--json").stdout)
    assert report["episodes"] == 20, (report, why)
    assert report["by_reason"] == [
        {"reason": "permission", **{k: report[k] for k in ("episodes", "wait_s", "p50_s", "p95_s")}}
    ], report
    assert [(r["tool"], r["episodes"]) for r in report["by_tool"]] == [("Bash", 20)], report

    found = json.loads(lookout(sandbox, "suggest", "--json").stdout)["suggestions"]
    counts = {s["rule"]: s["count"] for s in found}
    assert counts == {f"Bash({c})": 5 for c in READER_COMMANDS}, (found, why)
