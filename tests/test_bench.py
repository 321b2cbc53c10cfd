"""The benchmarks in bench/, each in a quick mode, judged by their own verdict (exit status), so
that they keep working. The full runs are `python bench/<name>.py`."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.helpers import ROOT

# The benchmarks run whole scenarios (real processes, brokers, browsers): the full suite only.
pytestmark = pytest.mark.slow


def bench(name: str, *args: str, timeout: float = 120) -> str:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    print(proc.stdout, proc.stderr)  # shown by pytest when the verdict fails
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    return proc.stdout


@pytest.mark.slow
def test_hook_latency_within_2x() -> None:
    out = bench("hook_latency.py", "--runs", "15", "--max-ratio", "2.0")
    assert "ratio hook / python -c pass" in out
    assert out.rstrip().splitlines()[-1].startswith("ok")


@pytest.mark.slow
def test_hook_latency_phases_name_every_step() -> None:
    out = bench("hook_latency.py", "--phases", "--runs", "3")
    steps = ("import lookout.hookpack", "load the precompiled hook path", "JSON parse")
    steps += ("write snapshot", "append events.jsonl", "notification check", "= in process")
    for step in steps:
        assert step in out, step


@pytest.mark.slow
def test_status_line_bench_shows_the_line_and_its_ratio() -> None:
    out = bench("status_line.py", "--sessions", "10", "--runs", "3")
    assert "line: ! " in out  # sessions waiting on a dialog lead the line
    assert "ratio status --line / python -c pass" in out
    assert out.rstrip().splitlines()[-1].startswith("ok")


def test_the_report_reads_a_long_history_quickly() -> None:
    # 50,000 events (the full run is 1,000,000 <= 2 s); the count is checked, not only the time.
    # Medians of 7 runs: of 3, the ratio of two ~0.3 s figures moved from 1.04x to 1.66x on one
    # tree in the same minutes (a CI failure at 1.53x).
    out = bench("report.py", "--events", "50000", "--runs", "7", "--max-s", "2.0")
    assert "copies of the week" in out
    assert out.rstrip().splitlines()[-1].startswith("ok")


@pytest.mark.slow
def test_concurrent_writers_lose_nothing() -> None:
    out = bench("concurrency.py", "--writers", "8", "--events", "15")
    assert "120 whole, parseable lines; per-session seq gapless" in out
    assert "events/s" in out


@pytest.mark.slow
def test_status_cost_does_not_grow_with_the_log() -> None:
    out = bench("status_scale.py", "--large", "50000", "--runs", "9", "--max-ratio", "1.5")
    assert "50,000 events" in out
    assert out.rstrip().splitlines()[-1].startswith("ok")


@pytest.mark.slow
def test_reconciling_keeps_status_cheap_with_big_transcripts() -> None:
    out = bench("reconcile_cost.py", "--megabytes", "5", "--runs", "5", "--max-ratio", "1.5")
    assert "5 MB transcripts, dialog at the end" in out
    assert out.rstrip().splitlines()[-1].startswith("ok")


@pytest.mark.slow
def test_the_deciding_hook_answers_fast_and_idles_cheaply() -> None:
    out = bench("remote_answer.py", "--runs", "5", "--idle-s", "1", "--max-ms", "1500")
    assert "answer -> decision printed, hook exited: median" in out
    assert "% of one core" in out
    assert out.rstrip().splitlines()[-1].startswith("ok")


@pytest.mark.slow
def test_a_telegram_press_reaches_the_hook_fast() -> None:
    out = bench("remote_answer.py", "--surface", "telegram", "--runs", "3", "--max-ms", "1500")
    assert "telegram: press -> hook exited: median" in out
    assert out.rstrip().splitlines()[-1].startswith("ok: telegram press -> exit p95 ")


@pytest.mark.slow
def test_a_slack_press_reaches_the_hook_fast() -> None:
    out = bench("remote_answer.py", "--surface", "slack", "--runs", "3", "--max-ms", "1500")
    assert "slack: press -> hook exited: median" in out
    assert out.rstrip().splitlines()[-1].startswith("ok: slack press -> exit p95 ")


def test_an_ntfy_press_reaches_the_hook_fast() -> None:
    out = bench("remote_answer.py", "--surface", "ntfy", "--runs", "3", "--max-ms", "1500")
    assert "ntfy: press -> hook exited: median" in out
    assert out.rstrip().splitlines()[-1].startswith("ok: ntfy press -> exit p95 ")


def test_a_matrix_reaction_reaches_the_hook_fast() -> None:
    from tests.synapse import ensure

    ensure()  # installed here (minutes the first time), not within the bench's 120 s
    # Synapse starts and registers its accounts first: half a minute, more on a busy machine.
    argv = ("--surface", "matrix", "--runs", "3", "--max-ms", "1500")
    out = bench("remote_answer.py", *argv, timeout=600)
    assert "matrix: press -> hook exited: median" in out
    assert out.rstrip().splitlines()[-1].startswith("ok: matrix press -> exit p95 ")


def test_a_home_assistant_press_answers_within_a_second() -> None:
    pytest.importorskip("paho.mqtt")
    out = bench("remote_answer.py", "--surface", "home_assistant", "--runs", "5", "--idle-s", "0.5")
    assert "surface: home_assistant" in out
    assert out.rstrip().splitlines()[-1].startswith("ok: home_assistant: answer -> exit p95")


@pytest.mark.slow
def test_dashboard_delay_within_a_second() -> None:
    out = bench("dashboard.py", "--sessions", "50", "--streams", "3", "--runs", "5",
                "--idle-s", "0.5", "--no-browser")  # fmt: skip
    assert "50 sessions, 3 open streams (3 SSE clients), 5 hook runs" in out
    assert "hook start -> SSE message (15): p50 " in out
    assert out.rstrip().splitlines()[-1].startswith("ok: p95 ")


def test_a_ratio_above_the_limit_fails() -> None:
    # The verdict must be able to say no: no hook is faster than a tenth of a bare start.
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "hook_latency.py"),
            "--runs",
            "3",
            "--max-ratio",
            "0.1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "FAIL" in proc.stdout


@pytest.mark.slow
def test_steering_a_real_claude_session_is_quick() -> None:
    # Issue 33: the full run is 30 says and 5 interrupts (p95 <= 1 s; interrupt <= 2 s).
    out = bench("steer.py", "--runs", "3", "--interrupts", "1", "--max-ms", "3000")
    assert "say -> answer on screen: n=3" in out
    assert "interrupt (Esc) -> idle, from records: n=1" in out
    assert out.rstrip().splitlines()[-1].startswith("ok")


# Issue 35 item 2: the soak's CI version, run once for the tests below (the week is `python
# bench/soak.py`). events.jsonl rotates at 700 kB so that the report is read across rotated
# files. Each verdict is counts and /proc samples from the script's JSON, never wall time (a
# starved replay only falls behind its schedule).
@pytest.fixture(scope="module")
def soak() -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "soak.py"), "--minutes", "2",
         "--rotate-bytes", "700000", "--json"],
        capture_output=True,
        text=True,
        timeout=3600,
    )  # fmt: skip
    print(proc.stderr)  # the readable report, shown by pytest when an assertion fails
    result: dict[str, Any] = json.loads(proc.stdout)
    result["exit"] = proc.returncode
    return result


@pytest.mark.slow
def test_soak_every_hook_ran_and_every_alert_arrived_once(soak: dict[str, Any]) -> None:
    assert soak["hooks"]["runs"] == soak["run"]["events"]
    assert soak["hooks"]["failed"] == 0
    assert soak["drain"]["done"]  # outbox empty; every sender, poller and deciding hook exited
    for channel, row in soak["alerts"]["channels"].items():
        assert row["expected"] > 0, channel
        assert row["sent"] == row["received"] == row["expected"], (channel, row)
        assert (row["lost"], row["duplicated"], row["unexpected"], row["failed"]) == (0, 0, 0, 0)
    assert soak["alerts"]["stray"] == 0
    assert soak["processes"]["short_lived"]["sender"]["processes"] > 0
    assert soak["errors"]["dashboard_errors"] == 0
    assert soak["errors"]["errors_log_lines"] == 0


@pytest.mark.slow
def test_soak_report_stays_exact_across_rotation(soak: dict[str, Any]) -> None:
    events = soak["events"]
    assert events["files"] >= 3, "events.jsonl rotated"
    assert events["everything_kept"]
    assert events["hook_records"] == soak["hooks"]["runs"]
    assert (events["duplicates"], events["seq_gaps"]) == (0, 0)
    report = soak["report"]
    assert report["episodes"] == report["script"] == soak["run"]["dialogs"]
    assert report["cells_exact"] == report["cells"] > 0


@pytest.mark.slow
def test_soak_descriptors_and_threads_stay_flat(soak: dict[str, Any]) -> None:
    processes = soak["processes"]["long_lived"]
    assert {p["role"] for p in processes} >= {"serve", "bridge"}
    for p in processes:
        assert p["samples"] >= 20, p
        assert p["fds_end"] <= p["fds_warm"] + 2, p
        assert p["threads_end"] <= p["threads_warm"] + 2, p


@pytest.mark.slow
@pytest.mark.parametrize("role", ["bridge", "serve"])
def test_soak_memory_grows_at_most_10_percent_after_warm_up(
    soak: dict[str, Any], role: str
) -> None:
    rows = [p for p in soak["processes"]["long_lived"] if p["role"] == role]
    assert rows
    for p in rows:
        assert p["growth_pct"] <= 10.0, p


@pytest.mark.slow
def test_a_press_at_the_fleets_hub_answers_another_host_fast() -> None:
    pytest.importorskip("paho.mqtt")
    out = bench("remote_answer.py", "--surface", "telegram", "--fleet", "--runs", "5")
    assert "telegram --fleet: press at the hub -> hostb's answer: median" in out
    assert "getUpdates outstanding at once in the fleet: at most 1" in out
    assert out.rstrip().splitlines()[-1].startswith("ok: telegram --fleet press -> answer p95 ")
