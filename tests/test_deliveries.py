"""lookout.deliveries: one send under its channel's timeout, and the deliveries.jsonl it writes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from lookout import deliveries, store
from tests.notify.jobs import intent


def test_run_parallel_bounds_a_channel_that_ignores_its_timeout() -> None:
    def stuck(ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> Any:
        time.sleep(30)

    start = time.monotonic()
    out = deliveries.run_parallel([("x", {"timeout_ms": 200}, {})], send=stuck)
    assert out == [("failed", "timed out after 0.2s", None)]
    assert time.monotonic() - start < 2


def test_deliveries_log_is_rotated(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deliveries, "DELIVERIES_ROTATE_BYTES", 1000)
    for _ in range(10):
        deliveries.record(str(state_dir), intent(), "cmd", "sent", "x" * 150)
    assert (state_dir / "deliveries.jsonl.1").exists()
    assert (state_dir / "deliveries.jsonl").stat().st_size < 1000


def test_recording_a_delivery_never_waits_for_the_hooks_lock(state_dir: Path) -> None:
    # Senders append to deliveries.jsonl under their own lock: a hook holding events.lock (or a
    # sender writing deliveries) never delays the other.
    state_dir.mkdir()
    intent = {"kind": "done", "session_id": "s1", "episode": None}
    with store.Locked(str(state_dir)):
        start = time.monotonic()
        deliveries.record(str(state_dir), intent, "desktop", "sent", "ok")  # type: ignore[arg-type]
        assert time.monotonic() - start < 1.0
    line = json.loads((state_dir / store.DELIVERIES).read_text())
    assert (line["channel"], line["result"]) == ("desktop", "sent")
