"""One delivery through the sender: isolated channels with their own timeouts, recorded results,
update in place and tmux focus suppression (with a real tmux server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lookout import deliveries as delivery_log
from lookout import store
from lookout.config import files
from lookout.jump import focus
from lookout.notify import rules
from lookout.sender import deliver, sender
from tests.helpers import PAYLOADS, ROOT, calls, recorder, wait_for, write_config
from tests.notify.jobs import SECRET, deliveries, intent, make_job
from tests.receivers import NotificationBus, TmuxServer, ntfy_receiver, require, webhook_receiver


@pytest.fixture
def bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[NotificationBus]:
    require(*NotificationBus.BINARIES)
    with NotificationBus() as b:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", b.address)
        yield b


def test_job_is_sent_recorded_and_removed(state_dir: Path, tmp_path: Path) -> None:
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{title}}", "{{body}}"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
    )
    job = make_job(state_dir, [intent()])
    assert os.stat(job).st_mode & 0o777 == 0o600
    sender.run_job(job, str(state_dir))
    assert calls(log) == [["demo · needs permission", "Bash: make deploy"]]
    assert not os.path.exists(job)
    (line,) = deliveries(state_dir)
    assert line == {
        "ts": line["ts"],
        "session_id": "s1",
        "kind": "permission",
        "channel": "cmd",
        "result": "sent",
        "detail": "record exited 0",
        "episode": "s1:permission:1",
        "event_ts": "2027-01-15T08:00:00.000Z",  # the raising event's ts: explain joins on it
    }


def test_a_hanging_channel_costs_the_others_nothing(state_dir: Path) -> None:
    with webhook_receiver(delay_s=30) as slow, webhook_receiver() as fast:
        write_config(
            f'[channels.slow]\ntype = "webhook"\nurl = "{slow.url}/{SECRET}"\n'
            "timeout_ms = 500\n"
            f'[channels.fast]\ntype = "webhook"\nurl = "{fast.url}/{SECRET}"\n'
            '[[rules]]\nwhen = ["permission"]\nchannels = ["slow", "fast"]\n'
        )
        job = make_job(state_dir, [intent()])
        start = time.monotonic()
        sender.run_job(job, str(state_dir))
        assert time.monotonic() - start < 3
        assert len(fast.requests) == 1
    by_channel = {d["channel"]: (d["result"], d["detail"]) for d in deliveries(state_dir)}
    assert by_channel["slow"] == ("failed", "timed out after 0.5s")
    assert by_channel["fast"] == ("sent", f"HTTP 200 {fast.url}/…")
    assert SECRET not in (state_dir / store.DELIVERIES).read_text()


def test_a_config_broken_after_dispatch_is_recorded(state_dir: Path, tmp_path: Path) -> None:
    prog, _ = recorder(tmp_path)
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
    )
    job = make_job(state_dir, [intent()])
    write_config("rules = 3\n")
    sender.run_job(job, str(state_dir))
    (line,) = deliveries(state_dir)
    assert (line["result"], line["detail"]) == (
        "failed",
        "config error: ~/.config/lookout/config.toml: rules: expected an array of "
        "tables ([[rules]]), got int",
    )


# -- update in place ---------------------------------------------------------------------------


def test_resolved_episode_replaces_the_desktop_alert_and_ntfy_message(
    state_dir: Path, bus: NotificationBus
) -> None:
    with ntfy_receiver() as rx:
        write_config(
            '[channels.desktop]\ntype = "desktop"\n'
            f'[channels.phone]\ntype = "ntfy"\nurl = "{rx.url}/t"\n'
            '[[rules]]\nwhen = ["permission"]\nchannels = ["desktop", "phone"]\n'
        )
        sender.run_job(make_job(state_dir, [intent()]), str(state_dir))
        first = bus.wait_calls(1)[0]
        resolved = intent(
            "resolved", reason="permission", duration_ms=7000, episode="s1:permission:1"
        )
        sender.run_job(make_job(state_dir, [resolved]), str(state_dir))
        second = bus.wait_calls(2)[1]
        assert (first["replaces_id"], first["urgency"]) == (0, 1)
        assert second["replaces_id"] > 0
        assert (second["summary"], second["body"], second["urgency"]) == (
            "demo · permission handled",
            "after 7s",
            0,
        )
        seqs = [m.get("sequence_id") for m in rx.messages]
        assert seqs[0] and seqs == [seqs[0], seqs[0]]
        assert [m["title"] for m in rx.messages] == [
            "demo · needs permission",
            "demo · permission handled",
        ]
    updates = [d for d in deliveries(state_dir) if d.get("update")]
    assert sorted((d["channel"], d["result"]) for d in updates) == [
        ("desktop", "sent"),
        ("phone", "sent"),
    ]


def test_update_without_a_recorded_alert_is_skipped(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delivery_log, "REF_WAIT_S", 0.1)
    write_config(
        '[channels.desktop]\ntype = "desktop"\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["desktop"]\n'
    )
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # the alert itself fails
    sender.run_job(make_job(state_dir, [intent()]), str(state_dir))
    d = {
        "intent": intent("resolved", reason="permission"),
        "channels": [],
        "updates": ["desktop"],
        "escalate": [],
        "texts": {},
    }
    cfg = files.load()
    deliver.deliver(d, cfg, str(state_dir))
    assert [(x["result"], x["detail"]) for x in deliveries(state_dir)] == [
        ("failed", "notify-send not found on PATH"),
        ("skipped", "nothing to update"),
    ]


# -- focus suppression -------------------------------------------------------------------------


def test_focus_suppression_with_a_real_tmux(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require("tmux", "script")
    log = tmp_path / "notify-send.jsonl"
    fake = tmp_path / "bin" / "notify-send"
    fake.parent.mkdir()
    fake.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        "print(7)\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    write_config(
        '[channels.desktop]\ntype = "desktop"\n'
        '[channels.cmd]\ntype = "command"\nargv = ["true"]\n'
        '[[rules]]\nwhen = ["permission", "question"]\n'
        'channels = ["desktop", "cmd"]\n'
    )
    with TmuxServer() as tmux:
        monkeypatch.setenv("TMUX", tmux.env["TMUX"])
        monkeypatch.setenv("TMUX_TMPDIR", tmux.env["TMUX_TMPDIR"])
        active = tmux.tmux("display-message", "-p", "-t", "main", "#{pane_id}")
        other = tmux.tmux("split-window", "-d", "-t", "main", "-P", "-F", "#{pane_id}")
        assert focus.pane_focused(active) is False  # no client attached: nobody is looking
        tmux.attach_client()
        assert focus.pane_focused(active) is True
        assert focus.pane_focused(other) is False  # same window, not the active pane
        assert focus.pane_focused(None) is False

        sender.run_job(make_job(state_dir, [intent(tmux_pane=active)]), str(state_dir))
        sender.run_job(
            make_job(state_dir, [intent("question", tmux_pane=other, episode="s1:question:2")]),
            str(state_dir),
        )
    results = [(d["kind"], d["channel"], d["result"], d["detail"]) for d in deliveries(state_dir)]
    assert (
        "permission",
        "desktop",
        "skipped",
        f"focused: tmux pane {active} is active in an attached client",
    ) in results
    assert ("permission", "cmd", "sent", "true exited 0") in results  # only desktop is skipped
    assert ("question", "desktop", "sent", "notify-send id 7") in results
    assert len(calls(log)) == 1

    # Away (issue 41): the user said they are not at the screen, so a focused pane is no reason.
    subprocess.run([sys.executable, "-m", "lookout", "away", "on"], check=True, timeout=30)
    with TmuxServer() as tmux:
        monkeypatch.setenv("TMUX", tmux.env["TMUX"])
        monkeypatch.setenv("TMUX_TMPDIR", tmux.env["TMUX_TMPDIR"])
        active = tmux.tmux("display-message", "-p", "-t", "main", "#{pane_id}")
        tmux.attach_client()
        assert focus.pane_focused(active) is True
        job = intent(tmux_pane=active, episode="s1:permission:3")
        sender.run_job(make_job(state_dir, [job]), str(state_dir))
    last = [d for d in deliveries(state_dir) if d["channel"] == "desktop"][-1]
    assert (last["kind"], last["result"]) == ("permission", "sent")
    assert len(calls(log)) == 2


def test_focus_unknown_without_tmux(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert focus.pane_focused("%1") is False


def test_rules_module_is_what_the_job_reflects(state_dir: Path) -> None:
    # the job carries texts for each content level its channels use, and no secret
    write_config(
        f'[channels.desktop]\ntype = "desktop"\n'
        f'[channels.phone]\ntype = "ntfy"\nurl = "https://ntfy.example/t"\n'
        f'token = "{SECRET}"\n'
        '[[rules]]\nwhen = ["done"]\nchannels = ["desktop", "phone"]\n'
    )
    job_path = make_job(
        state_dir, [intent("done", message="Line one\nline two", duration_ms=65_000)]
    )
    text = Path(job_path).read_text()
    assert SECRET not in text and "ntfy.example" not in text
    job = json.loads(text)
    assert job["deliveries"][0]["texts"] == {
        "full": ["demo · done in 1m05s", "Line one\nline two"],
        "summary": ["demo · done in 1m05s", "Line one"],
    }
    assert rules.decide  # the job came through the rules


def test_an_alert_from_a_fleet_host_names_it(tmp_path: Path) -> None:
    """newuser-5: two hosts on one bot sent `web · needs permission` alike. With [fleet] set up,
    the hook's alert (the real hook and the sender it starts) leads with the host."""
    prog, log = recorder(tmp_path)
    channel = (
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
    )
    write_config(channel + '[fleet]\nmqtt = "mqtt://127.0.0.1:1883"\nhost = "laptop"\n')
    body = json.loads((PAYLOADS / "PermissionRequest-Bash.json").read_text())
    project = os.path.basename(str(body["cwd"]))

    def fire(session: str) -> None:
        done = subprocess.run(
            [sys.executable, "-I", "-S", str(ROOT / "hooks" / "permission_request.py")],
            input=json.dumps({**body, "session_id": session}),
            capture_output=True, text=True, timeout=60, env=dict(os.environ), check=False,
        )  # fmt: skip
        assert (done.returncode, done.stdout) == (0, "")

    fire("fleet-1")
    [[title]] = wait_for(lambda: calls(log))
    assert title == f"laptop · {project} · needs permission"
    write_config(channel)  # no [fleet]: as before, no host
    fire("fleet-2")
    assert wait_for(lambda: len(c := calls(log)) == 2 and c)[1] == [f"{project} · needs permission"]
