"""The real Gemini CLI, offline: `install.py --agent gemini` in a fresh HOME, then turns against a
loopback mock of the Gemini API (GOOGLE_GEMINI_BASE_URL). A turn with a tool call shows up in the
installed `lookout status --json` as a Gemini session; an interactive permission dialog (tmux)
raises attention, and allowing it ends the episode.

Gemini CLI is pinned here (VERSION) and installed from npm into the test cache."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import calls, recorder

from . import npm_client
from .agent_machine import AgentMachine
from .loopback_api import LoopbackAPI

pytestmark = pytest.mark.e2e

VERSION = "0.61.0"
STALL = "STALL_NOW"
REPLY = "OK from mock"
MODEL = "gemini-2.5-flash"


class GeminiAPI(LoopbackAPI):
    """POST /v1beta/models/<model>:streamGenerateContent answers one SSE chunk: a call of
    run_shell_command(COMMAND) when the user's prompt says USE_TOOL and no tool answered yet,
    else the text REPLY."""

    def __init__(self, command: str) -> None:
        super().__init__()
        self.command = command
        self.requests: list[str] = []
        # A prompt holding STALL gets a stream that starts and then hangs, the connection open,
        # until `release` is set (issue 32: a turn hung on a live connection).
        self.release = threading.Event()
        self.stalled = threading.Event()

    def post(self, request: BaseHTTPRequestHandler, raw_body: bytes) -> None:
        body = json.loads(raw_body)
        self.requests.append(request.path)
        contents = body.get("contents") or [{}]
        answered = any("functionResponse" in p for p in contents[-1].get("parts", []))
        if "USE_TOOL" in json.dumps(contents) and not answered:
            call = {"name": "run_shell_command", "args": {"command": self.command}}
            part: dict[str, Any] = {"functionCall": call}
        else:
            part = {"text": REPLY}
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 10},
        }
        if ":streamGenerateContent" in request.path:
            raw, kind = f"data: {json.dumps(chunk)}\n\n".encode(), "text/event-stream"
        else:
            raw, kind = json.dumps(chunk).encode(), "application/json"
        if STALL in json.dumps(contents) and not self.release.is_set():
            request.send_response(200)
            request.send_header("Content-Type", kind)
            request.send_header("Connection", "close")
            request.end_headers()
            request.wfile.flush()
            self.stalled.set()
            self.release.wait(600)
            request.wfile.write(raw)
            request.close_connection = True
            return
        self.reply(request, raw, kind)


def binary() -> Path:
    return npm_client.ensure("@google/gemini-cli", VERSION, "gemini-cli", "gemini")


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    return binary()


# The user's own settings, as Gemini CLI writes them (it migrates older keys and rewrites the
# file in this style): install and uninstall must keep them byte for byte.
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "telemetry": {"enabled": False},
}


class Machine(AgentMachine):
    agent = "gemini"

    def __init__(self, root: Path, gemini: Path, api: GeminiAPI) -> None:
        super().__init__(root)
        self.gemini = gemini
        self.api = api
        self.settings = self.user_file = self.home / ".gemini" / "settings.json"
        self.settings.parent.mkdir(parents=True)
        self.project.mkdir()
        self.original = json.dumps(SETTINGS, indent=2)
        self.settings.write_text(self.original)

    def env(self) -> dict[str, str]:
        return npm_client.offline_env(
            self.home,
            GEMINI_API_KEY="lookout-e2e-dummy",
            GOOGLE_GEMINI_BASE_URL=self.api.url,
            # Headless runs need the workspace trusted (exit 55 otherwise).
            GEMINI_CLI_TRUST_WORKSPACE="true",
        )

    def run(self, prompt: str, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.gemini), "-p", prompt, "-m", MODEL, *args],
            cwd=self.project,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, f"gemini failed:\n{done.stdout}\n{done.stderr}"
        assert REPLY in done.stdout, done.stdout
        return done

    def turn(self, prompt: str) -> subprocess.CompletedProcess[str]:
        return self.run(prompt)


@pytest.fixture
def machine(tmp_path: Path, gemini_bin: Path) -> Iterator[Machine]:
    with GeminiAPI("touch t.txt") as api:
        yield Machine(tmp_path / "user", gemini_bin, api)


def test_a_gemini_turn_with_a_tool_call(machine: Machine) -> None:
    # test_agents.py: install's line, a plain turn's ended session, uninstall's settings.
    machine.install()
    machine.run("USE_TOOL please", "--approval-mode", "yolo")
    shown = machine.wait("ended")  # `gemini -p` ends its session after the turn
    assert shown["summary"] == REPLY
    events = [r["event"] for r in machine.records()]
    assert events == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ]
    tool = next(r for r in machine.records() if r["event"] == "PreToolUse")
    assert (tool["status"], tool["detail"], tool["summary"]) == (
        "working",
        "run_shell_command",
        "touch t.txt",
    )
    stop = next(r for r in machine.records() if r["event"] == "Stop")
    assert (stop["status"], stop["notify"]) == ("idle", ["done"])
    assert (machine.project / "t.txt").exists()
    assert machine.errors() == ""


def test_a_gemini_permission_dialog_raises_attention_until_allowed(machine: Machine) -> None:
    screen = npm_client.Tmux(machine.root, "gemini")
    machine.install()
    try:
        screen.start([str(machine.gemini), "-m", MODEL], machine.env(), machine.project)
        screen.wait_for("Type your message")
        time.sleep(2)  # the input box takes keys only once the session has started
        screen.text("USE_TOOL now")
        time.sleep(1)  # typed text arriving with its Enter reads as a paste
        screen.keys("Enter")
        screen.wait_for("Allow execution")
        shown = machine.wait("attention", "permission")
        assert (shown["agent"], shown["summary"]) == ("gemini", "touch t.txt")
        screen.keys("Enter")  # 1. Allow once
        shown = machine.wait("idle")
        assert shown["summary"] == REPLY
        kinds = [k for r in machine.records() for k in r["notify"]]
        assert kinds.count("permission") == 1 and kinds.count("resolved") == 1
        assert (machine.project / "t.txt").exists()
        screen.text("/quit")
        time.sleep(1)
        screen.keys("Enter")
        machine.wait("ended")
    finally:
        screen.kill()
    assert machine.errors() == ""


def test_a_gemini_killed_at_a_permission_dialog_ends_the_session(machine: Machine) -> None:
    # issue 22 #7: kill -9 of the CLI while its dialog is on screen. The hooks run as its
    # children (`bash -c <command>`): the session keeps that process's pid and start time, and
    # once it is gone the status says so instead of waiting 8 hours to turn stale.
    screen = npm_client.Tmux(machine.root, "gemini")
    machine.install()
    try:
        screen.start([str(machine.gemini), "-m", MODEL], machine.env(), machine.project)
        screen.wait_for("Type your message")
        time.sleep(2)  # the input box takes keys only once the session has started
        screen.text("USE_TOOL now")
        time.sleep(1)  # typed text arriving with its Enter reads as a paste
        screen.keys("Enter")
        screen.wait_for("Allow execution")
        shown = machine.wait("attention", "permission")
        pid = shown["pid"]
        assert isinstance(pid, int) and shown["alive"] is True
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert any(b"gemini" in word for word in argv), argv  # the CLI's node, not a shell
        os.kill(pid, signal.SIGKILL)
        shown = machine.wait("ended", timeout=10)
        assert (shown["reason"], shown["alive"], shown["pid"]) == ("process_gone", False, pid)
    finally:
        screen.kill()
    assert machine.errors() == ""


def test_a_gemini_turn_hung_on_a_live_connection_is_stuck_then_works_again(
    machine: Machine, tmp_path: Path
) -> None:
    # issue 32 with a second agent: Gemini's hooks (BeforeAgent) and its process are what
    # lookout has; the stream hangs, no hook fires, and the sender its hook started says so.
    machine.install()
    prog, log = recorder(tmp_path)
    config = machine.home / ".config" / "lookout" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{kind}}", "{{message}}"]\n'
        '[[rules]]\nwhen = ["stuck"]\nchannels = ["log"]\n'
        "[sessions]\nstuck_after_s = 2\n"
    )
    proc = subprocess.Popen(
        [str(machine.gemini), "-p", f"hello {STALL}", "-m", MODEL],
        cwd=machine.project,
        env=machine.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert machine.api.stalled.wait(120), "the mock never held the stream"
        deadline = time.monotonic() + 90
        while not calls(log):  # no reader runs meanwhile: only the recorder is looked at
            assert time.monotonic() < deadline, "no stuck alert"
            time.sleep(0.1)
        (sent,) = calls(log)
        assert sent[0] == "stuck" and sent[1].startswith("silent since "), sent
        shown = machine.wait("attention", "stuck")
        assert (shown["agent"], shown["evidence"], shown["alive"]) == ("gemini", "silence", True)
        machine.api.release.set()
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert REPLY in out
    finally:
        machine.api.release.set()
        if proc.poll() is None:
            proc.kill()
    machine.wait("ended")
    events = [(r["event"], r.get("outcome")) for r in machine.records()]
    assert events.count(("Reconciled", "stuck")) == 1, events
    after = events[events.index(("Reconciled", "stuck")) + 1 :]
    assert ("Stop", None) in after, events  # the stream resumed: the turn ended
    assert [c[0] for c in calls(log)] == ["stuck"]
    assert machine.errors() == ""
