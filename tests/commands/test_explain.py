"""`lookout explain [SESSION]` through the real entry point, over what real hook runs recorded:
a sent permission alert, a finished turn a rule withheld, a kind no rule sends."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lookout import runner, spawn
from lookout.commands import main as cli
from lookout.sender import sender
from tests.helpers import payload, recorder, write_config

SESSION = "5e55e1d0-aaaa-4bbb-8ccc-000000000001"


@pytest.fixture
def sent_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # The detached sender, run in this process so the test sees its records at once (without
    # its watch over open dialogs: this process is the session's "client", alive throughout).
    monkeypatch.setattr(spawn, "spawn", lambda st, job, *_: sender.serve(st, watch_s=None) or 1)


def hook(state_dir: Path, name: str, ts_ms: int, cwd: Path, **fields: object) -> None:
    data = {**payload(name), "session_id": SESSION, "cwd": str(cwd), **fields}
    event = data["hook_event_name"]
    raw = json.dumps(data).encode()
    runner.record(raw, str(event), ts_ms, str(state_dir), {"CLAUDE_PID": str(os.getpid())})


@pytest.fixture
def recorded(state_dir: Path, tmp_path: Path, sent_in_process: None) -> Path:
    prog, _log = recorder(tmp_path)
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["cmd"]\nmin_duration_s = 60\n'
    )
    project = tmp_path / "demo"
    project.mkdir()
    t = 1_800_000_000_000
    hook(state_dir, "SessionStart-startup", t, project)
    hook(state_dir, "UserPromptSubmit", t + 1000, project)
    hook(state_dir, "PreToolUse-Bash", t + 2000, project)
    hook(state_dir, "PermissionRequest-Bash", t + 2100, project)
    hook(state_dir, "PostToolUse-Bash", t + 5000, project)
    hook(state_dir, "Stop", t + 6000, project)
    hook(state_dir, "Notification-idle_prompt", t + 70_000, project)
    return project


def test_explain_says_what_was_sent_what_was_withheld_and_why(
    recorded: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(recorded)
    assert cli.main(["explain", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["session_id"] == SESSION
    got = [(n["kind"], [(d["channel"], d["result"]) for d in n["deliveries"]]) for n in doc[
        "notifications"]]  # fmt: skip
    assert got == [
        ("session_start", []),
        ("permission", [("cmd", "sent")]),
        ("resolved", []),
        ("done", [("cmd", "skipped")]),
        ("idle", []),
    ]
    done = doc["notifications"][3]["deliveries"][0]
    assert (done["rule"], done["reason"]) == (1, "min_duration_s")
    assert done["detail"] == "rules[1]: the turn took 5s, under min_duration_s = 60"
    assert doc["notifications"][4]["note"] == "no rule sends idle"

    assert cli.main(["explain", SESSION[:8], "-n", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"demo {SESSION[:8]} ({recorded}): the last 2 notifications, oldest first"
    assert out[1].split("  ", 1)[1] == "done (turn 5s)  OK from mock"
    assert out[2].split() == [
        "cmd", "skipped", "rules[1]:", "the", "turn", "took", "5s,", "under", "min_duration_s",
        "=", "60",
    ]  # fmt: skip
    assert out[3].endswith("  idle  Claude is waiting for your input")
    assert out[4].strip() == "no rule sends idle"


def test_explain_an_unknown_session_says_so(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["explain", "nosuch"]) == 1
    assert capsys.readouterr().err == (
        "error: no session 'nosuch' is recorded\n"
        "hint: give the start of a session id (the ID column of `lookout status --all`),"
        " a project or a title\n"
    )


def test_explain_with_nothing_recorded(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explain"]) == 1
    assert capsys.readouterr().err.startswith("error: no session is recorded yet\n")


def test_explain_takes_a_project_name_as_jump_and_ack_do(
    recorded: Path, capsys: pytest.CaptureFixture[str], state_dir: Path
) -> None:
    # issue 22 item 12: one resolver for every SESSION argument.
    assert cli.main(["explain", "demo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["session_id"] == SESSION
    # A second live session of the project: a list to choose from, never a guess.
    other = {**payload("UserPromptSubmit"), "session_id": "0dd0dd0d-1", "cwd": str(recorded)}
    runner.record(json.dumps(other).encode(), "UserPromptSubmit", 1_800_000_100_000,
                  str(state_dir), {})  # fmt: skip
    assert cli.main(["explain", "demo"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: 'demo' names 2 sessions: demo (")
    assert f"demo (project) — {SESSION[:8]}, idle" in err
    assert "demo (project) — 0dd0dd0d, working" in err
