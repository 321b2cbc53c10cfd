"""lookout.agents.<agent>.translate through runner.record_agent: each agent's payloads (real
Gemini CLI 0.61.0 and OpenCode 1.18.33 captures; Copilot CLI and Cursor fixtures from their
published schemas) become the statuses a person expects, under the agent's name; what an agent
cannot say is never made up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import lookout
import lookout.notify
from lookout import runner, store
from lookout.agents import gemini
from tests.helpers import FIXTURES, ROOT

T0 = 1_790_000_000_000


@pytest.fixture
def notified(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    fake = types.ModuleType("lookout.notify.handle")
    fake.handle = lambda intents, state_dir: calls.extend(intents)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "lookout.notify.handle", fake)
    monkeypatch.setattr(lookout.notify, "handle", fake, raising=False)
    return calls


def fixture(agent: str, name: str) -> bytes:
    return (FIXTURES / agent / f"{name}.json").read_bytes()


def feed(state_dir: Path, agent: str, name: str, ts: int, event: str | None = None) -> None:
    runner.record_agent(agent, fixture(agent, name), event, ts, str(state_dir), os.environ)


def session(state_dir: Path) -> dict[str, Any]:
    (path,) = (state_dir / "sessions").glob("*.json")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def lines(state_dir: Path) -> list[dict[str, Any]]:
    path = state_dir / store.EVENTS
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# -- Gemini CLI (real payloads) ------------------------------------------------------------------


def test_gemini_permission_dialog_raises_attention_and_the_allowed_tool_clears_it(
    state_dir: Path, notified: list[dict[str, Any]]
) -> None:
    steps = ["SessionStart", "BeforeAgent", "BeforeTool", "Notification"]
    for i, name in enumerate(steps):
        feed(state_dir, "gemini", name, T0 + i)
    s = session(state_dir)
    assert (s["agent"], s["status"], s["reason"]) == ("gemini", "attention", "permission")
    assert s["summary"] == "touch t.txt"  # the command, from the dialog's details
    assert s["project"] == "app"
    assert [i["kind"] for i in notified] == ["session_start", "permission"]
    assert notified[-1]["agent"] == "gemini"
    feed(state_dir, "gemini", "AfterTool", T0 + 10)
    assert session(state_dir)["status"] == "working"
    feed(state_dir, "gemini", "AfterAgent", T0 + 11)
    s = session(state_dir)
    assert (s["status"], s["summary"]) == ("idle", "OK from mock")
    assert [i["kind"] for i in notified][-2:] == ["resolved", "done"]
    feed(state_dir, "gemini", "SessionEnd", T0 + 12)
    assert session(state_dir)["status"] == "ended"
    assert {line["agent"] for line in lines(state_dir)} == {"gemini"}


def test_gemini_events_lookout_does_not_register_are_ignored(state_dir: Path) -> None:
    feed(state_dir, "gemini", "PreCompress", T0)
    assert lines(state_dir) == []
    assert not (state_dir / store.ERRORS).exists()


def test_gemini_payload_keeps_no_transcript_path_or_tool_output() -> None:
    data = json.loads(fixture("gemini", "AfterTool"))
    out = gemini.translate(data, None)
    assert out is not None
    assert "transcript_path" not in out and "tool_response" not in out
    assert out["hook_event_name"] == "PostToolUse"


# -- Copilot CLI (fixtures from the published schema) ---------------------------------------------


def test_copilot_turn_with_a_permission_prompt(
    state_dir: Path, notified: list[dict[str, Any]]
) -> None:
    feed(state_dir, "copilot", "sessionStart", T0, "sessionStart")
    feed(state_dir, "copilot", "userPromptSubmitted", T0 + 1, "userPromptSubmitted")
    feed(state_dir, "copilot", "preToolUse-bash", T0 + 2, "preToolUse")
    s = session(state_dir)
    assert (s["agent"], s["status"], s["detail"], s["summary"]) == (
        "copilot",
        "working",
        "bash",
        "npm test",  # toolArgs is a JSON string: parsed
    )
    feed(state_dir, "copilot", "notification-permission_prompt", T0 + 3, "notification")
    assert (session(state_dir)["status"], session(state_dir)["reason"]) == (
        "attention",
        "permission",
    )
    feed(state_dir, "copilot", "postToolUse-bash", T0 + 4, "postToolUse")
    assert session(state_dir)["status"] == "working"
    feed(state_dir, "copilot", "agentStop", T0 + 5, "agentStop")
    assert session(state_dir)["status"] == "idle"
    assert [i["kind"] for i in notified] == [
        "session_start",
        "permission",
        "resolved",
        "done",
    ]


def test_copilot_ask_user_is_a_question_until_answered(
    state_dir: Path, notified: list[dict[str, Any]]
) -> None:
    feed(state_dir, "copilot", "userPromptSubmitted", T0, "userPromptSubmitted")
    feed(state_dir, "copilot", "preToolUse-ask_user", T0 + 1, "preToolUse")
    s = session(state_dir)
    assert (s["status"], s["reason"], s["summary"]) == (
        "attention",
        "question",
        "Which database should I use?",
    )
    feed(state_dir, "copilot", "postToolUse-ask_user", T0 + 2, "postToolUse")
    assert session(state_dir)["status"] == "working"


def test_copilot_background_agent_idle_is_not_the_session_waiting(
    state_dir: Path, notified: list[dict[str, Any]]
) -> None:
    feed(state_dir, "copilot", "userPromptSubmitted", T0, "userPromptSubmitted")
    feed(state_dir, "copilot", "notification-agent_idle", T0 + 1, "notification")
    assert session(state_dir)["status"] == "working"


def test_copilot_unrecoverable_error_fails_the_turn_a_recoverable_one_does_not(
    state_dir: Path, notified: list[dict[str, Any]]
) -> None:
    feed(state_dir, "copilot", "userPromptSubmitted", T0, "userPromptSubmitted")
    feed(state_dir, "copilot", "errorOccurred-recoverable", T0 + 1, "errorOccurred")
    assert session(state_dir)["status"] == "working"
    feed(state_dir, "copilot", "errorOccurred", T0 + 2, "errorOccurred")
    s = session(state_dir)
    assert (s["status"], s["reason"]) == ("attention", "error")
    assert "rate limited" in s["summary"]


def test_copilot_pascal_case_payloads_work_too(state_dir: Path) -> None:
    feed(state_dir, "copilot", "Stop-pascal", T0, None)
    assert (session(state_dir)["agent"], session(state_dir)["status"]) == ("copilot", "idle")


def test_copilot_subagents_are_children(state_dir: Path) -> None:
    feed(state_dir, "copilot", "userPromptSubmitted", T0, "userPromptSubmitted")
    feed(state_dir, "copilot", "subagentStart", T0 + 1, "subagentStart")
    child = session(state_dir)["agents"]["copilot:reviewer"]
    assert (child["status"], child["agent_type"]) == ("working", "reviewer")
    feed(state_dir, "copilot", "subagentStop", T0 + 2, "subagentStop")
    assert session(state_dir)["agents"]["copilot:reviewer"]["status"] == "done"


# -- Cursor (fixtures from the published schema) --------------------------------------------------


def test_cursor_turn_shell_and_stop(state_dir: Path, notified: list[dict[str, Any]]) -> None:
    feed(state_dir, "cursor", "beforeSubmitPrompt", T0)
    feed(state_dir, "cursor", "beforeShellExecution", T0 + 1)
    s = session(state_dir)
    assert (s["agent"], s["status"], s["detail"], s["summary"], s["project"]) == (
        "cursor",
        "working",
        "Shell",
        "npm install express",
        "app",
    )
    feed(state_dir, "cursor", "afterShellExecution", T0 + 2)
    feed(state_dir, "cursor", "stop-completed", T0 + 3)
    assert session(state_dir)["status"] == "idle"
    assert "dev@example.com" not in (state_dir / store.EVENTS).read_text()


def test_cursor_stop_with_error_is_a_failed_turn(state_dir: Path) -> None:
    feed(state_dir, "cursor", "beforeSubmitPrompt", T0)
    feed(state_dir, "cursor", "stop-error", T0 + 1)
    s = session(state_dir)
    assert (s["status"], s["reason"]) == ("attention", "error")


def test_cursor_never_claims_a_permission_wait(state_dir: Path) -> None:
    # Cursor has no event for "a dialog is shown": a shell command is only ever working.
    feed(state_dir, "cursor", "beforeSubmitPrompt", T0)
    feed(state_dir, "cursor", "beforeShellExecution", T0 + 1)
    assert session(state_dir)["status"] == "working"


def test_cursor_running_claudes_hooks_is_not_a_claude_session(state_dir: Path) -> None:
    # The Claude Code hook scripts (settings.json) get Cursor's payload: nothing is recorded.
    runner.record(fixture("cursor", "claude-compat-Stop"), "Stop", T0, str(state_dir), {})
    assert lines(state_dir) == []
    assert not (state_dir / "sessions").exists() or not list((state_dir / "sessions").iterdir())


# -- OpenCode (what lookout's plugin sends; captured from OpenCode 1.18.33) -----------------------


def opencode_events() -> list[dict[str, Any]]:
    text = (FIXTURES / "opencode" / "plugin-permission.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def record_opencode(state_dir: Path, event: dict[str, Any]) -> None:
    raw = json.dumps(event).encode()
    # ts_ms: when the process ran (later than the plugin's stamp, and in any order).
    runner.record_agent("opencode", raw, None, event["ts"] + 5000, str(state_dir), os.environ)


def test_an_opencode_stamp_far_from_the_clock_is_not_believed(state_dir: Path) -> None:
    event = {"type": "turn.start", "sessionID": "ses_x", "directory": "/a", "ts": T0 + 10**9}
    runner.record_agent("opencode", json.dumps(event).encode(), None, T0, str(state_dir), {})
    (line,) = lines(state_dir)
    assert line["ts"] == store.rfc3339(T0)


def test_opencode_permission_in_order(state_dir: Path, notified: list[dict[str, Any]]) -> None:
    evs = opencode_events()
    asked = next(i for i, e in enumerate(evs) if e["type"] == "permission.asked")
    for e in evs[: asked + 1]:
        record_opencode(state_dir, e)
    s = session(state_dir)
    assert (s["agent"], s["status"], s["reason"], s["detail"]) == (
        "opencode",
        "attention",
        "permission",
        "bash",
    )
    for e in evs[asked + 1 :]:
        record_opencode(state_dir, e)
    s = session(state_dir)
    assert s["status"] in ("idle", "ended")
    (asked_intent,) = [i for i in notified if i["kind"] == "permission"]
    # `opencode run` rejects the dialog itself: nobody can answer it, as in `claude -p`.
    assert asked_intent["print_mode"] is True


def test_an_opencode_tui_dialog_is_no_print_mode(
    state_dir: Path, notified: list[dict[str, Any]]
) -> None:
    text = (FIXTURES / "opencode" / "plugin-tui-allow.jsonl").read_text()
    for line in text.splitlines():
        record_opencode(state_dir, json.loads(line))
    (asked,) = [i for i in notified if i["kind"] == "permission"]
    assert asked["print_mode"] is False


def test_opencode_out_of_order_processes_cannot_leave_a_stale_attention(
    state_dir: Path, notified: list[dict[str, Any]]
) -> None:
    evs = [e for e in opencode_events() if e["type"] != "lookout.exit"]
    asked = next(i for i, e in enumerate(evs) if e["type"] == "permission.asked")
    replied = next(i for i, e in enumerate(evs) if e["type"] == "permission.replied")
    order = list(range(len(evs)))
    order[asked], order[replied] = order[replied], order[asked]  # the answer is recorded first
    for i in order:
        record_opencode(state_dir, evs[i])
    s = session(state_dir)
    assert s["status"] == "idle"
    late = [line for line in lines(state_dir) if line["late"]]
    assert [line["event"] for line in late] == ["PermissionRequest"]
    assert "permission" not in [i["kind"] for i in notified]


def test_opencode_exit_event_comes_in_argv(state_dir: Path, tmp_path: Path) -> None:
    event = {"type": "lookout.exit", "sessionID": "ses_x", "directory": "/src/app", "ts": T0}
    env = {**os.environ, "LOOKOUT_STATE_DIR": str(state_dir)}
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            str(ROOT / "hooks" / "opencode.py"),
            "--json",
            json.dumps(event),
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    (line,) = lines(state_dir)
    assert (line["event"], line["agent"], line["status"]) == ("SessionEnd", "opencode", "ended")


@pytest.mark.parametrize("agent", ["gemini", "copilot", "cursor", "opencode"])
def test_junk_is_logged_never_raised(state_dir: Path, agent: str) -> None:
    runner.record_agent(agent, b"not json", "x", T0, str(state_dir), os.environ)
    runner.record_agent(agent, b'{"hook_event_name": 3, "type": []}', None, T0, str(state_dir), {})
    assert "not a JSON object" in (state_dir / store.ERRORS).read_text()
    assert lines(state_dir) == []


@pytest.mark.parametrize("agent", ["gemini", "copilot", "cursor", "opencode"])
def test_a_hook_script_exits_0_silently_on_garbage(state_dir: Path, agent: str) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / f"{agent}.py"), "agentStop"],
        input=b"\xff{garbage",
        capture_output=True,
        env={**os.environ, "LOOKOUT_STATE_DIR": str(state_dir)},
        timeout=30,
    )
    answer = b"{}\n" if agent == "cursor" else b""  # Cursor reads stdout as JSON
    assert (done.returncode, done.stdout, done.stderr) == (0, answer, b"")


def run_hook(script: str, stdin: bytes, state_dir: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / script)],
        input=stdin,
        capture_output=True,
        env={**os.environ, "LOOKOUT_STATE_DIR": str(state_dir)},
        timeout=30,
    )


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("beforeSubmitPrompt", b'{"continue": true}\n'),
        ("stop-completed", b"{}\n"),
        ("sessionStart", b"{}\n"),
        ("afterShellExecution", b"{}\n"),
    ],
)
def test_cursor_hooks_answer_json_that_decides_nothing(
    state_dir: Path, name: str, answer: bytes
) -> None:
    # Cursor parses every hook's stdout as JSON; an empty stdout is an error to it.
    done = run_hook("cursor.py", fixture("cursor", name), state_dir)
    assert (done.returncode, done.stdout, done.stderr) == (0, answer, b"")
    assert lines(state_dir)  # and it recorded


def test_the_answer_comes_even_when_recording_fails(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    done = run_hook("cursor.py", fixture("cursor", "stop-completed"), blocked / "state")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"{}\n", b"")


def test_claude_hooks_answer_cursor_and_stay_silent_for_claude(state_dir: Path) -> None:
    done = run_hook("pre_tool_use.py", fixture("cursor", "claude-compat-Stop"), state_dir)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"{}\n", b"")
    assert lines(state_dir) == []  # not a Claude session
    claude = (FIXTURES / "payloads" / "PreToolUse-Bash.json").read_bytes()
    done = run_hook("pre_tool_use.py", claude, state_dir)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert lines(state_dir)[0]["agent"] == "claude"
