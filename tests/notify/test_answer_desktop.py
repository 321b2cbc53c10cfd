"""Allow / Deny on the desktop alert (issue 25), against the real notification daemon on a private
D-Bus and Xvfb screen, clicked like a user with xdotool; the request is the real deciding hook's
(hooks/remote_answer.py), the alert the real recording hook's."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import runner, store
from lookout.notify import sender
from lookout.remote import requests
from tests.helpers import IN_CI, payload, write_config
from tests.jump.world import World
from tests.notify.test_focus import deliveries, hook, wait_for
from tests.receivers import NotificationBus, require
from tests.remote.test_decide import events, finish, start, waiting

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
    assert outcome["replaces_id"] == int(sent[0]["detail"].split()[2].rstrip(","))
    assert (outcome["summary"], outcome["body"], outcome["actions"]) == (
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
        text = "Answered in the terminal"
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
        monkeypatch.setattr("lookout.notify.spawn.spawn", lambda state_dir, job, *dirs: 0)
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
