"""The issue's "done when", on this Linux machine: with LOOKOUT_PLATFORM=macos (or wsl) and the
recording stand-ins on PATH, the real hook scripts (permission request, the answer, the turn's
end) produce the platform's alert with its Focus action, its replacement under the same group
id, and the same statuses as the Linux path; a kill -9 of the agent is seen through ps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import PAYLOADS, ROOT, wait_for, write_config
from tests.platform.standins import Standins, standins

# A real broker, real sender/poller processes or a real hook sequence: the full suite, not --fast.
pytestmark = pytest.mark.real

CONFIG = """
[channels.desktop]
type = "desktop"
[[rules]]
when = ["permission", "done"]
channels = ["desktop"]
"""
SEQUENCE = (
    ("permission_request.py", "PermissionRequest-Bash"),
    ("post_tool_use.py", "PostToolUse-Bash"),
    ("stop.py", "Stop"),
)


def hook(script: str, stem: str, session: str, env: dict[str, str]) -> None:
    body = {**json.loads((PAYLOADS / f"{stem}.json").read_text()), "session_id": session}
    body["cwd"] = "/w/demo"
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / script)],
        input=json.dumps(body).encode(),
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")


def deliveries(state: Path) -> list[dict[str, Any]]:
    path = state / "deliveries.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def statuses(session: str) -> list[tuple[str, str | None]]:
    done = subprocess.run(
        [sys.executable, "-m", "lookout", "status", "--json", "--all"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
        cwd=ROOT,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    rows = [s for s in json.loads(done.stdout)["sessions"] if s["session_id"] == session]
    return [(s["status"], s.get("reason")) for s in rows]


def scenario(tmp_path: Path) -> tuple[list[Any], list[dict[str, Any]], int]:
    """Run the hook sequence under a stand-in agent, then kill -9 it; what `lookout status`
    showed after each step, what was delivered, the agent's pid."""
    write_config(CONFIG)
    state = Path(os.environ["LOOKOUT_STATE_DIR"])
    session = f"plat-{uuid.uuid4().hex[:8]}"
    agent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    # Where the session lives (tmux): a Focus action makes sense for its alerts.
    env = {
        **os.environ,
        "CLAUDE_PID": str(agent.pid),
        "TMUX": f"{tmp_path}/tmux-sock,1,0",
        "TMUX_PANE": "%3",
    }
    shown: list[Any] = []
    try:
        for n, (script, stem) in enumerate(SEQUENCE, 1):
            hook(script, stem, session, env)
            wait_for(
                lambda n=n: len([d for d in deliveries(state) if d["result"] == "sent"]) >= n,
                what=f"delivery {n}: {deliveries(state)}",
            )
            shown.append(statuses(session))
        agent.send_signal(signal.SIGKILL)
        # Killed, not reaped: kill(pid, 0) still succeeds; only /proc or ps tells it is dead.
        wait_for(lambda: zombie(agent.pid), what="the agent to be a zombie")
        with open(os.environ["LOOKOUT_STANDIN_LOG"], "a") as log:  # what came after the kill
            log.write('{"prog": "-", "argv": ["killed"]}\n')
        shown.append(statuses(session))
    finally:
        agent.kill()
        agent.wait()
    return shown, [d for d in deliveries(state) if d["result"] == "sent"], agent.pid


def zombie(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return stat[stat.rfind(b")") + 2 :].startswith(b"Z")


def linux_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    box = standins(tmp_path / "linux", monkeypatch, "linux")
    (box.bin / "notify-send").write_text("#!/bin/sh\necho 42\n")
    (box.bin / "notify-send").chmod(0o755)
    shown, _, _ = scenario(tmp_path)
    return shown


@pytest.fixture
def linux_statuses(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    with pytest.MonkeyPatch.context() as mp:
        base = tmp_path_factory.mktemp("linux-run")
        (base / "linux").mkdir()
        state = base / "state"
        mp.setenv("LOOKOUT_STATE_DIR", str(state))
        return linux_run(base, mp)


EXPECTED = [
    [("attention", "permission")],
    [("working", None)],
    [("idle", None)],
    [("ended", "process_gone")],
]


def test_the_linux_path_gives_these_statuses(linux_statuses: list[Any]) -> None:
    assert linux_statuses == EXPECTED


def sent_to(box: Standins, prog: str) -> list[list[str]]:
    return box.argvs(prog)


def test_macos_alerts_with_actions_replace_and_the_same_statuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linux_statuses: list[Any]
) -> None:
    box = standins(
        tmp_path, monkeypatch, "macos", "alerter", "terminal-notifier", "osascript", "ps"
    )
    monkeypatch.setenv("LOOKOUT_STANDIN_STAY", "2")
    shown, sent, pid = scenario(tmp_path)
    assert shown == linux_statuses == EXPECTED
    alerts = sent_to(box, "alerter")
    permission, update, done = alerts[0], alerts[1], alerts[2]
    group = permission[permission.index("-group") + 1]
    assert permission[permission.index("-actions") + 1] == "Focus"
    assert "needs permission" in permission[permission.index("-title") + 1]
    assert update[update.index("-group") + 1] == group  # the answer replaces the alert
    assert "-actions" not in update
    assert done[done.index("-actions") + 1] == "Focus"
    assert [d["kind"] for d in sent][:1] == ["permission"]
    assert sent[0]["detail"] == f"alerter group {group}, Focus action"
    # The kill -9 was seen through ps (the hook recorded the pid; no /proc read on "macOS").
    calls = [c["argv"] for c in box.calls()]
    after = calls[calls.index(["killed"]) + 1 :]
    assert ["-o", "stat=,lstart=", "-p", str(pid)] in after
    assert box.argvs("osascript") == [] and box.argvs("terminal-notifier") == []


def test_wsl_toasts_replace_and_the_same_statuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linux_statuses: list[Any]
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    box = standins(tmp_path, monkeypatch, "wsl", "powershell.exe")
    shown, sent, _ = scenario(tmp_path)
    assert shown == linux_statuses == EXPECTED
    toasts = [json.loads(str(c["stdin"])) for c in box.calls("powershell.exe")]
    assert "needs permission" in toasts[0]["title"]
    assert toasts[1]["tag"] == toasts[0]["tag"]  # the answer replaces the toast
    assert [d["detail"].split(" tag ")[0] for d in sent][:1] == ["Windows toast (powershell.exe)"]
