"""The sender's loop: one per state directory, stale jobs dropped, its own crash logged, the
state directory kept bounded."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from lookout.sender import sender
from tests.helpers import write_config
from tests.notify.jobs import deliveries, hook_payload, run_hooks, senders, wait_until


def test_main_logs_its_own_crash(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state_dir.mkdir()
    (state_dir / "outbox").mkdir()

    def boom(*args: Any, **kw: Any) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(sender, "serve", boom)
    assert sender.main([str(state_dir), str(state_dir / "outbox" / "x.json")]) == 0
    assert "notification sender: Traceback" in (state_dir / "errors.log").read_text()


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


# -- one sender per state directory (M5) ------------------------------------------------------


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
            peak = max(peak, len(senders(state_dir)))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        run_hooks([hook_payload("PermissionRequest-Bash", f"flood-{i}") for i in range(40)])

        def all_recorded() -> bool:
            path = state_dir / store.DELIVERIES
            return path.exists() and len(path.read_text().splitlines()) >= 40

        assert wait_until(all_recorded, 30)
        assert wait_until(lambda: not senders(state_dir), 10)
    finally:
        stop.set()
        sampler.join()
        blackhole.close()
    # One sender serves the state dir; a hook racing its exit may start the next one while it
    # is still leaving (milliseconds). Before: one sender per hook, 40 here.
    assert 1 <= peak <= 3, peak
    results = [(d["result"], d["detail"]) for d in deliveries(state_dir)]
    assert results == [("failed", "timed out after 0.3s")] * 40


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
