"""Steering the real clients (issue 33): the pinned Claude Code 2.1.332 in a private tmux server
against the loopback mock API, and the pinned Gemini CLI, driven by the installed `lookout say`,
`interrupt` and `start`. What the model is given is read from the mock's request log: a message
typed into the pane is the user's own turn; one sent to the inbox socket is framed by the client
as a message from another Claude session."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import reconcile
from tests.web.conftest import browser_sign_in, start_serve
from tests.web.test_browser import until

from ..receivers import require
from . import npm_client  # imported at collection: it reads the environment before fixtures
from .harness import ClaudePane, Sandbox, describe, wait_for
from .mock_api import DIRECTIVE, MockAPI, Reply, scripted_reply
from .test_gemini import MODEL as GEMINI_MODEL
from .test_gemini import VERSION as GEMINI_VERSION
from .test_gemini import GeminiAPI
from .test_gemini import Machine as GeminiMachine

pytestmark = pytest.mark.e2e

LOOP = "for i in 1 2 3 4 5 6; do sleep 5; done"  # 30 s (a standalone long sleep is blocked)
PEER = "Another Claude session sent a message"
ANSWER = "\u25cf "  # how Claude Code shows the model's answer (the prompt shows the directive too)


class LatestPrompt(MockAPI):
    """The mock, scripted by the conversation's latest prompt that carries a directive (the
    default follows the first): each steered message starts a script of its own."""

    def reply_for(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.queued:  # fail_next
                return self.queued.popleft()
        messages = body.get("messages", [])
        latest = 0
        for i, m in enumerate(messages):
            if m["role"] == "user" and DIRECTIVE.search(_texts(m)):
                latest = i
        return scripted_reply({**body, "messages": messages[latest:]})

    def user_texts(self) -> list[str]:
        """Every text block of the user's turns the model was given, in order, once each."""
        seen: list[str] = []
        for body in self.requests:
            for m in body.get("messages", []):
                if m["role"] == "user":
                    for block in _blocks(m):
                        if block.get("type") == "text" and block["text"] not in seen:
                            seen.append(block["text"])
        return seen


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def _texts(message: dict[str, Any]) -> str:
    return "\n".join(b.get("text", "") for b in _blocks(message) if b.get("type") == "text")


@pytest.fixture
def mock_api() -> Iterator[LatestPrompt]:
    with LatestPrompt() as api:
        yield api


@pytest.fixture
def steering(sandbox: Sandbox) -> Sandbox:
    require("tmux")
    sandbox.trust_project(idle_ms=2000)
    sandbox.config.write_text(f'[steer]\nenabled = true\nprojects = ["{sandbox.project}"]\n')
    return sandbox


def lookout(
    sandbox: Sandbox, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*sandbox.install.lookout, *args],
        env=env or sandbox.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def outcome(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def ts_ms(record: dict[str, Any]) -> float:
    from datetime import datetime

    return datetime.fromisoformat(record["ts"].replace("Z", "+00:00")).timestamp() * 1000


def test_say_through_the_pane_is_the_users_own_message(
    steering: Sandbox, mock_api: LatestPrompt
) -> None:
    with ClaudePane(steering, "--permission-mode", "manual") as pane:
        session = pane.ready()
        text = 'steer me; say "it" [[say: steered answer]]'
        out = outcome(lookout(steering, "say", session[:8], text, "--json"))
        assert (out["via"], out["target"], out["keys"]) == (
            "pane",
            f"e2e:0.{pane.pane_id}",
            ["Enter"],
        )
        assert (out["text"], out["result"], out["session_id"]) == (text, "delivered", session)
        pane.wait_screen(ANSWER + "steered answer")
        assert text in mock_api.user_texts()  # the user's own turn, exactly as typed
        assert not any(PEER in t for t in mock_api.user_texts())
        prompt = steering.wait_event(session, "UserPromptSubmit")
        assert prompt["summary"] == text
        steered = steering.wait_event(session, "Steered")
        assert (steered["source"], steered["outcome"], steered["steer"]["via"]) == (
            "terminal",
            "delivered",
            "pane",
        )
        # Multi-line: one message (LF is a newline in Claude Code's box, Enter sends it).
        two = "first line\nsecond line [[say: two lines seen]]"
        assert outcome(lookout(steering, "say", session, two, "--json"))["result"] == "delivered"
        pane.wait_screen(ANSWER + "two lines seen")
        assert two in mock_api.user_texts()
        steering.assert_no_errors()


def test_say_via_the_inbox_socket_is_framed_as_another_session(
    steering: Sandbox, mock_api: LatestPrompt
) -> None:
    with ClaudePane(steering, "--permission-mode", "manual") as pane:
        session = pane.ready()
        text = "from the socket [[say: socket answer]]"
        out = outcome(lookout(steering, "say", "--via", "socket", session, text, "--json"))
        assert (out["via"], out["result"], out["keys"]) == ("socket", "delivered", [])
        assert out["target"].endswith(".sock")
        pane.wait_screen(ANSWER + "socket answer")
        framed = [t for t in mock_api.user_texts() if text in t]
        assert framed and framed[0].startswith(f"{PEER}:\n{text}\n\nThis came from another")
        assert "not typed by your user" in framed[0]
        assert text not in mock_api.user_texts()  # never as the user's own turn
        steering.assert_no_errors()


def test_a_session_lookout_knows_no_pane_of_gets_it_through_its_inbox(
    steering: Sandbox, mock_api: LatestPrompt, tmp_path: Path
) -> None:
    # The same client, but its hooks cannot see tmux: no pane is recorded.
    wrapper = tmp_path / "claude-outside-tmux"
    wrapper.write_text(f'#!/bin/sh\nunset TMUX TMUX_PANE\nexec "{steering.claude}" "$@"\n')
    wrapper.chmod(0o755)
    outside = dataclasses.replace(steering, claude=wrapper)
    with ClaudePane(outside, "--permission-mode", "manual") as pane:
        session = pane.ready()
        assert steering.session_status(session)["tmux"] is None
        done = lookout(steering, "say", session, "no pane here [[say: inbox answer]]")
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith(f"{steering.session_status(session)['title']} (")
        assert ": sent to its inbox socket " in lines[0]
        assert lines[0].endswith((": delivered (working)", ": delivered (idle)"))
        assert lines[-1].startswith("note: sent to its inbox: Claude Code shows it to the model")
        pane.wait_screen(ANSWER + "inbox answer")
        assert any(t.startswith(f"{PEER}:\nno pane here") for t in mock_api.user_texts())
        steering.assert_no_errors()


def test_say_after_a_usage_limit_lifted_is_delivered(
    steering: Sandbox, mock_api: LatestPrompt
) -> None:
    # Issue 38: after a failed turn Claude Code shows a dim placeholder in its input box
    # ("Resend your message to try again"): no draft of the user's, so `say` types.
    mock_api.fail_next(
        429, message="Rate limited. Please try again in 3s.", headers={"retry-after": "3"}
    )
    with ClaudePane(steering, "--permission-mode", "manual") as pane:
        session = pane.ready()
        pane.type("hello")
        steering.wait_event(session, "StopFailure", timeout=30)

        def lifted() -> bool:
            steering.session_status(session)  # a reader records what time proves
            return any(r.get("outcome") == "limit_lifted" for r in steering.records(session))

        wait_for(lifted, 60, "the limit_lifted record")
        shown = steering.session_status(session)
        assert (shown["status"], shown["reason"], shown["detail"]) == (
            "attention",
            "error",
            "rate_limit",
        ), shown
        # The box shows the dim placeholder (the cursor over its first letter).
        styled = pane.tmux("capture-pane", "-p", "-e", "-t", "e2e")
        assert "\x1b[7mR\x1b[0;2m" in styled and "esend your message to try again" in styled
        text = "continue after the limit [[say: limit over]]"
        out = outcome(lookout(steering, "say", session, text, "--json"))
        assert (out["via"], out["result"]) == ("pane", "delivered"), out
        pane.wait_screen(ANSWER + "limit over", timeout=30)
        assert text in mock_api.user_texts()
        steering.assert_no_errors()


def dialog(screen: str) -> list[str]:
    """The dialog on screen: from the rule above it to the end."""
    lines = screen.rstrip("\n").split("\n")
    top = max(i for i, line in enumerate(lines) if line.strip() and set(line.strip()) == {"\u2500"})
    assert "Do you want" in "\n".join(lines[top:])
    return lines[top:]


def test_say_into_an_open_permission_dialog_is_refused_and_the_dialog_unchanged(
    steering: Sandbox,
) -> None:
    with ClaudePane(steering, "--permission-mode", "manual") as pane:
        session = pane.ready()
        pane.type("[[write: steer-probe.txt|x]]")
        pane.wait_screen("Do you want to")
        steering.wait_event(session, "PermissionRequest", timeout=10)
        before = dialog(pane.screen())
        for via in ((), ("--via", "socket")):
            done = lookout(steering, "say", *via, session, "hello")
            assert done.returncode == 1
            assert "waits on you (permission): lookout will not type into an open dialog" in (
                done.stderr
            )
            assert done.stderr.splitlines()[1] == (
                "hint: answer the dialog first (lookout jump, the dashboard, or lookout answer)"
            )
        assert dialog(pane.screen()) == before  # (the logo above it animates)
        assert not (steering.project / "steer-probe.txt").exists()
        assert steering.session_status(session)["status"] == "attention"
        refusals = [r for r in steering.records(session) if r["event"] == "Steered"]
        assert [r["outcome"] for r in refusals] == ["refused", "refused"]
        steering.assert_no_errors()


def test_interrupt_stops_a_long_command_within_two_seconds(steering: Sandbox) -> None:
    with ClaudePane(steering, "--permission-mode", "manual", "--allowedTools", "Bash") as pane:
        session = pane.ready()
        pane.type(f"[[bash: {LOOP}]] [[say: loop done]]")
        steering.wait_event(session, "PreToolUse", timeout=15)
        pid = steering.session_status(session)["pid"]
        wait_for(lambda: reconcile.running_commands(pid), 10, "the loop running")
        out = outcome(lookout(steering, "interrupt", session, "--json"))
        assert (out["keys"], out["result"], out["status"]) == (["Escape"], "interrupted", "idle")
        pane.wait_screen("Interrupted")
        steered = steering.wait_event(session, "Steered")
        stopped = next(
            r
            for r in steering.records(session)
            if r["event"] != "Steered" and r["status"] == "idle" and ts_ms(r) >= ts_ms(steered)
        )
        # Measured from the records' own time stamps: Esc sent -> the session seen idle.
        assert ts_ms(stopped) - ts_ms(steered) <= 2000, (steered, stopped)
        assert reconcile.running_commands(pid) == []
        shown = steering.session_status(session)
        assert (shown["status"], shown["alive"]) == ("idle", True)
        registry = json.loads(
            next((steering.home / ".claude" / "sessions").glob("*.json")).read_text()
        )
        assert registry["status"] == "idle"  # the client's own word agrees
        assert ANSWER + "loop done" not in pane.screen()
        steering.assert_no_errors()


def test_say_to_a_working_session_is_queued_until_the_model_takes_it(
    steering: Sandbox, mock_api: LatestPrompt
) -> None:
    # Issue 38: 2.1.332 fires UserPromptSubmit as it queues a message typed during a turn (the
    # pane shows "Queued"); the model gets it only at its next step: `say` reports queued.
    with ClaudePane(steering, "--permission-mode", "manual", "--allowedTools", "Bash") as pane:
        session = pane.ready()
        pane.type("[[bash: for i in 1 2 3 4; do sleep 2; done]] [[say: loop done]]")
        steering.wait_event(session, "PreToolUse", timeout=15)
        pid = steering.session_status(session)["pid"]
        wait_for(lambda: reconcile.running_commands(pid), 10, "the loop running")
        text = "one more thing while you work"
        out = outcome(lookout(steering, "say", session, text, "--json"))
        assert (out["via"], out["result"], out["status"]) == ("pane", "queued", "working"), out
        assert any(r["summary"] == text for r in steering.records(session)
                   if r["event"] == "UserPromptSubmit")  # fmt: skip
        # The model gets it once the command returns, as a message sent while it worked.
        wait_for(lambda: any(text in t for t in mock_api.user_texts()), 60, "the model taking it")
        steered = steering.wait_event(session, "Steered")
        assert (steered["outcome"], steered["steer"]["action"]) == ("queued", "say")
        steering.assert_no_errors()


def test_start_opens_a_session_in_an_allowed_project_and_refuses_others(
    steering: Sandbox, mock_api: LatestPrompt
) -> None:
    with ClaudePane(steering, "--permission-mode", "manual") as pane:
        first = pane.ready()
        socket = pane.tmux("display-message", "-p", "#{socket_path}").strip()
        env = steering.env(
            TMUX=f"{socket},1,0",
            TMUX_PANE=pane.pane_id,
            PATH=f"{steering.claude.parent}:{os.environ['PATH']}",
        )
        prompt = "-- begin here [[say: started and answered]]"
        out = outcome(
            lookout(steering, "start", str(steering.project), "--prompt", prompt, "--json", env=env)
        )
        assert out["session_id"] != first
        assert (out["agent"], out["via"], out["text"], out["result"]) == (
            "claude",
            "pane",
            prompt,
            "started",
        )
        assert out["target"].startswith("e2e:1.%")
        new_pane = out["target"].rpartition(".")[2]
        wait_for(
            lambda: (
                ANSWER + "started and answered" in pane.tmux("capture-pane", "-p", "-t", new_pane)
            ),
            30,
            "the started session's answer",
        )
        assert prompt in mock_api.user_texts()  # as data: "--" and all, no option, no shell
        shown = steering.session_status(out["session_id"])
        assert (shown["cwd"], shown["tmux"]["pane"]) == (str(steering.project), new_pane)
        # Named as status names it: the client's own title for it (issue 38), e.g. project-21.
        assert out["session"] == f"{shown['title']} ({out['session_id'][:8]})", (out, shown)
        started = [r for r in steering.records(out["session_id"]) if r["event"] == "Steered"]
        assert [(r["steer"]["action"], r["outcome"]) for r in started] == [("start", "started")]
        outside = steering.root / "outside"
        outside.mkdir()
        for where in ("/tmp", str(outside)):
            done = lookout(steering, "start", where, env=env)
            assert done.returncode == 1 and done.stderr.startswith(f"error: {where}")
        assert pane.tmux("list-windows", "-F", "#{window_index}").split() == ["0", "1"]
        steering.assert_no_errors()


def test_a_message_from_the_dashboard_is_the_users_own(
    steering: Sandbox, mock_api: LatestPrompt, browser: Any
) -> None:
    # The card's message box in a real Chromium, signed in with the one-time link, through the
    # same core: the model gets it as the user's own turn, and the page shows what went where.
    served = start_serve(env={**os.environ, **steering.env()})
    try:
        with ClaudePane(steering, "--permission-mode", "manual") as pane:
            session = pane.ready()
            browser_sign_in(browser, served, served.login)
            box = f'[data-steer="{session}"]'
            until(browser, f"document.querySelector('{box} textarea')", 20)
            text = 'from the dashboard; "quoted" <b>as text</b> [[say: dashboard answer]]'
            browser.find_element("css selector", f"{box} textarea").send_keys(text)
            browser.find_element("css selector", f"{box} .steer-send").click()
            clicked = time.monotonic()
            done = f"document.querySelector('{box} .steer-result').dataset.kind === 'done'"
            until(browser, done, 20)  # the outcome comes once its prompt hook fired
            shown = time.monotonic()
            answered = pane.wait_screen(ANSWER + "dashboard answer")
            print(f"click -> outcome shown {shown - clicked:.2f} s, -> answer on screen"
                  f" {answered - clicked:.2f} s")  # fmt: skip
            assert text in mock_api.user_texts()  # the user's own turn, exactly as typed
            assert not any(PEER in t for t in mock_api.user_texts())
            lines = browser.execute_script(
                f"return [...document.querySelectorAll('{box} .steer-line')]"
                ".map(l => l.textContent)"
            )
            name = steering.session_status(session)["title"]
            head = f"{name} ({session[:8]}): typed into tmux pane e2e:0.{pane.pane_id}, then Enter"
            assert lines[0] in (f"{head}: delivered (working)", f"{head}: delivered (idle)")
            assert lines[1:] == [f"text: {text}"]
            steered = steering.wait_event(session, "Steered")
            assert (steered["source"], steered["outcome"], steered["steer"]["via"]) == (
                "dashboard",
                "delivered",
                "pane",
            )
            steering.assert_no_errors()
    finally:
        served.stop()


# -- one more real agent: Gemini CLI through its pane ---------------------------------------------


@dataclasses.dataclass
class GeminiPane:
    """Gemini CLI interactive in a private tmux server, lookout installed for it."""

    machine: GeminiMachine
    screen: npm_client.Tmux
    env: dict[str, str]
    session: str

    def lookout(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.machine.home / ".local" / "bin" / "lookout"), *args],
            env=self.env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip


@contextlib.contextmanager
def gemini_pane(tmp_path: Path, api: GeminiAPI, config: str = "") -> Iterator[GeminiPane]:
    require("tmux")
    gemini = npm_client.ensure("@google/gemini-cli", GEMINI_VERSION, "gemini-cli", "gemini")
    machine = GeminiMachine(tmp_path / "user", gemini, api)
    machine.install()
    path = machine.home / ".config" / "lookout" / "config.toml"
    path.write_text(path.read_text() + "\n[steer]\nenabled = true\n" + config)
    screen = npm_client.Tmux(machine.root, "steer-gemini")
    env = {
        **machine.env(),
        # Where the machine's own lookout keeps them (the test process's may differ).
        "LOOKOUT_STATE_DIR": str(machine.home / ".local" / "state" / "lookout"),
        "LOOKOUT_CONFIG": str(path),
        # Gemini CLI runs headless (and exits: no prompt on stdin) when CI=true, as in .ci/run.
        "CI": "false",
    }
    pairs = [x for key, value in env.items() for x in ("-e", f"{key}={value}")]
    try:
        # remain-on-exit: should Gemini CLI exit, its last screen stays for the failure.
        screen.tmux(
            "start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
            "new-session", "-d", "-s", "e2e", "-x", "160", "-y", "50", "-c",
            str(machine.project), *pairs,
            str(gemini), "-m", GEMINI_MODEL, "--approval-mode", "yolo",
        )  # fmt: skip
        screen.wait_for("Type your message")
        session = machine.wait("idle")["session_id"]
        yield GeminiPane(machine, screen, env, session)
    finally:
        # Gemini CLI outlives its tmux server: end its process group (the pane's) first.
        with contextlib.suppress(RuntimeError, ValueError, ProcessLookupError):
            os.killpg(int(screen.tmux("display-message", "-p", "-t", "e2e", "#{pane_pid}")), 9)
        screen.kill()


def test_gemini_cli_steered_through_its_pane(tmp_path: Path) -> None:
    with GeminiAPI("sleep 8") as api, gemini_pane(tmp_path, api) as g:
        machine, screen, session = g.machine, g.screen, g.session

        def say(text: str) -> dict[str, Any]:
            return outcome(g.lookout("say", session, text, "--json"))

        def prompts() -> list[str]:
            return [r["summary"] for r in machine.records() if r["event"] == "UserPromptSubmit"]

        out = say("hello gemini")
        assert (out["via"], out["result"], out["agent"]) == ("pane", "delivered", "gemini")
        assert "hello gemini" in prompts()
        machine.wait("idle")
        out = say("USE_TOOL now")  # a turn running `sleep 8`
        machine.wait("working")
        out = say("queued for later")  # Gemini queues typed text until the turn ends
        assert out["result"] in ("queued", "delivered")
        screen.wait_for("Queued")
        wait_for(lambda: "queued for later" in prompts(), 30, "the queued prompt")
        assert prompts().index("queued for later") > prompts().index("USE_TOOL now")
        # A tool turn again (the prompt history says USE_TOOL): Esc cancels it.
        machine.wait("working")
        stopped = outcome(g.lookout("interrupt", session, "--json"))
        assert (stopped["keys"], stopped["result"]) == (["Escape"], "sent")
        screen.wait_for("Request cancelled")
    assert machine.errors() == ""


def test_gemini_cli_interrupted_by_lookout_is_idle_and_never_stuck(tmp_path: Path) -> None:
    # Issue 38: Gemini CLI fires no hook for a cancelled turn. lookout pressed Esc itself: the
    # turn is over (idle, evidence steer), and no `stuck` comes stuck_after_s later, neither
    # to a reader nor from the sender's timers (a rule sends stuck alerts to a recorder).
    from tests.helpers import calls, recorder

    prog, log = recorder(tmp_path)
    config = (
        f'[channels.log]\ntype = "command"\nargv = ["{prog}", "{{kind}}"]\n'
        '[[rules]]\nwhen = ["stuck"]\nchannels = ["log"]\n'
        "[sessions]\nstuck_after_s = 2\n"
    )
    with GeminiAPI("sleep 12") as api, gemini_pane(tmp_path, api, config) as g:
        assert outcome(g.lookout("say", g.session, "USE_TOOL now", "--json"))["result"] in (
            "delivered",
            "queued",
        )
        g.machine.wait("working")
        wait_for(
            lambda: any(r["event"] == "PreToolUse" for r in g.machine.records()), 30, "the tool"
        )
        stopped = outcome(g.lookout("interrupt", g.session, "--json"))
        assert (stopped["keys"], stopped["result"], stopped["status"]) == (
            ["Escape"],
            "sent",
            "idle",
        ), stopped
        g.screen.wait_for("Request cancelled")
        steered = next(
            r
            for r in g.machine.records()
            if r["event"] == "Steered" and r["steer"]["action"] == "interrupt"
        )
        said = next(r for r in g.machine.records() if r.get("source") == "steer")
        assert (said["event"], said["outcome"], said["ts"]) == (
            "Reconciled",
            "interrupted",
            steered["ts"],
        )
        # stuck_after_s (and more) past the press, by the record's own time: still idle.
        pressed = ts_ms(steered) / 1000
        wait_for(lambda: time.time() > pressed + 6, 20, "stuck_after_s to pass")
        shown = next(s for s in g.machine.status() if s["session_id"] == g.session)
        assert (shown["status"], shown["evidence"]) == ("idle", "steer"), describe(
            g.machine.records()
        )
        assert not [r for r in g.machine.records() if r.get("outcome") == "stuck"]
        assert calls(log) == []
        assert g.machine.errors() == ""
