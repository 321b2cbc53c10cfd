"""`lookout say` and `interrupt` into a real tmux pane whose process is a stand-in agent
(tests/steer/fake_agent.py) that logs every byte it receives: exactly the text, as literal keys,
then Enter; Esc for interrupt; and nothing at all when a check refuses. The real clients:
tests/e2e/test_steer.py."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from lookout import client_sessions
from tests.commands.test_main import deliver
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
            "UserPromptSubmit": "user_prompt_submit.py",
            "PermissionRequest": "permission_request.py",
        }[event]
        body = {"session_id": SID, "cwd": "/w/api", "hook_event_name": event}
        if event in ("PreToolUse", "PermissionRequest"):
            body.update(tool_name="Bash", tool_input={"command": "make"})
        if event == "StopFailure":  # a failed turn: attention, but no dialog on screen
            body.update(error="rate_limit", last_assistant_message="API Error: 429")
        return self.start(log, mode, script, json.dumps(body), agent)

    def start(
        self,
        log: Path,
        mode: str,
        script: str,
        payload: str,
        agent: str,
        argv0: str | None = None,
        python: str = sys.executable,
    ) -> str:
        """A pane running the stand-in agent (as `python`, under `argv0`), which ran `script`
        with `payload` (a list: once for each)."""
        command = [python, str(FAKE), str(log), mode, str(ROOT / "hooks" / script), payload]
        if argv0 is not None:
            command = ["bash", "-c", 'exec -a "$0" "$@"', argv0, *command]
        pane = self.tmux(
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-e",
            f"LOOKOUT_AGENT={agent}",
            "-e",
            f"FAKE_PYTHON={sys.executable}",
            "--",
            *command,
        )
        drawn = ("ready>", "\u2500")
        wait_for(lambda: any(d in self.screen(pane) for d in drawn), 20, "the agent's screen")
        return pane

    def shell(self) -> str:
        """A pane whose agent has exited: its shell is back."""
        pane = self.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "--", "bash", "--norc", "-i")
        wait_for(lambda: self.screen(pane).rstrip().endswith(("$", "#")), 20, "the prompt")
        return pane

    def notify(self, pane: str, session: str = SID) -> None:
        """Codex's legacy `notify` program reports a finished turn from `pane` (as a Codex in it
        would have), run by this test: its parent is no agent."""
        import subprocess

        turn = {"type": "agent-turn-complete", "thread-id": session, "cwd": "/w/api"}
        socket = self.env["TMUX"].split(",")[0]
        subprocess.run(
            [sys.executable, "-I", "-S", str(ROOT / "hooks" / "codex_notify.py"), json.dumps(turn)],
            env={**self.env, "TMUX": f"{socket},1,0", "TMUX_PANE": pane},
            check=True,
            timeout=30,
        )

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
        "Gemini CLI reports no hook for a stopped turn: lookout shows it idle, as interrupted by"
        " lookout (evidence steer), until its next hook"
    )


def test_a_turn_lookout_interrupted_is_idle_and_never_stuck(panes: Panes, tmp_path: Path) -> None:
    # Issue 38: Gemini CLI fires no hook for a cancelled turn; lookout pressed Esc itself, so the
    # turn is over (idle, evidence steer), and stuck_after_s later it is not called stuck.
    write_config("[steer]\nenabled = true\n[sessions]\nstuck_after_s = 1\n")
    log = tmp_path / "got"
    panes.agent(log, "plain", event="PreToolUse")  # a turn running a command
    rc, out, err = lookout(panes, "interrupt", "api", "--json")
    assert (rc, err) == (0, ""), err
    outcome = json.loads(out)
    assert (outcome["keys"], outcome["result"], outcome["status"]) == (["Escape"], "sent", "idle")
    state = Path(panes.env["LOOKOUT_STATE_DIR"])
    # Then Gemini CLI's AfterTool for the cancelled call (as tests/e2e saw it), and nothing more.
    after = {"session_id": SID, "cwd": "/w/api", "hook_event_name": "PostToolUse"}
    after.update(tool_name="Bash", tool_input={"command": "make"}, tool_response="cancelled")
    deliver(state, after, LOOKOUT_AGENT="gemini")
    lines = [json.loads(line) for line in (state / "events.jsonl").read_text().splitlines()]
    steered = next(r for r in lines if r["event"] == "Steered")
    said = next(r for r in lines if r["event"] == "Reconciled")
    assert (said["source"], said["outcome"], said["status"]) == ("steer", "interrupted", "idle")
    assert said["ts"] == steered["ts"]  # the moment lookout pressed the key
    # stuck_after_s past the press (by the record's own time), a reader still shows it idle.
    pressed = datetime.fromisoformat(steered["ts"].replace("Z", "+00:00")).timestamp()
    wait_for(lambda: time.time() > pressed + 2.5, 10, "stuck_after_s to pass")
    rc, out, _ = lookout(panes, "status", "--json")
    (shown,) = json.loads(out)["sessions"]
    assert (shown["status"], shown["evidence"]) == ("idle", "steer"), (
        state / "events.jsonl"
    ).read_text()
    lines = [json.loads(line) for line in (state / "events.jsonl").read_text().splitlines()]
    assert not [r for r in lines if r.get("outcome") == "stuck"]


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


def test_claude_code_dim_placeholder_after_a_failed_turn_is_no_draft(
    panes: Panes, tmp_path: Path
) -> None:
    # Issue 38: after a usage limit the box shows "Resend your message to try again", dim; the
    # limit_lifted alert says to send a prompt, so `say` types it.
    log = tmp_path / "got"
    pane = panes.agent(log, "claude-placeholder", event="StopFailure", agent="claude")
    assert "Resend your message to try again" in panes.screen(pane)
    rc, out, err = lookout(panes, "say", "api", "go on")
    assert (rc, err) == (0, ""), err
    wait_for(lambda: log.exists() and log.read_bytes().endswith(b"\r"), 10, "Enter")
    assert log.read_bytes() == b"go on\r"
    assert out.splitlines()[0].endswith(": typed (attention)")


@pytest.mark.parametrize(("event", "result"), [("PreToolUse", "queued"), ("Stop", "delivered")])
def test_claude_code_says_queued_while_it_works_though_its_prompt_hook_fired(
    panes: Panes, tmp_path: Path, event: str, result: str
) -> None:
    # Issue 38: Claude Code 2.1.332 fires UserPromptSubmit as it queues a message typed during
    # a turn ("Queued"); the model gets it at its next tool call: queued, not delivered.
    log = tmp_path / "got"
    panes.agent(log, "claude-prompts", event=event, agent="claude")
    rc, out, err = lookout(panes, "say", "api", "later please", "--json")
    assert (rc, err) == (0, ""), err
    outcome = json.loads(out)
    assert (outcome["result"], outcome["status"]) == (result, "working")
    assert log.read_bytes() == b"later please\r"


def fake_program(
    bin_dir: Path,
    name: str,
    log: Path,
    report: bool,
    titled: str | None = None,
    sid: str = "eeee5555-0000-4000-8000-000000000005",
) -> None:
    """A stand-in for the agent's own program on PATH: it logs its argv (one JSON line) and, when
    `report`, fires a SessionStart hook of session `sid` as its child (so it reports from its
    pane); `titled`: a moment later it names the session in Claude Code's registry, as 2.1.332
    does; then waits."""
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
        + (
            "time.sleep(0.3)\n"
            f"d = {str(client_sessions.directory())!r}\n"
            "os.makedirs(d, exist_ok=True)\n"
            f"entry = {{'pid': os.getpid(), 'sessionId': {body['session_id']!r},"
            f" 'name': {titled!r}, 'nameSource': 'derived', 'status': 'idle',"
            " 'statusUpdatedAt': int(time.time() * 1000)}\n"
            "open(os.path.join(d, f'{os.getpid()}.json'), 'w').write(json.dumps(entry))\n"
            if titled
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
    fake_program(tmp_path / "bin", "claude", log, report=True, titled="api-7f")
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
    # Named as `lookout status` names it: Claude Code's registry title (issue 38), not `api`.
    assert outcome["session"] == "api-7f (eeee5555)"
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


# -- who is reached (issue 38): a pane that runs something else, or is not the session's -------

NOT_AGENT_HINT = "hint: lookout jump shows what its pane runs now; if it is the agent, type there"


def status(server: Panes) -> dict[str, dict[str, object]]:
    rc, out, err = lookout(server, "status", "--json", "--all")
    assert rc == 0, err
    return {s["session_id"]: s for s in json.loads(out)["sessions"]}


def notify_turn(session: str = SID) -> str:
    return json.dumps({"type": "agent-turn-complete", "thread-id": session, "cwd": "/w/api"})


def test_a_shell_in_the_pane_of_a_session_with_no_process_is_never_typed_into(
    panes: Panes, tmp_path: Path
) -> None:
    # T2: Codex through its legacy `notify` records no process, and such a session never ends:
    # after Codex exited, its pane's shell got the text, and Enter ran it.
    pane = panes.shell()
    panes.notify(pane)
    assert status(panes)[SID]["pid"] is None
    said = tmp_path / "said"
    before = panes.screen(pane)
    rc, _, err = lookout(panes, "say", "api", f"touch {said}")
    assert rc == 1
    assert err.splitlines() == [
        "error: api (dddd4444): lookout cannot tell that its tmux pane still runs OpenAI Codex:"
        " no process of it was recorded, and the pane runs 'bash' now",
        NOT_AGENT_HINT,
    ]
    time.sleep(0.3)  # a key would show in the shell's line by now
    assert panes.screen(pane) == before
    assert not said.exists()


def test_a_session_with_no_process_is_typed_into_while_its_pane_runs_codex(
    panes: Panes, tmp_path: Path
) -> None:
    # The notify program's parent is not named codex (a stand-in under argv[0] `codex`): no
    # process is recorded, and tmux shows the pane running `codex`.
    log = tmp_path / "got"
    panes.start(log, "plain", "codex_notify.py", notify_turn(), "codex", argv0="codex")
    assert status(panes)[SID]["pid"] is None
    rc, _, err = lookout(panes, "say", "api", "hello")
    assert (rc, err) == (0, "")
    wait_for(lambda: log.exists() and log.read_bytes() == b"hello\r", 10, "the text and Enter")


def test_a_notify_program_records_its_codex_parent(panes: Panes, tmp_path: Path) -> None:
    # The agent that ran the notify program is its parent, named codex: its pid is recorded,
    # so steering follows that very process, and the session ends with it (it never did).
    program = tmp_path / "bin" / "codex"
    program.parent.mkdir()
    program.symlink_to(os.path.realpath(sys.executable))  # a process named codex
    log = tmp_path / "got"
    pane = panes.start(log, "plain", "codex_notify.py", notify_turn(), "codex", python=str(program))
    pid = int(panes.tmux("display-message", "-p", "-t", pane, "#{pane_pid}"))
    assert status(panes)[SID]["pid"] == pid
    rc, _, err = lookout(panes, "say", "api", "hello")
    assert (rc, err) == (0, "")
    wait_for(lambda: log.exists() and log.read_bytes() == b"hello\r", 10, "the text and Enter")
    panes.tmux("kill-pane", "-t", pane)
    wait_for(lambda: status(panes)[SID]["status"] == "ended", 10, "the session to end")


def test_a_reused_pid_is_not_the_agent(panes: Panes, tmp_path: Path, state_dir: Path) -> None:
    # T5: the recorded pid runs in the pane, but its start time is not the recorded one: it is
    # another process now (a later command in the same shell), not the agent.
    from lookout.steer import agents, pane

    log = tmp_path / "got"
    target = panes.agent(log, "plain")
    path = state_dir / "sessions" / f"{SID}.json"
    snapshot = json.loads(path.read_text())
    assert isinstance(snapshot["pid_start"], int)
    found = pane.find(snapshot)
    assert found is not None and found.pane == target
    keys = agents.keys("gemini")
    assert keys is not None
    assert pane.not_agent(found, snapshot, keys) is None
    snapshot["pid_start"] += 1
    path.write_text(json.dumps(snapshot))
    assert pane.not_agent(found, snapshot, keys) == (
        "its tmux pane does not run its Gemini CLI process any more (or lookout cannot tell that"
        " it does)"
    )
    rc, _, err = lookout(panes, "say", "api", "hello")
    assert (rc, err.splitlines()[0]) == (1, "error: api (dddd4444) has ended")
    time.sleep(0.2)
    assert not log.exists() or log.read_bytes() == b""


OTHER = "eeee5555-0000-4000-8000-000000000005"
DAEMON = "codex app-server --listen unix:///tmp/codex-app.sock --managed-daemon"
NO_DAEMON = (
    "hint: `codex --no-daemon` runs each Codex session in a process of its own, whose pane lookout"
    " knows; until then, go to its window yourself"
)


@pytest.mark.parametrize("argv0", [DAEMON, None], ids=["app_server", "same_process"])
def test_sessions_of_one_shared_process_have_no_pane_of_their_own(
    panes: Panes, tmp_path: Path, state_dir: Path, argv0: str | None
) -> None:
    # Codex 0.169.0 runs every TUI's sessions, and so their hooks, in one `codex app-server`
    # started by the first TUI: each session records that process and the first window's pane.
    # `say web` typed into api's Codex, and interrupt, jump, prefix a and Focus went there too.
    log = tmp_path / "got"
    bodies = [
        {"session_id": SID, "cwd": "/w/api", "hook_event_name": "Stop"},
        {"session_id": OTHER, "cwd": "/w/web", "hook_event_name": "PreToolUse"}
        | {"tool_name": "Bash", "tool_input": {"command": "make"}},
    ]
    pane = panes.start(log, "plain", "stop.py", json.dumps(bodies), "codex", argv0=argv0)
    pid = int(panes.tmux("display-message", "-p", "-t", pane, "#{pane_pid}"))
    shown = status(panes)
    assert [shown[s]["pid"] for s in (SID, OTHER)] == [pid, pid]
    if argv0 is None:
        why = {
            SID: f"its process (pid {pid}) serves another session too (eeee5555)",
            OTHER: f"its process (pid {pid}) serves another session too (dddd4444)",
        }
        tail = ", in the pane of whichever window started it"
    else:
        why = dict.fromkeys(
            (SID, OTHER), f"its hooks run in Codex's shared `codex app-server` (pid {pid})"
        )
        tail = (
            ", which serves every Codex session started while it runs, in the pane of the window"
            " that started it"
        )
    api = f"error: api (dddd4444): it has no pane of its own: {why[SID]}{tail}"
    web = f"error: web (eeee5555): it has no pane of its own: {why[OTHER]}{tail}"
    for args, error in (
        (("say", "api", "hello"), api),
        (("interrupt", "web"), web),
        (("jump", "web", "--print"), web),
        (("jump", "--print"), api),  # prefix a: api is the one idle session
    ):
        rc, out, err = lookout(panes, *args)
        assert (rc, out, err.splitlines()) == (1, "", [error, NO_DAEMON]), args
    assert [status(panes)[s]["tmux"] for s in (SID, OTHER)] == [None, None]  # not theirs
    rc, out, _ = lookout(panes, "pick", "--print")
    assert rc == 0 and out.count("(no pane of its own: see lookout jump)") == 2, out
    # The desktop alert offers no Focus, and a click on an older one lands nowhere.
    from lookout.errors import LookoutError
    from lookout.jump import focus, locate

    intent = {"kind": "done", "session_id": SID, "agent_id": None}
    assert focus.focus_mark(str(state_dir), intent) is None  # type: ignore[arg-type]
    with pytest.raises(LookoutError, match="it has no pane of its own"):
        locate.jump_to(SID, state_dir=str(state_dir))
    time.sleep(0.2)
    assert not log.exists() or log.read_bytes() == b""
