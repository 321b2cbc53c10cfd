"""The sender's timers (issue 32): a wedged session's `stuck` alert and a usage limit's
`limit_lifted` go out with no reader running, from the sender a hook started; once each; and the
sender leaves once nothing more can happen. Real hooks, a real agent process, a recording
channel; nothing here runs `lookout status`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from tests.helpers import ROOT, calls, payload, recorder, wait_for, write_config
from tests.notify.jobs import senders


@pytest.fixture
def agent() -> Iterator[subprocess.Popen[bytes]]:
    """A live process standing for the agent (its pid is CLAUDE_PID)."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


def hook(state_dir: Path, pid: int, name: str, **fields: Any) -> None:
    """One hook as Claude Code runs it (SIGTERM ignored, which the sender must not inherit)."""
    body = {**payload(name.split("-")[0]), "session_id": "s1", "cwd": "/home/dev/project"}
    body.pop("transcript_path", None)  # no transcript: the hooks and the process are the signals
    body.update(fields)
    argv = ["/bin/sh", "-c", f"trap '' TERM; exec {sys.executable} -I -S {ROOT}/hooks/event.py"]
    env = {**os.environ, "CLAUDE_PID": str(pid), "LOOKOUT_STATE_DIR": str(state_dir)}
    done = subprocess.run(argv, input=json.dumps(body).encode(), env=env, timeout=60, check=False)
    assert done.returncode == 0


def records(state_dir: Path) -> list[dict[str, Any]]:
    lines = (state_dir / store.EVENTS).read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_silent_turn_is_alerted_once_with_no_reader(
    state_dir: Path, tmp_path: Path, agent: subprocess.Popen[bytes]
) -> None:
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{kind}}", "{{message}}"]\n'
        '[[rules]]\nwhen = ["stuck"]\nchannels = ["log"]\n'
        "[sessions]\nstuck_after_s = 1\n"
    )
    hook(state_dir, agent.pid, "SessionStart")
    hook(state_dir, agent.pid, "UserPromptSubmit")  # a turn starts: the hook starts the timers
    assert senders(state_dir)
    (sent,) = wait_for(lambda: calls(log), 60, "the stuck alert")
    assert sent[0] == "stuck" and sent[1].startswith("silent since ")
    stuck = next(r for r in records(state_dir) if r["event"] == "Reconciled")
    prompt = next(r for r in records(state_dir) if r["event"] == "UserPromptSubmit")
    assert (stuck["status"], stuck["reason"], stuck["source"]) == ("attention", "stuck", "silence")
    # Decided from the events' own times: the prompt's, plus stuck_after_s.
    assert stuck["ts"] == store.rfc3339(_ms(prompt["ts"]) + 1000)
    # Nothing more can happen with no event: the sender leaves, having alerted once.
    wait_for(lambda: not senders(state_dir), 60, "the sender to leave")
    assert [r["outcome"] for r in records(state_dir) if r["event"] == "Reconciled"] == ["stuck"]
    assert [c[0] for c in calls(log)] == ["stuck"]
    # The next sign of life (a hook) brings it back to work; the next turn arms it again.
    hook(state_dir, agent.pid, "Stop")
    assert records(state_dir)[-1]["status"] == "idle"


def test_no_rule_for_it_starts_no_sender(
    state_dir: Path, tmp_path: Path, agent: subprocess.Popen[bytes]
) -> None:
    prog, _ = recorder(tmp_path)
    write_config(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{kind}}"]\n'
        '[[rules]]\nwhen = ["stuck"]\nchannels = ["log"]\n'
        "[sessions]\nstuck_after_s = 0\n"  # off
    )
    hook(state_dir, agent.pid, "SessionStart")
    hook(state_dir, agent.pid, "UserPromptSubmit")
    # A sender the hook started would hold sender.lock from before the hook exits.
    fd = store.try_lock(str(state_dir / store.SENDER_LOCK))
    assert fd is not None
    os.close(fd)


def test_a_lifted_usage_limit_is_alerted_once_with_no_reader(
    state_dir: Path, tmp_path: Path, agent: subprocess.Popen[bytes]
) -> None:
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{kind}}", "{{message}}"]\n'
        '[[rules]]\nwhen = ["limit_lifted"]\nchannels = ["log"]\n'
    )
    hook(state_dir, agent.pid, "SessionStart")
    hook(state_dir, agent.pid, "UserPromptSubmit")
    text = "API Error: Request rejected (429) · Rate limited. Please try again in 2s."
    hook(state_dir, agent.pid, "StopFailure-rate_limit", last_assistant_message=text)
    (sent,) = wait_for(lambda: calls(log), 60, "the limit_lifted alert")
    assert sent[0] == "limit_lifted"
    assert sent[1].startswith("the limit lifted at ") and sent[1].endswith(
        "send a prompt to continue"
    )
    failure = next(r for r in records(state_dir) if r["event"] == "StopFailure")
    limit, lifted = [r for r in records(state_dir) if r["event"] == "Reconciled"]
    assert (limit["outcome"], limit["source"]) == ("limit", "hook")
    assert (lifted["outcome"], lifted["source"], lifted["status"]) == (
        "limit_lifted",
        "clock",
        "attention",
    )
    # It lifted 2 s after the failure was printed (the hook's own time), not when looked at.
    assert lifted["ts"] == store.rfc3339(_ms(failure["ts"]) + 2000)
    wait_for(lambda: not senders(state_dir), 60, "the sender to leave")
    assert len(calls(log)) == 1


def _switches(pid: int) -> int:
    """How often the process's main thread went to sleep of its own accord (each poll is one)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches")


def test_a_sender_timers_hold_sleeps_until_a_hook_rings_it(
    state_dir: Path, tmp_path: Path, agent: subprocess.Popen[bytes]
) -> None:
    """Stuck timers keep the sender up for stuck_after_s: it sleeps until its next deadline,
    never polling the outbox (it polled every 0.2 s), and the hook that leaves it a job wakes it
    (store.ring), so the alert goes out from that same sender."""
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{kind}}"]\n'
        '[[rules]]\nwhen = ["stuck", "permission"]\nchannels = ["log"]\n'
        "[sessions]\nstuck_after_s = 600\n"
    )
    hook(state_dir, agent.pid, "SessionStart")
    hook(state_dir, agent.pid, "UserPromptSubmit")  # the timers hold the sender from now
    (pid,) = wait_for(lambda: senders(state_dir), 60, "the sender")
    wait_for(lambda: (state_dir / store.SENDER_BELL).exists(), 60, "the sender's bell")
    before = _switches(pid)
    time.sleep(2)  # a starved scheduler only lowers the count: the bound holds under load
    assert _switches(pid) - before <= 3, "the sender woke up with nothing to do"
    hook(state_dir, agent.pid, "PermissionRequest-Bash")
    (sent,) = wait_for(lambda: calls(log), 60, "the permission alert")
    assert sent[0] == "permission"
    assert senders(state_dir) == [pid]  # woken, not replaced


def test_the_turn_failed_alert_of_a_usage_limit_says_until_when(
    state_dir: Path, tmp_path: Path, agent: subprocess.Popen[bytes]
) -> None:
    # Issue 38: the hook knows no reset time (reading it is no hook's work); the sender reads
    # it before it sends, so the alert (Telegram's too: the same texts) says until when.
    from lookout import silence

    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{kind}}", "{{title}}"]\n'
        '[[rules]]\nwhen = ["error"]\nchannels = ["log"]\n'
    )
    hook(state_dir, agent.pid, "SessionStart")
    hook(state_dir, agent.pid, "UserPromptSubmit")
    text = "API Error: Request rejected (429) · Usage limit reached. Please try again in 5m."
    hook(state_dir, agent.pid, "StopFailure-rate_limit", last_assistant_message=text)
    (sent,) = wait_for(lambda: calls(log), 60, "the turn failed alert")
    failure = next(r for r in records(state_dir) if r["event"] == "StopFailure")
    until = _ms(failure["ts"]) + 5 * 60_000
    assert sent == ["error", f"project · turn failed: usage limit until {silence.clock(until)}"]
    limit = next(r for r in records(state_dir) if r["event"] == "Reconciled")
    assert (limit["outcome"], limit["source"]) == ("limit", "hook")


def test_telegrams_turn_failed_alert_of_a_usage_limit_says_until_when(
    state_dir: Path, agent: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    from lookout import silence
    from tests.telegram_api import BotApi

    token = "123456:AAH-timers-token"
    monkeypatch.setenv("LOOKOUT_TG_TOKEN", token)
    with BotApi(token, chats=(1001,)) as api:
        write_config(
            '[channels.chat]\ntype = "telegram"\ntoken_env = "LOOKOUT_TG_TOKEN"\n'
            f'chat_id = 1001\napi_url = "{api.url}"\n'
            '[[rules]]\nwhen = ["error"]\nchannels = ["chat"]\n'
        )
        hook(state_dir, agent.pid, "SessionStart")
        hook(state_dir, agent.pid, "UserPromptSubmit")
        text = "API Error: Request rejected (429) · Your limit will reset at 3pm (America/New_York)"
        hook(state_dir, agent.pid, "StopFailure-rate_limit", last_assistant_message=text)
        (sent,) = wait_for(lambda: api.sent("sendMessage"), 60, "the Telegram alert")
    # 3pm in New York next (the failure's own time), shown as the status shows it (local).
    failed = _ms(next(r for r in records(state_dir) if r["event"] == "StopFailure")["ts"])
    moment = datetime.fromtimestamp(failed / 1000, ZoneInfo("America/New_York"))
    moment = moment.replace(hour=15, minute=0, second=0, microsecond=0)
    if moment.timestamp() * 1000 < failed - 60_000:
        moment = (moment + timedelta(days=1)).replace(hour=15, minute=0)
    until = silence.clock(int(moment.timestamp() * 1000))
    assert sent["text"] == f"project · turn failed: usage limit until {until}\n{text}", sent


def test_a_failure_that_names_no_time_keeps_its_title(
    state_dir: Path, tmp_path: Path, agent: subprocess.Popen[bytes]
) -> None:
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{title}}", "{{until}}"]\n'
        '[[rules]]\nwhen = ["error"]\nchannels = ["log"]\n'
    )
    hook(state_dir, agent.pid, "SessionStart")
    hook(state_dir, agent.pid, "UserPromptSubmit")
    text = "API Error: Request rejected (429) · This request would exceed your rate limit."
    hook(state_dir, agent.pid, "StopFailure-rate_limit", last_assistant_message=text)
    (sent,) = wait_for(lambda: calls(log), 60, "the turn failed alert")
    assert sent == ["project · turn failed", ""]


def _ms(stamp: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def test_a_failure_never_ends_the_sender_and_is_logged_once(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lookout import silence
    from lookout.sender import timers

    def broken(*_a: object) -> None:
        raise ValueError("a snapshot nothing expected")

    monkeypatch.setattr(silence, "watch", broken)
    clock = timers.Timers(str(state_dir))
    assert clock.look(1_000_000) == 1_000_000 + timers.RECHECK_MS  # looked at again later
    assert clock.look(1_002_000) == 1_002_000 + timers.RECHECK_MS
    log = (state_dir / "errors.log").read_text()
    assert log.count("sender timers:") == 1 and "ValueError: a snapshot nothing expected" in log


def test_what_it_remembers_is_only_the_sessions_it_still_watches(state_dir: Path) -> None:
    from lookout.sender import timers

    clock = timers.Timers(str(state_dir))
    clock.next = {"gone-1": 5, "gone-2": 6}  # sessions that ended or were pruned since
    assert clock.look(1_000_000) is None
    assert clock.next == {}


def test_a_limit_a_hook_rings_for_while_the_sender_waits_lifts_on_time(
    state_dir: Path, tmp_path: Path, agent: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The round 4 regression: a sender waiting on its bell for a far deadline (a turn's stuck
    time, 600 s away) is rung by the hook of a turn that fails on a limit. No job is written
    (no rule sends `error`): the ring alone must make it look, read the limit and wake at its
    time. It looked only with its alert watch (every `watch_s`, here longer than the test
    waits), so the ring was lost and the alert came 600 s late, or never."""
    import threading

    from lookout.sender import lanes, sender

    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{kind}}", "{{message}}"]\n'
        '[[rules]]\nwhen = ["stuck", "limit_lifted"]\nchannels = ["log"]\n'
        "[sessions]\nstuck_after_s = 600\n"
    )
    hook(state_dir, agent.pid, "SessionStart")  # (a turn's start is what starts a sender)
    fd = store.try_lock(str(state_dir / store.SENDER_LOCK))  # the hooks start no sender of theirs
    assert fd is not None
    hook(state_dir, agent.pid, "UserPromptSubmit")  # a stuck time 600 s away
    waits: list[float] = []
    waiting = threading.Event()
    bell_wait = lanes.Bell.wait

    def wait(bell: lanes.Bell, timeout_s: float) -> bool:
        waits.append(timeout_s)
        waiting.set()
        return bell_wait(bell, timeout_s)

    monkeypatch.setattr(lanes.Bell, "wait", wait)
    serving = threading.Thread(
        target=sender.serve, args=(str(state_dir),), kwargs={"held": fd, "watch_s": 120.0}
    )
    serving.start()
    try:
        assert waiting.wait(60), "the sender never waited"
        assert waits[0] > 60  # on the stuck time (or the alert watch), far away
        outbox = sorted((state_dir / store.OUTBOX).glob("*"))
        text = "API Error: Request rejected (429) · Rate limited. Please try again in 2s."
        hook(state_dir, agent.pid, "StopFailure-rate_limit", last_assistant_message=text)
        assert sorted((state_dir / store.OUTBOX).glob("*")) == outbox  # a ring, no job
        (sent,) = wait_for(lambda: calls(log), 60, "the limit_lifted alert")
    finally:
        hook(state_dir, agent.pid, "SessionEnd")  # nothing left to keep: the sender leaves
        serving.join(60)
    assert not serving.is_alive()
    assert sent[0] == "limit_lifted"
    failure = next(r for r in records(state_dir) if r["event"] == "StopFailure")
    limit, lifted = [r for r in records(state_dir) if r["event"] == "Reconciled"]
    assert (limit["outcome"], lifted["outcome"]) == ("limit", "limit_lifted")
    assert lifted["ts"] == store.rfc3339(_ms(failure["ts"]) + 2000)  # at the limit's own time


def test_a_limit_read_before_the_client_wrote_its_exact_time_lifts_at_the_exact_time(
    state_dir: Path, tmp_path: Path, agent: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn failed alert goes out at once and says until when as the message did (to the
    minute at best); Claude Code writes the exact `resetsAt` to the transcript a moment later.
    The lift is alerted at that exact time: the message's words, read first, are shown, never
    recorded (they were, and the lift came when the words said: early or late)."""
    import threading

    from lookout import silence
    from lookout.sender import sender

    monkeypatch.setattr(silence, "LINE_WAIT_MS", 120_000)  # however slow this machine is
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{kind}}", "{{title}}"]\n'
        '[[rules]]\nwhen = ["error", "limit_lifted"]\nchannels = ["log"]\n'
    )
    lines = tmp_path / "transcript.jsonl"
    prompt = {"type": "user", "message": {"role": "user", "content": "hi"}}
    said = {**prompt, "timestamp": store.rfc3339(int(time.time() * 1000))}
    lines.write_text(json.dumps(said, separators=(",", ":")))
    at = {"transcript_path": str(lines)}
    hook(state_dir, agent.pid, "SessionStart", **at)
    fd = store.try_lock(str(state_dir / store.SENDER_LOCK))  # the hooks start no sender of theirs
    assert fd is not None
    hook(state_dir, agent.pid, "UserPromptSubmit", **at)
    text = "API Error: Request rejected (429) · Usage limit reached. Please try again in 5m."
    hook(state_dir, agent.pid, "StopFailure-rate_limit", last_assistant_message=text, **at)
    serving = threading.Thread(target=sender.serve, args=(str(state_dir),), kwargs={"held": fd})
    serving.start()
    try:
        (failed,) = wait_for(lambda: calls(log), 60, "the turn failed alert")
        resets = int(time.time()) + 3
        error = {
            "type": "assistant",
            "timestamp": store.rfc3339(int(time.time() * 1000)),
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "error": "rate_limit",
            "isApiErrorMessage": True,
            "quotaLimits": {"status": "rejected", "resetsAt": resets},
        }
        with lines.open("a") as f:
            f.write("\n" + json.dumps(error, separators=(",", ":")) + "\n")  # as the client does
        wait_for(lambda: len(calls(log)) == 2, 60, "the limit_lifted alert")
    finally:
        hook(state_dir, agent.pid, "SessionEnd", **at)
        serving.join(60)
    failure = next(r for r in records(state_dir) if r["event"] == "StopFailure")
    until = silence.clock(_ms(failure["ts"]) + 5 * 60_000)
    assert failed == ["error", f"project · turn failed: usage limit until {until}"]
    assert calls(log)[1][0] == "limit_lifted"
    limit, lifted = [r for r in records(state_dir) if r["event"] == "Reconciled"]
    assert (limit["outcome"], limit["source"]) == ("limit", "transcript")
    assert (lifted["outcome"], lifted["ts"]) == ("limit_lifted", store.rfc3339(resets * 1000))
