"""Wedged sessions with the real Claude Code (issue 32): a turn whose stream hangs while the
process lives becomes `attention stuck` and one alert goes out, with no reader running; the
stream resuming brings it back; a long command is not stuck and shows how long it has run.

The alerts go to a recording command channel; `stuck_after_s` is small in the test config. No
test asserts on how long anything took: each waits for what it expects to see."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import calls, recorder

from .harness import ClaudePane, Sandbox, describe, wait_for
from .mock_api import STALL, MockAPI

pytestmark = pytest.mark.e2e

LONG = 'python3 -c "import time; time.sleep(30)"'


def alerting(sandbox: Sandbox, tmp_path: Path, stuck_after_s: int) -> Path:
    """The sandbox's config: every stuck alert to a recording channel, nothing else."""
    prog, log = recorder(tmp_path)
    sandbox.config.write_text(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{kind}}", "{{message}}"]\n'
        '[[rules]]\nwhen = ["stuck", "limit_lifted"]\nchannels = ["log"]\n'
        f"[sessions]\nstuck_after_s = {stuck_after_s}\n"
    )
    return log


def start(sandbox: Sandbox, prompt: str, *args: str) -> subprocess.Popen[str]:
    """`claude -p` left running (the harness's own runs wait for the client to exit)."""
    argv = [str(sandbox.claude), "-p", prompt, "--output-format", "stream-json", "--verbose", *args]
    return subprocess.Popen(
        argv,
        cwd=sandbox.project,
        env=sandbox.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> None:
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    assert proc.returncode == 0, err[-2000:]


def session_id(sandbox: Sandbox) -> str:
    row = wait_for(
        lambda: next((r for r in sandbox.records() if r["event"] == "UserPromptSubmit"), None),
        60,
        "the turn's first hook",
    )
    return str(row["session_id"])


def test_a_turn_hung_on_a_live_connection_is_stuck_then_works_again(
    sandbox: Sandbox, mock_api: MockAPI, tmp_path: Path
) -> None:
    log = alerting(sandbox, tmp_path, stuck_after_s=2)
    proc = start(sandbox, f"hello {STALL}")
    try:
        sid = session_id(sandbox)
        assert mock_api.stalled.wait(60), "the mock never held the stream"
        # No reader runs: the sender the turn's hook started watches the time.
        (sent,) = wait_for(lambda: calls(log), 90, "the stuck alert")
        assert sent[0] == "stuck" and sent[1].startswith("silent since "), sent
        assert "no registry change" in sent[1] and "no transcript write" in sent[1], sent
        shown = sandbox.session_status(sid)
        assert (shown["status"], shown["reason"], shown["evidence"]) == (
            "attention",
            "stuck",
            "silence",
        ), shown
        assert shown["alive"] is True
        mock_api.release.set()  # the stream resumes: the turn ends
        finish(proc)
    finally:
        mock_api.release.set()
        if proc.poll() is None:
            proc.kill()
    sandbox.wait_event(sid, "SessionEnd")
    rows = sandbox.records(sid)
    stuck = [r for r in rows if r["event"] == "Reconciled" and r["outcome"] == "stuck"]
    assert len(stuck) == 1, describe(rows)
    prompt = next(r for r in rows if r["event"] == "UserPromptSubmit")
    # At the moment the signals' own times say: the prompt (or the transcript written after it,
    # or the registry's change) plus stuck_after_s, never later than the first look.
    assert stuck[0]["ts"] >= prompt["ts"], describe(rows)
    after = rows[rows.index(stuck[0]) + 1 :]
    assert ("Stop", "idle") in [(r["event"], r["status"]) for r in after], describe(rows)
    assert [c[0] for c in calls(log)] == ["stuck"]  # one alert
    sandbox.assert_no_errors()


def test_a_long_command_is_not_stuck_and_shows_how_long_it_has_run(
    sandbox: Sandbox, mock_api: MockAPI, tmp_path: Path
) -> None:
    log = alerting(sandbox, tmp_path, stuck_after_s=4)
    # A 30 s command (2.1.332 refuses a plain `sleep 30` in the foreground).
    proc = start(sandbox, f"[[bash: {LONG}]]", "--allowedTools", "Bash")
    try:
        sid = session_id(sandbox)

        # Wait until status itself says the command has run longer than stuck_after_s.
        def long_enough() -> dict[str, Any] | None:
            shown = sandbox.session_status(sid)
            tool = shown.get("tool") or {}
            return shown if tool.get("running_s", 0) >= 4 + 2 else None

        shown = wait_for(long_enough, 60, "the command running past stuck_after_s")
        assert (shown["status"], shown["detail"], shown["tool"]["name"]) == (
            "working",
            "Bash",
            "Bash",
        ), shown
        table = subprocess.run(
            [*sandbox.install.lookout, "status"],
            env=sandbox.env(),
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
        row = next(line for line in table.splitlines() if " working " in line)
        assert " Bash " in row and " Bash 0s " not in row, table  # e.g. `Bash 7s`
        finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    sandbox.wait_event(sid, "SessionEnd")
    rows = sandbox.records(sid)
    assert not [r for r in rows if r.get("outcome") == "stuck"], describe(rows)
    assert calls(log) == []
    sandbox.assert_no_errors()


def test_a_usage_limit_in_print_mode_says_when_it_lifts(
    sandbox: Sandbox, mock_api: MockAPI
) -> None:
    # The API key's 429 whose body says when to try again (a gateway's words): the client
    # prints it; the transcript's error line holds it; `until_ms` is read from it.
    mock_api.fail_next(
        429, message="Rate limited. Please try again in 45s.", headers={"retry-after": "45"}
    )
    run = sandbox.claude_print("hello")
    assert run.returncode == 1
    sandbox.wait_event(run.session_id, "SessionEnd")
    failure = next(r for r in sandbox.records(run.session_id) if r["event"] == "StopFailure")
    assert failure["detail"] == "rate_limit", failure
    assert failure["summary"].startswith("rate or usage limit reached: API Error"), failure
    assert "try again in 45s" in failure["summary"], failure
    status = subprocess.run(
        [*sandbox.install.lookout, "status", "--json", "--all"],
        env=sandbox.env(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    shown = next(
        s for s in json.loads(status.stdout)["sessions"] if s["session_id"] == run.session_id
    )
    assert shown["status"] == "ended"  # print mode exits: nothing waits, nothing to lift
    sandbox.assert_no_errors()


# -- usage limits: the session waits, so the limit can lift while it does -------------------------


def lifted(sandbox: Sandbox, log: Path, sid: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Wait for the one `limit_lifted` alert (no reader runs meanwhile); the failure's record
    and the session as `status --json` shows it then."""
    (sent,) = wait_for(lambda: calls(log), 90, "the limit_lifted alert")
    assert sent[0] == "limit_lifted" and sent[1].startswith("the limit lifted at "), sent
    failure = next(r for r in sandbox.records(sid) if r["event"] == "StopFailure")
    shown = sandbox.session_status(sid)
    assert (shown["status"], shown["reason"], shown["detail"]) == (
        "attention",
        "error",
        "rate_limit",
    ), shown
    return failure, shown


def test_an_interactive_429_that_says_when_shows_until_and_alerts_when_it_lifts(
    sandbox: Sandbox, mock_api: MockAPI, tmp_path: Path
) -> None:
    # An API key's 429 whose body says when (a gateway's words), with its retry-after header:
    # 2.1.332 prints the body's message (the header it does not show), and the transcript's
    # error line keeps it with its own time.
    log = alerting(sandbox, tmp_path, stuck_after_s=600)
    sandbox.trust_project()
    mock_api.fail_next(
        429, message="Rate limited. Please try again in 4s.", headers={"retry-after": "4"}
    )
    with ClaudePane(sandbox) as pane:
        sid = pane.ready()
        pane.type("hello")
        failure, shown = lifted(sandbox, log, sid)
        assert "try again in 4s" in failure["summary"], failure
        reads = [r for r in sandbox.records(sid) if r["event"] == "Reconciled"]
        assert [(r["outcome"], r["source"]) for r in reads] == [
            ("limit", "transcript"),
            ("limit_lifted", "clock"),
        ], describe(sandbox.records(sid))
        # 4 s after the error line's own time, which the client wrote just before the hook ran.
        until = shown["until_ms"]
        assert isinstance(until, int) and until <= _ms(failure["ts"]) + 4000, shown
        assert reads[1]["ts"] == _stamp(until)
        pane.type("again")  # the next prompt ends the failure; nothing more is sent
        wait_for(lambda: sandbox.session_status(sid)["status"] == "idle", 60, "the next turn")
        assert [c[0] for c in calls(log)] == ["limit_lifted"]
    sandbox.assert_no_errors()


def _ms(stamp: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def _stamp(ms: int) -> str:
    from lookout import store

    return store.rfc3339(ms)


def test_a_subscription_usage_limit_lifts_at_the_time_the_client_was_told(
    sandbox: Sandbox, mock_api: MockAPI, tmp_path: Path
) -> None:
    # Signed in to a subscription (a dummy OAuth token), the API's unified rate-limit headers
    # say the 5-hour limit is reached until `reset`: 2.1.332 shows "You've hit your 5-hour
    # limit · resets <time>" and writes the exact reset on the transcript's error line.
    import time

    log = alerting(sandbox, tmp_path, stuck_after_s=600)
    sandbox.trust_project()
    reset = int(time.time()) + 6
    mock_api.fail_next(
        429,
        message="This request would exceed your account's rate limit. Please try again later.",
        headers={
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(reset),
            "anthropic-ratelimit-unified-representative-claim": "five_hour",
        },
    )
    env = sandbox.env(TZ="Europe/Berlin")
    env.pop("ANTHROPIC_API_KEY")
    env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-lookout-e2e-dummy"
    with ClaudePane(sandbox, env=env) as pane:
        sid = pane.ready()
        pane.type("hello")
        failure, shown = lifted(sandbox, log, sid)
        assert "You've hit your 5-hour limit · resets " in failure["summary"], failure
        assert "(Europe/Berlin)" in failure["summary"], failure
        assert shown["until_ms"] == reset * 1000, shown  # the line's resetsAt, to the second
        reads = [r for r in sandbox.records(sid) if r["event"] == "Reconciled"]
        assert [(r["outcome"], r["source"]) for r in reads] == [
            ("limit", "transcript"),
            ("limit_lifted", "clock"),
        ], describe(sandbox.records(sid))
        assert reads[1]["ts"] == _stamp(reset * 1000)
    sandbox.assert_no_errors()
