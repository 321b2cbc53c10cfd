"""Every hook script, run as the installer runs it (`python -I -S hooks/<script>`): exit 0 and
not a byte on stdout or stderr whatever arrives on stdin; real payloads become one event line,
junk becomes one errors.log line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from lookout import hookspec, store
from lookout.agents import codex_config, registry
from tests.helpers import PAYLOADS, ROOT

_SESSION = "5e55-1011-hook-test"

# Events Claude Code could not be made to fire during capture (claude-code-hooks.md §2.4 shapes).
_SYNTHETIC: dict[str, dict[str, object]] = {
    "Elicitation": {
        "mcp_server_name": "github",
        "message": "Enter a token",
        "mode": "form",
        "elicitation_id": "el_1",
        "requested_schema": {"type": "object", "properties": {"token": {"type": "string"}}},
    },
    "ElicitationResult": {
        "mcp_server_name": "github",
        "elicitation_id": "el_1",
        "mode": "form",
        "action": "accept",
        "content": {"token": "t"},
    },
    "TeammateIdle": {"teammate_name": "researcher", "team_name": "session-team"},
}

# hooks/event.py records any event by its own name: feed it one we do not register.
_GENERIC_EVENT = "ConfigChange"


def _real_payload(event: str) -> bytes:
    path = PAYLOADS / f"{event}.json"
    if path.exists():
        return path.read_bytes()
    base = {
        "session_id": _SESSION,
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": "/home/dev/projects/demo",
        "permission_mode": "default",
        "hook_event_name": event,
    }
    return json.dumps({**base, **_SYNTHETIC[event]}).encode()


SCRIPTS = [(event, script) for event, script, _ in hookspec.EVENTS] + [
    (_GENERIC_EVENT, hookspec.GENERIC_SCRIPT)
]
IDS = [script.removesuffix(".py") for _, script in SCRIPTS]


@pytest.fixture(autouse=True)
def quiet_config() -> Path:
    """An empty config file: no rules, so no hook here starts a notification sender (whose
    own errors would land in errors.log at a time of their choosing)."""
    path = Path(os.environ["LOOKOUT_CONFIG"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# no rules: no notifications\n")
    return path


def test_every_registered_event_has_a_script_and_a_payload() -> None:
    scripts = {p.name for p in (ROOT / "hooks").glob("*.py")}
    # codex_notify.py takes its JSON as an argument, not on stdin: tests/test_codex_runtime.py.
    # remote_answer.py is the deciding hook (answers on stdout): tests/remote/test_decide.py.
    # The other agents' scripts (one per agent): tests/agents/test_translate.py.
    others = set(registry.SCRIPTS)
    extra = {codex_config.NOTIFY_SCRIPT, hookspec.REMOTE_SCRIPT} | others
    assert {script for _, script in SCRIPTS} | extra == scripts
    for event, _ in SCRIPTS:
        assert (PAYLOADS / f"{event}.json").exists() or event in _SYNTHETIC, event


def _run(script: str, stdin: bytes, env: dict[str, str] | None = None) -> None:
    """Run the hook as installed; it must exit 0 without a byte of output."""
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / script)],
        input=stdin,
        capture_output=True,
        timeout=hookspec.TIMEOUT_S,
        env=env,
        cwd=env.get("HOME") if env else None,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def _events(state_dir: Path) -> list[dict[str, object]]:
    path = state_dir / store.EVENTS
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def _errors(state_dir: Path) -> list[str]:
    path = state_dir / store.ERRORS
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize(("event", "script"), SCRIPTS, ids=IDS)
def test_real_payload_is_recorded(event: str, script: str, state_dir: Path) -> None:
    raw = _real_payload(event)
    _run(script, raw)
    records = _events(state_dir)
    assert len(records) == 1
    record = records[0]
    assert record["event"] == event
    assert record["session_id"] == json.loads(raw)["session_id"]
    assert record["seq"] == 1
    assert record["status"] in ("working", "attention", "idle", "ended")
    assert _errors(state_dir) == []
    snapshots = list((state_dir / store.SESSIONS).glob("*.json"))
    assert len(snapshots) == 1


def test_the_environment_is_read_despite_isolated_mode(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # -I drops PYTHON* variables only: lookout's own and Claude Code's must still arrive.
    monkeypatch.setenv("CLAUDE_PID", str(os.getpid()))
    monkeypatch.setenv("TMUX_PANE", "%7")
    monkeypatch.setenv("PYTHONPATH", "/nonexistent")
    _run("pre_tool_use.py", _real_payload("PreToolUse"))
    (record,) = _events(state_dir)
    assert record["pid"] == os.getpid()
    assert record["tmux_pane"] == "%7"


_FIVE_MB = 5 * 1024 * 1024


def _big_valid(event: str) -> bytes:
    value = json.loads(_real_payload(event))
    value["padding"] = "x" * _FIVE_MB
    if isinstance(value.get("tool_input"), dict):
        value["tool_input"] = {**value["tool_input"], "command": "y" * _FIVE_MB}
    return json.dumps(value).encode()


JUNK = {
    "junk": b"{not json",
    "empty": b"",
    "whitespace": b" \n\t\n",
    "json-array": b"[1, 2, 3]",
    "json-string": b'"PreToolUse"',
    "5mb-garbage": bytes(range(256)) * (_FIVE_MB // 256),
    "not-utf8": b"\xff\xfe\xfd\x80\x81 \xc3\x28 \xa0\xa1",
}


@pytest.mark.parametrize(("event", "script"), SCRIPTS, ids=IDS)
@pytest.mark.parametrize("kind", list(JUNK), ids=list(JUNK))
def test_junk_is_logged_not_recorded(event: str, script: str, kind: str, state_dir: Path) -> None:
    _run(script, JUNK[kind])
    assert _events(state_dir) == []
    errors = _errors(state_dir)
    assert len(errors) == 1
    assert "not a JSON object" in errors[0]
    assert "Traceback" not in errors[0]  # an expected case, not a crash


@pytest.mark.parametrize(("event", "script"), SCRIPTS, ids=IDS)
def test_5mb_payload_is_recorded_without_its_bulk(event: str, script: str, state_dir: Path) -> None:
    _run(script, _big_valid(event))
    (record,) = _events(state_dir)
    assert record["event"] == event
    line_bytes = (state_dir / store.EVENTS).stat().st_size
    assert line_bytes < 4096, "the record must not carry tool_input, prompts or padding"
    snapshot = next((state_dir / store.SESSIONS).glob("*.json"))
    assert snapshot.stat().st_size < 16384
    assert _errors(state_dir) == []


@pytest.mark.parametrize(("event", "script"), SCRIPTS, ids=IDS)
def test_invalid_utf8_inside_a_payload_is_recorded(
    event: str, script: str, state_dir: Path
) -> None:
    raw = _real_payload(event)
    # A stray byte inside the cwd string: the rest of the payload still counts.
    raw = raw.replace(b'"cwd": "', b'"cwd": "\xff\xfe', 1).replace(b'"cwd":"', b'"cwd":"\xff', 1)
    _run(script, raw)
    (record,) = _events(state_dir)
    assert record["event"] == event


def test_with_the_default_config_an_attention_hook_still_says_nothing(
    state_dir: Path, quiet_config: Path
) -> None:
    # No config file: the built-in rules notify on attention, through a detached sender that
    # must neither hold our pipes open nor write to them.
    quiet_config.unlink()
    _run("permission_request.py", _real_payload("PermissionRequest"))
    (record,) = _events(state_dir)
    assert (record["status"], record["notify"]) == ("attention", ["permission"])


def test_a_payload_without_session_id_is_logged(state_dir: Path) -> None:
    _run("stop.py", b'{"hook_event_name": "Stop"}')
    assert _events(state_dir) == []
    (error,) = _errors(state_dir)
    assert "no session_id" in error


def test_unregistered_events_keep_their_name(state_dir: Path) -> None:
    _run("event.py", b'{"session_id": "s1", "hook_event_name": "SomethingNew2027", "x": [1]}')
    (record,) = _events(state_dir)
    assert record["event"] == "SomethingNew2027"


def test_an_uncreatable_state_dir_still_exits_0_silently(tmp_path: Path) -> None:
    blocker = tmp_path / "regular-file"
    blocker.write_text("not a directory\n")
    env = {**os.environ, "LOOKOUT_STATE_DIR": str(blocker / "state")}
    for script in ("pre_tool_use.py", "session_start.py", "user_prompt_submit.py", "event.py"):
        _run(script, _real_payload("PreToolUse"), env)
        _run(script, b"{not json", env)
    assert blocker.read_text() == "not a directory\n"


def test_a_closed_stdin_exits_0_silently(state_dir: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / "stop.py")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=hookspec.TIMEOUT_S,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert _events(state_dir) == []


def test_a_damaged_snapshot_does_not_stop_recording(state_dir: Path) -> None:
    raw = _real_payload("PreToolUse")
    sid = json.loads(raw)["session_id"]
    snapshot = Path(store.session_file(str(state_dir), sid))
    snapshot.parent.mkdir(parents=True)
    snapshot.write_text(f'{{"session_id": "{sid}", "status": "work')  # cut short by a full disk
    _run("pre_tool_use.py", raw)
    (record,) = _events(state_dir)
    assert record["event"] == "PreToolUse"


def test_a_hook_a_busy_machine_holds_up_is_stamped_when_the_client_fired_it(
    state_dir: Path,
) -> None:
    """Records are ordered by their time stamps (issue 35): on a busy machine a hook's
    interpreter can come up seconds after the client fired it, after the client's next move
    (the registry's `waiting` of a dialog that an async PreToolUse came before). The shell here
    waits a second before it execs the hook, as a starved scheduler would."""
    raw = _real_payload("PreToolUse")
    hook = str(ROOT / "hooks" / "pre_tool_use.py")
    fired = time.time_ns() // 1_000_000
    proc = subprocess.Popen(
        ["/bin/sh", "-c", 'sleep 1; exec "$0" -I -S "$1"', sys.executable, hook],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    spawned = time.time_ns() // 1_000_000  # Popen returns once the shell runs
    assert proc.communicate(raw, timeout=30) == (b"", b"")
    (record,) = _events(state_dir)
    stamp = datetime.fromisoformat(str(record["ts"]).replace("Z", "+00:00")).timestamp() * 1000
    # The process's start time, in clock ticks (10 ms): never the interpreter's, a second later.
    assert fired - 10 <= stamp <= spawned, (fired, stamp, spawned)


def test_a_hook_that_cannot_take_the_lock_in_time_leaves_its_delivery_to_the_next(
    state_dir: Path,
) -> None:
    """The lock held past the hook's whole budget (a stalled machine: the soak lost 31 records
    so): the hook still exits 0 without a word, its delivery waits in spool/, and the next hook
    records it, once, before its own."""
    import fcntl

    prompt = _real_payload("UserPromptSubmit")
    sid = json.loads(prompt)["session_id"]
    store.ensure_dir(str(state_dir))
    holder = os.open(state_dir / store.LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        proc = subprocess.run(
            [sys.executable, "-I", "-S", str(ROOT / "hooks" / "user_prompt_submit.py")],
            input=prompt,
            capture_output=True,
            timeout=60,  # its budget is store.LOCK_WAIT_S of tries, at most LOCK_WAIT_MAX_S
            check=False,
        )
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
        assert _events(state_dir) == []
        assert len(os.listdir(state_dir / store.SPOOL)) == 1
    finally:
        os.close(holder)
    (said,) = _errors(state_dir)
    assert "hook UserPromptSubmit: events.lock held by another process" in said
    assert "spooled as spool/" in said and "(not lost)" in said
    stop = json.loads(_real_payload("Stop"))
    _run("stop.py", json.dumps({**stop, "session_id": sid}).encode())
    assert [(e["event"], e["seq"]) for e in _events(state_dir)] == [
        ("UserPromptSubmit", 1),
        ("Stop", 2),
    ]
    assert not (state_dir / store.SPOOL).exists()
    assert len(_errors(state_dir)) == 1


def test_a_cursor_key_inside_a_claude_payload_keeps_stdout_empty(state_dir: Path) -> None:
    # N11 (security-2.md): an MCP tool's structured result with a "cursor_version" key made a
    # Claude Code hook print `{}`. Only the parsed top-level keys decide.
    payload = {
        "session_id": "cv1",
        "hook_event_name": "PostToolUse",
        "tool_name": "mcp__x__y",
        "tool_input": {"q": "a", "conversation_id": "c", "workspace_roots": ["/w"]},
        "tool_response": {"structuredContent": {"cursor_version": "1"}},
        "cwd": "/w",
    }
    _run("post_tool_use.py", json.dumps(payload).encode())
    assert [e["session_id"] for e in _events(state_dir)] == ["cv1"]


@pytest.mark.parametrize(
    "top", [{"cursor_version": "1.7"}, {"conversation_id": "c", "workspace_roots": ["/w"]}]
)
def test_cursor_running_a_claude_hook_still_gets_its_answer(
    state_dir: Path, top: dict[str, object]
) -> None:
    payload = {"session_id": "cu1", "hook_event_name": "PostToolUse", "cwd": "/w", **top}
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / "post_tool_use.py")],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=hookspec.TIMEOUT_S,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"{}\n", b"")
    assert _events(state_dir) == []  # lookout's own Cursor hooks report that session
