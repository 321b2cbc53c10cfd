"""The desktop alert's Focus action, against the real notification daemon (lxqt-notificationd on a
private D-Bus, drawing on a private Xvfb screen where the test clicks the alert like a user) and a
real tmux server with an attached client; the alerts come from the real hook scripts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from lookout import runner, store
from lookout.channels import desktop
from lookout.jump import focus
from lookout.sender import sender
from tests.helpers import IN_CI, PAYLOADS, ROOT, payload, write_config
from tests.jump.world import World
from tests.receivers import NotificationBus, require

CONFIG = """
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


def hook(world: World, pane: str, stem: str, **fields: object) -> None:
    """The real hook script, with the environment of a process running in `pane`."""
    body = {**json.loads((PAYLOADS / f"{stem}.json").read_text()), **fields}
    event = body["hook_event_name"]
    script = (
        ROOT / "hooks" / ("".join(f"_{c.lower()}" if c.isupper() else c for c in event)[1:] + ".py")
    )
    pid = world.tmux("display-message", "-p", "#{pid}")
    env = {**os.environ, "TMUX": f"{world.socket},{pid},1", "TMUX_PANE": pane}
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(script)],
        input=json.dumps(body).encode(),
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")


def deliveries(state_dir: Path) -> list[dict[str, object]]:
    path = state_dir / store.DELIVERIES
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_for(check: object, timeout_s: float = 15.0, state_dir: Path | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            seen = deliveries(state_dir) if state_dir else []
            errors = state_dir / "errors.log" if state_dir else None
            log = errors.read_text() if errors and errors.exists() else ""
            raise AssertionError(f"timed out; deliveries: {seen}; errors.log: {log}")
        time.sleep(0.05)


def focus_senders(marker: str) -> list[int]:
    """Pids of notify-send processes waiting with a Focus action for an alert naming `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = (Path("/proc") / entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        text = [a.decode("utf-8", "replace") for a in argv]
        if desktop.FOCUS_ACTION in text and any(marker in a for a in text):
            found.append(int(entry))
    return found


def test_clicking_focus_on_the_alert_jumps_to_the_session(
    world: World, screen_bus: NotificationBus, state_dir: Path
) -> None:
    write_config(CONFIG)
    client = world.attach("alpha")
    api = world.pane("beta:1.1")
    project = f"focus-{uuid.uuid4().hex[:6]}"
    hook(world, api, "PermissionRequest-Bash", cwd=f"/w/{project}")
    (alert,) = screen_bus.wait_calls(1)
    assert alert["actions"] == ["default", "Focus"]
    assert alert["summary"] == f"{project} · needs permission"
    assert world.where(client).startswith("alpha:")

    screen_bus.click_alert()
    assert screen_bus.wait_signal("ActionInvoked")[1] == "default"
    wait_for(lambda: world.where(client) == f"beta:1.{api}", state_dir=state_dir)
    wait_for(lambda: any(d["result"] == "clicked" for d in deliveries(state_dir)))
    clicked = [d for d in deliveries(state_dir) if d["result"] == "clicked"]
    assert [(d["kind"], d["channel"], d["detail"]) for d in clicked] == [
        ("permission", "desktop", f"Focus: tmux beta:1.{api} on client {client}")
    ]
    sent = [d for d in deliveries(state_dir) if d["result"] == "sent"]
    assert (
        sent[0]["detail"]
        == f"notify-send id {sent[0]['detail'].split()[2].rstrip(',')}, Focus action"
    )
    wait_for(lambda: not focus_senders(project), 5)


def test_the_wait_ends_when_the_episode_resolves_and_the_alert_is_replaced(
    world: World, screen_bus: NotificationBus, state_dir: Path
) -> None:
    write_config(CONFIG)
    world.attach("alpha")
    api = world.pane("beta:1.1")
    project = f"focus-{uuid.uuid4().hex[:6]}"
    hook(world, api, "PermissionRequest-Bash", cwd=f"/w/{project}")
    screen_bus.wait_calls(1)
    wait_for(lambda: focus_senders(project), 5)
    # The user answers in the terminal: the next prompt proves it.
    hook(
        world,
        api,
        "UserPromptSubmit",
        session_id=payload("PermissionRequest-Bash")["session_id"],
        cwd=f"/w/{project}",
    )
    _alert, handled = screen_bus.wait_calls(2)
    assert handled["summary"] == f"{project} · permission handled"
    # The alert (and its Focus button) is closed, then the note posted without any: a daemon
    # that keeps the old actions on a replace (this one) shows no button under the note.
    assert handled["replaces_id"] == 0 and handled["actions"] == []
    wait_for(lambda: any(d.get("update") for d in deliveries(state_dir)))  # written after
    sent = [d["detail"] for d in deliveries(state_dir) if d["result"] == "sent"]
    alert_id = int(sent[0].split()[2].rstrip(","))
    note_id = int(sent[-1].split()[2])
    assert screen_bus.wait_signal("NotificationClosed") == [alert_id, 3]
    wait_for(lambda: not focus_senders(project), 5)
    time.sleep(0.5)
    # notify-send was stopped with SIGTERM, so it did not close anything more: the note stays.
    closed = [data for name, data in screen_bus.signals if name == "NotificationClosed"]
    assert [c for c in closed if c[0] == note_id] == []
    assert not [d for d in deliveries(state_dir) if d["result"] == "clicked"]


def test_a_daemon_without_actions_gets_the_plain_alert(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = "/usr/bin/python3"
    probe = (
        subprocess.run([python, "-c", "import dbus, gi"], capture_output=True, check=False)
        if os.path.exists(python)
        else None
    )
    if probe is None or probe.returncode != 0:
        if IN_CI:
            pytest.fail("CI must install python3-dbus and python3-gi (see .ci/run)")
        pytest.skip("needs the system python3 with python3-dbus and python3-gi")
    require("dbus-daemon", "busctl", "notify-send", "stdbuf")
    daemon = [python, str(ROOT / "tests" / "surfaces" / "plain_daemon.py")]
    with NotificationBus(daemon=daemon) as bus:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
        write_config(CONFIG)
        env = {"TMUX": "/tmp/nowhere/default,1,0", "TMUX_PANE": "%3"}
        raw = json.dumps(payload("PermissionRequest-Bash")).encode()
        # Recorded without spawning the sender: the test runs it in-process, and waits for it.
        monkeypatch.setattr("lookout.spawn.spawn", lambda state_dir, job, *dirs: 0)
        runner.record(raw, None, int(time.time() * 1000), str(state_dir), env)
        (job,) = (state_dir / "outbox").glob("*.json")
        started = time.monotonic()
        sender.run_job(str(job), str(state_dir))
        assert time.monotonic() - started < 5  # nothing waited for a click that cannot come
        (alert,) = bus.wait_calls(1)
    assert alert["actions"] == []  # notify-send offered none: the daemon has none
    (sent,) = deliveries(state_dir)
    assert (sent["result"], sent["detail"]) == (
        "sent",
        "notify-send id 1 (the notification daemon has no actions)",
    )


def test_no_focus_without_stdbuf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert desktop._with_actions(["notify-send", "--", "t"], {}, 1.0) is None


def _record(state_dir: Path, stem: str, env: dict[str, str], **fields: object) -> None:
    body = {**payload(stem), **fields}
    runner.record(json.dumps(body).encode(), None, int(time.time() * 1000), str(state_dir), env)


IN_TMUX = {"TMUX": "/tmp/tmux-0/default,1,0", "TMUX_PANE": "%3"}


def test_focus_is_offered_while_the_episode_or_the_idle_turn_lasts(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("lookout.spawn.spawn", lambda state_dir, job, *dirs: 0)
    sid = payload("PermissionRequest-Bash")["session_id"]
    _record(state_dir, "UserPromptSubmit", IN_TMUX, session_id=sid)
    _record(state_dir, "PermissionRequest-Bash", IN_TMUX)
    snap = store.read_session(str(state_dir), str(sid))
    assert snap is not None
    asked = {"kind": "permission", "session_id": sid, "episode": snap["episode"]}
    mark = focus.focus_mark(str(state_dir), asked)
    assert mark == ("episode", snap["episode"])
    assert not focus.resolved(str(state_dir), asked, mark)
    _record(state_dir, "Stop", IN_TMUX, session_id=sid)  # the turn ended: the dialog is gone
    assert focus.resolved(str(state_dir), asked, mark)

    done = {"kind": "done", "session_id": sid}
    turn = focus.focus_mark(str(state_dir), done)
    assert turn is not None and not focus.resolved(str(state_dir), done, turn)
    _record(state_dir, "Notification-idle_prompt", IN_TMUX, session_id=sid)  # still the same idle
    assert not focus.resolved(str(state_dir), done, turn)
    time.sleep(0.01)
    _record(state_dir, "UserPromptSubmit", IN_TMUX, session_id=sid, prompt="next", prompt_id="p2")
    assert focus.resolved(str(state_dir), done, turn)


def test_no_focus_for_sessions_lookout_cannot_reach_or_other_kinds(state_dir: Path) -> None:
    _record(state_dir, "PermissionRequest-Bash", {})  # not in tmux
    sid = payload("PermissionRequest-Bash")["session_id"]
    assert focus.focus_mark(str(state_dir), {"kind": "permission", "session_id": sid}) is None
    _record(state_dir, "PermissionRequest-Bash", IN_TMUX, tool_use_id="toolu_other")
    assert focus.focus_mark(str(state_dir), {"kind": "subagent_done", "session_id": sid}) is None
    assert focus.focus_mark(str(state_dir), {"kind": "permission", "session_id": sid}) is not None
