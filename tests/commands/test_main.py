"""The `lookout` command, on state recorded by the real runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from lookout import runner, store
from lookout.commands import main as cli
from lookout.commands import status
from lookout.sessions import parse_line
from lookout.silence import clock
from tests.helpers import ROOT, Output, lookout, payload, wait_for

if TYPE_CHECKING:
    from lookout.install.runtimes import Outcome


def unchanged_runtime(home: Path, python: str, checkout: Path) -> Outcome:
    """install.py's runtime step, as when the installed runtime is up to date."""
    from lookout.install.runtimes import Outcome

    return Outcome(home, built=False, switched=False, before=None)

pytestmark = pytest.mark.usefixtures("no_notifications")


def deliver(state: Path, body: dict[str, Any], ts_ms: int | None = None, **env: str) -> None:
    raw = json.dumps(body).encode()
    ts = int(time.time() * 1000) if ts_ms is None else ts_ms
    runner.record(raw, None, ts, str(state), env)


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
    assert table.splitlines()[0].startswith("SESSION")
    assert "attention permission" in table.splitlines()[1]
    assert "\033[" not in table  # not a TTY
    assert lookout("status", "--line").stdout.strip() == "! demo:permission · 1 working · 1 idle"


def test_the_status_line_fast_path_is_what_argparse_parses() -> None:
    # `lookout status --line` skips argparse (a status bar runs it every few seconds).
    assert vars(cli.build_parser("status").parse_args(cli.STATUS_LINE)) == status.LINE
    assert vars(status.line()) == status.LINE


def test_every_command_in_the_table_declares_itself_and_runs() -> None:
    import importlib

    listed = cli.build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(listed) == list(cli.COMMANDS)  # `lookout --help` lists the table, in order
    for name in cli.COMMANDS:
        command = importlib.import_module(cli.module(name))
        assert callable(command.declare) and callable(command.run), name
        parser = cli.build_parser(name)
        declared = parser._subparsers._group_actions[0].choices[name]  # type: ignore[union-attr]
        assert declared.description, name  # its own --help says what it does


@pytest.mark.parametrize("name", ["say", "interrupt", "start"])
def test_a_steering_commands_help_says_where_steering_is_switched_on(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as helped:
        cli.main([name, "--help"])
    assert helped.value.code == 0
    said = " ".join(capsys.readouterr().out.split())  # argparse wraps it to the terminal
    note = "Needs [steer] enabled = true in your own config (docs/steer.md)."
    assert said.count(note) == 1
    assert said.index(note) > said.index(" tmux ")  # after what the command does


def test_the_status_line_loads_no_argparse_typing_or_json(recorded: Path) -> None:
    # Nor the config parser when the hooks' cache knows the files, nor another command's module.
    unwanted = {"argparse", "typing", "json", "traceback", "shutil", "lookout.config.files"}
    unwanted |= {"lookout.commands.args", "lookout.commands.fleet"}
    code = (
        "import sys; from lookout.commands import main; main.main(['status', '--line']);"
        f" print(sorted({unwanted!r} & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=30
    )
    assert done.stdout.splitlines() == ["! demo:permission · 1 working · 1 idle", "[]"]


def end_its_process(state_dir: Path, session_id: str) -> Path:
    """Give a recorded session a process that has exited: the next reader proves it ended."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    snapshot = state_dir / "sessions" / f"{session_id}.json"
    with store.Locked(str(state_dir)) as st:
        st.write_session(dict(json.loads(snapshot.read_text()), pid=gone.pid))
    return snapshot


def test_the_status_line_leaves_no_file_open_for_its_quick_exit(recorded: Path) -> None:
    # A status line's process ends without the interpreter's teardown (main._end): whatever it
    # wrote (here: the session it proves ended) must be closed, not in a buffer, by then.
    end_its_process(recorded, "busy-session")
    code = (
        "import gc, io, sys; from lookout.commands import main; main.main(['status', '--line']);"
        " std = ('<stdin>', '<stdout>', '<stderr>');"
        " print([repr(f) for f in gc.get_objects()"
        " if isinstance(f, io.IOBase) and not f.closed and getattr(f, 'name', '') not in std])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=30
    )
    assert done.stdout.splitlines() == ["! demo:permission · 1 idle", "[]"], done.stderr


def test_what_a_status_line_proves_is_recorded_before_it_exits(recorded: Path) -> None:
    # The line's own process (the quick exit): the ended session is written whole.
    snapshot = end_its_process(recorded, "busy-session")
    out = lookout("status", "--line")
    assert (out.returncode, out.stdout, out.stderr) == (0, "! demo:permission · 1 idle\n", "")
    assert json.loads(snapshot.read_text())["status"] == "ended"
    records = [json.loads(line) for line in (recorded / "events.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in records if r["event"] == "Reconciled"] == ["process_gone"]


def test_status_with_no_state_at_all() -> None:
    out = lookout("status")
    assert (out.returncode, out.stdout.strip()) == (0, "no sessions")
    assert json.loads(lookout("status", "--json").stdout) == {
        "sessions": [],
        "config_error": None,
        "ignored_project_files": [],
        "away": {"away": False, "since_ms": None, "until_ms": None, "source": None},
    }


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


def test_tail_session_filters_before_it_counts(recorded: Path) -> None:
    # issue 22 item 14: `-n 2` is the session's last 2 records, however many came after them.
    for i in range(300):  # more than one 64 KiB block of other sessions' records
        deliver(recorded, dict(payload("UserPromptSubmit"), session_id=f"other-{i}",
                               prompt="x" * 300))  # fmt: skip
    only = lookout("tail", "--session", "ended", "-n", "1", "--json").stdout.splitlines()
    assert [json.loads(x)["event"] for x in only] == ["SessionEnd"]
    two = lookout("tail", "--session", "ended", "-n", "2").stdout.splitlines()
    assert len(two) == 2 and "Stop" in two[0] and "SessionEnd" in two[1]
    # A project names a session here too (sessions.resolve); several are a list, not a guess.
    many = lookout("tail", "--session", "demo", "-n", "1")
    assert many.returncode == 1, many.stderr
    assert many.stderr.startswith("error: 'demo' names 303 sessions: demo ("), many.stderr


def test_tail_takes_the_session_as_a_positional_like_every_other_command(
    recorded: Path,
) -> None:
    """newuser-4 1d: `lookout tail web` was `unrecognized arguments`; --session stays an alias."""
    by_arg = lookout("tail", "ended", "-n", "100")
    assert by_arg.returncode == 0, by_arg.stderr
    assert by_arg.stdout == lookout("tail", "--session", "ended", "-n", "100").stdout
    assert len(by_arg.stdout.splitlines()) == 2
    assert lookout("tail", "-n", "1", "ended", "--json").stdout == (
        lookout("tail", "--session", "ended", "-n", "1", "--json").stdout
    )
    unknown = lookout("tail", "nosuch")
    assert (unknown.returncode, unknown.stdout) == (1, "")
    assert unknown.stderr.startswith("error: no session 'nosuch' is recorded\n")
    both = lookout("tail", "ended", "--session", "nosuch")
    assert both.returncode == 2 and "give the session once" in both.stderr, both.stderr
    assert lookout("tail", "ended", "--session", "ended").returncode == 0


def test_tail_skips_a_torn_last_line(recorded: Path) -> None:
    with open(recorded / "events.jsonl", "ab") as f:
        f.write(b'{"ts":"2026-11-25T21:00:00.000Z","event":"Sto')
    raw = lookout("tail", "--json", "-n", "1").stdout.splitlines()
    assert json.loads(raw[0])["event"] == "SessionEnd"


def test_tail_with_one_huge_line_takes_linear_time(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # S8 (security-3.md): one 50 MB line made `tail -n 5` re-join and re-split it on every
    # 64 KiB block (quadratic: over 60 s). The work must stay within a small multiple of
    # reading the file once and parsing every line, measured in CPU time, in this process.
    log = recorded / "events.jsonl"
    *_, last = log.read_bytes().splitlines()
    huge = json.loads(last)
    huge["pad"] = "x" * (50 * 1024 * 1024)
    with open(log, "ab") as f:
        f.write(json.dumps(huge, separators=(",", ":")).encode() + b"\n")
        f.write(last + b"\n")
    started = time.process_time()
    lines = [parse_line(raw) for raw in log.read_bytes().split(b"\n")]
    once = time.process_time() - started
    started = time.process_time()
    rc, out, _ = run_cli(capsys, "tail", "-n", "5")
    took = time.process_time() - started
    assert rc == 0 and len(out.splitlines()) == 5 and len(lines) == 8
    assert took <= 4 * once + 0.25, (took, once)


def test_tail_follow_prints_new_events(recorded: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "lookout", "tail", "-f", "-n", "0", "--json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    printed = Output(proc.stdout)
    try:
        # Nothing shows when tail -f is ready: deliver until it prints (the first one may come
        # before it has found the end of the file).
        def delivered_and_printed() -> str:
            deliver(recorded, dict(payload("UserPromptSubmit"), session_id="followed"))
            return printed.text()

        line = wait_for(delivered_and_printed, what="tail -f printing", every=0.1)
        assert json.loads(line.splitlines()[0])["session_id"] == "followed"
    finally:
        proc.kill()
        proc.wait()


def test_prune_forgets_only_old_ended_sessions(recorded: Path) -> None:
    old = int(time.time() * 1000) - 10 * 86400 * 1000
    deliver(recorded, dict(payload("SessionEnd"), session_id="old-ended"), ts_ms=old)
    out = lookout("prune", "--dry-run")
    assert out.stdout.splitlines()[-1] == (
        "would forget 1 ended session; kept 1 that ended within 7d (--older-than 0 forgets"
        " them too)"
    )
    assert (recorded / "sessions" / "old-ended.json").exists()
    assert lookout("prune").stdout.strip() == (
        "forgot 1 ended session; kept 1 that ended within 7d (--older-than 0 forgets them too)"
    )
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


def test_help_lists_every_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # argparse breaks a path longer than the line
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
        [sys.executable, "-m", "lookout", "status", "--watch", "--interval", "0.1"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    printed = Output(proc.stdout)

    def frames() -> list[str]:  # the frames printed whole: each one followed by the next
        return printed.text().split("lookout · ")[1:-1]

    first = wait_for(frames, what="a first frame")[0]
    deliver(recorded, dict(payload("UserPromptSubmit"), session_id="late-arrival"))
    wait_for(
        lambda: len(frames()) >= 3 and frames()[-1].count("working") > first.count("working"),
        what="a frame with the late arrival",
    )
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 0, proc.stderr.read()
    out, err = printed.rest(), proc.stderr.read()
    assert "Traceback" not in err
    frames = out.split("lookout · ")
    assert len(frames) >= 4  # refreshed several times
    assert "Ctrl-C to quit" in frames[1]
    assert "attention permission" in frames[1]
    assert frames[-1].count("working") > frames[1].count("working")


# -- status: --attention, -q, --project, project overrides, the hooks note ----------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_status_attention_is_grep_like(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(capsys, "status", "--attention")
    assert rc == 0
    rows = out.splitlines()[1:]
    assert len(rows) == 2 and "attention permission" in rows[0]
    assert rows[1].startswith("answered already? `lookout ack")  # the way out, for a human
    rc, out, _ = run_cli(capsys, "status", "--attention", "--json")
    assert rc == 0 and [s["status"] for s in json.loads(out)["sessions"]] == ["attention"]
    assert run_cli(capsys, "status", "--attention", "-q") == (0, "", "")
    assert run_cli(capsys, "status", "--attention", "--project", "nomatch", "-q") == (1, "", "")
    rc, out, _ = run_cli(capsys, "status", "--attention", "--project", "nomatch", "--line")
    assert (rc, out) == (1, "no sessions\n")
    rc, out, _ = run_cli(capsys, "status", "--project", "nomatch")
    assert (rc, out) == (0, "no sessions\n")  # plain status keeps exit 0


def test_status_project_glob_on_name_or_path(
    state_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("api-1", "api-2", "web"):
        (tmp_path / "work" / name).mkdir(parents=True)
        body = dict(
            payload("SessionStart-startup"), session_id=name, cwd=str(tmp_path / "work" / name)
        )
        deliver(state_dir, body)
    _, out, _ = run_cli(capsys, "status", "--json", "--project", "api-*")
    assert sorted(s["project"] for s in json.loads(out)["sessions"]) == ["api-1", "api-2"]
    _, out, _ = run_cli(capsys, "status", "--json", "--project", f"{tmp_path}/work/w*")
    assert [s["project"] for s in json.loads(out)["sessions"]] == ["web"]


def test_status_reports_a_broken_project_override(
    state_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = Path(os.environ["HOME"]) / "api"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "lookout.toml").write_text(
        '[[rules]]\nwhen = ["permission"]\nchannels = ["desktop"]\nquiet_hour = "22:00-07:00"\n'
    )
    deliver(state_dir, dict(payload("PermissionRequest-Bash"), cwd=str(project)))
    rc, out, err = run_cli(capsys, "status")
    assert rc == 0 and "attention permission" in out
    assert err.splitlines()[0] == (
        "warning: notifications are off for api: ~/api/.claude/lookout.toml: rules[0].quiet_hour:"
        " unknown key (did you mean 'quiet_hours'?) (expected one of when, channels, projects,"
        " agents, min_duration_s, include_subagents, print_mode, cooldown_s, quiet_hours,"
        " quiet_kinds, escalate_after_s, escalate_to, grace_s, digest_s)"
    )
    assert err.splitlines()[1] == "hint: run `lookout check-config`"
    _, out, _ = run_cli(capsys, "status", "--line")
    assert out.strip().endswith("· config error")
    _, out, _ = run_cli(capsys, "status", "--json")
    assert "quiet_hour" in json.loads(out)["config_error"]


def test_status_notes_when_no_hooks_are_installed(
    recorded: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lookout.install import runtime, runtimes

    _, _, err = run_cli(capsys, "status")
    assert err == (
        "note: no lookout hooks are installed (not in ~/.claude/settings.json, this project's"
        " settings nor any other agent's files): these statuses may be out of date; python3"
        " install.py installs them, lookout doctor checks\n"
    )
    monkeypatch.setattr(runtime, "ensure_interpreter", lambda home, given, out: sys.executable)
    monkeypatch.setattr(runtimes, "install_runtime", unchanged_runtime)
    monkeypatch.setattr(runtime, "install_wrapper", lambda python, home, out: None)
    monkeypatch.setenv("LOOKOUT_PROC_DIR", str(recorded / "no-proc"))
    from lookout.install import cli as install

    assert install.main([]) == 0
    capsys.readouterr()
    assert run_cli(capsys, "status")[2] == ""
    assert install.main(["--uninstall"]) == 0
    capsys.readouterr()
    assert run_cli(capsys, "status")[2].startswith("note: no lookout hooks are installed")


@pytest.mark.parametrize(("agent", "home"), [("gemini", ".gemini"), ("opencode", ".config")])
def test_status_asks_every_agent_whether_hooks_are_installed(
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    agent: str,
    home: str,
) -> None:
    # A Gemini-only or OpenCode-only install is an install (issue 22 #18).
    from lookout.install import registry, runtime, runtimes

    monkeypatch.setattr(runtime, "ensure_interpreter", lambda home, given, out: sys.executable)
    monkeypatch.setattr(runtimes, "install_runtime", unchanged_runtime)
    monkeypatch.setattr(runtime, "install_wrapper", lambda python, home, out: None)
    monkeypatch.setenv("LOOKOUT_PROC_DIR", str(recorded / "no-proc"))
    (Path.home() / home).mkdir(exist_ok=True)
    from lookout.install import cli as install

    assert install.main(["--agent", agent]) == 0
    capsys.readouterr()
    registry.remove_all()  # the note must not rest on install's record alone
    assert run_cli(capsys, "status")[2] == ""
    assert install.main(["--agent", agent, "--uninstall"]) == 0
    capsys.readouterr()
    assert run_cli(capsys, "status")[2].startswith("note: no lookout hooks are installed")


# -- tail: 80 columns, stored bytes, unknown sessions, bad counts ------------------------------


def test_tail_json_prints_the_stored_bytes(recorded: Path) -> None:
    stored = (recorded / "events.jsonl").read_bytes()
    out = subprocess.run(
        [sys.executable, "-m", "lookout", "tail", "--json", "-n", "100"],
        capture_output=True,
        cwd=ROOT,
        timeout=30,
        check=True,
    ).stdout
    assert out == stored


def test_tail_fits_the_terminal_width(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    lines = lookout("tail", "-n", "100").stdout.splitlines()
    assert len(lines) == 5
    assert all(len(line) <= 80 for line in lines)
    assert any(line.endswith("…") for line in lines)  # cut, not wrapped
    monkeypatch.delenv("COLUMNS")
    assert any(len(line) > 80 for line in lookout("tail", "-n", "100").stdout.splitlines())


def test_tail_with_an_unknown_session_says_so(recorded: Path) -> None:
    out = lookout("tail", "--session", "nosuch")
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == (
        "error: no session 'nosuch' is recorded\n"
        "hint: give the start of a session id (the ID column of `lookout status --all`),"
        " a project or a title\n"
    )


def test_tail_refuses_a_negative_count(recorded: Path) -> None:
    out = lookout("tail", "-n", "-3")
    assert out.returncode == 2 and out.stdout == ""
    assert "argument -n/--lines: expected a whole number >= 0, got '-3'" in out.stderr


def test_status_interval_without_watch_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "status", "--interval", "5") == (
        1,
        "",
        "error: --interval only goes with --watch\nhint: lookout status --watch --interval 5\n",
    )


# -- terminal escapes in payload text (M1) --------------------------------------------------------

OSC52 = "\x1b]52;c;ZXZpbA==\x07"  # sets the clipboard on terminals that honour it
CSI = "\x1b[2J"  # clears the screen


def hostile(state_dir: Path) -> None:
    cwd = f"/w/proj{CSI}"
    deliver(state_dir, dict(payload("SessionStart-startup"), session_id="esc", cwd=cwd))
    deliver(
        state_dir,
        dict(
            payload("UserPromptSubmit"), session_id="esc", cwd=cwd, prompt=f"hi {OSC52}\u202e\x9b"
        ),
    )


@pytest.mark.parametrize(
    "args", [("status",), ("status", "--line"), ("status", "--all"), ("tail",), ("tail", "-n", "5")]
)
def test_human_output_shows_control_characters_visibly(state_dir: Path, args: tuple[str]) -> None:
    hostile(state_dir)
    out = lookout(*args)
    assert out.returncode == 0, out.stderr
    text = out.stdout + out.stderr
    assert not any((ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0 for c in text), text
    assert "\u202e" not in text
    if args[0] == "tail" or "--line" not in args:
        assert "proj\\x1b[2J" in text


def test_json_output_stays_exact(state_dir: Path) -> None:
    hostile(state_dir)
    session = json.loads(lookout("status", "--json").stdout)["sessions"][0]
    assert session["cwd"] == f"/w/proj{CSI}"
    assert session["summary"] == f"hi {OSC52}\u202e\x9b"


def test_doctor_and_check_config_escape_what_they_quote(state_dir: Path, tmp_path: Path) -> None:
    from lookout import store

    store.log_error(str(state_dir), f"boom {OSC52}")
    cfg = Path(os.environ["LOOKOUT_CONFIG"])
    cfg.write_text('"bad\\u001b[2Jkey" = 1\n')
    for args in (("doctor",), ("check-config",)):
        out = lookout(*args)
        text = out.stdout + out.stderr
        assert "\x1b" not in text and "\x07" not in text, text
        assert "\\x1b" in text, text


def _pipe_full(pipe: Any) -> bool:
    """Whether a pipe holds so much unread that its writer's next write blocks (Linux)."""
    import fcntl
    import struct
    import termios

    queued = struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"\0" * 4))[0]
    return bool(queued >= fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ) - 4096)


def test_prune_behind_a_stalled_pager_never_holds_up_the_hooks(state_dir: Path) -> None:
    # Output larger than a pipe's buffer, nobody reading it: prune blocks in print (M4).
    from lookout import store

    with store.Locked(str(state_dir)) as st:
        for i in range(3000):
            st.write_session(
                {"session_id": f"old-{i:05d}-" + "x" * 40, "status": "ended", "updated_ms": 1}
            )
    pruning = subprocess.Popen(
        [sys.executable, "-m", "lookout", "prune", "--dry-run", "--older-than", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: _pipe_full(pruning.stdout), what="prune's output filling the pipe")
        assert pruning.poll() is None, "prune finished: the output did not fill the pipe"
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-I", "-S", str(ROOT / "hooks" / "user_prompt_submit.py")],
            input=json.dumps(
                {"session_id": "live", "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
            ).encode(),
            capture_output=True,
            timeout=30,
            check=False,
        )
        took = time.monotonic() - started
        assert done.returncode == 0
        assert took < 2.0, f"the hook waited {took:.1f} s for the lock"
        assert '"session_id":"live"' in (state_dir / "events.jsonl").read_text()
    finally:
        out, _err = pruning.communicate(timeout=60)
    assert out.decode().splitlines()[-1] == "would forget 3000 ended sessions"


def test_status_refuses_a_state_dir_it_would_not_write_to(tmp_path: Path) -> None:
    plain = tmp_path / "not-a-dir"
    plain.write_text("")
    out = lookout("status", env={**os.environ, "LOOKOUT_STATE_DIR": str(plain)})
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr.splitlines() == [
        f"error: refusing the state directory: {plain} is not a directory",
        "hint: point LOOKOUT_STATE_DIR at a directory of your own (or unset it)",
    ]


# -- input nested past the parsers' depth (L7) --------------------------------------------------


def test_deeply_nested_settings_config_and_payload_give_errors_not_tracebacks(
    state_dir: Path, isolated_env: Path
) -> None:
    deep_json = '{"a":' + "[" * 50_000
    settings = isolated_env / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(deep_json)
    cfg = Path(os.environ["LOOKOUT_CONFIG"])
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    for args in (("status",), ("check-config",), ("doctor",)):
        out = lookout(*args)
        assert "Traceback" not in out.stderr, (args, out.stderr[-500:])
        assert out.returncode in (0, 1), (args, out.returncode, out.stderr[-500:])
    assert "nested too deeply" in lookout("check-config").stderr
    assert "nested too deeply to be a settings file" in lookout("doctor").stdout
    installed = subprocess.run(
        [sys.executable, str(ROOT / "install.py"), "--python", sys.executable],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert installed.returncode == 1 and "Traceback" not in installed.stderr, installed.stderr
    assert "nested too deeply to be a settings file" in installed.stderr
    # A hook: a short errors.log line, not a 190 KB traceback per call.
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-I", "-S", str(ROOT / "hooks" / "event.py")],
            input=('{"session_id":"s","x":' + "[" * 100_000).encode(),
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    errors = state_dir / "errors.log"
    assert not errors.exists() or errors.stat().st_size < 3 * 10_000


def test_a_status_line_asks_each_process_once(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # tmux runs it every few seconds over every session: reconcile's look at a process serves
    # the line too.
    from lookout.platform import current

    for n in range(3):
        deliver(
            state_dir,
            dict(payload("PreToolUse-Bash"), session_id=f"s{n}"),
            CLAUDE_PID=str(os.getpid()),
        )
    deliver(state_dir, dict(payload("SessionStart-startup"), session_id="idle"), CLAUDE_PID="1")
    platform = current.get()
    asked: list[object] = []
    real = platform.alive

    def counting(pid: object, start: object = None, since_ms: object = None) -> bool | None:
        asked.append(pid)
        return real(pid, start, since_ms)

    monkeypatch.setattr(platform, "alive", counting)
    assert cli.main(["status", "--line"]) == 0
    assert capsys.readouterr().out == "3 working · 1 idle\n"
    assert sorted(map(str, asked)) == sorted([str(os.getpid())] * 3 + ["1"])


def test_status_shows_how_long_a_tool_has_run(state_dir: Path) -> None:
    # issue 32: a running tool is not stuck, and `status` says how long it has run.
    now = int(time.time() * 1000)
    deliver(state_dir, payload("SessionStart-startup"), now - 13 * 60_000)
    deliver(state_dir, payload("UserPromptSubmit"), now - 13 * 60_000)
    deliver(state_dir, payload("PreToolUse-Bash"), now - 12 * 60_000 - 5000)
    out = lookout("status")
    row = next(line for line in out.stdout.splitlines() if "working" in line)
    assert " Bash 12m " in row, out.stdout
    shown = json.loads(lookout("status", "--json").stdout)["sessions"][0]
    assert shown["tool"]["name"] == "Bash"
    assert shown["tool"]["since"] == store.rfc3339(now - 12 * 60_000 - 5000)
    assert shown["tool"]["running_s"] >= 12 * 60 + 5
    assert shown["until_ms"] is None
    deliver(state_dir, payload("PostToolUse-Bash"), now - 1000)
    assert json.loads(lookout("status", "--json").stdout)["sessions"][0]["tool"] is None


def test_status_shows_when_a_usage_limit_lifts(state_dir: Path) -> None:
    now = int(time.time() * 1000)
    deliver(state_dir, payload("SessionStart-startup"), now - 2000)
    deliver(state_dir, payload("UserPromptSubmit"), now - 1000)
    failure = dict(payload("StopFailure"), error="rate_limit")
    failure["last_assistant_message"] = "API Error: Request rejected (429) · try again in 2h"
    deliver(state_dir, failure, now)
    shown = json.loads(lookout("status", "--json").stdout)["sessions"][0]
    shown_as = (shown["status"], shown["reason"], shown["detail"])
    assert shown_as == ("attention", "error", "rate_limit")
    assert shown["until_ms"] == now + 2 * 3600 * 1000
    assert shown["summary"] == (
        "rate or usage limit reached: API Error: Request rejected (429) · try again in 2h"
    )
    row = next(line for line in lookout("status").stdout.splitlines() if "error" in line)
    assert f" rate_limit until {clock(now + 2 * 3600 * 1000)} " in row
