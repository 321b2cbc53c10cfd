"""Every refusal of `lookout say`, `interrupt` and `start`, through the real entry point, on
sessions the real runner recorded: nothing is typed or sent, exit 1, `error:` and `hint:`."""

from __future__ import annotations

import ast
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from tests.commands.test_main import deliver, lookout
from tests.helpers import shape, short_tmpdir, write_config

pytestmark = pytest.mark.usefixtures("no_notifications")

API = "aaaa1111-0000-4000-8000-000000000001"
WEB = "bbbb2222-0000-4000-8000-000000000002"
ON = "[steer]\nenabled = true\n"


def session(state: Path, sid: str, project: str, event: str = "Stop", **env: str) -> dict[str, Any]:
    body: dict[str, Any] = {"session_id": sid, "cwd": f"/w/{project}", "hook_event_name": event}
    if event in ("PreToolUse", "PermissionRequest"):
        body.update(tool_name="Bash", tool_input={"command": "make test"})
    deliver(state, body, **env)
    return body


def refused(*args: str) -> list[str]:
    done = lookout(*args)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0].startswith("error: ") and len(lines) <= 2, lines
    assert lines[1:] == [] or lines[1].startswith("hint: "), lines
    return [*lines, ""][:2]


def records(state: Path) -> list[dict[str, Any]]:
    path = state / store.EVENTS
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def steered(state: Path) -> list[dict[str, Any]]:
    return [r for r in records(state) if r["event"] == "Steered"]


def test_off_by_default_and_says_how_to_turn_it_on(state_dir: Path) -> None:
    session(state_dir, API, "api")
    for args in (("say", "api", "hello"), ("interrupt", "api"), ("start", "/w/api")):
        error, hint = refused(*args)
        assert error.startswith("error: steering is off ([steer] enabled is not true in ~/")
        assert hint == "hint: add `[steer]` with `enabled = true` to your config (docs/steer.md)"
    assert steered(state_dir) == []


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("hi \x1b[31mred", "a control character (\\x1b U+001B) at character 4 (line 1)"),
        ("ok\r", "a control character (\\x0d U+000D) at character 3 (line 1)"),
        ("tab\there", "a control character (\\x09 U+0009) at character 4 (line 1)"),
        ("a\nb\x07", "a control character (\\x07 U+0007) at character 4 (line 2)"),
        ("rm \u202eboog", "an invisible formatting character (\\u202e RIGHT-TO-LEFT OVERRIDE)"),
        ("yes\u200b", "an invisible formatting character (\\u200b ZERO WIDTH SPACE)"),
        ("x\U000e0041", "an invisible formatting character (\\U000e0041 TAG LATIN CAPITAL"),
        ("p\u2029q", "a line or paragraph separator (\\u2029 PARAGRAPH SEPARATOR)"),
        # What a shown request escapes as invisible (boundary.invisible), beyond format chars.
        ("ok\u3164", "an invisible character (\\u3164 HANGUL FILLER) at character 3"),
        ("y\ufe0fes", "an invisible character (\\ufe0f VARIATION SELECTOR-16) at character 2"),
    ],
)
def test_text_that_could_hide_or_escape_is_refused(state_dir: Path, text: str, shown: str) -> None:
    write_config(ON)
    session(state_dir, API, "api")
    error, hint = refused("say", "api", text)
    assert error.startswith(f"error: the message holds {shown}")
    assert "\x1b" not in error and "\u202e" not in error and "\u200b" not in error
    assert "\u3164" not in error and "\ufe0f" not in error
    assert hint == "hint: remove it; only printable text and newlines are sent"


def test_max_chars_and_empty(state_dir: Path) -> None:
    write_config(ON + "max_chars = 10\n")
    session(state_dir, API, "api")
    error, hint = refused("say", "api", "x" * 11)
    assert error == "error: the message has 11 characters, more than [steer] max_chars (10)"
    assert hint == "hint: send a shorter message, or raise max_chars in [steer]"
    assert refused("say", "api", "  \n ")[0] == "error: the message is empty"


def test_a_short_id_start_or_an_empty_name_names_no_session(state_dir: Path) -> None:
    """T4 (new-user defect 10): `lookout say 7 hi` typed into the session whose id began with 7,
    and `lookout say '' hi` said '' names 2 sessions. An id's start names a session only from
    sessions.MIN_PREFIX (4) characters on, everywhere a SESSION is taken; '' is refused as empty."""
    write_config(ON)
    sid = "7aa31111-0000-4000-8000-000000000001"
    session(state_dir, sid, "api")
    session(state_dir, WEB, "web")
    for command in (("say", "7", "hi"), ("say", "7aa", "hi"), ("interrupt", "7")):
        error, hint = refused(*command)
        assert error == (
            f"error: {command[1]!r} is too short to name a session by the start of its id (4"
            " characters at least)"
        )
        assert hint.startswith("hint: give the start of a session id")
    for command in (("say", "", "hi"), ("interrupt", "")):
        assert refused(*command) == [
            "error: the session name is empty",
            "hint: give the start of a session id (the ID column of `lookout status --all`), a"
            " project or a title",
        ]
    assert steered(state_dir) == []  # nothing reached a session
    # The other commands that take a SESSION, through the same resolver.
    for command in (("jump", "--print", "7"), ("ack", "7"), ("tail", "--session", "7")):
        assert refused(*command)[0].startswith("error: '7' is too short"), command
    for command in (("jump", "--print", ""), ("ack", ""), ("tail", "--session", "")):
        assert refused(*command)[0] == "error: the session name is empty", command
    # Four characters name it.
    error, _ = refused("interrupt", "7aa3")
    assert error == "error: api (7aa31111) is idle: there is no turn to interrupt"


def test_rate_limited_per_surface(state_dir: Path) -> None:
    write_config(ON + "per_minute = 2\n")
    for _ in range(2):
        refused("say", "nosuch", "hello")  # refused, but each attempt counts
    error, hint = refused("say", "nosuch", "hello")
    assert error == (
        "error: terminal: 2 steering actions in the last minute, the most [steer] per_minute allows"
    )
    assert hint.startswith("hint: try again in ") and hint.endswith(" s")
    table = json.loads((state_dir / "steer-rate.json").read_text())
    assert table["v"] == 1 and len(table["surfaces"]["terminal"]) == 2


def test_no_session_and_an_ambiguous_one(state_dir: Path) -> None:
    write_config(ON)
    session(state_dir, API, "api")
    session(state_dir, WEB, "api")
    error, hint = refused("say", "nosuch", "hello")
    assert error == "error: no session 'nosuch' is recorded"
    assert hint.startswith("hint: give the start of a session id")
    error, hint = refused("say", "api", "hello")
    # Both, the most recent first (in the same millisecond, either may be), each by its id.
    one, other = (
        ("bbbb2222", "aaaa1111") if "— bbbb2222, idle;" in error else ("aaaa1111", "bbbb2222")
    )
    assert error == (
        f"error: 'api' names 2 sessions: api (project) — {one}, idle; api (project) — {other}, idle"
    )
    assert hint == f"hint: name one by its id: lookout say {one}"
    assert steered(state_dir) == []


def test_an_ended_session(state_dir: Path) -> None:
    write_config(ON)
    session(state_dir, API, "api", "SessionEnd")
    error, hint = refused("say", "api", "hello")
    assert error == "error: api (aaaa1111) has ended"
    assert hint == "hint: lookout start PROJECT"


def test_never_into_an_open_dialog(state_dir: Path) -> None:
    write_config(ON)
    session(state_dir, API, "api", "PreToolUse")
    session(state_dir, API, "api", "PermissionRequest")
    error, hint = refused("say", "api", "hello")
    assert error == (
        "error: api (aaaa1111) waits on you (permission): lookout will not type into an open"
        " dialog (typed keys would answer it)"
    )
    assert hint == "hint: answer the dialog first (lookout jump, the dashboard, or lookout answer)"
    (line,) = steered(state_dir)
    assert (line["outcome"], line["steer"]["reason"], line["source"]) == (
        "refused",
        "attention",
        "terminal",
    )
    assert (line["status"], line["reason"], line["notify"]) == ("attention", "permission", [])
    # The record moved nothing but seq on: the session still waits, as it did.
    shown = json.loads(lookout("status", "--json").stdout)["sessions"][0]
    assert (shown["status"], shown["reason"]) == ("attention", "permission")


def test_an_agent_lookout_does_not_know_how_to_steer(state_dir: Path) -> None:
    write_config(ON)
    session(state_dir, API, "api", "PreToolUse", LOOKOUT_AGENT="copilot")
    error, hint = refused("say", "api", "hello")
    assert (error, hint) == ("error: lookout does not know how to steer copilot sessions", "")
    assert refused("interrupt", "api")[0] == error


def test_no_way_to_reach_it(state_dir: Path) -> None:
    write_config(ON)
    session(state_dir, API, "api", LOOKOUT_AGENT="gemini")
    error, hint = refused("say", "api", "hello")
    assert error == (
        "error: api (aaaa1111): lookout knows no tmux pane for it (it was not started inside tmux)"
    )
    assert hint == "hint: start your agents inside tmux for lookout to type into them"
    session(state_dir, WEB, "web")  # Claude Code: the inbox is the other way, if it had one
    error, hint = refused("say", "web", "hello")
    assert error == (
        "error: web (bbbb2222): lookout knows no tmux pane for it (it was not started inside"
        " tmux), and its inbox socket cannot be used: Claude Code's registry has no live entry"
        " for it"
    )
    error, _ = refused("say", "--via", "pane", "web", "hello")
    assert error.endswith("it was not started inside tmux)")
    error, _ = refused("interrupt", "web")
    assert error == "error: web (bbbb2222) is idle: there is no turn to interrupt"
    session(state_dir, WEB, "web", "PreToolUse")
    error, hint = refused("interrupt", "web")
    assert error.endswith("it was not started inside tmux)")
    assert hint == "hint: --via socket (Claude Code only)"


def test_a_dead_pane_is_not_typed_into(state_dir: Path, tmp_path: Path) -> None:
    write_config(ON)
    gone = str(tmp_path / "no-tmux-server")
    session(state_dir, API, "api", TMUX=f"{gone},1,0", TMUX_PANE="%3")
    error, _ = refused("say", "--via", "pane", "api", "hello")
    assert error == "error: api (aaaa1111): its tmux pane (or that tmux server) is gone"


def test_a_project_file_cannot_turn_it_on(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "repo"
    (project / ".claude").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / ".claude" / "lookout.toml").write_text(ON)
    done = lookout("check-config", "--project", str(project))
    assert done.returncode == 1
    assert (
        "lookout.toml: steer: is read only from your own config file, never from a project's"
        " (a repository must not turn on typing into your sessions or starting them)"
    ) in done.stderr
    write_config("")
    session(state_dir, API, "api")
    monkeypatch.chdir(project)  # no effect on the user's own config either
    assert refused("say", "api", "hi")[0].startswith("error: steering is off")


def test_check_config_explains_it(state_dir: Path) -> None:
    write_config("")
    assert "steer" not in lookout("check-config").stdout  # no [steer]: as for [fleet], nothing
    write_config("[steer]\nenabled = false\n")
    done = lookout("check-config")
    assert done.stdout.splitlines()[-1] == (
        "steer: off (`lookout say`, `interrupt` and `start` refuse); add `[steer]` with"
        " `enabled = true` to your config (docs/steer.md)"
    )
    write_config(ON + 'agents = ["claude", "gemni"]\nmax_chars = 0\nsend = 1\n')
    done = lookout("check-config")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: ~/.config/lookout/config.toml: steer.send: unknown key (expected one of enabled,"
        " projects, agents, max_chars, per_minute, max_age_s)",
        "error: ~/.config/lookout/config.toml: steer.agents[1]: expected one of claude, codex,"
        " gemini, opencode, got 'gemni' (did you mean 'gemini'?)",
        "error: ~/.config/lookout/config.toml: steer.max_chars: expected 1 to 100000, got 0",
    ]


def test_start_refuses_tmp_and_anything_outside_projects(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "src" / "api"
    mine.mkdir(parents=True)
    (tmp_path / "src" / "link").symlink_to(mine)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    write_config(ON + f'projects = ["{tmp_path}/src/*", "/tmp", "{shared}"]\n')
    error, hint = refused("start", "/tmp")
    assert error == (
        "error: /tmp: /tmp is writable by other users, so a session there could run what someone"
        " else put in it"
    )
    error, hint = refused("start", "/etc")
    assert error.startswith("error: /etc is not one of the projects [steer] allows (")
    assert hint == "hint: add it (or a glob) to projects in [steer], in your own config"
    assert refused("start", str(shared))[0] == (
        f"error: {shared}: {shared} is writable by other users, so a session there could run"
        " what someone else put in it"
    )
    assert refused("start", str(mine / "nope"))[0] == f"error: {mine / 'nope'} is not a directory"
    # An allowed project (through a symlink): the agent must be allowed and found.
    error, hint = refused("start", str(tmp_path / "src" / "link"), "--agent", "codex")
    assert error == "error: [steer] agents does not allow starting codex (allowed: claude)"
    assert hint == "hint: add 'codex' to agents in [steer], in your own config"
    with monkeypatch.context() as patch:
        patch.setenv("PATH", str(tmp_path / "empty"))
        error, hint = refused("start", str(tmp_path / "src" / "link"))
    assert error == "error: Claude Code's program (claude) is not on PATH"
    error, hint = refused("start", str(mine), "--prompt", "/exit")
    assert error == "error: the prompt starts with '/', which Claude Code runs as a command"
    assert steered(state_dir) == []  # nothing started, nothing to record


def test_report_and_suggest_ignore_steered_records(state_dir: Path) -> None:
    write_config(ON)
    session(state_dir, API, "api", "PreToolUse")
    session(state_dir, API, "api", "PermissionRequest")
    deliver(
        state_dir,
        {
            "session_id": API,
            "cwd": "/w/api",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "make test"},
        },
    )

    def read() -> list[dict[str, Any]]:
        docs = [json.loads(lookout(c, "--json").stdout) for c in ("report", "suggest")]
        return [{k: v for k, v in d.items() if k not in ("since", "until")} for d in docs]

    before = read()
    assert before[0]["episodes"] == 1
    refused("say", "api", "hi")  # a Steered line, refused: nothing to type into
    assert len(steered(state_dir)) == 1
    assert read() == before


def test_tail_and_explain_show_steering(state_dir: Path) -> None:
    write_config(ON)
    session(state_dir, API, "api", "PreToolUse")
    session(state_dir, API, "api", "PermissionRequest")
    refused("say", "api", "my password is hunter2")
    (shown,) = [json.loads(x) for x in lookout("tail", "-n", "1", "--json").stdout.splitlines()]
    assert shown["event"] == "Steered"
    assert shown["summary"] == f"say, refused (attention): my password is {shape(7)}"
    assert "Steered" in lookout("tail", "-n", "1").stdout
    assert "hunter2" not in (state_dir / store.EVENTS).read_text()  # masked as alerts are
    explained = lookout("explain", "api").stdout.splitlines()
    assert explained[-2] == "steered (1), oldest first:"
    said = f"say, refused (attention): my password is {shape(7)}  (from terminal)"
    assert explained[-1].endswith(said)
    doc = json.loads(lookout("explain", "api", "--json").stdout)
    assert doc["steered"][0]["result"] == "refused" and doc["steered"][0]["reason"] == "attention"


def test_only_the_owners_surfaces_may_steer(state_dir: Path) -> None:
    # The library every surface calls: a surface it does not know is refused before anything.
    from lookout.steer import core
    from lookout.steer.shapes import SteerError

    write_config(ON)
    session(state_dir, API, "api")
    for source in ("home_assistant", "mqtt", "web"):
        with pytest.raises(SteerError) as info:
            core.say("api", "hello", source=source)
        assert info.value.reason == "surface"
    assert not (state_dir / "steer-rate.json").exists()
    assert steered(state_dir) == []


def test_interrupt_refuses_an_open_dialog_where_esc_was_not_checked(state_dir: Path) -> None:
    # Gemini CLI's interrupt key in a dialog was not checked: nothing is pressed, exit 1.
    write_config(ON)
    session(state_dir, API, "api", "PreToolUse", LOOKOUT_AGENT="gemini")
    session(state_dir, API, "api", "PermissionRequest", LOOKOUT_AGENT="gemini")
    shown = json.loads(lookout("status", "--json").stdout)["sessions"][0]
    assert shown["status"] == "attention", shown
    error, hint = refused("interrupt", "api")
    assert error == (
        f"error: api (aaaa1111) waits on you ({shown['reason']}): its interrupt key would answer"
        " the dialog, and what Gemini CLI makes of that was not checked"
    )
    assert hint == (
        "hint: answer the dialog first (Deny stops the turn): lookout jump, the dashboard, or"
        " lookout answer"
    )
    (line,) = steered(state_dir)
    assert (line["outcome"], line["steer"]["reason"]) == ("refused", "attention")


@pytest.fixture
def live_pid() -> Iterator[int]:
    """A live process standing for the agent (silence proves `stuck` only of a live one)."""
    proc = subprocess.Popen(["sleep", "120"])
    yield proc.pid
    proc.kill()
    proc.wait()


def stuck(state: Path, sid: str, project: str, pid: int, agent: str) -> None:
    """A session whose turn began an hour ago and said nothing since: reconcile makes it
    `attention` `stuck` (the first reader does, as `say` is)."""
    write_config(ON + "[sessions]\nstuck_after_s = 600\n")
    body = {"session_id": sid, "cwd": f"/w/{project}", "hook_event_name": "UserPromptSubmit"}
    env = {"CLAUDE_PID": str(pid), "CLAUDE_CODE_ENTRYPOINT": "cli", "LOOKOUT_AGENT": agent}
    deliver(state, {**body, "prompt": "refactor"}, ts_ms=int(time.time() * 1000) - 3_600_000, **env)
    shown = json.loads(lookout("status", "--json").stdout)["sessions"][0]
    assert (shown["status"], shown["reason"]) == ("attention", "stuck"), shown


def test_a_failed_turn_is_no_dialog_it_takes_a_message_as_idle(state_dir: Path) -> None:
    # A turn that failed (an API error, a usage limit: the limit_lifted alert says "send a
    # prompt to continue") waits in attention `error` with no dialog on screen.
    write_config(ON)
    session(state_dir, API, "api", "UserPromptSubmit")
    failed = {"session_id": API, "cwd": "/w/api", "hook_event_name": "StopFailure"}
    deliver(state_dir, {**failed, "error": "rate_limit"})
    shown = json.loads(lookout("status", "--json").stdout)["sessions"][0]
    assert (shown["status"], shown["reason"]) == ("attention", "error")
    error, _ = refused("say", "api", "continue")
    # Past the state check, on to the way (no pane, no live inbox here): not "waits on you".
    assert error == (
        "error: api (aaaa1111): lookout knows no tmux pane for it (it was not started inside"
        " tmux), and its inbox socket cannot be used: Claude Code's registry has no live entry"
        " for it"
    )
    # As an idle session: no turn to interrupt.
    error, _ = refused("interrupt", "api")
    assert error == "error: api (aaaa1111) is idle: there is no turn to interrupt"
    assert [r["steer"]["reason"] for r in steered(state_dir)] == ["no_way", "idle"]


def test_a_stuck_session_is_no_dialog_it_is_working(state_dir: Path, live_pid: int) -> None:
    # `stuck` is inferred from silence: nothing on screen is known to wait; Gemini CLI queues
    # what is typed during a turn, so `say` goes on to the way (none known here).
    stuck(state_dir, API, "api", live_pid, "gemini")
    error, _ = refused("say", "api", "are you there?")
    assert error == (
        "error: api (aaaa1111): lookout knows no tmux pane for it (it was not started inside tmux)"
    )
    (line,) = steered(state_dir)
    assert line["steer"]["reason"] == "no_way"


@pytest.mark.parametrize("agent", ["codex", "opencode"])
def test_say_to_a_working_codex_or_opencode_is_not_refused_for_working(
    state_dir: Path, agent: str
) -> None:
    # Issue 41: both queue what is typed during a turn (checked with the real clients,
    # tests/e2e): `say` goes on to find the way (here none: no pane), instead of refusing.
    write_config(ON)
    session(state_dir, API, "api", "PreToolUse", LOOKOUT_AGENT=agent)
    shown = json.loads(lookout("status", "--json").stdout)["sessions"][0]
    assert (shown["agent"], shown["status"]) == (agent, "working")
    error, _ = refused("say", "api", "also run the linter")
    no_pane = "lookout knows no tmux pane for it (it was not started inside tmux)"
    assert error == f"error: api (aaaa1111): {no_pane}"
    (line,) = steered(state_dir)
    assert (line["outcome"], line["steer"]["reason"]) == ("refused", "no_way")


def test_a_stuck_codex_session_counts_as_working(state_dir: Path, live_pid: int) -> None:
    # Not a dialog (that would refuse, "waits on you"): a turn that may still run, so typed.
    stuck(state_dir, API, "api", live_pid, "codex")
    error, _ = refused("say", "api", "are you there?")
    assert error.startswith("error: api (aaaa1111): lookout knows no tmux pane for it")


# A stand-in for tmux on PATH: one pane (%3) showing `ready> ` and what was typed into it, its
# process FAKE_TMUX_PANE_PID; every other command fails as tmux does when the pane is gone. Its
# calls go to FAKE_TMUX_STATE.log.
FAKE_TMUX = """#!{python}
import os, sys
args = sys.argv[3:]  # past -S SOCKET
state = os.environ["FAKE_TMUX_STATE"]
with open(state + ".log", "a") as f:
    f.write(repr(args) + "\\n")
if args[0] == "list-panes":
    print("%3\\x1fmain\\x1f1\\x1f$1")
elif args[0] == "capture-pane":
    print("ready> " + (open(state).read() if os.path.exists(state) else ""))
elif args[0] == "display-message" and "pane_current_command" in args[-1]:
    print(os.environ.get("FAKE_TMUX_COMMAND", "gemini") + "\x1f")  # what the pane runs
elif args[0] == "display-message":
    print(os.environ.get("FAKE_TMUX_PANE_PID", ""))
elif args[0] == "send-keys" and "-l" in args:
    open(state, "w").write(args[-1])
elif args[0] in ("load-buffer", "paste-buffer"):
    sys.stdin.buffer.read() if args[0] == "load-buffer" else None
else:
    sys.stderr.write("can't find pane: %3\\n")
    sys.exit(1)
"""


@pytest.fixture
def fake_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """(the server's socket: a real Unix socket, private; the file what was typed goes to)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tmux").write_text(FAKE_TMUX.format(python=sys.executable))
    (bin_dir / "tmux").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_TMUX_STATE", str(tmp_path / "typed"))
    home = short_tmpdir("lk-tmux-")
    path = str(home / "default")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.close()
    yield path, tmp_path / "typed"
    shutil.rmtree(home)


def test_a_tmux_failure_after_the_text_is_recorded(
    state_dir: Path, fake_tmux: tuple[str, Path]
) -> None:
    # The text went in, then the pane was gone before Enter: tmux's own error, recorded as a
    # failed say (it was not, when tmux failed otherwise than with its server gone).
    write_config(ON)
    sock, typed = fake_tmux
    session(state_dir, API, "api", LOOKOUT_AGENT="gemini", TMUX=f"{sock},1,0", TMUX_PANE="%3")
    error, hint = refused("say", "api", "hello")
    assert typed.read_text() == "hello"
    assert error == "error: pane %3: tmux send-keys failed: can't find pane: %3"
    assert hint == "hint: look at the pane: lookout jump (what was typed may be in its box)"
    (line,) = steered(state_dir)
    assert (line["outcome"], line["steer"]["reason"]) == ("failed", "failed")


def unix_socket(path: Path) -> str:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()
    return str(path)


@pytest.mark.parametrize("kind", ["shared_dir", "not_a_socket"])
def test_a_tmux_socket_that_is_not_the_users_own_is_never_typed_into(
    state_dir: Path, fake_tmux: tuple[str, Path], kind: str
) -> None:
    # The hook's $TMUX names the server; a repository's settings `env` can set it. A socket in a
    # directory others can write (or no socket at all) could be another user's server.
    write_config(ON)
    _, typed = fake_tmux
    home = short_tmpdir("lk-shared-")
    try:
        if kind == "shared_dir":
            home.chmod(0o777)
            path = unix_socket(home / "default")
            why = f"{home} can be written by another user"
        else:
            path = str(home / "default")
            Path(path).write_text("")
            why = f"{path} is not a socket"
        session(state_dir, API, "api", LOOKOUT_AGENT="gemini", TMUX=f"{path},1,0", TMUX_PANE="%3")
        for args in (("say", "api", "hello"), ("say", "--via", "pane", "api", "hello")):
            error, hint = refused(*args)
            assert error == (
                f"error: api (aaaa1111): lookout will not type into its tmux server: {why}"
            )
            assert hint == (
                "hint: its hooks recorded that server from $TMUX (a project's settings `env` can"
                " set it): type into the session yourself, and check where TMUX comes from"
            )
        assert not Path(str(typed) + ".log").exists()  # tmux was never run
        assert [r["steer"]["reason"] for r in steered(state_dir)] == ["no_way", "no_way"]
        # `lookout jump` will not switch a client of that server either.
        done = lookout("jump", "api", "--print")
        assert done.returncode == 1
        assert done.stderr.splitlines()[0] == (
            f"error: api (aaaa1111): lookout will not use its tmux server: {why}"
        )
    finally:
        shutil.rmtree(home)


def test_a_pane_whose_process_cannot_be_followed_to_the_agent_is_not_typed_into(
    state_dir: Path, fake_tmux: tuple[str, Path], live_pid: int
) -> None:
    # A pid was recorded, but tmux names no process for the pane: it cannot be shown to run the
    # session's agent, so nothing is typed (it was typed).
    write_config(ON)
    sock, typed = fake_tmux
    env = {"LOOKOUT_AGENT": "gemini", "CLAUDE_PID": str(live_pid)}
    session(state_dir, API, "api", TMUX=f"{sock},1,0", TMUX_PANE="%3", **env)
    error, _ = refused("say", "--via", "pane", "api", "hello")
    assert error == (
        "error: api (aaaa1111): its tmux pane does not run its Gemini CLI process any more (or"
        " lookout cannot tell that it does)"
    )
    assert not typed.exists()


def test_a_pane_of_a_session_with_no_process_is_typed_into_only_while_it_runs_the_agent(
    state_dir: Path, fake_tmux: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 38, T2: no pid recorded (Codex through `notify`) was taken as "the pane is all there
    # is", so a shell back in the pane got the text and Enter. tmux must show the agent's program
    # there now (the real tmux and a real shell: tests/steer/test_pane.py).
    write_config(ON)
    sock, typed = fake_tmux
    session(state_dir, API, "api", LOOKOUT_AGENT="codex", TMUX=f"{sock},1,0", TMUX_PANE="%3")
    monkeypatch.setenv("FAKE_TMUX_COMMAND", "bash")
    error, hint = refused("say", "api", "hello")
    assert error == (
        "error: api (aaaa1111): lookout cannot tell that its tmux pane still runs OpenAI Codex: no"
        " process of it was recorded, and the pane runs 'bash' now"
    )
    assert hint == "hint: lookout jump shows what its pane runs now; if it is the agent, type there"
    assert not typed.exists()
    monkeypatch.setenv("FAKE_TMUX_COMMAND", "codex")
    lookout("say", "api", "hello")  # this stand-in fails Enter (the test above)
    assert typed.read_text() == "hello"


def test_each_long_text_goes_through_a_tmux_buffer_of_its_own(
    fake_tmux: tuple[str, Path],
) -> None:
    # Two long texts to two panes of one server from one process (the dashboard's threads): each
    # loads and pastes a buffer no other call names (one name per process let one paste the
    # other's text).
    from lookout.jump.tmux import Pane
    from lookout.steer import pane

    sock, typed = fake_tmux
    for target in ("%3", "%4"):
        pane.type_text(Pane(sock, target, "main", 1, "$1"), "x" * (pane.SEND_KEYS_MAX_BYTES + 1))
    calls = [ast.literal_eval(line) for line in Path(str(typed) + ".log").read_text().splitlines()]
    loads = [c[c.index("-b") + 1] for c in calls if c[0] == "load-buffer"]
    pastes = [(c[c.index("-b") + 1], c[c.index("-t") + 1]) for c in calls if c[0] == "paste-buffer"]
    assert len(set(loads)) == 2
    assert pastes == [(loads[0], "%3"), (loads[1], "%4")]


@pytest.mark.parametrize("prompt", ["\n/exit", " \n !rm -rf x"])
def test_a_command_after_leading_newlines_is_still_a_command(state_dir: Path, prompt: str) -> None:
    write_config(ON)
    session(state_dir, API, "api")
    error, hint = refused("start", "/w/api", "--prompt", prompt)
    assert error.startswith("error: the prompt starts with '"), error
    assert hint == "hint: start it with another character"
