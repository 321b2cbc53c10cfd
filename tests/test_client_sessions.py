"""Claude Code's own session registry as a signal: the files captured from 2.1.332
(tests/fixtures/registry/), rewritten to name a live process of this test, read through the real
reconcile path, `lookout status --json` and `lookout doctor`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lookout import client_sessions, events, machine, reconcile, store
from lookout.commands.main import main as cli_main

from .conftest import write_config

FIXTURES = Path(__file__).parent / "fixtures" / "registry"
SID = "465dbd21-e140-442d-b7ad-02de9ad26c29"  # the captured files' session


@pytest.fixture(autouse=True)
def _quiet() -> None:
    write_config("# no rules\n")


def registry_dir() -> Path:
    return Path(os.environ["CLAUDE_CONFIG_DIR"]) / "sessions"


def capture(fixture: str, pid: int | None = None, **changes: Any) -> dict[str, Any]:
    """A captured file, made to describe a live process (this test's, unless `pid`)."""
    data: dict[str, Any] = json.loads((FIXTURES / f"2.1.332-{fixture}.json").read_text())
    pid = os.getpid() if pid is None else pid
    data.update(pid=pid, procStart=client_sessions.proc_start(pid), sessionId=SID)
    # As the client writes it (2.1.332, Linux): the machine id, then the pid namespace.
    host = Path("/etc/machine-id").read_text().strip()
    data["pidDomain"] = f"linux:{host}:{os.readlink('/proc/self/ns/pid')}"
    data.update(changes)
    return data


def write_entry(data: dict[str, Any], name: str | None = None) -> Path:
    directory = registry_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (name or f"{data['pid']}.json")
    path.write_text(json.dumps(data))
    return path


def feed(state: Path, name: str, ts: int, **fields: Any) -> None:
    """One hook event through the real parser, machine and store."""
    body = {"session_id": SID, "cwd": "/home/dev/demo", "hook_event_name": name, **fields}
    env = {"CLAUDE_PID": str(os.getpid()), "CLAUDE_CODE_ENTRYPOINT": "cli"}
    event = events.parse(body, env, ts, f"{name}{ts}", None)
    with store.Locked(str(state)) as st:
        snap, line, _ = machine.apply(st.read_session(SID), event)
        st.write_session(snap)
        st.append(store.EVENTS, {"ts": store.rfc3339(ts), **line})


def status_json(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    assert cli_main(["status", "--json", "--all"]) == 0
    return list(json.loads(capsys.readouterr().out)["sessions"])


def records(state: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (state / store.EVENTS).read_text().splitlines()]


# -- reading the files ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.stem[len("2.1.332-") :] for p in FIXTURES.glob("*.json")))
def test_every_captured_file_is_read(name: str) -> None:
    data = capture(name)
    write_entry(data)
    (entry,) = client_sessions.read().values()
    assert entry["session_id"] == SID and entry["pid"] == os.getpid()
    assert entry["status"] == data.get("status")
    assert entry["waiting_for"] == data.get("waitingFor")
    assert (entry["name"], entry["name_source"]) == (data["name"], "derived")
    assert entry["tmux_pane"] == "%0"


def test_the_directory_follows_claude_config_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert client_sessions.directory() == str(registry_dir())
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert client_sessions.directory() == os.path.join(os.environ["HOME"], ".claude", "sessions")


def test_a_reused_pid_a_gone_process_or_another_boot_is_no_signal() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # gone: its file stays behind (SIGKILL cannot remove it)
    cases = [
        capture("busy", procStart="1"),  # another process got this pid
        capture("busy", pid=child.pid),
        capture("busy", pidDomain="linux:0000aaaa:pid:[1]"),
        capture("busy", sessionId=None),  # partial
        capture("busy", pid="12"),  # another format
    ]
    for data in cases:
        for path in registry_dir().glob("*") if registry_dir().exists() else []:
            path.unlink()
        write_entry(data, name=f"{child.pid if data.get('pid') == child.pid else os.getpid()}.json")
        assert client_sessions.read() == {}, data
    write_entry(capture("busy"), name="123.json")  # a file not named after its own pid
    assert client_sessions.read() == {}


def test_garbage_and_unknown_statuses_fall_back_silently() -> None:
    directory = registry_dir()
    directory.mkdir(parents=True)
    (directory / "1.json").write_text('{"pid": 1, "sess')
    os.mkfifo(directory / "2.json")  # never blocks the reader
    write_entry(capture("busy", status="shell"))
    assert client_sessions.read() == {}  # a status this lookout does not know: no signal
    write_entry(capture("new-no-status"))
    (entry,) = client_sessions.read().values()
    assert entry["status"] is None  # a fresh file: the session is there, its status unknown


# -- through reconcile ---------------------------------------------------------------------------


def test_the_fallback_dialog_is_attention_from_the_client(state_dir: Path) -> None:
    t = int(time.time() * 1000) - 5000
    feed(state_dir, "SessionStart", t, source="startup")
    feed(state_dir, "UserPromptSubmit", t + 100, prompt="go")
    tool = {"tool_name": "Bash", "tool_input": {"command": "touch fallback-marker"}}
    feed(state_dir, "PreToolUse", t + 200, tool_use_id="toolu_1", **tool)
    # The dialog no PermissionRequest announces: the registry says so at once.
    write_entry(capture("waiting-permission", statusUpdatedAt=t + 300))
    written = reconcile.reconcile(str(state_dir))
    assert [(r["event"], r["source"], r["outcome"]) for r in written] == [
        ("Reconciled", "client", "waiting")
    ]
    snap = store.read_session(str(state_dir), SID)
    assert snap is not None
    assert (snap["status"], snap["reason"], snap["detail"], snap["summary"]) == (
        "attention",
        "permission",
        "Bash",
        "touch fallback-marker",
    )
    assert snap["evidence"] == "client" and snap["hooks"] is True
    assert written[0]["notify"] == ["permission"]
    # The Notification 6 s later is the same episode: no second alert.
    feed(state_dir, "Notification", t + 6300, notification_type="permission_prompt")
    assert records(state_dir)[-1]["notify"] == []
    # Esc: the client is idle; the dialog is over and so is the turn.
    write_entry(capture("idle", statusUpdatedAt=t + 7000))
    (line,) = reconcile.reconcile(str(state_dir))
    assert (line["status"], line["outcome"], line["notify"]) == ("idle", "idle", ["resolved"])
    assert reconcile.reconcile(str(state_dir)) == []  # nothing new: nothing written


def test_an_approved_long_tool_is_working_and_a_later_hook_wins(state_dir: Path) -> None:
    t = int(time.time() * 1000) - 5000
    feed(state_dir, "SessionStart", t, source="startup")
    feed(state_dir, "UserPromptSubmit", t + 100, prompt="go")
    tool = {"tool_name": "mcp__sleeper__sleep", "tool_input": {"seconds": 20}}
    feed(state_dir, "PreToolUse", t + 200, tool_use_id="toolu_1", **tool)
    feed(state_dir, "PermissionRequest", t + 250, **tool)
    # A stale `busy` (from before the dialog) proves nothing.
    write_entry(capture("busy", statusUpdatedAt=t + 150))
    assert reconcile.reconcile(str(state_dir)) == []
    write_entry(capture("busy", statusUpdatedAt=t + 2000))  # "Yes"
    (line,) = reconcile.reconcile(str(state_dir))
    assert (line["status"], line["detail"], line["source"]) == (
        "working",
        "mcp__sleeper__sleep",
        "client",
    )
    assert line["notify"] == ["resolved"]
    feed(state_dir, "PostToolUse", t + 22000, tool_use_id="toolu_1", **tool)
    feed(state_dir, "Stop", t + 22100, last_assistant_message="done")
    snap = store.read_session(str(state_dir), SID)
    assert snap is not None and (snap["status"], snap["evidence"]) == ("idle", "hook")
    # The registry's `busy` is older than the Stop: it changes nothing.
    assert reconcile.reconcile(str(state_dir)) == []


@pytest.mark.parametrize(("status", "answer"), [("busy", "approved"), ("idle", "unknown")])
def test_a_dialog_the_clients_file_ended_is_counted_as_the_client_said(
    state_dir: Path, status: str, answer: str
) -> None:
    """The sender's watch (or a reader) can see the client's `busy` before the hook of the tool
    that then runs (on a busy machine, a second): the ledger counts that approval, as the state
    machine does, and `lookout suggest` sees it. Its `idle` says only that the dialog closed and
    the call did not run (No, Esc or an interrupt): the ledger does not guess which."""
    from lookout import ledger

    t = int(time.time() * 1000) - 5000
    feed(state_dir, "SessionStart", t, source="startup")
    feed(state_dir, "UserPromptSubmit", t + 100, prompt="go")
    tool = {"tool_name": "Bash", "tool_input": {"command": "touch made"}}
    feed(state_dir, "PreToolUse", t + 200, tool_use_id="toolu_1", **tool)
    feed(state_dir, "PermissionRequest", t + 250, **tool)
    write_entry(capture(status, statusUpdatedAt=t + 2000))  # "Yes" / Esc
    (line,) = reconcile.reconcile(str(state_dir))
    assert line["notify"] == ["resolved"]
    if status == "busy":
        feed(state_dir, "PostToolUse", t + 2100, tool_use_id="toolu_1", **tool)  # too late
    (wait,) = ledger.read(str(state_dir)).waits
    assert (wait.summary, wait.wait_ms, wait.answer) == ("touch made", 1750, answer)


def test_a_session_without_hooks_is_listed_from_the_client(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = int(time.time() * 1000)
    write_entry(
        capture(
            "waiting-input", statusUpdatedAt=now - 1000, name="fix the parser", nameSource="user"
        )
    )
    (row,) = status_json(capsys)
    assert row["session_id"] == SID
    assert (row["status"], row["reason"], row["evidence"], row["hooks"]) == (
        "attention",
        "question",
        "client",
        False,
    )
    assert (row["title"], row["tmux_pane"], row["alive"]) == ("fix the parser", "%0", True)
    (line,) = records(state_dir)
    assert (line["event"], line["source"], line["outcome"]) == ("Reconciled", "client", "waiting")
    write_entry(capture("idle", statusUpdatedAt=now, name="fix the parser", nameSource="user"))
    (row,) = status_json(capsys)
    assert (row["status"], row["evidence"], row["hooks"]) == ("idle", "client", False)


def test_a_name_set_by_the_user_wins_over_a_derived_one(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = int(time.time() * 1000) - 5000
    feed(state_dir, "SessionStart", t, source="startup")
    assert status_json(capsys)[0]["title"] == "demo"  # no registry: the project
    write_entry(capture("idle", statusUpdatedAt=t, name="release notes", nameSource="user"))
    assert status_json(capsys)[0]["title"] == "release notes"
    write_entry(capture("idle", statusUpdatedAt=t, name="project-76", nameSource="derived"))
    row = status_json(capsys)[0]
    assert (row["title"], row["hooks"], row["evidence"]) == ("release notes", True, "hook")


def test_an_unreadable_or_future_file_changes_nothing_but_a_doctor_note(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = int(time.time() * 1000) - 5000
    feed(state_dir, "SessionStart", t, source="startup")
    feed(state_dir, "UserPromptSubmit", t + 100, prompt="go")
    before = status_json(capsys)
    directory = registry_dir()
    directory.mkdir(parents=True)
    (directory / "99.json").write_text("not json")
    write_entry(capture("busy", status="thinking-hard", statusUpdatedAt=t + 1000, version="9.0.0"))
    after = status_json(capsys)
    assert [dict(r, since=None) for r in after] == [dict(r, since=None) for r in before]
    survey = client_sessions.survey()
    notes = "\n".join(survey["notes"])
    assert "99.json: unreadable" in notes
    assert "status 'thinking-hard' is unknown" in notes
    assert "newer than 2.1.332" in notes


def doctor_says(capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str]]:
    cli_main(["doctor", "--json"])
    doc = json.loads(capsys.readouterr().out)
    return [(c["status"], c["message"]) for c in doc["checks"] if c["check"] == "client registry"]


def test_doctor_names_the_client_versions_bad_files_and_sessions_without_hooks(
    state_dir: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (Path.home() / ".claude").mkdir(exist_ok=True)  # Claude Code is set up here
    ((status, message),) = doctor_says(capsys)
    assert status == "info" and "no session files" in message and "2.1.332" in message
    project = tmp_path / "demo"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text('{"disableAllHooks": true}')
    write_entry(capture("busy", cwd=str(project), statusUpdatedAt=int(time.time() * 1000)))
    (registry_dir() / "77.json").write_text("{")
    status_json(capsys)  # a reader adopts the session
    said = doctor_says(capsys)
    assert said[0][0] == "ok" and "1 of 2 session files" in said[0][1]
    assert (
        "warn",
        f"{registry_dir()}/77.json: unreadable (not a JSON object): ignored".replace(
            os.environ["HOME"], "~"
        ),
    ) in said
    (hookless,) = [m for s, m in said if "without lookout's hooks" in m]
    assert (
        hookless.startswith("session 'project-76' (465dbd21") and "sets disableAllHooks" in hookless
    )


def test_a_codex_only_user_hears_nothing_of_claude_codes_files(
    state_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no `claude` either
    (Path.home() / ".codex").mkdir()
    cli_main(["doctor", "--json"])
    doc = json.loads(capsys.readouterr().out)
    said = [f"{c['check']}: {c['message']} {c.get('hint') or ''}" for c in doc["checks"]]
    assert not [line for line in said if ".claude" in line or "Claude" in line], said
    (missing,) = [c for c in doc["checks"] if c["check"] == "hooks"]
    assert missing["hint"] == "python3 install.py --agent codex"


def test_status_evidence_shows_what_proved_each_status(
    state_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    write_entry(capture("busy", statusUpdatedAt=int(time.time() * 1000), name="triage"))
    assert cli_main(["status", "--evidence"]) == 0
    header, row = capsys.readouterr().out.splitlines()[:2]
    assert header.split() == ["SESSION", "ID", "STATUS", "EVIDENCE", "DETAIL", "AGE", "SUMMARY"]
    assert row.split()[:5] == ["triage", SID[:8], "working", "client,", "no"]
    assert cli_main(["status"]) == 0
    assert "EVIDENCE" not in capsys.readouterr().out


def test_the_fleet_payload_carries_title_evidence_and_hooks(state_dir: Path) -> None:
    from lookout.fleet.payload import session_message
    from lookout.sessions import load_sessions

    write_entry(
        capture(
            "busy", statusUpdatedAt=int(time.time() * 1000), name="secret plan", nameSource="user"
        )
    )
    reconcile.reconcile(str(state_dir))
    (row,) = load_sessions(str(state_dir))
    full = session_message(row, "laptop", "full")
    assert (full["title"], full["evidence"], full["hooks"]) == ("secret plan", "client", False)
    assert session_message(row, "laptop", "none")["title"] == "project"


def test_escalations_page_only_for_attention_a_hook_or_the_client_reported(state_dir: Path) -> None:
    t = int(time.time() * 1000) - 5000
    feed(state_dir, "SessionStart", t, source="startup")
    feed(state_dir, "UserPromptSubmit", t + 100, prompt="go")
    tool = {"tool_name": "Bash", "tool_input": {"command": "touch x"}}
    feed(state_dir, "PreToolUse", t + 200, tool_use_id="toolu_1", **tool)
    write_entry(capture("waiting-permission", statusUpdatedAt=t + 300))
    reconcile.reconcile(str(state_dir))
    snap = store.read_session(str(state_dir), SID)
    assert snap is not None and snap["main"]["episode"] is not None
    key = snap["main"]["episode"]["key"]
    assert snap["main"]["episode"]["by"] == "client"
    assert reconcile.still_waiting(str(state_dir), SID, key) is True
    # An episode no hook and no client reported (a reader's guess) never pages anyone.
    snap["main"]["episode"]["by"] = "transcript"
    with store.Locked(str(state_dir)) as st:
        st.write_session(snap)
    assert reconcile.still_waiting(str(state_dir), SID, key) is False


@pytest.mark.parametrize(
    ("fixture", "title", "body"),
    [
        (
            "waiting-permission",
            "billing-fix · needs permission",
            "Claude Code waits for: permission prompt. This session runs without lookout's"
            " hooks, so lookout cannot show the command: see its terminal.",
        ),
        (
            "waiting-input",
            "billing-fix · has a question",
            "Claude Code waits for: input needed. This session runs without lookout's hooks,"
            " so lookout cannot show the question: see its terminal.",
        ),
    ],
    ids=["permission", "question"],
)
def test_an_alert_for_a_session_without_hooks_says_what_the_client_waits_for(
    state_dir: Path, tmp_path: Path, fixture: str, title: str, body: str
) -> None:
    # newuser-3 defect 6: the alert of a session lookout only sees through the registry had an
    # empty body. A reader (`lookout status`) adopts it; the real sender runs the channel.
    from tests.helpers import calls, recorder, wait_for

    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{title}}", "{{body}}"]\n'
        '[[rules]]\nwhen = ["permission", "question"]\nchannels = ["log"]\n'
    )
    now = int(time.time() * 1000)
    write_entry(capture(fixture, statusUpdatedAt=now, name="billing-fix", nameSource="user"))
    out = subprocess.run(
        [sys.executable, "-m", "lookout", "status"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert calls(wait_for(lambda: log if calls(log) else None, what="the alert")) == [[title, body]]
