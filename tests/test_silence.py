"""Wedged sessions and usage limits, read through the real reconcile path (the one every reader and
the sender's timers take): hooks fed through the parser, machine and store, a real agent process,
real tool processes, transcripts and registry files with their own times. No test waits for
time to pass: `now` is given, every other time is a signal's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import client_sessions, events, machine, reconcile, silence, store, words
from lookout.platform.base import Platform
from lookout.sender.timers import Timers

from .conftest import write_config

SID = "5f0e7d9c-6a51-4f59-9d1b-0c6d3f1b2a77"
TRANSCRIPTS = Path(__file__).parent / "fixtures" / "transcripts"
MINUTE = 60_000


@pytest.fixture(autouse=True)
def _quiet() -> None:
    write_config("# no rules\n[sessions]\nstuck_after_s = 600\n")


@pytest.fixture(autouse=True)
def _never_asleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Platform, "slept_ms", lambda self: 0)


class Agent:
    """A live process standing for the agent (its pid is CLAUDE_PID), optionally running a
    command shaped exactly like Claude Code's Bash tool as its child."""

    def __init__(self, tool: str | None = None) -> None:
        if tool is None:
            argv = ["sleep", "120"]
        else:
            script = (
                "source /tmp/none/.claude/shell-snapshots/snapshot-bash-1-x.sh 2>/dev/null"
                f" || true && eval '{tool}' < /dev/null && pwd -P >| /tmp/claude-0000-cwd"
            )
            code = (
                "import subprocess, sys, time\n"
                f"subprocess.Popen(['/bin/bash', '-c', {script!r}])\n"
                "time.sleep(120)\n"
            )
            argv = [sys.executable, "-c", code]
        self.proc = subprocess.Popen(argv)
        self.pid = self.proc.pid
        if tool is not None:
            deadline = time.monotonic() + 10
            while not silence.bash_tools(self.pid):
                assert time.monotonic() < deadline, "the tool never started"
                time.sleep(0.02)

    def stop(self) -> None:
        for child, _ in silence.bash_tools(self.pid):
            try:
                os.kill(child, 9)
            except ProcessLookupError:
                pass
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def agent() -> Iterator[Agent]:
    a = Agent()
    yield a
    a.stop()


class Session:
    """One Claude Code session fed through the real parser, machine and store."""

    def __init__(self, state_dir: Path, pid: int, transcript: Path | None = None) -> None:
        self.state_dir = str(state_dir)
        self.pid = pid
        self.transcript = transcript

    def feed(self, name: str, ts: int, **fields: Any) -> None:
        body: dict[str, Any] = {
            "session_id": SID,
            "cwd": "/home/dev/project",
            "hook_event_name": name,
            **fields,
        }
        if self.transcript is not None:
            body["transcript_path"] = str(self.transcript)
        env = {"CLAUDE_PID": str(self.pid), "CLAUDE_CODE_ENTRYPOINT": "cli"}
        event = events.parse(body, env, ts, f"{name}{ts}", None)
        with store.Locked(self.state_dir) as st:
            snap, line, _ = machine.apply(st.read_session(SID), event)
            st.write_session(snap)
            st.append(store.EVENTS, {"ts": store.rfc3339(ts), **line})

    @property
    def snapshot(self) -> dict[str, Any]:
        snap = store.read_session(self.state_dir, SID)
        assert snap is not None
        return snap

    @property
    def shown(self) -> tuple[str, str | None]:
        return self.snapshot["status"], self.snapshot["reason"]

    def records(self) -> list[dict[str, Any]]:
        lines = (Path(self.state_dir) / store.EVENTS).read_text().splitlines()
        return [json.loads(line) for line in lines]

    def look(self, now_ms: int) -> list[tuple[str, str, str]]:
        written = reconcile.reconcile(self.state_dir, now_ms=now_ms)
        return [(r["event"], str(r["source"]), str(r["outcome"])) for r in written]


def working(state_dir: Path, pid: int, at: int, transcript: Path | None = None) -> Session:
    s = Session(state_dir, pid, transcript)
    s.feed("SessionStart", at - 2000, source="startup")
    s.feed("UserPromptSubmit", at - 1000, prompt="refactor the parser", prompt_id="p1")
    s.feed("PostToolUse", at, tool_name="Read", tool_input={"file_path": "/x"}, tool_use_id="t1")
    assert (s.shown, s.snapshot["detail"]) == (("working", None), "Thinking")
    return s


def test_a_turn_silent_for_stuck_after_s_is_stuck_once(state_dir: Path, agent: Agent) -> None:
    now = words.now_ms()
    quiet = now - 11 * MINUTE
    s = working(state_dir, agent.pid, quiet)
    assert s.look(quiet + 9 * MINUTE) == []  # not yet
    assert s.shown == ("working", None)
    assert s.look(now) == [("Reconciled", "silence", "stuck")]
    assert s.shown == ("attention", "stuck")
    snap = s.snapshot
    assert snap["evidence"] == "silence" and snap["since_ms"] == quiet
    assert snap["summary"] == (
        f"silent since {silence.clock(quiet)} (10m): no hook, no tool running"
    )
    record = json.loads((state_dir / store.EVENTS).read_text().splitlines()[-1])
    # Recorded at the moment it became stuck (its last sign plus the threshold), from the
    # signals' own times: not when someone happened to look.
    assert record["ts"] == store.rfc3339(quiet + 10 * MINUTE)
    assert record["notify"] == ["stuck"]
    assert s.look(now + 5000) == []  # once


def test_a_running_tool_is_not_stuck(state_dir: Path) -> None:
    now = words.now_ms()
    # A Bash command its hooks saw start 20 minutes ago and not end.
    hooked = Agent()
    try:
        s = working(state_dir, hooked.pid, now - 30 * MINUTE)
        s.feed(
            "PreToolUse",
            now - 20 * MINUTE,
            tool_name="Bash",
            tool_input={"command": "make test"},
            tool_use_id="t2",
        )
        assert s.look(now) == []
        assert (s.shown, s.snapshot["main"]["tool_ms"]) == (("working", None), now - 20 * MINUTE)
    finally:
        hooked.stop()
    # A command no hook announced (a session whose hooks never fired), seen as the agent's child.
    shutil.rmtree(state_dir)
    running = Agent(tool="sleep 30")
    try:
        s = working(state_dir, running.pid, now - 30 * MINUTE)
        assert silence.running_tool(s.snapshot) == {
            "name": "Bash",
            "since_ms": silence.running_tool(s.snapshot)["since_ms"],  # type: ignore[index]
            "by": "process",
        }
        assert s.look(now) == []
        assert s.shown == ("working", None)
    finally:
        running.stop()


def test_the_transcript_and_the_registry_are_signs_of_life(
    state_dir: Path, tmp_path: Path, agent: Agent
) -> None:
    now = words.now_ms()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type":"user"}\n')
    s = working(state_dir, agent.pid, now - 30 * MINUTE, transcript)
    os.utime(transcript, ((now - 5 * MINUTE) / 1000,) * 2)  # written 5 minutes ago
    assert s.look(now) == []
    os.utime(transcript, ((now - 12 * MINUTE) / 1000,) * 2)
    entry = registry_entry(agent.pid, status_ms=now - 3 * MINUTE)
    assert s.look(now) == []  # the registry changed 3 minutes ago
    entry.unlink()
    assert s.look(now) == [("Reconciled", "silence", "stuck")]
    assert s.snapshot["since_ms"] == now - 12 * MINUTE
    assert "no transcript write" in s.snapshot["summary"]
    # The next write brings it back to work, as a hook would.
    os.utime(transcript, ((now + 1000) / 1000,) * 2)
    assert s.look(now + 2000) == [("Reconciled", "transcript", "alive")]
    assert (s.shown, s.snapshot["detail"]) == (("working", None), "Thinking")
    assert s.snapshot["summary"] == "refactor the parser"


def registry_entry(pid: int, status_ms: int) -> Path:
    """Claude Code's registry file (2.1.332's shape) for `pid`, busy since `status_ms`."""
    data = json.loads((Path(__file__).parent / "fixtures/registry/2.1.332-busy.json").read_text())
    host = Path("/etc/machine-id").read_text().strip()
    data.update(
        pid=pid,
        procStart=client_sessions.proc_start(pid),
        sessionId=SID,
        statusUpdatedAt=status_ms,
        updatedAt=status_ms,
        pidDomain=f"linux:{host}:{os.readlink('/proc/self/ns/pid')}",
    )
    directory = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "sessions"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{pid}.json"
    path.write_text(json.dumps(data))
    return path


def test_a_hook_wakes_a_stuck_session(state_dir: Path, agent: Agent) -> None:
    now = words.now_ms()
    s = working(state_dir, agent.pid, now - 11 * MINUTE)
    s.look(now)
    assert s.shown == ("attention", "stuck")
    s.feed(
        "PreToolUse", now + 1000, tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="t3"
    )
    assert (s.shown, s.snapshot["detail"]) == (("working", None), "Bash")


def test_a_process_gone_or_unknown_is_never_stuck(state_dir: Path) -> None:
    now = words.now_ms()
    gone = subprocess.Popen(["true"])
    gone.wait()
    s = working(state_dir, gone.pid, now - 11 * MINUTE)
    assert s.look(now) == [("Reconciled", "process", "process_gone")]
    shutil.rmtree(state_dir)
    unknown = working(state_dir, 0, now - 11 * MINUTE)  # no pid: Copilot CLI, Cursor
    assert unknown.snapshot["pid"] is None
    assert unknown.look(now) == []
    assert unknown.shown == ("working", None)


def test_stuck_after_s_zero_turns_it_off(state_dir: Path, agent: Agent) -> None:
    write_config("# no rules\n[sessions]\nstuck_after_s = 0\n")
    now = words.now_ms()
    s = working(state_dir, agent.pid, now - 60 * MINUTE)
    assert s.look(now) == []


def test_time_asleep_does_not_count(
    state_dir: Path, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A laptop closed for two hours: on the first look after it opens, every session has been
    # quiet for two hours, and none of them is stuck. Silence counts from the wake.
    asleep = {"ms": 0}
    monkeypatch.setattr(Platform, "slept_ms", lambda self: asleep["ms"])
    now = words.now_ms()
    s = working(state_dir, agent.pid, now - 2 * 60 * MINUTE)
    assert silence.woke_ms(str(state_dir), now - 2 * 60 * MINUTE) == 0  # awake so far
    asleep["ms"] = 2 * 60 * MINUTE - 5000  # it slept since
    assert s.look(now) == []
    assert s.shown == ("working", None)
    clock = json.loads((state_dir / store.CLOCK).read_text())
    assert clock == {"slept_ms": asleep["ms"], "woke_ms": now}
    assert s.look(now + 9 * MINUTE) == []
    assert s.look(now + 10 * MINUTE) == [("Reconciled", "silence", "stuck")]
    assert s.snapshot["since_ms"] == now  # quiet since it woke


def test_the_sender_knows_when_to_look_from_the_snapshot_alone(
    state_dir: Path, agent: Agent
) -> None:
    now = words.now_ms()
    s = working(state_dir, agent.pid, now - MINUTE)
    watch: silence.Watch = {"stuck_after_ms": 10 * MINUTE, "woke_ms": 0}
    assert silence.due_ms(s.snapshot, watch) == now - MINUTE + 10 * MINUTE
    assert silence.due_ms(s.snapshot, {"stuck_after_ms": 0, "woke_ms": 0}) is None
    s.feed("Stop", now, last_assistant_message="done")
    assert silence.due_ms(s.snapshot, watch) is None


# -- usage limits ----------------------------------------------------------------------------------


def failed(state_dir: Path, pid: int, at: int, transcript: Path | None, text: str) -> Session:
    s = Session(state_dir, pid, transcript)
    s.feed("SessionStart", at - 2000, source="startup")
    s.feed("UserPromptSubmit", at - 1000, prompt="hi", prompt_id="p1")
    s.feed("StopFailure", at, error="rate_limit", last_assistant_message=text)
    assert (s.shown, s.snapshot["detail"]) == (("attention", "error"), "rate_limit")
    return s


def test_the_transcripts_reset_time_is_read_then_its_lifting_sent_once(
    state_dir: Path, tmp_path: Path, agent: Agent
) -> None:
    transcript = tmp_path / "t.jsonl"
    shutil.copyfile(TRANSCRIPTS / "usage-limit.jsonl", transcript)
    until = 1795780858 * 1000  # the captured line's quotaLimits.resetsAt
    failed_at = 1795773661637  # its timestamp, 2026-11-27T10:01:01.637Z
    text = "You've hit your 5-hour limit · resets 1pm (Europe/Berlin)"
    s = failed(state_dir, agent.pid, failed_at + 50, transcript, text)
    assert s.look(failed_at + 60_000) == [("Reconciled", "transcript", "limit")]
    assert s.snapshot["main"]["episode"]["until_ms"] == until
    assert s.look(until - 1) == []
    assert s.look(until + 3000) == [("Reconciled", "clock", "limit_lifted")]
    assert s.shown == ("attention", "error")  # it still waits for your prompt
    record = json.loads((state_dir / store.EVENTS).read_text().splitlines()[-1])
    assert (record["ts"], record["notify"]) == (store.rfc3339(until), ["limit_lifted"])
    assert record["summary"] == (
        f"the limit lifted at {silence.clock(until)}: send a prompt to continue"
    )
    assert s.look(until + 60_000) == []  # once


def test_without_a_transcript_the_hooks_text_says_when(state_dir: Path, agent: Agent) -> None:
    text = "API Error: Request rejected (429) · Rate limited. Please try again in 30s."
    now = words.now_ms()
    s = failed(state_dir, agent.pid, now, None, text)
    assert s.look(now + 1000) == [("Reconciled", "hook", "limit")]
    assert s.snapshot["main"]["episode"]["until_ms"] == now + 30_000


def test_a_limit_that_names_no_time_records_nothing_and_guesses_nothing(
    state_dir: Path, agent: Agent
) -> None:
    write_config(
        '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["limit_lifted"]\nchannels = ["d"]\n'
    )
    text = "API Error: Request rejected (429) · This request would exceed your rate limit."
    now = words.now_ms()
    s = failed(state_dir, agent.pid, now, None, text)
    watch: silence.Watch = {"stuck_after_ms": 1000, "woke_ms": 0}
    assert silence.due_ms(s.snapshot, watch) == 0  # not read yet: at once
    timers = Timers(str(state_dir))
    assert timers.look(now + 1000) is not None  # read once (no event: nothing to show)...
    assert [r["event"] for r in s.records()][-1] == "StopFailure"
    assert "until_ms" not in s.snapshot["main"]["episode"]
    assert s.snapshot["limit_read"] == s.snapshot["episode"]
    assert silence.due_ms(s.snapshot, watch) is None
    assert timers.look(now + 5000) is None  # ... and nothing to wait for: the sender leaves
    assert s.look(now + 99 * MINUTE) == []


def test_other_errors_are_not_read_for_a_limit(state_dir: Path, agent: Agent) -> None:
    now = words.now_ms()
    s = Session(state_dir, agent.pid)
    s.feed("UserPromptSubmit", now - 1000, prompt="hi", prompt_id="p1")
    s.feed("StopFailure", now, error="authentication_failed", last_assistant_message="401")
    assert s.snapshot["summary"] == "the API key or login was refused: 401"
    assert s.look(now + 1000) == []


def test_lookout_ack_clears_a_stuck_session(
    state_dir: Path, agent: Agent, capsys: pytest.CaptureFixture[str]
) -> None:
    from lookout.commands.main import main as cli_main

    now = words.now_ms()
    s = working(state_dir, agent.pid, now - 11 * MINUTE)
    s.look(now)
    assert s.shown == ("attention", "stuck")
    # newuser-4 defect 10: the hint said "answered already?", there being nothing to answer.
    assert cli_main(["status"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "stuck? `lookout interrupt project` stops its turn; `lookout ack project` clears it"
    )
    assert cli_main(["ack", SID[:8]]) == 0
    assert s.shown == ("idle", None)
    assert s.snapshot["evidence"] == "user"
    capsys.readouterr()


@pytest.mark.parametrize(
    ("text", "zone", "hour", "minute"),
    [
        (
            "API Error: Request rejected (429) · Your limit will reset at 3pm (America/New_York)",
            "America/New_York",
            15,
            0,
        ),
        (
            "API Error: Request rejected (429) · Usage limit reached. It will reset at 16:09",
            None,
            16,
            9,
        ),
    ],
)
def test_a_wall_time_in_a_named_zone_or_on_the_24_hour_clock_says_when(
    state_dir: Path, agent: Agent, text: str, zone: str | None, hour: int, minute: int
) -> None:
    # A time without a date is its next occurrence, in the named zone (else the local one).
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    from lookout import limits

    now = words.now_ms()
    s = failed(state_dir, agent.pid, now, None, text)
    assert s.look(now + 1000) == [("Reconciled", "hook", "limit")]
    where = ZoneInfo(zone) if zone else limits.local_zone()
    printed = datetime.fromtimestamp(now / 1000, where)
    moment = printed.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if moment.timestamp() * 1000 < now - limits.SLACK_MS:
        moment = (moment + timedelta(days=1)).replace(hour=hour, minute=minute)
    assert s.snapshot["main"]["episode"]["until_ms"] == int(moment.timestamp() * 1000)
