"""lookout.runner: one delivery -> one line + a snapshot; duplicates flagged and inert; intents
handed to notify only when there are some; every failure logged, never raised or printed."""

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
from tests.helpers import PAYLOADS, ROOT

T0 = 1_790_000_000_000


def raw(name: str, **changes: object) -> bytes:
    value = json.loads((PAYLOADS / f"{name}.json").read_text())
    value.update(changes)
    return json.dumps(value).encode()


def events(state_dir: Path) -> list[dict[str, Any]]:
    path = state_dir / store.EVENTS
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def notified(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[dict[str, Any]], str]]:
    """Replaces lookout.notify.handle (whatever state it is in) with a recorder."""
    calls: list[tuple[list[dict[str, Any]], str]] = []
    fake = types.ModuleType("lookout.notify.handle")
    fake.handle = lambda intents, state_dir: calls.append((intents, state_dir))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "lookout.notify.handle", fake)
    monkeypatch.setattr(lookout.notify, "handle", fake, raising=False)
    return calls


def record(state_dir: Path, data: bytes, ts_ms: int, name: str | None = None) -> None:
    runner.record(data, name, ts_ms, str(state_dir), {})


def test_a_delivery_writes_a_line_and_a_snapshot(
    state_dir: Path, notified: list[Any], capfd: pytest.CaptureFixture[str]
) -> None:
    data = raw("PreToolUse-Bash")
    sid = json.loads(data)["session_id"]
    record(state_dir, data, T0, "PreToolUse")
    (line,) = events(state_dir)
    assert line["ts"] == store.rfc3339(T0) == "2026-09-21T14:13:20.000Z"
    assert line["seq"] == 1
    assert (line["event"], line["status"], line["session_id"]) == ("PreToolUse", "working", sid)
    snapshot = store.read_session(str(state_dir), sid)
    assert snapshot is not None
    assert (snapshot["status"], snapshot["seq"], snapshot["last_event"]) == (
        "working",
        1,
        "PreToolUse",
    )
    assert capfd.readouterr() == ("", "")
    assert notified == []  # PreToolUse(Bash) asks for nothing


def test_seq_increments_per_session(state_dir: Path, notified: list[Any]) -> None:
    record(state_dir, raw("UserPromptSubmit", session_id="a"), T0)
    record(state_dir, raw("PreToolUse-Bash", session_id="a"), T0 + 10)
    record(state_dir, raw("PreToolUse-Bash", session_id="b"), T0 + 20)
    record(state_dir, raw("PostToolUse-Bash", session_id="a"), T0 + 30)
    got = [(e["session_id"], e["seq"]) for e in events(state_dir)]
    assert got == [("a", 1), ("a", 2), ("b", 1), ("a", 3)]
    assert store.read_session(str(state_dir), "a")["seq"] == 3  # type: ignore[index]


def test_the_payload_name_wins_over_the_script_name(state_dir: Path, notified: list[Any]) -> None:
    record(state_dir, raw("Stop", session_id="s"), T0, "PreToolUse")
    assert events(state_dir)[0]["event"] == "Stop"


def test_the_script_name_is_used_when_the_payload_has_none(
    state_dir: Path, notified: list[Any]
) -> None:
    record(state_dir, b'{"session_id": "s", "cwd": "/x/y"}', T0, "PreCompact")
    assert events(state_dir)[0]["event"] == "PreCompact"


def test_a_duplicate_delivery_is_flagged_and_changes_nothing(
    state_dir: Path, notified: list[Any]
) -> None:
    prompt = raw("UserPromptSubmit", session_id="d")
    record(state_dir, prompt, T0)
    before = store.read_session(str(state_dir), "d")
    assert before is not None and before["status"] == "working"
    calls = len(notified)
    # The same bytes again within 3 s, nothing in between: the client fired the hook twice
    # (lookout's hooks registered in two places).
    record(state_dir, prompt, T0 + 300)
    after = store.read_session(str(state_dir), "d")
    assert after is not None
    last = events(state_dir)[-1]
    assert (last["duplicate"], last["status"], last["seq"]) == (True, "working", 2)
    for key in ("status", "reason", "detail", "episode", "turn", "main", "agents", "status_ms"):
        assert after[key] == before[key], key
    assert len(notified) == calls
    # After the turn ended, the same bytes are a new prompt (machine._is_duplicate).
    record(state_dir, raw("Stop", session_id="d"), T0 + 500)
    record(state_dir, prompt, T0 + 2500)
    assert events(state_dir)[-1]["duplicate"] is False


def test_the_same_bytes_after_the_window_count_again(state_dir: Path, notified: list[Any]) -> None:
    prompt = raw("UserPromptSubmit", session_id="w")
    record(state_dir, prompt, T0)
    record(state_dir, raw("Stop", session_id="w"), T0 + 500)
    record(state_dir, prompt, T0 + 4000)
    last = events(state_dir)[-1]
    assert (last["duplicate"], last["status"]) == (False, "working")


def test_different_bytes_are_not_duplicates(state_dir: Path, notified: list[Any]) -> None:
    record(state_dir, raw("PreToolUse-Bash", session_id="n"), T0)
    record(state_dir, raw("PreToolUse-Bash", session_id="n", tool_use_id="other"), T0 + 10)
    assert [e["duplicate"] for e in events(state_dir)] == [False, False]


def test_the_same_bytes_from_another_claude_process_are_not_duplicates(
    state_dir: Path, notified: list[Any]
) -> None:
    # Two `claude -p --continue` a second apart send byte-identical SessionStart(resume).
    data = raw("SessionStart-resume", session_id="r")
    for ts, pid in ((T0, "100"), (T0 + 900, "100"), (T0 + 1800, "200")):
        runner.record(data, None, ts, str(state_dir), {"CLAUDE_PID": pid})
    assert [e["duplicate"] for e in events(state_dir)] == [False, True, False]


def test_intents_reach_notify_with_their_timestamp(state_dir: Path, notified: list[Any]) -> None:
    record(state_dir, raw("PermissionRequest-Bash", session_id="p"), T0 + 1234)
    assert len(notified) == 1
    intents, where = notified[0]
    assert where == str(state_dir)
    assert [i["kind"] for i in intents] == ["permission"]
    assert intents[0]["ts"] == store.rfc3339(T0 + 1234)
    assert intents[0]["session_id"] == "p"
    assert events(state_dir)[-1]["notify"] == ["permission"]
    # notify runs after the state lock is released: a sender may take it.
    import filelock

    with filelock.FileLock(str(state_dir / store.LOCK), timeout=0):
        pass


def test_a_duplicate_permission_request_notifies_once(state_dir: Path, notified: list[Any]) -> None:
    data = raw("PermissionRequest-Bash", session_id="p")
    record(state_dir, data, T0)
    record(state_dir, data, T0 + 100)
    assert len(notified) == 1


def test_junk_and_missing_session_id_are_logged(state_dir: Path, notified: list[Any]) -> None:
    record(state_dir, b"[1, 2]", T0, "Stop")
    record(state_dir, b'{"hook_event_name": "Stop"}', T0, "Stop")
    record(state_dir, b"x" * (runner.MAX_PARSE_BYTES + 1), T0, "Stop")
    assert events(state_dir) == []
    log = (state_dir / store.ERRORS).read_text().splitlines()
    assert len(log) == 3
    assert "not a JSON object (6 bytes)" in log[0]
    assert "no session_id" in log[1]
    assert notified == []


def test_the_session_id_may_come_from_the_environment(state_dir: Path, notified: list[Any]) -> None:
    data = b'{"hook_event_name": "Stop", "cwd": "/p/q"}'
    runner.record(data, "Stop", T0, str(state_dir), {"CLAUDE_CODE_SESSION_ID": "from-env"})
    assert events(state_dir)[0]["session_id"] == "from-env"


def test_no_record_carries_full_inputs_or_environment_values(
    state_dir: Path, notified: list[Any]
) -> None:
    secret = "s3cr3t-" + "z" * 300
    data = raw(
        "PreToolUse-Bash",
        session_id="e",
        tool_input={"command": "echo hi", "env": secret},
        tool_response={"stdout": secret},
    )
    env = {"CLAUDE_PID": "4242", "TMUX_PANE": "%3", "API_TOKEN": secret}
    runner.record(data, "PreToolUse", T0, str(state_dir), env)
    text = (state_dir / store.EVENTS).read_text()
    snapshot = (state_dir / store.SESSIONS / "e.json").read_text()
    assert "s3cr3t" not in text and "s3cr3t" not in snapshot
    line = json.loads(text)
    assert (line["pid"], line["tmux_pane"], line["summary"]) == (4242, "%3", "echo hi")


# -- run(): the fail-open boundary, in a child (it points fds 1 and 2 at /dev/null) --------------


def _run_child(code: str, stdin: bytes, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    # An empty config file: no rules, so no notification sender starts (see test_hooks).
    config = Path(os.environ["LOOKOUT_CONFIG"])
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("")
    script = tmp_path / "child.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n{code}")
    return subprocess.run(
        [sys.executable, "-I", "-S", str(script)],
        input=stdin,
        capture_output=True,
        timeout=30,
    )


_BOOM = """
import os
from lookout import machine, runner

def boom(*args, **kwargs):
    print("LEAK to stdout")
    print("LEAK to stderr", file=sys.stderr)
    os.write(1, b"LEAK fd 1")
    raise RuntimeError("boom-marker")

machine.apply = boom
raise SystemExit(runner.run("PreToolUse"))
"""


def test_an_exception_is_logged_with_traceback_and_run_returns_0(
    state_dir: Path, tmp_path: Path
) -> None:
    proc = _run_child(_BOOM, raw("PreToolUse-Bash"), tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    log = (state_dir / store.ERRORS).read_text()
    assert "hook PreToolUse: Traceback (most recent call last)" in log
    assert "RuntimeError: boom-marker" in log
    assert "in boom" in log
    assert not (state_dir / store.EVENTS).exists()


def test_system_exit_inside_is_contained(state_dir: Path, tmp_path: Path) -> None:
    code = _BOOM.replace('raise RuntimeError("boom-marker")', "raise SystemExit(3)")
    proc = _run_child(code, raw("PreToolUse-Bash"), tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert "SystemExit: 3" in (state_dir / store.ERRORS).read_text()


def test_a_failing_notify_is_logged_after_the_event_is_recorded(
    state_dir: Path, tmp_path: Path
) -> None:
    code = """
import types
import lookout
import lookout.notify
fake = types.ModuleType("lookout.notify.handle")
def handle(intents, state_dir):
    raise OSError("notify-marker")
fake.handle = handle
sys.modules["lookout.notify.handle"] = fake
lookout.notify.handle = fake
from lookout import runner
raise SystemExit(runner.run("PermissionRequest"))
"""
    proc = _run_child(code, raw("PermissionRequest-Bash"), tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert "OSError: notify-marker" in (state_dir / store.ERRORS).read_text()
    (line,) = events(state_dir)
    assert line["status"] == "attention"


def test_run_reads_stdin_to_eof_and_says_nothing(state_dir: Path, tmp_path: Path) -> None:
    code = "from lookout import runner\nraise SystemExit(runner.run('Stop'))\n"
    proc = _run_child(code, raw("Stop"), tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert events(state_dir)[0]["event"] == "Stop"
    assert not (state_dir / store.ERRORS).exists()


def test_run_survives_a_state_dir_it_cannot_create(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = (
        "import os\n"
        f"os.environ['LOOKOUT_STATE_DIR'] = {str(blocker / 'state')!r}\n"
        "from lookout import runner\n"
        "raise SystemExit(runner.run('Stop'))\n"
    )
    proc = _run_child(code, raw("Stop"), tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


# -- a lock held past the hook's budget: the delivery waits in spool/, never lost ---------------


@pytest.fixture
def held(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """events.lock held by this process (another open file: flock excludes it), the wait cut to
    a few tries. Closing the returned descriptor lets go."""
    import fcntl

    monkeypatch.setattr(store, "LOCK_WAIT_S", 0.05)
    monkeypatch.setattr(store, "LOCK_WAIT_MAX_S", 0.05)
    store.ensure_dir(str(state_dir))
    fd = os.open(state_dir / store.LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield fd
    try:
        os.close(fd)
    except OSError:
        pass


def spooled(state_dir: Path) -> list[str]:
    spool = state_dir / store.SPOOL
    return sorted(os.listdir(spool)) if spool.exists() else []


def test_a_held_lock_spools_each_delivery_and_the_next_hook_records_them_in_order(
    state_dir: Path, held: int, notified: list[Any]
) -> None:
    prompt = raw("UserPromptSubmit")
    sid = json.loads(prompt)["session_id"]
    asked = raw("PermissionRequest", session_id=sid)
    # Spooled out of order: the file names sort by the delivery's own time stamp.
    record(state_dir, asked, T0 + 1000)
    record(state_dir, prompt, T0)
    assert events(state_dir) == []
    assert [n.split("-")[0] for n in spooled(state_dir)] == [f"{T0:013d}", f"{T0 + 1000:013d}"]
    assert (state_dir / store.SPOOL).stat().st_mode & 0o777 == 0o700
    assert {(state_dir / store.SPOOL / n).stat().st_mode & 0o777 for n in spooled(state_dir)} == {
        0o600
    }
    logged = (state_dir / store.ERRORS).read_text().splitlines()
    assert len(logged) == 2 and all("spooled as spool/" in line for line in logged)
    assert all("events.lock held by another process" in line for line in logged)
    assert notified == []

    os.close(held)  # the stall ends: the next delivery records what waited first
    record(state_dir, raw("Notification", session_id=sid), T0 + 2000)
    lines = events(state_dir)
    assert [(e["event"], e["seq"], e["ts"]) for e in lines] == [
        ("UserPromptSubmit", 1, store.rfc3339(T0)),
        ("PermissionRequest", 2, store.rfc3339(T0 + 1000)),
        ("Notification", 3, store.rfc3339(T0 + 2000)),
    ]
    assert not any(e["duplicate"] or e["late"] for e in lines)
    assert lines[1]["status"] == "attention"
    # The spooled dialog's alert goes out, late, once the lock is let go.
    assert next(i["kind"] for intents, _ in notified for i in intents) == "permission"
    assert not (state_dir / store.SPOOL).exists()  # gone once empty: one access() per hook
    record(state_dir, raw("Stop", session_id=sid), T0 + 3000)
    assert [e["seq"] for e in events(state_dir)] == [1, 2, 3, 4]  # nothing recorded twice


def test_a_spooled_delivery_later_than_the_drainers_own_is_recorded_after_it(
    state_dir: Path, held: int, notified: list[Any]
) -> None:
    prompt = raw("UserPromptSubmit")
    sid = json.loads(prompt)["session_id"]
    record(state_dir, raw("Stop", session_id=sid), T0 + 5000)
    os.close(held)
    record(state_dir, prompt, T0)  # started before the spooled one, got the lock after
    assert [e["event"] for e in events(state_dir)] == ["UserPromptSubmit", "Stop"]
    # The turn ended: the prompt did not open a new one after its Stop.
    assert store.read_session(str(state_dir), sid)["status"] == "idle"  # type: ignore[index]


class Killed(BaseException):
    """SIGKILL, in process: nothing after it runs."""


def test_a_drainer_killed_before_it_removes_the_file_records_nothing_twice(
    state_dir: Path, held: int, notified: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lookout import machine

    prompt = raw("UserPromptSubmit")
    sid = json.loads(prompt)["session_id"]
    record(state_dir, prompt, T0)
    os.close(held)
    unlink = store.posix.unlink

    def killed_at_spool_files(path: str) -> None:
        if f"/{store.SPOOL}/" in path:
            raise Killed
        unlink(path)

    monkeypatch.setattr(store.posix, "unlink", killed_at_spool_files)
    with pytest.raises(Killed), store.Locked(str(state_dir)) as st:
        st.record(None, machine.apply)
    monkeypatch.setattr(store.posix, "unlink", unlink)
    assert [e["event"] for e in events(state_dir)] == ["UserPromptSubmit"]
    assert len(spooled(state_dir)) == 1  # recorded, and still there
    record(state_dir, raw("Stop", session_id=sid), T0 + 1000)
    assert [(e["event"], e["seq"]) for e in events(state_dir)] == [
        ("UserPromptSubmit", 1),
        ("Stop", 2),
    ]
    assert not (state_dir / store.SPOOL).exists()


def test_a_drainer_killed_before_the_snapshot_records_it_next_time(
    state_dir: Path, held: int, notified: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lookout import machine

    prompt = raw("UserPromptSubmit")
    sid = json.loads(prompt)["session_id"]
    record(state_dir, prompt, T0)
    os.close(held)

    def killed(self: store.Locked, session: object) -> None:
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(store.Locked, "write_session", killed)
        with pytest.raises(Killed), store.Locked(str(state_dir)) as st:
            st.record(None, machine.apply)
    assert events(state_dir) == []
    record(state_dir, raw("Stop", session_id=sid), T0 + 1000)
    assert [(e["event"], e["seq"]) for e in events(state_dir)] == [
        ("UserPromptSubmit", 1),
        ("Stop", 2),
    ]


def test_a_spool_file_that_cannot_be_recorded_is_logged_whole_and_stops_nothing(
    state_dir: Path, held: int, notified: list[Any]
) -> None:
    prompt = raw("UserPromptSubmit")
    record(state_dir, prompt, T0)
    os.close(held)
    (name,) = spooled(state_dir)
    path = state_dir / store.SPOOL / name
    kept = json.loads(path.read_text())
    del kept["event"]["summary"]  # a key this version's machine needs
    path.write_text(json.dumps(kept))
    (state_dir / store.SPOOL / "0000000000001-1-aa.json").write_text("[1]")
    record(state_dir, raw("Stop"), T0 + 1000)
    assert [e["event"] for e in events(state_dir)] == ["Stop"]
    logged = (state_dir / store.ERRORS).read_text()
    assert "0000000000001-1-aa.json is not a delivery; removed: [1]" in logged
    assert f"cannot record {path} (KeyError('summary'))" in logged
    assert not (state_dir / store.SPOOL).exists()


def test_readers_record_what_waits_and_doctor_counts_it(
    state_dir: Path, held: int, notified: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from lookout.commands.main import main as cli_main

    record(state_dir, raw("UserPromptSubmit"), T0)
    record(state_dir, raw("Stop"), T0 + 1000)
    os.close(held)
    cli_main(["doctor", "--json"])
    checks = json.loads(capsys.readouterr().out)["checks"]
    said = [c for c in checks if "wait in spool/" in str(c["message"])]
    assert [(c["check"], c["status"]) for c in said] == [("state", "warn")]
    assert said[0]["message"].startswith("2 deliveries wait in spool/")
    assert cli_main(["tail", "--json", "-n", "5"]) == 0
    tailed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in tailed] == ["UserPromptSubmit", "Stop"]
    assert not (state_dir / store.SPOOL).exists()
