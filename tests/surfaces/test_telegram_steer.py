"""Steering from Telegram (issue 33) through the real processes: a hook raises a session's alert,
the detached sender sends it to the Bot API double (tests/telegram_api.py) and remembers its
session, the detached poller takes the owner's messages: a reply to the alert, /stop, /new,
/sessions. The pane is a real tmux pane running the stand-in agent of tests/steer."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import events, store
from lookout.surfaces import telegram as poller
from tests.commands.test_main import deliver, lookout
from tests.helpers import ROOT, lock_free, wait_for, write_config
from tests.receivers import require
from tests.remote.test_decide import finish, record_hook, start, waiting
from tests.steer.test_pane import SID, Panes, fake_program
from tests.telegram_api import BotApi, channel_table

pytestmark = pytest.mark.real

TOKEN = "123456:AAH-test-token-for-the-double"
CHAT, OTHER_CHAT, OWNER, STRANGER = 1001, 2002, 42, 99
API = "aaaa1111-0000-4000-8000-000000000001"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, state_dir: Path) -> Iterator[BotApi]:
    monkeypatch.setenv("LOOKOUT_TG_TOKEN", TOKEN)
    with BotApi(TOKEN, chats=(CHAT, OTHER_CHAT)) as double:
        yield double
        write_config("# steering off: the poller leaves\n")
        wait_for(lambda: lock_free(state_dir / poller.LOCK), 30, "the poller gone")


def configure(api: BotApi, steer: str = "[steer]\nenabled = true\n", extra: str = "") -> None:
    write_config(
        f"""{steer}
{channel_table(api.url, CHAT, OWNER)}{extra}
[[rules]]
when = ["permission", "question", "done"]
channels = ["chat"]
"""
    )


def alert(api: BotApi, sid: str = API, project: str = "api") -> int:
    """A session's turn ends: its "done" alert is sent; the alert's message id."""
    record_hook("stop.py", {"session_id": sid, "cwd": f"/w/{project}", "hook_event_name": "Stop"})
    wait_for(lambda: api.sent("sendMessage"), 10, "the alert")
    return _last_alert(api)


def _last_alert(api: BotApi) -> int:
    """The last alert's message id, once the sender remembered its session (a poller may run
    already, steering being on: a reply before that would reply to no known alert)."""
    # The double records a call as it comes in, and stores the message once it has handled it.
    mine = wait_for(
        lambda: [m for (chat, _), m in list(api.messages.items()) if chat == CHAT], 10, "it stored"
    )
    mid = int(mine[-1]["message_id"])
    state = os.environ["LOOKOUT_STATE_DIR"]
    wait_for(lambda: poller.alert_session(state, "chat", mid), 10, "the alert remembered")
    return mid


def reply(api: BotApi, mid: int, timeout: float = 60) -> str:
    """The bot's one reply to message `mid` (`timeout`: a ceiling for a stuck test; a starved
    machine runs the double, the poller and its worker, three processes, for each reply)."""
    wait_for(lambda: api.replies(mid), timeout, f"the reply to message {mid}")
    (text,) = api.replies(mid)
    return text


def taken_at_once(api: BotApi) -> None:
    """Each message was handed to the long poll that waited for it: no getUpdates ended in an
    error (the 409 of a second poller, which makes both pause RETRY_S) or came back early with
    nothing (which backs off), so only the poller's own work stood between a message and its
    reply. From the double's own records, however starved the machine."""
    polls = list(api.polls)
    early = [p for p in polls if p[2] is None or (p[2] == 0 and p[1] - p[0] < poller.LONG_POLL_S)]
    assert polls and not early, polls


def polling(api: BotApi) -> None:
    """The poller has started and waits in its long poll (telegram.lock alone is taken by its
    starter before the poller's interpreter even runs)."""
    wait_for(lambda: api.sent("getUpdates"), 60, "the poller's long poll")


def steered(state: Path) -> list[dict[str, Any]]:
    path = state / store.EVENTS
    lines = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
    return [x for x in lines if x["event"] == "Steered"]


def ignored_lines(state: Path) -> list[str]:
    path = state / "ignored.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [x.split(" telegram poller: ", 1)[1] for x in lines if " telegram poller: " in x]


def test_sessions_stop_and_refusals_are_replied_in_the_chat(api: BotApi, state_dir: Path) -> None:
    configure(api)
    mid = alert(api)
    polling(api)  # nothing is pending: steering keeps it
    asked = api.message("/sessions", OWNER)
    assert reply(api, asked) == "1 session:\napi (aaaa1111): idle, claude"
    asked = api.message("/stop@lkbot api", OWNER)
    assert reply(api, asked) == (
        "error: api (aaaa1111) is idle: there is no turn to interrupt\n"
        "hint: lookout say SESSION TEXT starts one"
    )
    asked = api.message("hi \x1b[31mthere", OWNER, reply_to=mid)
    error, hint = reply(api, asked).split("\n")
    assert error.startswith(
        "error: the message holds a control character (\\x1b U+001B) at character 4 (line 1)"
    )
    assert hint == "hint: remove it; only printable text and newlines are sent"
    asked = api.message("/new /etc fix it", OWNER)
    text = reply(api, asked)
    assert text.startswith("error: /etc is not one of the projects [steer] allows (")
    assert text.endswith("\nhint: add it (or a glob) to projects in [steer], in your own config")
    # A reply to its alert while the session waits on a dialog: never typed, the refusal shown.
    deliver(
        state_dir,
        {"session_id": API, "cwd": "/w/api", "hook_event_name": "PermissionRequest",
         "tool_name": "Bash", "tool_input": {"command": "make"}},
    )  # fmt: skip
    asked = api.message("yes do it", OWNER, reply_to=mid)
    assert reply(api, asked) == (
        "error: api (aaaa1111) waits on you (permission): lookout will not type into an open"
        " dialog (typed keys would answer it)\n"
        "hint: answer the dialog first (lookout jump, the dashboard, or lookout answer)"
    )
    lines = steered(state_dir)
    assert [(x["steer"]["action"], x["source"], x["outcome"]) for x in lines] == [
        ("interrupt", "telegram", "refused"),
        ("say", "telegram", "refused"),
    ]
    taken_at_once(api)


def test_others_edits_bots_and_unknown_replies_change_nothing(api: BotApi, state_dir: Path) -> None:
    configure(api)
    mid = alert(api)
    wait_for(lambda: not lock_free(state_dir / poller.LOCK), 10, "a poller")
    quiet = [
        api.message("hello", STRANGER, reply_to=mid),  # not in allowed_user_ids
        api.message("hello", OWNER, chat_id=OTHER_CHAT, reply_to=mid),  # the owner, elsewhere
        api.message("/sessions", STRANGER),
        api.message("hello", OWNER, reply_to=mid, kind="edited_message"),
        api.message("hello", OWNER, reply_to=mid, forward_origin={"type": "hidden_user"}),
        api.message("hello", OWNER, reply_to=mid + 1000),  # no alert of a session
        api.message("just chatting", OWNER),
    ]
    bot = api.message("/stop api", 777)
    api.updates[-1]["message"]["from"]["is_bot"] = True  # a bot's message (e.g. another bot's)
    last = api.message("/sessions", OWNER)
    reply(api, last)  # taken after every one before it
    assert all(api.replies(m) == [] for m in [*quiet, bot])
    assert steered(state_dir) == []
    # Each is said in ignored.log as ignored (several of one reason in a second: one line, counted
    # as messages), but the edit: the poller does not ask for edits (allowed_updates), so none
    # arrives. None of it is lookout's failure: errors.log stays empty, doctor does not warn.
    wait_for(lambda: ignored_count(state_dir) == len(quiet), 10, "every one said as ignored")
    said = "\n".join(ignored_lines(state_dir))
    assert said.startswith(
        f"channel chat: a message by user {STRANGER} in chat {CHAT}, not the owner"
        " (allowed_user_ids): ignored"
    )
    for what in ("a bot: ignored", "no session's alert", "forwarded: ignored", "nor a command"):
        assert what in said, said


def test_away_and_back_from_the_owner_turn_the_switch(api: BotApi, state_dir: Path) -> None:
    """Issue 41: /away [DURATION] and /back, with /stop's checks (the owner, [steer], the rate),
    each an Away event whose source is telegram."""
    configure(api)
    alert(api)
    wait_for(lambda: not lock_free(state_dir / poller.LOCK), 10, "a poller")
    assert reply(api, api.message("/away@lkbot 2h", OWNER)).startswith("away: on until ")
    said = json.loads(lookout("away", "--json").stdout)
    assert (said["away"], said["source"]) == (True, "telegram")
    assert said["until_ms"] - said["since_ms"] == 2 * 3600 * 1000
    stranger = api.message("/back", STRANGER)  # not the owner: nothing changes
    assert reply(api, api.message("/away soon", OWNER)) == (
        "error: invalid duration 'soon'\nhint: use a number with a unit: 30s, 15m, 12h, 7d"
    )
    assert reply(api, api.message("/back", OWNER)) == (
        "away: off (from telegram). Codex asks at its own prompt again"
    )
    assert api.replies(stranger) == []
    lines = [json.loads(x) for x in (state_dir / store.EVENTS).read_text().splitlines()]
    assert [(x["outcome"], x["source"]) for x in lines if x["event"] == "Away"] == [
        ("on", "telegram"),
        ("off", "telegram"),
    ]


def ignored_count(state: Path) -> int:
    n = 0
    for text in ignored_lines(state):
        held = re.match(r"(\d+) messages? ignored in [\d.]+ s, the last: ", text)
        n += int(held.group(1)) if held else 1
    return n


def test_steering_off_the_reply_says_how_to_turn_it_on(api: BotApi, state_dir: Path) -> None:
    # Steering off: the poller runs only for a pending request's buttons, and says so.
    configure(api, steer="[remote]\nenabled = true\nwait_s = 60\n")
    body = {"session_id": API, "cwd": "/w/api", "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": "make test"}}  # fmt: skip
    deciding = start(body)
    rec = waiting(state_dir)
    record_hook("permission_request.py", body)
    wait_for(lambda: api.sent("sendMessage"), 10)
    mid = _last_alert(api)
    for asked in (api.message("hello", OWNER, reply_to=mid), api.message("/sessions", OWNER)):
        error, hint = reply(api, asked).split("\n")
        assert error.startswith("error: steering is off ([steer] enabled is not true in ")
        assert hint == "hint: add `[steer]` with `enabled = true` to your config (docs/steer.md)"
    assert steered(state_dir) == []
    assert rec["status"] == "pending"
    deciding.terminate()
    finish(deciding)


def test_a_reply_to_an_alert_types_into_that_sessions_pane(
    api: BotApi, state_dir: Path, tmp_path: Path
) -> None:
    require("tmux")
    configure(api)
    with Panes() as panes:
        try:
            log = tmp_path / "got"
            pane = panes.agent(log, "plain")  # its Stop hook raises the alert from its pane
            wait_for(lambda: api.sent("sendMessage"), 10, "the alert")
            mid = _last_alert(api)
            api.message("not you", STRANGER, reply_to=mid)
            api.message("nor here", OWNER, chat_id=OTHER_CHAT, reply_to=mid)
            text = 'make it so; echo "$HOME" caf\u00e9'
            asked = api.message(text, OWNER, reply_to=mid)
            got = reply(api, asked)
            wait_for(lambda: log.exists() and log.read_bytes().endswith(b"\r"), 10, "Enter")
            assert log.read_bytes() == text.encode() + b"\r"  # only the owner's, exactly
            target = panes.tmux(
                "display-message", "-p", "-t", pane, "#{session_name}:#{window_index}.#{pane_id}"
            )
            assert got.splitlines() == [
                f"api (dddd4444): typed into tmux pane {target}, then Enter: typed (idle)",
                f"text: {text}",
            ]
            (line,) = steered(state_dir)
            assert (line["source"], line["steer"]["action"], line["session_id"]) == (
                "telegram",
                "say",
                SID,
            )
            # A turn runs: /stop as a reply to its alert presses Esc in that pane (the stand-in
            # is a Gemini CLI, which reports no stopped turn: lookout records it idle itself).
            body = {"session_id": SID, "cwd": "/w/api", "hook_event_name": "PreToolUse",
                    "tool_name": "Bash", "tool_input": {"command": "sleep 30"}}  # fmt: skip
            deliver(state_dir, body)
            asked = api.message("/stop", OWNER, reply_to=mid)
            got = reply(api, asked)
            assert (
                got.splitlines()[0]
                == f"api (dddd4444): Escape pressed in tmux pane {target}: sent (idle)"
            )
            assert log.read_bytes().endswith(b"\r\x1b")
        finally:
            panes.tmux("kill-server")


def test_new_starts_a_session_in_an_allowed_project(
    api: BotApi, state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require("tmux")
    project = tmp_path / "src" / "api"
    project.mkdir(parents=True)
    configure(api, steer=f'[steer]\nenabled = true\nprojects = ["{tmp_path}/src/*"]\n')
    argv_log = tmp_path / "argv.jsonl"
    fake_program(tmp_path / "bin", "claude", argv_log, report=True)
    with Panes() as panes:  # a short TMUX_TMPDIR: the poller's `start` opens its server there
        monkeypatch.setenv("TMUX_TMPDIR", panes.tmp)
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{panes.env['PATH']}")
        try:
            alert(api)
            prompt = "-x; $(touch pwned) fix the tests"
            asked = api.message(f"/new {project} {prompt}", OWNER)
            got = reply(api, asked, timeout=60).splitlines()
            assert got[0].startswith("started claude: tmux lookout:"), got
            assert got[1] == "session: api (eeee5555) (idle)" or got[1].startswith(
                "session: api (eeee5555)"
            )
            assert got[2] == f"text: {prompt}"
            assert [json.loads(x) for x in argv_log.read_text().splitlines()] == [
                [str(project), "--", prompt]
            ]
            assert not (project / "pwned").exists()
            (line,) = steered(state_dir)
            assert (line["source"], line["steer"]["action"]) == ("telegram", "start")
        finally:
            import subprocess

            subprocess.run(
                ["tmux", "-L", "default", "kill-server"],
                env={**panes.env, "TMUX_TMPDIR": panes.tmp},
                capture_output=True,
                check=False,
            )
            panes.tmux("kill-server")


def test_a_long_reply_goes_in_pieces_of_telegrams_size() -> None:
    from lookout.channels import telegram
    from lookout.surfaces.telegram_steer import chunks

    text = "a" + "😀" * 5000
    pieces = chunks(text)
    assert "".join(pieces) == text
    assert all(telegram.units(p) <= telegram.TEXT_MAX for p in pieces)
    assert len(pieces) == 3  # 10,001 code units


def test_a_message_older_than_max_age_is_not_acted_on(
    api: BotApi, state_dir: Path, tmp_path: Path
) -> None:
    """T3 (new-user defect 1): the Bot API keeps a message a day, and one sent while no poller ran
    was typed whenever the next poller started. A message older than [steer] max_age_s when the
    poller reads it is answered "not sent" and never typed; a fresh one is."""
    require("tmux")
    configure(api)
    with Panes() as panes:
        try:
            log = tmp_path / "got"
            panes.agent(log, "plain")
            wait_for(lambda: api.sent("sendMessage"), 10, "the alert")
            mid = _last_alert(api)
            hour_ago = int(time.time()) - 3600
            old = api.message("typed an hour ago", OWNER, reply_to=mid, date=hour_ago)
            assert reply(api, old) == "not sent: this message is 60 minutes old; send it again"
            stop = api.message("/stop", OWNER, reply_to=mid, date=hour_ago)
            assert reply(api, stop) == "not sent: this message is 60 minutes old; send it again"
            new = api.message("/sessions", OWNER, date=int(time.time()) - 150)  # default 120 s
            assert reply(api, new) == "not sent: this message is 2 minutes old; send it again"
            assert steered(state_dir) == []
            assert not log.exists() or log.read_bytes() == b""  # not a key reached the pane
            said = "\n".join(ignored_lines(state_dir))
            assert "a message 3600 s old (over [steer] max_age_s, 120 s): not acted on" in said
            fresh = api.message("fresh", OWNER, reply_to=mid)
            assert "then Enter: typed (idle)" in reply(api, fresh).splitlines()[0]
            assert log.read_bytes() == b"fresh\r"
        finally:
            panes.tmux("kill-server")
    # Under a minute it says seconds (max_age_s at its least).
    configure(api, steer="[steer]\nenabled = true\nmax_age_s = 10\n")
    wait_for(lambda: _max_age_read(api), 30, "the poller to read max_age_s again", every=0.5)


def _max_age_read(api: BotApi) -> bool:
    asked = api.message("/sessions", OWNER, date=int(time.time()) - 45)
    text = reply(api, asked)
    return text.startswith("not sent: this message is 4") and text.endswith(
        " seconds old; send it again"
    )


def test_a_reply_goes_to_its_alerts_session_by_its_exact_id(api: BotApi, state_dir: Path) -> None:
    """T4: a reply (and /stop as one) names its alert's session by its exact id, never through
    the loose resolver: the alerted session forgotten (`lookout prune`), a session whose title is
    that id gets nothing."""
    configure(api)
    mid = alert(api)
    wait_for(lambda: not lock_free(state_dir / poller.LOCK), 10, "a poller")
    (state_dir / store.SESSIONS / f"{API}.json").unlink()  # pruned
    # Another session, titled as the alerted one's id (a client's display name is its own text).
    other = "ffff6666-0000-4000-8000-000000000006"
    deliver(
        state_dir,
        {"session_id": other, "cwd": "/w/web", "hook_event_name": "Stop"},
    )
    deliver_title(state_dir, other, API)
    for text in ("hello", "/stop"):
        asked = api.message(text, OWNER, reply_to=mid)
        assert reply(api, asked) == (
            "error: the session aaaa1111 is no longer recorded\n"
            "hint: `lookout status --all` lists the recorded ones"
        )
    assert all(x["session_id"] != other for x in steered(state_dir))


def deliver_title(state: Path, sid: str, title: str) -> None:
    """Give session `sid` the display name `title`, as the client's registry would."""
    path = state / store.SESSIONS / f"{sid}.json"
    snapshot = json.loads(path.read_text())
    snapshot["name"] = title
    path.write_text(json.dumps(snapshot))
    rows = json.loads(lookout("status", "--json", "--all").stdout)["sessions"]
    assert [r["title"] for r in rows if r["session_id"] == sid] == [title]


def test_new_takes_a_project_by_its_name_and_an_agent(
    api: BotApi, state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """New-user defect 4: `/new new1 …` said "new1 is not a directory" (a name taken as a path
    relative to the poller's /). /new takes a project by its name as `status` shows it, ~/... or
    its path; an unknown name lists the allowed projects, and so does /new alone; --agent picks
    the agent."""
    require("tmux")
    src = tmp_path / "src"
    for name in ("api", "web"):
        (src / name).mkdir(parents=True)
    configure(
        api,
        steer=f'[steer]\nenabled = true\nprojects = ["{src}/*"]\nagents = ["claude", "gemini"]\n',
    )
    claude_log, gemini_log = tmp_path / "claude.jsonl", tmp_path / "gemini.jsonl"
    fake_program(tmp_path / "bin", "claude", claude_log, report=True)
    fake_program(
        tmp_path / "bin", "gemini", gemini_log, True, sid="eeee7777-0000-4000-8000-000000000007"
    )
    with Panes() as panes:  # a short TMUX_TMPDIR: the poller's `start` opens its server there
        monkeypatch.setenv("TMUX_TMPDIR", panes.tmp)
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{panes.env['PATH']}")
        try:
            alert(api)
            listed = reply(api, api.message("/new", OWNER))
            assert listed.splitlines() == [
                "/new PROJECT TEXT starts a session (claude, gemini) in one of:",
                f"api: {src / 'api'}",
                f"web: {src / 'web'}",
            ]
            wrong = reply(api, api.message("/new nosuch fix it", OWNER))
            assert wrong.splitlines() == [
                "error: no project [steer] allows is named 'nosuch' (allowed: api"
                f" ({src / 'api'}), web ({src / 'web'}))",
                "hint: give one of those names, its path or ~/...; [steer] projects in your own"
                " config says which",
            ]
            got = reply(api, api.message("/new api fix the tests", OWNER), timeout=60)
            assert got.splitlines()[0].startswith("started claude: tmux lookout:"), got
            assert [json.loads(x) for x in claude_log.read_text().splitlines()] == [
                [str(src / "api"), "--", "fix the tests"]
            ]
            got = reply(api, api.message("/new --agent gemini web say hi", OWNER), timeout=60)
            assert got.splitlines()[0].startswith("started gemini: tmux lookout:"), got
            (argv,) = [json.loads(x) for x in gemini_log.read_text().splitlines()]
            assert argv == [str(src / "web"), "--prompt-interactive=say hi"]
            assert [x["steer"]["action"] for x in steered(state_dir)] == ["start", "start"]
        finally:
            import subprocess

            subprocess.run(
                ["tmux", "-L", "default", "kill-server"],
                env={**panes.env, "TMUX_TMPDIR": panes.tmp},
                capture_output=True,
                check=False,
            )
            panes.tmux("kill-server")


def poller_pids(state: Path, runtime: str = "") -> list[int]:
    """The Telegram pollers serving `state` (of `runtime`, when given), from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            zombie = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
        except OSError:
            continue
        code = b" ".join(argv).decode("utf-8", "replace")
        ours = "surfaces.telegram import main" in code and str(state) in code
        if ours and runtime in code and not zombie:
            found.append(int(entry))
    return found


def test_a_poller_runs_while_steering_is_on_without_any_alert(
    api: BotApi, state_dir: Path
) -> None:
    """New-user defect 1: the poller ran only while an alert of the last day could be replied to,
    so after a quiet day, a reboot or steering turned on, the first message got no answer (and
    was typed whenever a later alert started one). Now the first `lookout` command or hook that
    finds none running starts it, and it stays while [steer] is on and a Telegram channel is."""
    state_dir.mkdir(parents=True, exist_ok=True)
    configure(api)
    assert lookout("status").returncode == 0  # no alert was ever sent
    wait_for(lambda: poller_pids(state_dir), 20, "a poller, started by `lookout status`")
    asked = api.message("/sessions", OWNER)
    assert reply(api, asked) == "no live sessions"
    assert len(api.sent("sendMessage")) == 1  # that reply: no alert
    # A reboot (the poller killed): the first hook starts one again, though it notifies nothing.
    (pid,) = poller_pids(state_dir)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: lock_free(state_dir / poller.LOCK), 20, "the killed poller's lock let go")
    body = {"session_id": API, "cwd": "/w/api", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "make"}}  # fmt: skip
    record_hook("pre_tool_use.py", body)
    wait_for(lambda: poller_pids(state_dir), 20, "a poller, started by the hook")
    asked = api.message("/sessions", OWNER)
    assert reply(api, asked) == "1 session:\napi (aaaa1111): working, claude: make"
    assert len(api.sent("sendMessage")) == 2
    # Steering off: it leaves, and neither a hook nor a command starts one.
    write_config("# steering off\n")
    wait_for(lambda: lock_free(state_dir / poller.LOCK), 30, "the poller gone")
    assert lookout("status").returncode == 0
    record_hook("pre_tool_use.py", body)
    assert not (state_dir / store.TELEGRAM_WANTED).exists()
    assert lock_free(state_dir / poller.LOCK)


def test_what_the_poller_starts_never_keeps_its_lock(api: BotApi, state_dir: Path) -> None:
    """A sender the poller started (here for a hook's delivery left in spool/, recorded as
    /sessions reads the sessions) inherited telegram.lock: while it ran, a poller gone (killed,
    steering off and on, an upgrade's hand-over) left the lock held, so no hook or command
    started another, and the owner's messages waited unanswered."""
    state_dir.mkdir(parents=True, exist_ok=True)
    configure(api)
    assert lookout("status").returncode == 0
    wait_for(lambda: poller_pids(state_dir), 20, "a poller, started by `lookout status`")
    polling(api)
    body = {"session_id": API, "cwd": "/w/api", "hook_event_name": "Stop"}
    event = events.parse(body, {}, int(time.time() * 1000), events.digest(b"a spooled Stop"))
    store.spool(str(state_dir), event)  # its hook could not take events.lock in time
    release = threading.Event()
    send = api.m_sendMessage

    def held(params: dict[str, Any]) -> Any:  # the alert's sender waits in the API meanwhile
        if "done" in str(params.get("text")):
            release.wait(120)
        return send(params)

    api.m_sendMessage = held  # type: ignore[method-assign]
    try:
        assert reply(api, api.message("/sessions", OWNER)).startswith("1 session:")
        wait_for(lambda: api.sent("sendMessage")[1:], 30, "the alert, sent by the poller's sender")
        (pid,) = poller_pids(state_dir)
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not poller_pids(state_dir), 20, "the poller gone")
        assert lock_free(state_dir / poller.LOCK)  # the sender, still sending, does not hold it
    finally:
        release.set()


def fake_runtime(home: Path, name: str) -> Path:
    """An installed runtime as install.py lays it out (runtimes/NAME holding lookout/), whose
    package is this checkout's."""
    root = home / "runtimes" / name
    root.mkdir(parents=True)
    (root / "lookout").symlink_to(ROOT / "lookout")
    return root


def switch(home: Path, root: Path) -> float:
    """Make `root` current as install.py does (one rename of a symlink); when, by the link."""
    tmp = home / ".current.new"
    tmp.symlink_to(f"runtimes/{root.name}")
    os.replace(tmp, home / "current")
    return os.lstat(home / "current").st_mtime


def started_at(pid: int) -> float:
    """When process `pid` started (epoch seconds), from its /proc start time."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19])
    boot = (time.time_ns() - time.clock_gettime_ns(time.CLOCK_BOOTTIME)) / 1e9
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def test_after_an_upgrade_the_new_runtimes_poller_takes_over(
    api: BotApi, state_dir: Path, tmp_path: Path
) -> None:
    """New-user defect 9: after an upgrade the old runtime's poller served for 8 minutes and more.
    It looks every RUNTIME_CHECK_S whether `current` names another runtime, and hands over: the
    old one gone and the new one answering within 10 s of the switch, no message lost or
    answered twice."""
    state_dir.mkdir(parents=True, exist_ok=True)
    configure(api)
    home = tmp_path / "lookout-home"
    old, new = fake_runtime(home, "0.1.0-aaaa"), fake_runtime(home, "0.1.0-bbbb")
    switch(home, old)
    subprocess.run(  # the old runtime's own start, as its hooks or commands would
        [sys.executable, "-I", "-c", poller._HANDOVER, str(old), str(state_dir)],
        check=True,
        timeout=30,
    )
    wait_for(lambda: poller_pids(state_dir, str(old)), 20, "the old runtime's poller")
    (old_pid,) = poller_pids(state_dir)
    first = api.message("/sessions", OWNER)
    assert reply(api, first) == "no live sessions"
    switched = switch(home, new)
    during = [api.message("/sessions", OWNER) for _ in range(3)]  # around the handover
    wait_for(lambda: poller_pids(state_dir, str(new)), 60, "the new runtime's poller")
    wait_for(lambda: not poller_pids(state_dir, str(old)), 60, "the old runtime's poller gone")
    (new_pid,) = poller_pids(state_dir)
    assert new_pid != old_pid
    assert started_at(new_pid) - switched <= 10.0
    after = api.message("/sessions", OWNER)
    assert reply(api, after) == "no live sessions"
    for mid in during:  # each answered exactly once, by one poller or the other
        assert reply(api, mid) == "no live sessions"
    assert not (state_dir / "errors.log").exists()  # no 409, no failed handover
