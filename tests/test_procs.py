"""lookout.procs: the agent process a hook runs under, and whether it still runs (pid + start
time). The agents here are stand-ins, labelled so: a real child process that runs lookout's hook
the way each client does (Gemini CLI: `bash -c <command>`; Codex: `sh -c <command>`; OpenCode's
plugin: the interpreter directly), then waits as an agent at a dialog would. The real Gemini CLI
case is tests/e2e/test_gemini.py."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lookout import procs
from tests.helpers import FIXTURES, PAYLOADS, ROOT

PY = sys.executable

# A stand-in agent: runs one hook command as its own child, says so, then waits to be killed.
AGENT = """
import subprocess, sys, time
argv, payload = sys.argv[1:-1], open(sys.argv[-1], "rb").read()
subprocess.run(argv, input=payload, check=True)
print("hooked", flush=True)
time.sleep(600)
"""


def hook(script: str) -> str:
    return f"{shlex.quote(PY)} -I -S {shlex.quote(str(ROOT / 'hooks' / script))}"


# (agent, how its client starts the hook, payload): each opens a permission dialog.
CASES = {
    "gemini": (["bash", "-c", hook("gemini.py")], FIXTURES / "gemini" / "Notification.json"),
    # Not the last command: the shell stays between the agent and the hook.
    "gemini-shell-stays": (
        ["bash", "-c", hook("gemini.py") + "; true"],
        FIXTURES / "gemini" / "Notification.json",
    ),
    "codex": (
        ["sh", "-c", "LOOKOUT_AGENT=codex " + hook("permission_request.py")],
        PAYLOADS / "PermissionRequest-Bash.json",
    ),
    "opencode": ([PY, "-I", "-S", str(ROOT / "hooks" / "opencode.py")], None),
}


def opencode_permission(tmp_path: Path) -> Path:
    lines = (FIXTURES / "opencode" / "plugin-permission.jsonl").read_text().splitlines()
    line = next(x for x in lines if '"permission.asked"' in x)
    path = tmp_path / "permission.json"
    path.write_text(line)
    return path


def status() -> list[dict[str, Any]]:
    done = subprocess.run(
        [PY, "-m", "lookout", "status", "--json", "--all"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
        cwd=ROOT,
    )
    assert done.returncode in (0, 1), done.stderr
    sessions: list[dict[str, Any]] = json.loads(done.stdout)["sessions"]
    return sessions


def wait_for(pred: Any, timeout: float = 30) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    shown = status()
    while not pred(shown):
        assert time.monotonic() < deadline, f"not reached: {shown}"
        time.sleep(0.1)
        shown = status()
    return shown


@pytest.mark.parametrize("case", list(CASES))
def test_an_agent_killed_at_a_dialog_ends_the_session(
    isolated_env: Path, no_notifications: None, tmp_path: Path, case: str
) -> None:
    argv, payload = CASES[case]
    path = payload or opencode_permission(tmp_path)
    agent = subprocess.Popen([PY, "-c", AGENT, *argv, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert agent.stdout is not None and agent.stdout.readline() == "hooked\n"
        (shown,) = status()
        assert (shown["status"], shown["reason"]) == ("attention", "permission")
        assert (shown["pid"], shown["alive"]) == (agent.pid, True)
        agent.send_signal(signal.SIGKILL)
        agent.wait()
        (shown,) = wait_for(lambda s: s[0]["status"] == "ended")
        assert (shown["reason"], shown["alive"]) == ("process_gone", False)
    finally:
        agent.kill()
        agent.wait()


def test_copilot_and_cursor_sessions_keep_no_pid(
    isolated_env: Path, no_notifications: None, tmp_path: Path
) -> None:
    # Their hook process trees are not verified with a real client: unknown, never guessed.
    payload = tmp_path / "copilot.json"
    payload.write_text(json.dumps({"sessionId": "cop-1", "cwd": str(tmp_path), "prompt": "hi"}))
    done = subprocess.run(
        ["bash", "-c", hook("copilot.py") + " userPromptSubmitted; true"],
        stdin=payload.open("rb"),
        timeout=60,
    )
    assert done.returncode == 0
    (shown,) = status()
    assert (shown["agent"], shown["pid"], shown["alive"]) == ("copilot", None, None)


def test_a_reused_pid_is_not_the_agent() -> None:
    found = procs.stat(os.getpid())
    assert found is not None
    _, state, parent, start = found
    assert parent == os.getppid() and state in ("R", "S")
    assert procs.alive(os.getpid(), start) is True
    assert procs.alive(os.getpid(), None) is True  # no start recorded: the pid alone
    # The same pid, started at another time: another process now, the agent is gone.
    assert procs.alive(os.getpid(), start + 1) is False
    assert procs.alive(None) is None and procs.alive(True) is None and procs.alive(0) is None


def test_a_killed_agent_not_yet_reaped_is_gone() -> None:
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(600)"])
    try:
        found = procs.stat(child.pid)
        assert found is not None
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while (procs.stat(child.pid) or ("", "?"))[1] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert procs.alive(child.pid, found[3]) is False  # a zombie: kill(pid, 0) would say alive
    finally:
        child.kill()
        child.wait()
    assert procs.alive(child.pid, found[3]) is False


def test_a_name_with_spaces_and_parentheses_is_read_whole(tmp_path: Path) -> None:
    # The name field ends at the last ')': a program named "a) (b" cannot shift the fields.
    link = tmp_path / "a) (b"
    link.symlink_to(PY)
    child = subprocess.Popen([str(link), "-c", "import time; time.sleep(600)"])
    try:
        deadline = time.monotonic() + 30
        while (procs.stat(child.pid) or ("",))[0] != "a) (b":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        found = procs.stat(child.pid)
        assert found is not None and found[2] == os.getpid()
    finally:
        child.kill()
        child.wait()


def test_a_claude_session_whose_pid_was_reused_is_over(
    isolated_env: Path, no_notifications: None, state_dir: Path
) -> None:
    # Claude Code names its process (CLAUDE_PID); its start time is kept beside it, so a pid the
    # system hands to another process later is not taken for the agent.
    stand_in = subprocess.Popen([PY, "-c", "import time; time.sleep(600)"])
    try:
        payload = (PAYLOADS / "Notification-permission_prompt.json").read_bytes()
        env = {**os.environ, "CLAUDE_PID": str(stand_in.pid)}
        done = subprocess.run(
            ["sh", "-c", hook("notification.py")], input=payload, env=env, timeout=60
        )
        assert done.returncode == 0
        (shown,) = status()
        assert (shown["status"], shown["pid"], shown["alive"]) == ("attention", stand_in.pid, True)
        (path,) = (state_dir / "sessions").glob("*.json")
        snapshot = json.loads(path.read_text())
        found = procs.stat(stand_in.pid)
        assert found is not None and snapshot["pid_start"] == found[3]
        # The same pid, another process: what a reused pid looks like from the snapshot's side.
        snapshot["pid_start"] = found[3] - 1
        path.write_text(json.dumps(snapshot))
        (shown,) = status()
        assert (shown["status"], shown["reason"], shown["alive"]) == (
            "ended",
            "process_gone",
            False,
        )
    finally:
        stand_in.kill()
        stand_in.wait()


def test_a_preempted_clock_read_does_not_put_the_stamp_early(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hook's stamp is its start in /proc (boot clock) moved to the wall clock by their
    difference; preempted between two reads (a busy machine), that difference came out short
    and the stamp early (a test saw 12 ms before the hook was fired). Boot clock 1,000 ms behind
    the wall clock: the first bracket is preempted for 5 ms, the second is tight."""
    offset = 1_000_000_000
    boot = iter([10_000_000, 15_000_000, 20_000_000, 20_001_000])
    wall = iter([10_000_000 + offset + 1_000, 20_000_000 + offset + 500])
    monkeypatch.setattr(time, "clock_gettime_ns", lambda _clock: next(boot))
    monkeypatch.setattr(time, "time_ns", lambda: next(wall))
    assert procs._wall_minus_boot() == offset
