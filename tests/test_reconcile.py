"""Reconciling open attention against what the real client left behind: transcripts captured
from Claude Code 2.1.332 (tests/fixtures/transcripts/), real child processes, dead pids."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lookout import events, machine, reconcile, store

from .conftest import write_config

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
SID = "2cfcaed5-eb7b-4f77-b37e-b437d693e68f"


def _ms(text: str) -> int:
    entry = {"timestamp": text}
    value = reconcile._ts_ms(entry)
    assert value is not None
    return value


def last_call(path: Path) -> dict[str, Any]:
    """The last tool call the model made in a transcript (ToolSearch aside), with its time."""
    found: dict[str, Any] = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("type") != "assistant":
            continue
        for block in entry["message"]["content"]:
            if block.get("type") == "tool_use" and block["name"] != "ToolSearch":
                found = {**block, "ts_ms": _ms(entry["timestamp"])}
    assert found, path
    return found


class Session:
    """One session fed through the real machine and store, its transcript a fixture copy."""

    def __init__(self, tmp_path: Path, state_dir: Path, fixture: str, agent: bool = False):
        self.state_dir = str(state_dir)
        self.transcript = tmp_path / "projects" / f"{SID}.jsonl"
        self.transcript.parent.mkdir(parents=True)
        source = FIXTURES / fixture
        self.agent_id = "ac6a88e8b3af4639e" if agent else None
        if agent:
            agent_file = self.transcript.parent / SID / "subagents" / f"agent-{self.agent_id}.jsonl"
            agent_file.parent.mkdir(parents=True)
            shutil.copyfile(source, agent_file)
            self.transcript.write_text("")
            call = last_call(agent_file)
        else:
            shutil.copyfile(source, self.transcript)
            call = last_call(self.transcript)
        self.call = call
        self.pid = os.getpid()
        t = call["ts_ms"]
        self.feed("SessionStart", t - 3000, source="startup")
        self.feed("UserPromptSubmit", t - 2000, prompt="go", prompt_id="p1")
        if agent:
            self.feed("SubagentStart", t - 1000, agent_type="general-purpose")
        tool = {"tool_name": call["name"], "tool_input": call["input"]}
        self.feed("PreToolUse", t - 100, tool_use_id=call["id"], **tool)
        self.feed("PermissionRequest", t - 50, **tool)

    def feed(self, name: str, ts: int, **fields: Any) -> None:
        body = {
            "session_id": SID,
            "transcript_path": str(self.transcript),
            "cwd": "/home/dev/project",
            "hook_event_name": name,
            **fields,
        }
        if self.agent_id and name not in ("SessionStart", "UserPromptSubmit"):
            body.setdefault("agent_id", self.agent_id)
            body.setdefault("agent_type", "general-purpose")
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

    def records(self) -> list[dict[str, Any]]:
        path = Path(self.state_dir) / store.EVENTS
        return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(autouse=True)
def _quiet() -> None:
    write_config("# no rules\n")


@pytest.mark.parametrize(
    ("fixture", "reason"),
    [
        ("permission-esc.jsonl", "permission"),
        ("permission-no.jsonl", "permission"),
        ("plan-reject.jsonl", "plan"),
        ("question-esc.jsonl", "question"),
        ("fallback-no.jsonl", "permission"),
    ],
)
def test_a_rejected_dialog_ends_the_episode_and_the_turn(
    tmp_path: Path, state_dir: Path, fixture: str, reason: str
) -> None:
    s = Session(tmp_path, state_dir, fixture)
    assert (s.snapshot["status"], s.snapshot["reason"]) == ("attention", reason)
    written = reconcile.reconcile(s.state_dir)
    assert [(r["event"], r["source"], r["outcome"]) for r in written] == [
        ("Reconciled", "transcript", "rejected")
    ]
    assert (s.snapshot["status"], s.snapshot["episode"]) == ("idle", None)
    last = s.records()[-1]
    assert (last["event"], last["status"], last["outcome"]) == ("Reconciled", "idle", "rejected")
    # Recorded at the time of the proof (the transcript line), not when someone looked.
    assert last["ts"] > store.rfc3339(s.call["ts_ms"])
    assert reconcile.reconcile(s.state_dir) == []  # once


@pytest.mark.parametrize(
    "fixture",
    [
        "permission-yes.jsonl",
        "plan-approve.jsonl",
        "question-answer.jsonl",
        "permission-approved-finished.jsonl",
    ],
)
def test_an_answered_dialog_whose_hook_is_late_goes_back_to_work(
    tmp_path: Path, state_dir: Path, fixture: str
) -> None:
    s = Session(tmp_path, state_dir, fixture)
    written = reconcile.reconcile(s.state_dir)
    assert [r["outcome"] for r in written] == ["answered"]
    assert (s.snapshot["status"], s.snapshot["detail"]) == ("working", "Thinking")


def test_an_open_dialog_stays_open(tmp_path: Path, state_dir: Path) -> None:
    s = Session(tmp_path, state_dir, "permission-approved-running.jsonl")
    assert reconcile.reconcile(s.state_dir) == []
    assert s.snapshot["status"] == "attention"
    assert reconcile.still_waiting(s.state_dir, SID, s.snapshot["episode"])


def bash_tool_process(command: str) -> subprocess.Popen[bytes]:
    """A child of this process shaped exactly like the client's Bash tool (2.1.332)."""
    quoted = command.replace("'", "'\\''")
    script = (
        "source /tmp/none/.claude/shell-snapshots/snapshot-bash-1-x.sh 2>/dev/null || true && "
        f"eval '{quoted}' < /dev/null && pwd -P >| /tmp/claude-0000-cwd"
    )
    proc = subprocess.Popen(["/bin/bash", "-c", script])
    deadline = time.monotonic() + 5
    while command not in " ".join(reconcile.running_commands(os.getpid())):
        assert time.monotonic() < deadline, "the child never showed"
        time.sleep(0.02)
    return proc


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_an_approved_command_still_running_shows_as_working(
    tmp_path: Path, state_dir: Path
) -> None:
    s = Session(tmp_path, state_dir, "permission-approved-running.jsonl")
    command = s.call["input"]["command"]
    assert "sleep(20)" in command and '"' in command
    other = bash_tool_process("sleep 3; echo 'not it'")
    try:
        assert reconcile.reconcile(s.state_dir) == []  # someone else's command proves nothing
    finally:
        other.kill()
        other.wait()
    proc = bash_tool_process(command.replace("time.sleep(20)", "time.sleep(3)"))
    try:
        assert reconcile.reconcile(s.state_dir) == []  # not the same command either
    finally:
        proc.kill()
        proc.wait()
    proc = bash_tool_process(command)  # the very command: approved, running
    try:
        written = reconcile.reconcile(s.state_dir)
    finally:
        proc.kill()
        proc.wait()
    assert [(r["source"], r["outcome"]) for r in written] == [("process", "approved")]
    assert (s.snapshot["status"], s.snapshot["detail"]) == ("working", "Bash")
    assert s.snapshot["summary"] == command


def test_a_subagents_refused_call_leaves_the_agent_working(tmp_path: Path, state_dir: Path) -> None:
    s = Session(tmp_path, state_dir, "subagent-esc.agent.jsonl", agent=True)
    assert (s.snapshot["status"], s.snapshot["reason"]) == ("attention", "permission")
    written = reconcile.reconcile(s.state_dir)
    assert [(r["outcome"], r["agent_id"]) for r in written] == [("denied", s.agent_id)]
    child = s.snapshot["agents"][s.agent_id]
    assert (child["status"], child["episode"]) == ("working", None)


def test_a_dead_process_ends_the_session_once(tmp_path: Path, state_dir: Path) -> None:
    s = Session(tmp_path, state_dir, "permission-approved-running.jsonl")
    episode = s.snapshot["episode"]
    dead = subprocess.Popen(["true"])
    dead.wait()
    snap = s.snapshot
    snap["pid"] = dead.pid
    with store.Locked(s.state_dir) as st:
        st.write_session(snap)
    assert not reconcile.still_waiting(s.state_dir, SID, episode)
    assert (s.snapshot["status"], s.snapshot["reason"]) == ("ended", "process_gone")
    assert [r["outcome"] for r in s.records() if r["event"] == "Reconciled"] == ["process_gone"]
    assert reconcile.reconcile(s.state_dir) == []


def test_an_interrupted_turn_with_no_dialog_goes_idle(tmp_path: Path, state_dir: Path) -> None:
    # The fallback dialog answered before its Notification: lookout only saw the PreToolUse.
    transcript = tmp_path / "projects" / f"{SID}.jsonl"
    s = Session(tmp_path, state_dir, "fallback-no.jsonl")
    shutil.rmtree(state_dir)
    t = s.call["ts_ms"]
    s.feed("SessionStart", t - 3000, source="startup")
    s.feed("UserPromptSubmit", t - 2000, prompt="go", prompt_id="p1")
    s.feed(
        "PreToolUse",
        t - 100,
        tool_use_id=s.call["id"],
        tool_name="Bash",
        tool_input=s.call["input"],
    )
    assert (s.snapshot["status"], s.snapshot["detail"]) == ("working", "Bash")
    os.utime(transcript)  # written after the status (as it was, live)
    written = reconcile.reconcile(s.state_dir)
    assert [(r["outcome"], r["status"]) for r in written] == [("interrupted", "idle")]


def test_the_read_is_bounded_and_crosses_lines_longer_than_a_chunk(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    call = {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "toolu_X"}]}}
    result = {
        "type": "user",
        "toolDenialKind": "user-rejected",
        "timestamp": "2026-11-26T02:25:07.011Z",
        "message": {
            "content": [{"type": "tool_result", "tool_use_id": "toolu_X", "is_error": True}]
        },
    }
    big = {"type": "attachment", "attachment": {"blob": "x" * (3 * reconcile.CHUNK)}}
    lines = [
        call,
        result,
        big,
        {
            "type": "user",
            "message": {"content": "[Request interrupted by user for tool use]"},
            "timestamp": "2026-11-26T02:25:07.042Z",
        },
        big,
    ]
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in lines))
    seen = reconcile.scan_transcript(str(path), "toolu_X")
    assert seen["result"] == {
        "error": True,
        "rejected": True,
        "ts_ms": _ms("2026-11-26T02:25:07.011Z"),
    }
    assert seen["interrupt_ms"] == _ms("2026-11-26T02:25:07.042Z")
    # Beyond the bound: not found (and not read).
    assert (
        reconcile.scan_transcript(str(path), "toolu_X", max_bytes=reconcile.CHUNK)["result"] is None
    )


def test_a_transcript_path_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert reconcile.scan_transcript(str(fifo), "toolu_X")["result"] is None
    assert time.monotonic() - started < 1


def test_transcript_paths_come_only_from_the_snapshot_and_stay_under_it() -> None:
    snap = {"transcript": "/h/.claude/projects/p/s.jsonl"}
    assert reconcile.transcript_of(snap, None) == "/h/.claude/projects/p/s.jsonl"
    assert (
        reconcile.transcript_of(snap, "../../etc")
        == "/h/.claude/projects/p/s/subagents/agent-etc.jsonl"
    )
    assert reconcile.transcript_of({"transcript": "relative.jsonl"}, None) is None
    assert reconcile.transcript_of({"transcript": "/etc/passwd"}, None) is None


def test_a_failing_notification_is_logged_never_the_readers_failure(
    tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lookout.notify import handle

    def broken(intents: list[dict[str, Any]], state_dir: str) -> None:
        raise RuntimeError("no sender today")

    monkeypatch.setattr(handle, "handle", broken)
    s = Session(tmp_path, state_dir, "permission-esc.jsonl")
    assert [r["outcome"] for r in reconcile.reconcile(s.state_dir)] == ["rejected"]
    assert s.snapshot["status"] == "idle"
    assert "no sender today" in (state_dir / store.ERRORS).read_text()
