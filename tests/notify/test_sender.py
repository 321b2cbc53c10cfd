"""The background worker: isolated channels with their own timeouts, recorded results, update in
place, escalation re-checks and tmux focus suppression (with a real tmux server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from lookout.config import cache, files
from lookout.notify import handle, rules, sender
from lookout.shapes import Intent
from lookout.words import ATTENTION_KINDS
from tests.helpers import build_intent, calls, recorder, write_config
from tests.receivers import NotificationBus, TmuxServer, ntfy_receiver, require, webhook_receiver

T0 = 1_800_000_000_000
SECRET = "tk_verysecret42"


def intent(kind: str = "permission", **fields: Any) -> Intent:
    return build_intent(
        kind,
        {
            "cwd": "/w/demo",
            "summary": "make deploy",
            "ts_ms": T0,
            "ts": "2026-11-25T22:00:00.000Z",
            "episode": "s1:permission:1" if kind in ATTENTION_KINDS else None,
        },
        fields,
    )


def make_job(state_dir: Path, intents: list[dict[str, Any]]) -> str:
    """What a hook would hand over: the rules' decision and the job file."""
    state_dir.mkdir(parents=True, exist_ok=True)
    cfg = cache.load_cached(str(state_dir), None)
    assert cfg is not None
    now_ms = int(time.time() * 1000)
    deliveries = handle.decide_and_remember(intents, cfg, str(state_dir), now_ms)
    assert deliveries
    return handle.write_job(str(state_dir), handle.build_job(deliveries, cfg, None, now_ms))


def deliveries(state_dir: Path) -> list[dict[str, Any]]:
    path = state_dir / store.DELIVERIES
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


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


def test_run_parallel_bounds_a_channel_that_ignores_its_timeout() -> None:
    def stuck(ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> Any:
        time.sleep(30)

    start = time.monotonic()
    out = sender.run_parallel([("x", {"timeout_ms": 200}, {})], send=stuck)
    assert out == [("failed", "timed out after 0.2s", None)]
    assert time.monotonic() - start < 2


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


# -- escalation --------------------------------------------------------------------------------


def write_snapshot(state_dir: Path, status: str, episode: str | None) -> None:
    (state_dir / "sessions").mkdir(parents=True, exist_ok=True)
    store.write_json_atomic(
        store.session_file(str(state_dir), "s1"),
        {"session_id": "s1", "status": status, "episode": episode},
    )


@pytest.mark.parametrize(
    ("status", "episode", "escalated"),
    [
        ("attention", "s1:permission:1", True),
        ("working", None, False),
        ("attention", "s1:permission:2", False),
    ],
    ids=["still-waiting", "answered", "another-episode"],
)
def test_escalation_rechecks_the_session(
    state_dir: Path, tmp_path: Path, status: str, episode: str | None, escalated: bool
) -> None:
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
        f'[channels.pager]\ntype = "command"\nargv = ["{prog}", "pager", "{{title}}"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
        'escalate_after_s = 0.3\nescalate_to = ["pager"]\n'
    )
    job = make_job(state_dir, [intent()])
    write_snapshot(state_dir, "attention", "s1:permission:1")
    sender.run_job(job, str(state_dir))  # the alert; the escalation becomes a scheduled file
    (scheduled,) = (state_dir / "outbox").glob("esc-*.json")
    write_snapshot(state_dir, status, episode)  # what happens while it waits
    sender.serve(str(state_dir), poll_s=0.05)  # returns once nothing is left
    assert not scheduled.exists()
    expected = [["demo · needs permission"]]
    if escalated:
        expected.append(["pager", "Still waiting: demo · needs permission"])
    assert calls(log) == expected
    last = deliveries(state_dir)[-1]
    assert last["channel"] == "pager"
    if escalated:
        assert (last["result"], last["detail"]) == ("sent", "escalated after 0.3s: record exited 0")
    else:
        assert (last["result"], last["detail"]) == (
            "skipped",
            "escalation after 0.3s: no longer waiting",
        )


# -- update in place ---------------------------------------------------------------------------


@pytest.fixture
def bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[NotificationBus]:
    require(*NotificationBus.BINARIES)
    with NotificationBus() as b:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", b.address)
        yield b


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
    monkeypatch.setattr(sender, "REF_WAIT_S", 0.1)
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
    sender.deliver(d, cfg, str(state_dir))
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
        assert sender.pane_focused(active) is False  # no client attached: nobody is looking
        tmux.attach_client()
        assert sender.pane_focused(active) is True
        assert sender.pane_focused(other) is False  # same window, not the active pane
        assert sender.pane_focused(None) is False

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


def test_focus_unknown_without_tmux(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert sender.pane_focused("%1") is False


def test_main_logs_its_own_crash(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state_dir.mkdir()
    (state_dir / "outbox").mkdir()

    def boom(*args: Any, **kw: Any) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(sender, "serve", boom)
    assert sender.main([str(state_dir), str(state_dir / "outbox" / "x.json")]) == 0
    assert "notification sender: Traceback" in (state_dir / "errors.log").read_text()


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


def test_escalation_can_be_updated_when_the_episode_ends(state_dir: Path, tmp_path: Path) -> None:
    with ntfy_receiver() as rx:
        prog, _ = recorder(tmp_path)
        write_config(
            f'[channels.cmd]\ntype = "command"\nargv = ["{prog}"]\n'
            f'[channels.phone]\ntype = "ntfy"\nurl = "{rx.url}/t"\n'
            '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
            'escalate_after_s = 0.1\nescalate_to = ["phone"]\n'
        )
        job = make_job(state_dir, [intent()])
        write_snapshot(state_dir, "attention", "s1:permission:1")
        sender.run_job(job, str(state_dir))
        sender.serve(str(state_dir), poll_s=0.02)  # the escalation, once due
        resolved = intent(
            "resolved", reason="permission", duration_ms=3000, episode="s1:permission:1"
        )
        sender.run_job(make_job(state_dir, [resolved]), str(state_dir))
        titles = [(m["title"], m["sequence_id"]) for m in rx.messages]
    seq = sender.sequence_id("s1:permission:1")
    assert titles == [
        ("Still waiting: demo · needs permission", seq),
        ("demo · permission handled", seq),
    ]


def test_stale_jobs_are_dropped_not_sent(state_dir: Path) -> None:
    outbox = state_dir / "outbox"
    outbox.mkdir(parents=True)
    old, fresh = outbox / "1-1.json", outbox / "2-2.json"
    old.write_text("{}")
    fresh.write_text("{}")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert sender.sweep(str(outbox), str(state_dir)) == 1
    assert sorted(p.name for p in outbox.iterdir()) == ["2-2.json"]
    assert "dropped 1 stale job(s)" in (state_dir / "errors.log").read_text()


def test_deliveries_log_is_rotated(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sender, "DELIVERIES_ROTATE_BYTES", 1000)
    for _ in range(10):
        sender.record(str(state_dir), intent(), "cmd", "sent", "x" * 150)
    assert (state_dir / "deliveries.jsonl.1").exists()
    assert (state_dir / "deliveries.jsonl").stat().st_size < 1000


def test_recording_a_delivery_never_waits_for_the_hooks_lock(state_dir: Path) -> None:
    # Senders append to deliveries.jsonl under their own lock: a hook holding events.lock (or a
    # sender writing deliveries) never delays the other.
    state_dir.mkdir()
    intent = {"kind": "done", "session_id": "s1", "episode": None}
    with store.Locked(str(state_dir)):
        start = time.monotonic()
        sender.record(str(state_dir), intent, "desktop", "sent", "ok")  # type: ignore[arg-type]
        assert time.monotonic() - start < 1.0
    line = json.loads((state_dir / store.DELIVERIES).read_text())
    assert (line["channel"], line["result"]) == ("desktop", "sent")


# -- verify before paging (issue 10) ------------------------------------------------------------


def _escalating_config(prog: Path, after_s: float) -> None:
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
        f'[channels.pager]\ntype = "command"\nargv = ["{prog}", "pager", "{{title}}"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
        f'escalate_after_s = {after_s}\nescalate_to = ["pager"]\n'
    )


@pytest.mark.parametrize(
    ("fixture", "kill"),
    [("permission-esc.jsonl", False), ("permission-approved-running.jsonl", True)],
    ids=["escaped-in-the-terminal", "process-killed"],
)
def test_escalation_verifies_before_paging_and_stops_waiting_at_once(
    state_dir: Path, tmp_path: Path, fixture: str, kill: bool
) -> None:
    from tests.test_reconcile import SID, Session

    prog, log = recorder(tmp_path)
    s = Session(tmp_path, state_dir, fixture)
    snap = s.snapshot
    if kill:  # kill -9 of the client at the dialog: no hook ever says so
        dead = subprocess.Popen(["true"])
        dead.wait()
        snap["pid"] = dead.pid
        with store.Locked(str(state_dir)) as st:
            st.write_session(snap)
    _escalating_config(prog, 30)
    episode = intent(session_id=SID, episode=snap["episode"])
    job = make_job(state_dir, [episode])
    sender.run_job(job, str(state_dir))  # the alert; the escalation waits in outbox/
    started = time.monotonic()
    sender.serve(str(state_dir), poll_s=0.02)
    assert time.monotonic() - started < 5  # not 30 s: the first look ended the wait
    assert calls(log) == [["demo · needs permission"]]  # the alert, never the escalation
    last = deliveries(state_dir)[-1]
    assert (last["channel"], last["result"]) == ("pager", "skipped")
    outcome = "process_gone" if kill else "rejected"
    assert [r["outcome"] for r in s.records() if r["event"] == "Reconciled"] == [outcome]


def test_escalation_still_pages_while_the_dialog_is_open(state_dir: Path, tmp_path: Path) -> None:
    from tests.test_reconcile import SID, Session

    prog, log = recorder(tmp_path)
    s = Session(tmp_path, state_dir, "permission-approved-running.jsonl")
    _escalating_config(prog, 0.3)
    job = make_job(state_dir, [intent(session_id=SID, episode=s.snapshot["episode"])])
    sender.run_job(job, str(state_dir))
    sender.serve(str(state_dir), poll_s=0.02)  # pages once due
    assert calls(log) == [
        ["demo · needs permission"],
        ["pager", "Still waiting: demo · needs permission"],
    ]


# -- one sender per state directory (M5) ------------------------------------------------------


def _senders(state_dir: Path) -> list[int]:
    """pids of sender processes serving `state_dir` (their argv names a job in its outbox)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"lookout.notify.sender" in b" ".join(argv) and any(
            a.startswith(str(state_dir).encode()) for a in argv
        ):
            found.append(int(entry.name))
    return found


def _hook(name: str, session: str) -> bytes:
    from tests.helpers import PAYLOADS

    body = json.loads((PAYLOADS / f"{name}.json").read_text())
    return json.dumps({**body, "session_id": session}).encode()


def _run_hooks(payloads: list[bytes], parallel: int = 8) -> None:
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    from tests.helpers import ROOT

    # Started like Claude Code starts it: SIGTERM ignored, which the sender must not inherit.
    argv = ["/bin/sh", "-c", f"trap '' TERM; exec {sys.executable} -I -S {ROOT}/hooks/event.py"]

    def one(data: bytes) -> None:
        done = subprocess.run(argv, input=data, capture_output=True, timeout=60, check=False)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")

    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(one, payloads))


def _wait(probe: Any, seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_a_flood_against_a_hanging_webhook_runs_one_sender(state_dir: Path) -> None:
    import socket
    import threading

    blackhole = socket.socket()
    blackhole.bind(("127.0.0.1", 0))
    blackhole.listen(128)  # accepts connections, never answers
    port = blackhole.getsockname()[1]
    write_config(
        f'[channels.hook]\ntype = "webhook"\nurl = "http://127.0.0.1:{port}/x"\n'
        "timeout_ms = 300\n"
        '[[rules]]\nwhen = ["permission"]\nchannels = ["hook"]\n'
    )
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, len(_senders(state_dir)))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        _run_hooks([_hook("PermissionRequest-Bash", f"flood-{i}") for i in range(40)])

        def all_recorded() -> bool:
            path = state_dir / store.DELIVERIES
            return path.exists() and len(path.read_text().splitlines()) >= 40

        assert _wait(all_recorded, 30)
        assert _wait(lambda: not _senders(state_dir), 10)
    finally:
        stop.set()
        sampler.join()
        blackhole.close()
    # One sender serves the state dir; a hook racing its exit may start the next one while it
    # is still leaving (milliseconds). Before: one sender per hook, 40 here.
    assert 1 <= peak <= 3, peak
    results = [(d["result"], d["detail"]) for d in deliveries(state_dir)]
    assert results == [("failed", "timed out after 0.3s")] * 40


def test_an_answered_escalation_frees_the_sender_at_once(state_dir: Path, tmp_path: Path) -> None:
    prog, log = recorder(tmp_path)
    write_config(
        f'[channels.cmd]\ntype = "command"\nargv = ["{prog}", "{{title}}"]\n'
        f'[channels.pager]\ntype = "command"\nargv = ["{prog}", "pager"]\n'
        '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
        'escalate_after_s = 3600\nescalate_to = ["pager"]\n'
    )
    sessions = [f"esc-{i}" for i in range(10)]
    _run_hooks([_hook("PermissionRequest-Bash", s) for s in sessions])
    assert _wait(lambda: len(calls(log)) == 10, 15)
    (pid,) = _wait(lambda: _senders(state_dir), 5)  # one process waits for all ten
    status = Path(f"/proc/{pid}/status").read_text()
    ignored = int(next(ln for ln in status.splitlines() if ln.startswith("SigIgn:")).split()[1], 16)
    assert not ignored & (1 << 14), "the sender inherited the hook's ignored SIGTERM"  # L1
    _run_hooks([_hook("PostToolUse-Bash", s) for s in sessions])  # every one answered
    started = time.monotonic()
    assert _wait(lambda: not _senders(state_dir), 5), "a sender still sleeps on an escalation"
    assert time.monotonic() - started < 3
    skipped = [d for d in deliveries(state_dir) if d["channel"] == "pager"]
    assert [(d["result"], d["detail"]) for d in skipped] == [
        ("skipped", "escalation after 3600s: no longer waiting")
    ] * 10
    assert not list((state_dir / "outbox").glob("*.json"))
    assert ["pager"] not in calls(log)


def test_the_sender_keeps_the_state_directory_bounded(state_dir: Path) -> None:
    # sessions/ grew forever and .tmp files of killed writers were never swept (L11).
    sessions = state_dir / "sessions"
    sessions.mkdir(parents=True)
    now = time.time()
    files = {
        "fresh.json": now,
        "month-old.json": now - 31 * 86400,
        ".fresh.json.123.tmp": now,
        ".killed.json.456.tmp": now - 3600,
    }
    for name, mtime in files.items():
        (sessions / name).write_text("{}")
        os.utime(sessions / name, (mtime, mtime))
    sender.maintain(str(state_dir), now)
    assert sorted(p.name for p in sessions.iterdir()) == [".fresh.json.123.tmp", "fresh.json"]
    (sessions / "month-old.json").write_text("{}")
    os.utime(sessions / "month-old.json", (now - 31 * 86400,) * 2)
    sender.maintain(str(state_dir), now + 60)  # at most once an hour
    assert (sessions / "month-old.json").exists()
