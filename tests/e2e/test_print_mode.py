"""The real client in print mode (`claude -p`) drives lookout's installed hooks.

Each scenario asserts the status sequence lookout recorded, the final `lookout status --json`,
and that every hook run the client reports exited 0 with nothing on stdout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lookout.hookspec import EVENTS

from .harness import PrintRun, Sandbox, describe, replay_hooks, sequence, wait_for
from .mock_api import MockAPI

pytestmark = pytest.mark.e2e

START = [("SessionStart", "idle", None), ("UserPromptSubmit", "working", None)]
END = [("Stop", "idle", None), ("SessionEnd", "ended", "other")]


def finish(sandbox: Sandbox, run: PrintRun, runs: int = 1) -> list[dict[str, object]]:
    """Check the run's hooks were clean, wait for the async SessionEnd, return the records."""
    assert run.session_id, f"no session id in the client's output: {run.stderr}"
    hooks = run.hook_runs
    assert hooks, "the client reported no hook runs: were the hooks registered?"
    for hook in hooks:
        assert (hook.exit_code, hook.outcome, hook.stdout) == (0, "success", ""), hook
    # SessionEnd is registered async: it may land after the client has exited.
    sandbox.wait_event(run.session_id, "SessionEnd", count=runs)
    sandbox.assert_no_errors()
    return sandbox.records(run.session_id)


def assert_ended(sandbox: Sandbox, session_id: str) -> dict[str, object]:
    shown = sandbox.session_status(session_id)
    assert shown["status"] == "ended", shown
    assert shown["project"] == "project", shown
    return shown


def test_plain_answer_goes_idle_then_ends(sandbox: Sandbox) -> None:
    run = sandbox.claude_print("hello [[say: Hi there]]")
    assert run.returncode == 0, run.stderr
    rows = finish(sandbox, run)
    assert sequence(rows) == START + END, describe(rows)
    assert_ended(sandbox, run.session_id)


def test_bash_needing_permission_raises_attention_then_the_denial_clears_it(
    sandbox: Sandbox,
) -> None:
    run = sandbox.claude_print("[[bash: touch made-by-claude]]")
    assert run.returncode == 0, run.stderr
    rows = finish(sandbox, run)
    pre, asked = (
        next(r for r in rows if r["event"] == e) for e in ("PreToolUse", "PermissionRequest")
    )
    # PreToolUse is async: when it lands after the dialog's hook (a loaded box), its record
    # shows the session as it then was, waiting on the dialog.
    late = pre["seq"] > asked["seq"]
    assert sequence(rows) == [
        *START,
        ("PreToolUse", "attention", "permission") if late else ("PreToolUse", "working", None),
        ("PermissionRequest", "attention", "permission"),
        # Print mode cannot ask: the call is denied, no PostToolUse comes, the batch ends it.
        ("PostToolBatch", "working", None),
        *END,
    ], describe(rows)
    request = next(r for r in rows if r["event"] == "PermissionRequest")
    assert "touch made-by-claude" in str(request["summary"]), request
    assert not (sandbox.project / "made-by-claude").exists()
    assert_ended(sandbox, run.session_id)


def test_allowed_tool_works_then_goes_idle(sandbox: Sandbox) -> None:
    run = sandbox.claude_print("[[bash: echo hello > out.txt]]", "--allowedTools", "Bash")
    assert run.returncode == 0, run.stderr
    rows = finish(sandbox, run)
    assert sequence(rows) == [
        *START,
        ("PreToolUse", "working", None),
        ("PostToolUse", "working", None),
        ("PostToolBatch", "working", None),
        *END,
    ], describe(rows)
    assert [r["detail"] for r in rows[2:5]] == ["Bash", "Thinking", "Thinking"], describe(rows)
    assert (sandbox.project / "out.txt").read_text() == "hello\n"
    assert_ended(sandbox, run.session_id)


def test_failing_tool_keeps_working_then_goes_idle(sandbox: Sandbox) -> None:
    run = sandbox.claude_print("[[bash: ls /no-such-dir-lookout]]", "--allowedTools", "Bash")
    assert run.returncode == 0, run.stderr
    rows = finish(sandbox, run)
    assert sequence(rows) == [
        *START,
        ("PreToolUse", "working", None),
        ("PostToolUseFailure", "working", None),
        ("PostToolBatch", "working", None),
        *END,
    ], describe(rows)
    assert_ended(sandbox, run.session_id)


def test_subagent_appears_finishes_and_parent_is_never_idle_while_it_runs(
    sandbox: Sandbox,
) -> None:
    sandbox.record_payloads("Stop")
    run = sandbox.claude_print("[[agent: say hi please (slow)]]")
    assert run.returncode == 0, run.stderr
    rows = finish(sandbox, run)
    events = [r["event"] for r in rows]
    start = events.index("SubagentStart")
    child = rows[start]["agent_id"]
    assert child, describe(rows)
    stop = next(
        i for i, r in enumerate(rows) if r["event"] == "SubagentStop" and r["agent_id"] == child
    )
    assert all(r["status"] == "working" for r in rows[start : stop + 1]), describe(rows)
    # The subagent runs async: a Stop that still lists it as a running background task keeps
    # the parent working; the Stop of the turn the client injects when it finishes ends idle.
    stops = [r for r in rows if r["event"] == "Stop"]
    payloads = sandbox.payloads("Stop")
    assert len(stops) == len(payloads) == 2, describe(rows)
    for record, payload in zip(stops, payloads, strict=True):
        running = [t for t in payload["background_tasks"] if t["status"] == "running"]
        expected = ("working", "1 background agent") if running else ("idle", None)
        assert (record["status"], record["detail"]) == expected, (payload, describe(rows))
    assert sequence(rows)[-2:] == END, describe(rows)
    shown = assert_ended(sandbox, run.session_id)
    assert [(a["agent_id"], a["agent_type"], a["status"]) for a in shown["agents"]] == [
        (child, "general-purpose", "done")
    ], shown


def test_subagent_finishing_after_the_parents_stop_leaves_the_parent_working(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """The client fires SubagentStop before or after the parent's Stop (the subagent is async);
    replay the real payloads in the order where the Stop still lists it as running."""
    sandbox.prepare(settings={"hooks": {}})
    sandbox.record_payloads(*(event for event, _, _ in EVENTS))
    run = sandbox.claude_print("[[agent: say hi please (slow)]]")
    assert run.returncode == 0, run.stderr
    wait_for(lambda: sandbox.payloads("SessionEnd"), 10, "SessionEnd")
    payloads = sandbox.payloads()
    names = [p["hook_event_name"] for p in payloads]
    stop, child_stop = names.index("Stop"), names.index("SubagentStop")
    assert [t["status"] for t in payloads[stop]["background_tasks"]] == ["running"], payloads[stop]
    if child_stop < stop:
        payloads.insert(stop, payloads.pop(child_stop))
    rows = replay_hooks(payloads, tmp_path / "replay" / "state")
    after = [r for r in rows if r["event"] in ("Stop", "SubagentStop", "UserPromptSubmit")][1:]
    # Stop (1 background agent) -> SubagentStop: parent unchanged -> the injected turn -> idle.
    assert [(r["event"], r["status"]) for r in after] == [
        ("Stop", "working"),
        ("SubagentStop", "working"),
        ("UserPromptSubmit", "working"),
        ("Stop", "idle"),
    ], describe(rows)


def test_rate_limit_raises_attention_error(sandbox: Sandbox, mock_api: MockAPI) -> None:
    # The client exits right after firing StopFailure and SIGTERMs hooks still running then:
    # the record must be written anyway (no extra recorder here, it would slow the exit down).
    mock_api.fail_next(429)
    run = sandbox.claude_print("hello")
    assert run.returncode == 1
    rows = finish(sandbox, run)
    # The error alert's sender watches the open episode (issue 22 #3): once the client has
    # exited, it may prove the process gone before the async SessionEnd lands. All are true:
    gone = [("Reconciled", "ended", "process_gone"), ("SessionEnd", "ended", "process_gone")]
    assert sequence(rows) in (
        [*START, ("StopFailure", "attention", "error"), ("SessionEnd", "ended", "other")],
        [*START, ("StopFailure", "attention", "error"), *gone],
        # The SessionEnd hook started (its `ts`) before the sender looked, but got the lock only
        # after the sender had recorded the process gone (a loaded machine): its record is then
        # inert and shows the session as it was, ended process_gone, with the later seq.
        [*START, ("StopFailure", "attention", "error"), *reversed(gone)],
    ), describe(rows)
    end = next(r for r in rows if r["event"] == "SessionEnd")
    reconciled = next((r for r in rows if r["event"] == "Reconciled"), None)
    if reconciled is not None and end["reason"] == "process_gone":
        assert end["seq"] > reconciled["seq"], describe(rows)  # recorded after the proof
    assert "rate_limit" in str(rows[2]["detail"]) + str(rows[2]["summary"]), describe(rows)
    assert_ended(sandbox, run.session_id)


def test_continue_resumes_the_ended_session_and_compact_returns_to_idle(
    sandbox: Sandbox,
) -> None:
    first = sandbox.claude_print("hello")
    assert first.returncode == 0, first.stderr
    finish(sandbox, first)

    resumed = sandbox.claude_print("again", "--continue")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.session_id == first.session_id
    assert "SessionStart:resume" in [h.name for h in resumed.hook_runs]
    rows = finish(sandbox, resumed, runs=2)
    assert sequence(rows) == START + END + START + END, describe(rows)
    assert_ended(sandbox, first.session_id)

    compacted = sandbox.claude_print("/compact", "--continue")
    assert compacted.returncode == 0, compacted.stderr
    assert compacted.session_id == first.session_id
    rows = finish(sandbox, compacted, runs=3)[len(START + END) * 2 :]
    internal = [("SubagentStop", "working", None)] * sum(
        1 for r in rows if r["event"] == "SubagentStop"
    )
    assert sequence(rows) == [
        ("SessionStart", "idle", None),
        ("PreCompact", "working", None),
        *internal,  # the compaction's own agents: agent_type "", no SubagentStart
        ("SessionStart", "working", None),  # source compact: unchanged
        ("PostCompact", "idle", None),  # back to the status before PreCompact
        ("SessionEnd", "ended", "other"),
    ], describe(rows)
    assert rows[1]["detail"] == "Compacting", describe(rows)
    shown = assert_ended(sandbox, first.session_id)
    assert shown["agents"] == [], shown
