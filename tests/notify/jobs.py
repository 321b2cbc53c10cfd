"""The notify tests' shared vocabulary: an intent as the machine makes it, the job a hook would
hand the sender, and what the sender recorded."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from lookout import store, words
from lookout.config import cache
from lookout.notify import handle
from lookout.shapes import Intent
from lookout.words import ATTENTION_KINDS
from tests.helpers import build_intent

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
    now_ms = words.now_ms()
    deliveries = handle.decide_and_remember(intents, cfg, str(state_dir), now_ms)
    assert deliveries
    return handle.write_job(str(state_dir), handle.build_job(deliveries, cfg, None, now_ms))


def deliveries(state_dir: Path) -> list[dict[str, Any]]:
    path = state_dir / store.DELIVERIES
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def senders(state_dir: Path) -> list[int]:
    """pids of sender processes serving `state_dir` (their argv names a job in its outbox)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        line = b" ".join(argv)  # a sender of this tree, or of an older runtime (lookout.notify)
        if (b"lookout.sender.sender" in line or b"lookout.notify.sender" in line) and any(
            a.startswith(str(state_dir).encode()) for a in argv
        ):
            found.append(int(entry.name))
    return found


def hook_payload(name: str, session: str) -> bytes:
    from tests.helpers import PAYLOADS

    body = json.loads((PAYLOADS / f"{name}.json").read_text())
    return json.dumps({**body, "session_id": session}).encode()


def run_hooks(payloads: list[bytes], parallel: int = 8) -> None:
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


def wait_until(probe: Any, seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)
