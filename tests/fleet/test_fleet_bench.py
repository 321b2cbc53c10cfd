"""bench/fleet_scale.py in a quick mode (3 hosts x 4 sessions), judged by its own verdict."""

from __future__ import annotations

import pytest

from tests.mosquitto import require
from tests.test_bench import bench


@pytest.mark.real  # a benchmark against a real Mosquitto
def test_fleet_scale_quick() -> None:
    require("mosquitto")
    out = bench(
        "fleet_scale.py", "--hosts", "3", "--sessions", "4", "--hooks", "12", "--runs", "2",
        "--max-p95-ms", "1000",
    )  # fmt: skip
    assert "3 hosts x 4 sessions = 12 sessions" in out
    assert "lookout status --fleet --json (12 sessions): median" in out
    assert "hook -> --watch update, 12 hooks" in out
    assert out.rstrip().splitlines()[-1] == "ok"
