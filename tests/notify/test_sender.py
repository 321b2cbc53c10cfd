"""The sender's loop: one per state directory, stale jobs dropped, its own crash logged, the
state directory kept bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from lookout.notify import sender
from tests.helpers import write_config
from tests.notify.jobs import deliveries


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
