"""`lookout say` and `interrupt` into a real tmux pane whose process is a stand-in agent
(tests/steer/fake_agent.py) that logs every byte it receives: exactly the text, as literal keys,
then Enter; Esc for interrupt; and nothing at all when a check refuses. The real clients:
tests/e2e/test_steer.py."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import ROOT, wait_for, write_config
from tests.receivers import TmuxServer, require

pytestmark = [pytest.mark.real, pytest.mark.usefixtures("no_notifications")]

SID = "dddd4444-0000-4000-8000-000000000004"
FAKE = Path(__file__).with_name("fake_agent.py")


class Panes(TmuxServer):
    def agent(self, log: Path, mode: str, event: str = "Stop", agent: str = "gemini") -> str:
        """A pane running the stand-in agent; it reported `event` for session SID."""
        script = {
            "Stop": "stop.py",
            "PreToolUse": "pre_tool_use.py",
            "StopFailure": "stop_failure.py",
        }[event]
        body = {"session_id": SID, "cwd": "/w/api", "hook_event_name": event}
        if event == "PreToolUse":
            body.update(tool_name="Bash", tool_input={"command": "make"})
        if event == "StopFailure":  # a failed turn: attention, but no dialog on screen
            body.update(error="rate_limit", last_assistant_message="API Error: 429")
        pane = self.tmux(
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-e",
            f"LOOKOUT_AGENT={agent}",
            "--",
            sys.executable,
            str(FAKE),
            str(log),
            mode,
            str(ROOT / "hooks" / script),
            json.dumps(body),
        )
        drawn = ("ready>", "\u2500")
        wait_for(lambda: any(d in self.screen(pane) for d in drawn), 20, "the agent's screen")
        return pane

    def screen(self, pane: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", pane)


@pytest.fixture
def panes(state_dir: Path) -> Iterator[Panes]:
    require("tmux")
    write_config("[steer]\nenabled = true\n")
    with Panes() as server:
        yield server
        server.tmux("kill-server")


def lookout(server: Panes, *args: str) -> tuple[int, str, str]:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "lookout", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={k: v for k, v in server.env.items() if k not in ("TMUX", "TMUX_PANE")},
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_say_types_the_text_exactly_then_enter(panes: Panes, tmp_path: Path) -> None:
    log = tmp_path / "got"
    pane = panes.agent(log, "plain")
    text = 'make it so; echo "$HOME" `id` \\n #{pane_id} caf\u00e9 ;'
    rc, out, err = lookout(panes, "say", "api", text)
    assert (rc, err) == (0, ""), err
    wait_for(lambda: log.exists() and log.read_bytes().endswith(b"\r"), 10, "Enter")
    assert log.read_bytes() == text.encode() + b"\r"
    target = panes.tmux(
        "display-message", "-p", "-t", pane, "#{session_name}:#{window_index}.#{pane_id}"
    )
    assert out.splitlines() == [
        f"api (dddd4444): typed into tmux pane {target}, then Enter: typed (idle)",
        f"text: {text}",
    ]


def test_what_a_plain_input_box_would_run_or_split_is_not_typed(
    panes: Panes, tmp_path: Path
) -> None:
    log = tmp_path / "got"
    panes.agent(log, "plain")
    rc, _, err = lookout(panes, "say", "api", "first\nsecond")
    assert rc == 1 and err.startswith(
        "error: the message has several lines, and a newline typed into Gemini CLI may send the"
        " first line on its own"
    )
    rc, _, err = lookout(panes, "say", "api", "/quit")
    assert rc == 1 and "starts with '/', which Gemini CLI's input box runs as a command" in err
    rc, _, err = lookout(panes, "say", "api", " !rm -rf x")
    assert rc == 1 and "starts with '!'" in err
    time.sleep(0.2)  # nothing may arrive; a byte would be there by now (it comes in ms)
    assert not log.exists() or log.read_bytes() == b""


def test_interrupt_presses_escape_and_says_what_it_cannot_know(
    panes: Panes, tmp_path: Path
) -> None:
    log = tmp_path / "got"
    panes.agent(log, "plain", event="PreToolUse")
    rc, out, err = lookout(panes, "interrupt", "api", "--json")
    assert (rc, err) == (0, "")
    wait_for(lambda: log.exists() and log.read_bytes() == b"\x1b", 10, "Esc")
    outcome = json.loads(out)
    assert (outcome["keys"], outcome["result"]) == (["Escape"], "sent")
    assert outcome["note"] == (
        "Gemini CLI reports no hook for a stopped turn: lookout shows it working until its next"
        " prompt"
    )


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        (
            "claude-draft",
            "error: api (dddd4444): its input box holds text not sent yet ('my draft'): lookout"
            " will not send it with yours",
        ),
        (
            "claude-dialog",
            "error: api (dddd4444): its pane shows no input box (a dialog or a menu is open):"
            " nothing was typed",
        ),
    ],
)
def test_claude_code_draft_or_dialog_on_screen_is_left_alone(
    panes: Panes, tmp_path: Path, mode: str, error: str
) -> None:
    log = tmp_path / "got"
    pane = panes.agent(log, mode, agent="claude")
    before = panes.screen(pane)
    rc, _, err = lookout(panes, "say", "api", "hello")
    assert (rc, err.splitlines()[0]) == (1, error)
    time.sleep(0.2)
    assert not log.exists() or log.read_bytes() == b""
    assert panes.screen(pane) == before


def test_claude_code_empty_box_is_typed_into_multiline_kept(panes: Panes, tmp_path: Path) -> None:
    log = tmp_path / "got"
    panes.agent(log, "claude-empty", agent="claude")
    rc, _, err = lookout(panes, "say", "api", "line one\nline two")
    assert (rc, err) == (0, ""), err
    wait_for(lambda: log.exists() and log.read_bytes().endswith(b"\r"), 10, "Enter")
    assert log.read_bytes() == b"line one\nline two\r"  # LF is C-j: a newline in its box


def fake_program(
    bin_dir: Path,
    name: str,
    log: Path,
    report: bool,
    sid: str = "eeee5555-0000-4000-8000-000000000005",
) -> None:
    """A stand-in for the agent's own program on PATH: it logs its argv (one JSON line) and, when
    `report`, fires a SessionStart hook of session `sid` as its child (so it reports from its
    pane), then waits."""
    bin_dir.mkdir(exist_ok=True)
    hook = ROOT / "hooks" / "session_start.py"
    body = {"session_id": sid, "hook_event_name": "SessionStart"}
    program = bin_dir / name
    program.write_text(
        f"#!{sys.executable}\n"
        "import json, os, subprocess, sys, time\n"
        f"open({str(log)!r}, 'a').write(json.dumps([os.getcwd(), *sys.argv[1:]]) + '\\n')\n"
        + (
            f"subprocess.run([sys.executable, '-I', '-S', {str(hook)!r}],"
            f" input=json.dumps({{**{body!r}, 'cwd': os.getcwd()}}).encode())\n"
            if report
            else ""
        )
        + "time.sleep(120)\n"
    )
    program.chmod(0o755)


def test_start_runs_the_agents_own_program_with_the_prompt_as_data(
    panes: Panes, tmp_path: Path
) -> None:
    project = tmp_path / "src" / "api"
    project.mkdir(parents=True)
    write_config(f'[steer]\nenabled = true\nprojects = ["{tmp_path}/src/*"]\n')
    log = tmp_path / "argv.jsonl"
    fake_program(tmp_path / "bin", "claude", log, report=True)
    panes.env["PATH"] = f"{tmp_path / 'bin'}:{panes.env['PATH']}"
    own = panes.tmux("display-message", "-p", "-t", "main", "#{pane_id}")
    prompt = '-x; $(touch pwned) `id` "q" ;'
    env = {**panes.env, "TMUX_PANE": own}
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "lookout", "start", str(project), "--prompt", prompt, "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert (outcome["session_id"], outcome["result"]) == (
        "eeee5555-0000-4000-8000-000000000005",
        "started",
    )
    assert outcome["target"].startswith("main:1.%")
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        [str(project), "--", prompt]
    ]
    assert not (project / "pwned").exists() and not (ROOT / "pwned").exists()


def test_start_says_when_no_hook_arrives(panes: Panes, tmp_path: Path) -> None:
    project = tmp_path / "src" / "api"
    project.mkdir(parents=True)
    write_config(f'[steer]\nenabled = true\nprojects = ["{tmp_path}/src/*"]\n')
    fake_program(tmp_path / "bin", "claude", tmp_path / "argv.jsonl", report=False)
    panes.env["PATH"] = f"{tmp_path / 'bin'}:{panes.env['PATH']}"
    own = panes.tmux("display-message", "-p", "-t", "main", "#{pane_id}")
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "lookout", "start", str(project), "--wait", "1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**panes.env, "TMUX_PANE": own},
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    error, hint = done.stderr.splitlines()
    assert error.startswith(f"error: started Claude Code in {project} (tmux main:1.%")
    assert error.endswith(
        "but no hook of it arrived within 1 s, so lookout cannot name its session"
    )
    assert (
        hint == "hint: is lookout installed for Claude Code? lookout doctor (the window still runs)"
    )


def test_a_long_text_arrives_whole_in_one_burst(panes: Panes, tmp_path: Path) -> None:
    # Over one tmux message (16 KB): through a buffer of its own, never in pieces.
    write_config("[steer]\nenabled = true\nmax_chars = 20000\n")
    log = tmp_path / "got"
    panes.agent(log, "plain")
    text = ("caf\u00e9 \U0001f680 line; " * 1100)[:-1] + " end"
    assert len(text.encode()) > 16_000
    rc, _, err = lookout(panes, "say", "api", text)
    assert (rc, err) == (0, ""), err
    wait_for(lambda: log.exists() and log.read_bytes().endswith(b"\r"), 20, "Enter")
    assert log.read_bytes() == text.encode() + b"\r"
    assert "lookout-steer" not in panes.tmux("list-buffers")  # the buffer went with the paste


def test_two_says_at_once_to_one_session_do_not_interleave(panes: Panes, tmp_path: Path) -> None:
    # Two surfaces (two processes) steer one session at the same moment: the session's steering
    # lock lets one type its text and Enter, then the other, never keys of one among the other's.
    import subprocess

    log = tmp_path / "got"
    panes.agent(log, "plain")
    texts = ["A" * 1500 + " first", "B" * 1500 + " second"]
    env = {k: v for k, v in panes.env.items() if k not in ("TMUX", "TMUX_PANE")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "lookout", "say", "api", text],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        for text in texts
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert (proc.returncode, err) == (0, ""), err
    wait_for(lambda: log.exists() and log.read_bytes().count(b"\r") == 2, 10, "two Enters")
    got = log.read_bytes()
    one, two = (t.encode() + b"\r" for t in texts)
    assert got in (one + two, two + one), got[:80]


def test_interrupt_in_a_claude_code_dialog_dismisses_it_and_says_so(
    panes: Panes, tmp_path: Path, state_dir: Path
) -> None:
    from tests.commands.test_main import deliver

    log = tmp_path / "got"
    panes.agent(log, "claude-dialog", event="PreToolUse", agent="claude")
    ask = {"session_id": SID, "cwd": "/w/api", "hook_event_name": "PermissionRequest"}
    deliver(state_dir, {**ask, "tool_name": "Bash", "tool_input": {"command": "make"}})
    rc, out, err = lookout(panes, "interrupt", "api", "--json")
    assert (rc, err) == (0, ""), err
    wait_for(lambda: log.exists() and log.read_bytes() == b"\x1b", 10, "Esc")
    outcome = json.loads(out)
    assert outcome["keys"] == ["Escape"]
    assert outcome["note"] == (
        "the open dialog (permission) was dismissed: Esc answers it as No (denied), and the turn"
        " stops"
    )
    lines = [json.loads(x) for x in (state_dir / "events.jsonl").read_text().splitlines()]
    (steered,) = [x for x in lines if x["event"] == "Steered"]
    assert steered["steer"]["dismissed"] == "permission"
    assert "the open dialog (permission) dismissed (denied)" in steered["summary"]


def test_two_long_texts_to_two_panes_at_once_each_arrive_whole(
    panes: Panes, tmp_path: Path
) -> None:
    # The dashboard steers from threads of one process; two sessions on one server have two
    # locks. Each long text (through a tmux buffer) must reach its own pane, whole.
    import threading

    from lookout.jump.tmux import Pane
    from lookout.steer import pane as steer_pane

    socket = panes.env["TMUX"].split(",")[0]
    logs = [tmp_path / "one", tmp_path / "two"]
    ids = [
        panes.tmux(
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "--",
            "sh",
            "-c",
            f"stty raw -echo; exec cat > {log}",
        )
        for log in logs
    ]
    rounds = 3
    texts = [("A" * 13_000, "B" * 13_000), ("C" * 13_000, "D" * 13_000)]

    def send(i: int) -> None:
        for r in range(rounds):
            steer_pane.type_text(Pane(socket, ids[i], "main", 1, ""), texts[i][r % 2])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    size = 13_000 * rounds
    wait_for(lambda: all(log.exists() and log.stat().st_size >= size for log in logs), 20, "texts")
    for i, log in enumerate(logs):
        got = log.read_bytes()
        assert set(got) == set(b"".join(t.encode() for t in texts[i])), got[:40]
        assert len(got) == size
    assert "lookout-steer" not in panes.tmux("list-buffers")


def test_a_start_with_no_hook_records_its_agent_and_no_status_it_does_not_know(
    panes: Panes, tmp_path: Path, state_dir: Path
) -> None:
    import subprocess

    project = tmp_path / "src" / "api"
    project.mkdir(parents=True)
    write_config(f'[steer]\nenabled = true\nprojects = ["{tmp_path}/src/*"]\nagents = ["gemini"]\n')
    fake_program(tmp_path / "bin", "gemini", tmp_path / "argv.jsonl", report=False)
    panes.env["PATH"] = f"{tmp_path / 'bin'}:{panes.env['PATH']}"
    own = panes.tmux("display-message", "-p", "-t", "main", "#{pane_id}")
    done = subprocess.run(
        [sys.executable, "-m", "lookout", "start", str(project), "--wait", "1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**panes.env, "TMUX_PANE": own},
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "no hook of it arrived" in done.stderr
    lines = [json.loads(x) for x in (state_dir / "events.jsonl").read_text().splitlines()]
    (steered,) = [x for x in lines if x["event"] == "Steered"]
    assert (steered["session_id"], steered["agent"], steered["status"]) == ("", "gemini", None)
    assert steered["outcome"] == "no_hook"
    tail = subprocess.run(
        [sys.executable, "-m", "lookout", "tail", "-n", "1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=panes.env,
        timeout=60,
        check=False,
    )
    assert tail.returncode == 0 and "Steered" in tail.stdout, tail.stderr
