"""Allow / Deny on the desktop alert (issue 25), against the real notification daemon on a private
D-Bus and Xvfb screen, clicked like a user with xdotool; the request is the real deciding hook's
(hooks/remote_answer.py), the alert the real recording hook's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import runner, store
from lookout.remote import requests
from lookout.sender import sender
from lookout.surfaces import desktop
from tests.helpers import IN_CI, payload, write_config
from tests.jump.test_focus import deliveries, hook, wait_for
from tests.jump.world import World
from tests.receivers import NotificationBus, require
from tests.remote.test_decide import events, finish, record_hook, start, waiting

CONFIG = """
[remote]
enabled = true
wait_s = 60
[channels.desktop]
type = "desktop"
[[rules]]
when = ["permission"]
channels = ["desktop"]
"""


@pytest.fixture
def screen_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[NotificationBus]:
    require(*NotificationBus.BINARIES, *NotificationBus.DISPLAY_BINARIES, "stdbuf")
    with NotificationBus(display=True) as bus:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
        yield bus


@pytest.fixture
def world() -> Iterator[World]:
    with World() as w:
        yield w


def ask(world: World, state_dir: Path, project: str) -> tuple[Any, dict[str, Any], str]:
    """The deciding hook waits on a request; the recording hook (in a tmux pane) raises its
    alert. Returns the deciding hook's process, its request and the pane."""
    write_config(CONFIG)
    world.attach("alpha")
    pane = world.pane("beta:1.1")
    body = {**payload("PermissionRequest-Bash"), "cwd": f"/w/{project}"}
    deciding = start(body)
    rec = waiting(state_dir)
    hook(world, pane, "PermissionRequest-Bash", cwd=f"/w/{project}")
    return deciding, rec, pane


def test_allow_on_the_alert_answers_that_request_and_the_alert_shows_the_outcome(
    world: World, screen_bus: NotificationBus, state_dir: Path
) -> None:
    project = f"answer-{uuid.uuid4().hex[:6]}"
    deciding, rec, _pane = ask(world, state_dir, project)
    (alert,) = screen_bus.wait_calls(1)
    assert alert["actions"] == ["default", "Focus", "allow", "Allow", "deny", "Deny"]

    screen_bus.click_alert(at=NotificationBus.ALLOW_AT)
    assert screen_bus.wait_signal("ActionInvoked")[1] == "allow"
    decision = json.loads(finish(deciding))
    assert decision["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    done = requests.load(str(state_dir), rec["id"])
    assert done is not None and done["decision"]["source"] == "desktop"

    _alert, outcome = screen_bus.wait_calls(2)
    sent = [d for d in deliveries(state_dir) if d["result"] == "sent"]
    assert sent[0]["detail"].startswith("notify-send id ")
    # Closed, then the outcome posted: lxqt-notificationd keeps the old buttons on a replace.
    closed = [d for n, d in screen_bus.signals if n == "NotificationClosed"]
    assert [int(sent[0]["detail"].split()[2].rstrip(",")), 3] in closed
    assert (outcome["replaces_id"], outcome["summary"], outcome["body"], outcome["actions"]) == (
        0,
        alert["summary"],
        "Allowed by the desktop alert",
        [],
    )
    wait_for(lambda: any(d["result"] == "clicked" for d in deliveries(state_dir)))
    clicked = [d["detail"] for d in deliveries(state_dir) if d["result"] == "clicked"]
    assert clicked == ["Allow: answered"]
    remote = [e["remote"] for e in events(state_dir) if e.get("event") == "RemoteDecision"]
    assert [(r["decision"], r["source"]) for r in remote] == [("allow", "desktop")]


def test_deny_on_the_alert_denies(
    world: World, screen_bus: NotificationBus, state_dir: Path
) -> None:
    deciding, _rec, _pane = ask(world, state_dir, f"answer-{uuid.uuid4().hex[:6]}")
    screen_bus.wait_calls(1)
    screen_bus.click_alert(at=NotificationBus.DENY_AT)
    decision = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "deny", "message": "Denied from lookout by the desktop alert."}
    _alert, outcome = screen_bus.wait_calls(2)
    assert (outcome["body"], outcome["actions"]) == ("Denied by the desktop alert", [])


@pytest.mark.parametrize("where", ["terminal", "dashboard"])
def test_a_request_answered_elsewhere_withdraws_the_buttons_within_2s(
    world: World, screen_bus: NotificationBus, state_dir: Path, where: str
) -> None:
    deciding, rec, _pane = ask(world, state_dir, f"answer-{uuid.uuid4().hex[:6]}")
    screen_bus.wait_calls(1)
    wait_for(lambda: any("answer actions" in d["detail"] for d in deliveries(state_dir)))
    started = time.monotonic()
    if where == "terminal":
        deciding.send_signal(signal.SIGTERM)  # what the client does on "No" or Esc
        assert finish(deciding) == b""
        text = "Denied in the terminal"
    else:
        requests.answer(
            str(state_dir),
            rec["id"],
            "deny",
            rec["nonce"],
            by="the dashboard (127.0.0.1)",
            source="127.0.0.1",
            user_agent="pytest",
            now_ms=int(time.time() * 1000),
        )
        finish(deciding)
        text = "Denied by the dashboard (127.0.0.1)"
    # The outcome replaces the alert: from then on no alert offers a button, and the rule's
    # "handled" update leaves the outcome in place.
    wait_for(lambda: any(c["body"] == text for c in screen_bus.calls), 2.0)
    assert time.monotonic() - started <= 2.0
    if where == "dashboard":  # its RemoteDecision ends the episode: the rule's update comes
        wait_for(
            lambda: any(d.get("update") and d["result"] == "skipped" for d in deliveries(state_dir))
        )
    assert all(c["actions"] == [] for c in screen_bus.calls[1:])
    assert screen_bus.calls[-1]["body"] == text
    assert not [d for d in deliveries(state_dir) if d["result"] == "clicked"]


def test_a_daemon_without_actions_keeps_the_plain_alert_and_nothing_answers(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = "/usr/bin/python3"
    if not os.path.exists(python):
        if IN_CI:
            pytest.fail("CI must install python3-dbus and python3-gi (see .ci/run)")
        pytest.skip("needs the system python3 with python3-dbus and python3-gi")
    require("dbus-daemon", "busctl", "notify-send", "stdbuf")
    daemon = [python, str(Path(__file__).with_name("plain_daemon.py"))]
    with NotificationBus(daemon=daemon) as bus:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
        write_config(CONFIG)
        body = payload("PermissionRequest-Bash")
        deciding = start(body)
        rec = waiting(state_dir)
        monkeypatch.setattr("lookout.spawn.spawn", lambda state_dir, job, *dirs: 0)
        runner.record(json.dumps(body).encode(), None, int(time.time() * 1000), str(state_dir), {})
        (job,) = (state_dir / "outbox").glob("*.json")
        sender.run_job(str(job), str(state_dir))
        (alert,) = bus.wait_calls(1)
        assert alert["actions"] == []
        (sent,) = deliveries(state_dir)
        assert sent["detail"] == "notify-send id 1 (the notification daemon has no actions)"
        now = requests.load(str(state_dir), rec["id"])
        assert now is not None and now["status"] == requests.PENDING  # nothing answered
        deciding.send_signal(signal.SIGTERM)
        assert finish(deciding) == b""
    assert store.read_json(str(state_dir / "answer-tokens.json")) is None


# -- the popup stays answerable while its request waits (issue 31) ------------------------------

# lxqt-notificationd closes a notification that asks for the server's default timeout after this
# long (its `server_decides`, 10 s); the reviewer saw an Allow/Deny popup go after ~15 s of a
# 300 s wait.
LXQT_DEFAULT_S = 10.0


def alert_ids(state_dir: Path) -> list[int]:
    """The ids of the alerts the sender posted (not the outcomes), in order."""
    return [
        int(d["detail"].split("notify-send id ")[1].split()[0].rstrip(","))
        for d in deliveries(state_dir)
        if d["result"] == "sent" and not d.get("update") and "notify-send id" in d["detail"]
    ]


@pytest.mark.slow
def test_the_popup_stays_past_the_daemons_timeout_while_its_request_waits(
    world: World, screen_bus: NotificationBus, state_dir: Path
) -> None:
    deciding, rec, _pane = ask(world, state_dir, f"answer-{uuid.uuid4().hex[:6]}")
    (alert,) = screen_bus.wait_calls(1)
    seen = time.monotonic()
    assert alert["expire_timeout"] == 0  # the spec's "never expires"
    wait_for(lambda: alert_ids(state_dir))
    (popup,) = alert_ids(state_dir)
    # Past the daemon's own timeout (measured from when the test saw the Notify call).
    time.sleep(max(0.0, seen + LXQT_DEFAULT_S + 2.0 - time.monotonic()))
    assert [d for n, d in screen_bus.signals if n == "NotificationClosed"] == []
    screen_bus.click_alert(at=NotificationBus.ALLOW_AT)
    decision = json.loads(finish(deciding))
    assert decision["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    wait_for(lambda: screen_bus.calls[-1]["body"] == "Allowed by the desktop alert")
    assert [popup, 3] in [d for n, d in screen_bus.signals if n == "NotificationClosed"]
    done = requests.load(str(state_dir), rec["id"])
    assert done is not None and done["decision"]["source"] == "desktop"


@pytest.mark.slow
def test_with_two_requests_waiting_each_popup_answers_its_own(
    world: World, screen_bus: NotificationBus, state_dir: Path
) -> None:
    write_config(CONFIG)
    world.attach("alpha")
    pane = world.pane("beta:1.1")
    hooks = []
    shown = 0.0
    for n, command in enumerate(("touch first.txt", "touch second.txt")):
        body = {
            **payload("PermissionRequest-Bash"),
            "session_id": f"8cfd14f5-21d9-473b-8710-34a6cecee1f{n}",
            "cwd": f"/w/two-{n}-{uuid.uuid4().hex[:6]}",
            "tool_input": {"command": command, "description": "d"},
        }
        deciding = start(body)
        wait_for(lambda: len(requests.load_all(str(state_dir))) == n + 1)
        hook(
            world,
            pane,
            "PermissionRequest-Bash",
            **{k: body[k] for k in ("session_id", "cwd")},
            tool_input=body["tool_input"],
        )
        screen_bus.wait_calls(n + 1)
        if n == 0:
            shown = time.monotonic()
        hooks.append(deciding)
    wait_for(lambda: len(alert_ids(state_dir)) == 2)
    assert [c["actions"][2::2] for c in screen_bus.calls] == [["allow", "deny"]] * 2
    # Past the daemon's own timeout for the older one: lxqt-notificationd stacks them, the
    # older on top, both still there, each with its buttons.
    time.sleep(max(0.0, shown + LXQT_DEFAULT_S + 2.0 - time.monotonic()))
    assert [d for n, d in screen_bus.signals if n == "NotificationClosed"] == []
    screen_bus.click_alert(at=NotificationBus.DENY_AT)  # the newer popup: the bottom one
    second = json.loads(finish(hooks[1]))["hookSpecificOutput"]["decision"]
    assert second["behavior"] == "deny"
    wait_for(lambda: any(c["body"] == "Denied by the desktop alert" for c in screen_bus.calls))

    # The outcome's note stacks below the older popup (the click is measured from the bottom):
    # once it is gone, as if it had expired, the older popup is the one left.
    def note() -> list[int]:
        return [int(d["detail"].rsplit(" ", 1)[1]) for d in deliveries(state_dir)
                if "the outcome is id" in d["detail"]]  # fmt: skip

    wait_for(note)
    subprocess.run(
        ["gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications",
         "--object-path", "/org/freedesktop/Notifications",
         "--method", "org.freedesktop.Notifications.CloseNotification", str(note()[0])],
        env=screen_bus.env, check=True, capture_output=True,
    )  # fmt: skip
    closed = lambda: [d[0] for n, d in screen_bus.signals if n == "NotificationClosed"]  # noqa: E731
    wait_for(lambda: note()[0] in closed())
    screen_bus.click_alert(at=NotificationBus.ALLOW_AT)
    first = json.loads(finish(hooks[0]))["hookSpecificOutput"]["decision"]
    assert first == {"behavior": "allow"}
    by_command = {
        r["summary"]: (r["status"], r["decision"]["source"])
        for r in requests.load_all(str(state_dir))
    }
    assert by_command == {
        "touch first.txt": ("allowed", "desktop"),
        "touch second.txt": ("denied", "desktop"),
    }


def expiring_bus(seconds: float) -> NotificationBus:
    python = "/usr/bin/python3"
    if not os.path.exists(python):
        if IN_CI:
            pytest.fail("CI must install python3-dbus and python3-gi (see .ci/run)")
        pytest.skip("needs the system python3 with python3-dbus and python3-gi")
    require("dbus-daemon", "busctl", "notify-send", "stdbuf", "gdbus")
    daemon = [python, str(Path(__file__).with_name("expiring_daemon.py")), str(seconds)]
    return NotificationBus(daemon=daemon)


def send_in_background(state_dir: Path, body: dict[str, Any]) -> Any:
    """The recording hook's record and its job, sent by an in-process sender (so that the
    test may tune its constants) in a thread; returns the thread."""
    import threading

    runner.record(json.dumps(body).encode(), None, int(time.time() * 1000), str(state_dir), {})
    (job,) = (state_dir / "outbox").glob("*.json")
    thread = threading.Thread(target=sender.run_job, args=(str(job), str(state_dir)), daemon=True)
    thread.start()
    return thread


@pytest.mark.real
def test_a_popup_the_daemon_expires_is_posted_again_until_its_request_ends(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon that ignores "never expires" (this double closes each after 2 s): the popup is
    posted again while its request waits, and not after it ended."""
    # (2 s: well past the sender's 0.5 s look for a notify-send that exits at once, which is a
    # daemon without actions, also on a loaded machine.)
    with expiring_bus(2.0) as bus:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
        monkeypatch.setattr("lookout.spawn.spawn", lambda state_dir, job, *dirs: 0)
        monkeypatch.setattr(desktop, "QUICK_S", 1.0)  # a 2 s expiry is the daemon's, not a fight
        write_config(CONFIG)
        body = payload("PermissionRequest-Bash")
        deciding = start(body)
        rec = waiting(state_dir)
        thread = send_in_background(state_dir, body)
        wait_for(lambda: len([c for c in bus.calls if c["actions"]]) >= 3, 30, state_dir)
        expired = [d for n, d in bus.signals if n == "NotificationClosed" and d[1] == 1]
        assert len(expired) >= 2
        requests.answer(
            str(state_dir),
            rec["id"],
            "deny",
            rec["nonce"],
            by="the dashboard (127.0.0.1)",
            source="127.0.0.1",
            user_agent="pytest",
            now_ms=int(time.time() * 1000),
        )
        finish(deciding)
        thread.join(30)
        assert not thread.is_alive()
        posts = [c for c in bus.calls if c["actions"]]
        assert all(c["actions"] == ["allow", "Allow", "deny", "Deny"] for c in posts)
        assert bus.calls[-1]["body"] == "Denied by the dashboard (127.0.0.1)"
        assert bus.calls[-1]["actions"] == []
        again = [d for d in deliveries(state_dir) if d["detail"].startswith("posted again: ")]
        assert len(again) == len(posts) - 1


@pytest.mark.real
def test_a_daemon_that_closes_it_at_once_gets_it_a_few_times_only(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bounded: a popup the daemon closes soon after each post is not posted forever."""
    # (2 s: past the sender's 0.5 s look for a notify-send that exits at once, a daemon without
    # actions; within desktop.QUICK_S, a close that comes "at once".)
    with expiring_bus(2.0) as bus:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
        monkeypatch.setattr("lookout.spawn.spawn", lambda state_dir, job, *dirs: 0)
        write_config(CONFIG)
        body = payload("PermissionRequest-Bash")
        deciding = start(body)
        rec = waiting(state_dir)
        thread = send_in_background(state_dir, body)
        wait_for(lambda: "not posted again" in json.dumps(deliveries(state_dir)), 60, state_dir)
        assert len([c for c in bus.calls if c["actions"]]) == desktop.QUICK_MAX
        now = requests.load(str(state_dir), rec["id"])
        assert now is not None and now["status"] == requests.PENDING  # nothing answered
        deciding.send_signal(signal.SIGTERM)
        assert finish(deciding) == b""
        thread.join(30)


def test_a_popup_the_user_dismisses_is_not_posted_again(
    world: World, screen_bus: NotificationBus, state_dir: Path
) -> None:
    deciding, rec, _pane = ask(world, state_dir, f"answer-{uuid.uuid4().hex[:6]}")
    (alert,) = screen_bus.wait_calls(1)
    assert alert["expire_timeout"] == 0  # it would stay: the user closes it
    wait_for(lambda: alert_ids(state_dir))
    screen_bus.click_alert(at=(276, 24))  # its "x"
    assert screen_bus.wait_signal("NotificationClosed")[1] == 2  # dismissed by the user
    time.sleep(1.5)  # the sender heard why it closed: it leaves it closed
    assert len(screen_bus.calls) == 1
    now = requests.load(str(state_dir), rec["id"])
    assert now is not None and now["status"] == requests.PENDING
    deciding.send_signal(signal.SIGTERM)
    assert finish(deciding) == b""


QUESTION = {
    "tool_name": "AskUserQuestion",
    "tool_input": {
        "questions": [
            {
                "question": "Which colour?",
                "header": "Choice",
                "multiSelect": False,
                "options": [
                    {"label": "Red", "description": "r"},
                    {"label": "Blue", "description": "b"},
                ],
            }
        ]
    },
}


def test_a_question_alert_raised_before_its_request_gets_its_buttons_when_it_comes(
    screen_bus: NotificationBus, state_dir: Path
) -> None:
    """PreToolUse raised the question's alert and its PermissionRequest came after the alert
    went out: the popup is closed and posted again with the options (lxqt-notificationd keeps
    a popup's actions on a replace, so a replace could not add them)."""
    write_config(CONFIG.replace('when = ["permission"]', 'when = ["permission", "question"]'))
    asked = {**payload("PreToolUse-Bash"), **QUESTION}
    record_hook("pre_tool_use.py", asked)
    (alert,) = screen_bus.wait_calls(1)
    assert alert["actions"] == []  # no request yet, and no Focus (no tmux here)
    wait_for(lambda: alert_ids(state_dir))  # sent once its own wait for the request was over
    (first,) = alert_ids(state_dir)
    body = {k: v for k, v in asked.items() if k != "tool_use_id"}
    deciding = start({**body, "hook_event_name": "PermissionRequest"})
    waiting(state_dir)
    _alert, again = screen_bus.wait_calls(2)
    assert again["actions"] == ["option-0", "Red", "option-1", "Blue", "deny", "Deny"]
    assert again["summary"] == alert["summary"]
    assert [first, 3] in [d for n, d in screen_bus.signals if n == "NotificationClosed"]
    screen_bus.click_alert(at=(82, -38))  # "Red", the first of three buttons
    decision = json.loads(finish(deciding))["hookSpecificOutput"]["decision"]
    assert decision["updatedInput"]["answers"] == {"Which colour?": "Red"}
    wait_for(lambda: screen_bus.calls[-1]["body"] == "Allowed by the desktop alert: Red")


def test_the_answered_alerts_a_sender_remembers_are_bounded() -> None:
    # A sender lives for hours: it keeps the newest ANSWERED_MAX, not every alert it ever sent.
    keys = [("desktop", str(n), f"s:permission:{n}") for n in range(desktop.ANSWERED_MAX + 5)]
    for key in keys:
        desktop._answered(key)
    assert len(desktop._ANSWERED_REFS) == desktop.ANSWERED_MAX
    assert keys[0] not in desktop._ANSWERED_REFS and keys[-1] in desktop._ANSWERED_REFS
    desktop._ANSWERED_REFS.clear()
