"""N6 (security-2.md): one host on the broker can neither stall nor bloat a fleet viewer. What is
over the per-message, per-host and total limits is dropped and reported (status --fleet, doctor)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from lookout.fleet import limits
from tests.fleet.conftest import Host, broker, hosts  # noqa: F401 - fixtures
from tests.fleet.test_watch import publish, session
from tests.mosquitto import Broker

# A real broker, real sender/poller processes or a real hook sequence: the full suite, not --fast.
pytestmark = pytest.mark.real


def padded(session_id: str, size: int) -> bytes:
    body = session(session_id=session_id, summary="")
    return session(session_id=session_id, summary="x" * (size - len(body)))


def test_a_flooding_host_is_capped_and_the_rest_of_the_fleet_is_whole(
    broker: Broker,  # noqa: F811
    hosts: Callable[[str], Host],  # noqa: F811
) -> None:
    # A bounded version of the review's flood: more sessions than a host may hold, messages over
    # the size limit, and a host whose sessions are each under the limit but too many bytes.
    viewer = hosts("viewer")
    flood = [(f"lookout/flood/sessions/s{i}", padded(f"s{i}", 400)) for i in range(520)]
    big = [(f"lookout/flood/sessions/big{i}", padded(f"big{i}", 20_000)) for i in range(5)]
    fat = [(f"lookout/fat/sessions/f{i}", padded(f"f{i}", 15_000)) for i in range(75)]
    good = [(f"lookout/good/sessions/g{i}", session(session_id=f"g{i}")) for i in range(3)]
    online = [(f"lookout/{h}/online", b"true") for h in ("flood", "fat", "good")]
    publish(broker, online + flood + big + fat + good)

    out = viewer.lookout("status", "--fleet", "--json")
    assert out.returncode == 0, out.stderr
    fleet = json.loads(out.stdout)
    by_host = {h["host"]: h["sessions"] for h in fleet["hosts"]}
    assert by_host["good"] == 3  # the honest host is whole
    assert by_host["flood"] == limits.HOST_SESSIONS == 500
    kept_fat = by_host["fat"]
    assert kept_fat * 15_000 <= limits.HOST_BYTES < (kept_fat + 1) * 15_000
    dropped = fleet["dropped"]
    assert dropped["flood"] == {"host_sessions": 20, "too_big": 5}
    assert dropped["fat"] == {"host_bytes": 75 - kept_fat}
    assert "good" not in dropped

    table = viewer.lookout("status", "--fleet").stdout
    assert "note: over the fleet limits, not shown:" in table
    assert "  fat: " + str(75 - kept_fat) + " messages dropped (over 1 MB per host: " in table
    assert "flood: " in table and "messages over 16 KB: 5" in table

    doctor = json.loads(viewer.lookout("doctor", "--json").stdout)
    warned = [c["message"] for c in doctor["checks"] if "fleet limits" in c["message"]]
    assert len(warned) == 2 and any("fat:" in w for w in warned)


def test_budget_counts_replacements_by_what_they_add_and_frees_on_delete() -> None:
    b = limits.Budget()
    assert b.admit("h", ("h", "s1"), 1000) is None
    assert b.admit("h", ("h", "s1"), 2000) is None  # a newer state of the same session
    assert (b.host_sessions["h"], b.host_bytes["h"], b.total_bytes) == (1, 2000, 2000)
    assert b.admit("h", ("h", "s2"), limits.MAX_MESSAGE + 1) == "too_big"
    b.forget(("h", "s1"))
    assert (b.sizes, b.host_sessions, b.host_bytes, b.total_bytes) == ({}, {}, {}, 0)
    assert b.report() == {"h": {"too_big": 1}}


def test_budget_bounds_hosts_and_totals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_HOSTS", 2)
    monkeypatch.setattr(limits, "TOTAL_SESSIONS", 3)
    b = limits.Budget()
    assert b.admit("a", ("a", "1"), 10) is None
    assert b.admit("b", ("b", "1"), 10) is None
    assert b.admit("c", ("c", "1"), 10) == "hosts"
    assert b.admit("a", ("a", "2"), 10) is None
    assert b.admit("a", ("a", "3"), 10) == "total"
    for i in range(10):  # the drop counts stay bounded too
        b.drop(f"x{i}", "malformed")
    assert len(b.report()) <= 3
    assert limits.describe({"a": {"total": 1}}) == [
        "a: 1 message dropped (over the viewer's total limit: 1)"
    ]
