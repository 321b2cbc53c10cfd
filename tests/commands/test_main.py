"""The `lookout` command, on state recorded by the real runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lookout import runner
from lookout.commands import main as cli
from tests.conftest import ROOT, payload

pytestmark = pytest.mark.usefixtures("no_notifications")


def deliver(state: Path, body: dict[str, Any], ts_ms: int | None = None, **env: str) -> None:
    raw = json.dumps(body).encode()
    ts = int(time.time() * 1000) if ts_ms is None else ts_ms
    runner.record(raw, None, ts, str(state), env)


def lookout(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lookout", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=30,
        check=False,
    )


@pytest.fixture
def recorded(state_dir: Path) -> Path:
    busy = payload("PreToolUse-Bash")
    deliver(state_dir, payload("SessionStart-startup"))
    deliver(state_dir, dict(busy, session_id="busy-session"))
    deliver(state_dir, payload("PermissionRequest-Bash"))
    done = dict(payload("Stop"), session_id="ended-session")
    deliver(state_dir, done)
    deliver(state_dir, dict(payload("SessionEnd"), session_id="ended-session"))
    return state_dir


def test_status_json_shape(recorded: Path) -> None:
    out = lookout("status", "--json")
    assert out.returncode == 0, out.stderr
    sessions = json.loads(out.stdout)["sessions"]
    assert [s["status"] for s in sessions] == ["attention", "working", "idle"]
    first = sessions[0]
    assert first["reason"] == "permission"
    assert first["summary"] == payload("PermissionRequest-Bash")["tool_input"]["command"]  # type: ignore[index]
    for key in (
        "session_id",
        "status",
        "reason",
        "detail",
        "summary",
        "cwd",
        "project",
        "last_event",
        "updated_at",
        "since",
        "stale",
        "alive",
        "pid",
        "tmux_pane",
        "agents",
    ):
        assert key in first
    assert first["updated_at"].endswith("Z")


def test_status_hides_ended_sessions_unless_all(recorded: Path) -> None:
    ids = [s["session_id"] for s in json.loads(lookout("status", "--json").stdout)["sessions"]]
    assert "ended-session" not in ids
    ids = [
        s["session_id"] for s in json.loads(lookout("status", "--json", "--all").stdout)["sessions"]
    ]
    assert "ended-session" in ids


def test_status_table_and_line(recorded: Path) -> None:
    table = lookout("status").stdout
    assert table.splitlines()[0].startswith("PROJECT")
    assert "attention permission" in table.splitlines()[1]
    assert "\033[" not in table  # not a TTY
    assert lookout("status", "--line").stdout.strip() == "! demo:permission · 1 working · 1 idle"


def test_status_with_no_state_at_all() -> None:
    out = lookout("status")
    assert (out.returncode, out.stdout.strip()) == (0, "no sessions")
    assert json.loads(lookout("status", "--json").stdout) == {"sessions": [], "config_error": None}


def test_tail(recorded: Path) -> None:
    lines = lookout("tail", "-n", "2").stdout.splitlines()
    assert len(lines) == 2
    assert "Stop" in lines[0] and "SessionEnd" in lines[1]
    raw = [json.loads(x) for x in lookout("tail", "--json", "-n", "100").stdout.splitlines()]
    assert [r["event"] for r in raw] == [
        "SessionStart",
        "PreToolUse",
        "PermissionRequest",
        "Stop",
        "SessionEnd",
    ]
    only = lookout("tail", "--session", "ended", "-n", "100").stdout.splitlines()
    assert len(only) == 2


def test_tail_skips_a_torn_last_line(recorded: Path) -> None:
    with open(recorded / "events.jsonl", "ab") as f:
        f.write(b'{"ts":"2026-11-25T21:00:00.000Z","event":"Sto')
    raw = lookout("tail", "--json", "-n", "1").stdout.splitlines()
    assert json.loads(raw[0])["event"] == "SessionEnd"


def test_tail_follow_prints_new_events(recorded: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "lookout", "tail", "-f", "-n", "0", "--json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(0.5)
        deliver(recorded, dict(payload("UserPromptSubmit"), session_id="followed"))
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert json.loads(line)["session_id"] == "followed"
    finally:
        proc.kill()
        proc.wait()


def test_prune_forgets_only_old_ended_sessions(recorded: Path) -> None:
    old = int(time.time() * 1000) - 10 * 86400 * 1000
    deliver(recorded, dict(payload("SessionEnd"), session_id="old-ended"), ts_ms=old)
    out = lookout("prune", "--dry-run")
    assert "would forget 1 ended session" in out.stdout
    assert (recorded / "sessions" / "old-ended.json").exists()
    assert lookout("prune").stdout.strip() == "forgot 1 ended session"
    assert not (recorded / "sessions" / "old-ended.json").exists()
    assert (recorded / "sessions" / "ended-session.json").exists()
    assert lookout("prune", "--older-than", "0").stdout.strip() == "forgot 1 ended session"


def test_bad_flags_get_a_clear_error() -> None:
    out = lookout("prune", "--older-than", "soon")
    assert out.returncode == 2
    assert "invalid duration 'soon'" in out.stderr
    assert "Traceback" not in out.stderr
    out = lookout("status", "--bogus")
    assert out.returncode == 2 and "unrecognized arguments: --bogus" in out.stderr


@pytest.mark.parametrize(
    ("text", "seconds"), [("7d", 604800), ("1h30m", 5400), ("45", 45), ("2w", 1209600)]
)
def test_parse_duration(text: str, seconds: int) -> None:
    assert cli.parse_duration(text) == seconds


def test_help_lists_every_command() -> None:
    out = lookout("--help").stdout
    for command in ("status", "tail", "prune", "doctor", "test", "check-config"):
        assert command in out
    assert os.environ["LOOKOUT_STATE_DIR"] in out


def test_status_says_when_the_config_is_broken(recorded: Path) -> None:
    Path(os.environ["LOOKOUT_CONFIG"]).write_text("[channels.phone]\ntype = 5\n")
    out = lookout("status")
    assert out.returncode == 0
    assert "attention permission" in out.stdout
    assert out.stderr.startswith("warning: notifications are off: ")
    assert "channels.phone.type" in out.stderr
    assert "hint: run `lookout check-config`" in out.stderr
    assert json.loads(lookout("status", "--json").stdout)["config_error"]
    assert lookout("status", "--line").stdout.strip().endswith("· config error")


def test_status_watch_refreshes_until_ctrl_c(recorded: Path) -> None:
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "lookout", "status", "--watch", "--interval", "0.2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)
    deliver(recorded, dict(payload("UserPromptSubmit"), session_id="late-arrival"))
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    frames = out.split("lookout · ")
    assert len(frames) >= 4  # refreshed several times
    assert "Ctrl-C to quit" in frames[1]
    assert "attention permission" in frames[1]
    assert frames[-1].count("working") > frames[1].count("working")
