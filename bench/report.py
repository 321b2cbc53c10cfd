"""The waiting ledger at a year of history: `lookout report --json --since 365d` over 1,000,000
recorded events spread over events.jsonl and three rotated files, twice: dialogs only (the worst
case) and at a realistic density. Each against the time Python needs just to json.loads each of
those lines. Targets: dialogs only within 1.5x of json.loads (CPU, the report's start-up taken
out); realistic <= 2 s of CPU (wall time is printed too; it grows with the machine's load).
Both ratios are printed.

The events are the recorded week of tests/fixtures/ledger (what the real hook runner wrote: a
dialog every few events, far denser than real use), each copy followed by --padding lines of
ordinary tool traffic (auto-approved Bash calls, recorded by the runner too), copied with fresh
session ids and shifted clocks until the year holds --events lines. The report's episode count
must be the week's times the copies. Writes only to a temporary directory."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _common import child_env, children_cpu_s, load, quiet_config

ROOT = Path(__file__).resolve().parent.parent
WEEK = ROOT / "tests" / "fixtures" / "ledger" / "state"
YEAR_MS = 365 * 86400 * 1000
FILES = ("events.jsonl.3", "events.jsonl.2", "events.jsonl.1", "events.jsonl")  # oldest first


def week_lines() -> list[bytes]:
    lines: list[bytes] = []
    for name in ("events.jsonl.2", "events.jsonl.1", "events.jsonl"):
        lines += [raw for raw in (WEEK / name).read_bytes().split(b"\n") if raw]
    return lines


def traffic(tmp: str, count: int) -> list[bytes]:
    """`count` lines of one session's ordinary work, recorded by the real runner: Bash calls
    an allow rule let through (no dialog), each call's PostToolBatch, the assistant's text."""
    from lookout import runner

    os.environ["LOOKOUT_CONFIG"] = quiet_config(tmp)  # none of these raise an intent; still
    state = os.path.join(tmp, "traffic")
    payloads = ROOT / "tests" / "fixtures" / "payloads"
    names = ("PreToolUse-Bash", "PostToolUse-Bash", "PostToolBatch", "MessageDisplay")
    n = 0
    while n < count:
        for name in names:
            data = json.loads((payloads / f"{name}.json").read_text())
            data["session_id"] = "f0000000-0000-4000-8000-00000000f00d"
            data["tool_use_id"] = f"toolu_{n}"
            raw = json.dumps(data).encode()
            runner.record(raw, data["hook_event_name"], 1_700_000_000_000 + n, state, {})
            n += 1
    with open(os.path.join(state, "events.jsonl"), "rb") as fh:
        return [raw.rstrip(b"\n") for raw in fh][:count]


def build(state_dir: str, events: int, now_ms: int, padding: int = 0) -> int:
    """Write the year; return how many copies of the week it holds."""
    sys.path.insert(0, str(ROOT))
    from lookout import ledger, store

    week = [(ledger.ts_ms(raw[7:31]) or 0, raw[31:]) for raw in week_lines()]  # (ms, the rest)
    first = min(ms for ms, _ in week)
    # The ordinary work happens in the week too (its own session): a millisecond apart.
    extra = traffic(os.path.dirname(state_dir), padding) if padding else []
    parsed = week + [(first + 3_600_000 + i, raw[31:]) for i, raw in enumerate(extra)]
    copies = max(1, events // len(parsed))
    span = YEAR_MS - 9 * 86400 * 1000  # every copy (a day before its week, too) in the year
    start = now_ms - YEAR_MS + 2 * 86400 * 1000
    os.makedirs(state_dir, exist_ok=True)
    per_file = -(-copies // len(FILES))
    handles = [open(os.path.join(state_dir, name), "wb") for name in FILES]  # noqa: SIM115
    try:
        for k in range(copies):
            shift = start + span * k // copies - first
            tag = f"-{k:04x}-4000-8000-".encode() if k < 0x10000 else None
            assert tag is not None, "too many copies for distinct session ids"
            out = handles[min(k // per_file, len(FILES) - 1)]
            chunk = []
            for ms, rest in parsed:
                at = ms + shift
                chunk.append(
                    b'{"ts":"' + store.rfc3339(at).encode() + rest.replace(b"-0000-4000-8000-", tag)
                )
            out.write(b"\n".join(chunk) + b"\n")
    finally:
        for fh in handles:
            fh.close()
    return copies


def run_report(env: dict[str, str]) -> tuple[float, float, dict[str, object]]:
    """Wall and CPU seconds of one `lookout report` process, and its JSON."""
    before = children_cpu_s()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lookout", "report", "--json", "--since", "365d"],
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=600,
        check=True,
    )
    wall = time.perf_counter() - start
    return wall, children_cpu_s() - before, json.loads(done.stdout)


# What Python needs just to json.loads each line of the same files (its own loop, timed inside).
_LOADS = """
import json, sys, time
files = sys.argv[1:]
cpu, wall = time.process_time(), time.perf_counter()
n = 0
for name in files:
    with open(name, "rb") as fh:
        for line in fh:
            json.loads(line)
            n += 1
print(n, time.perf_counter() - wall, time.process_time() - cpu)
"""


def run_loads(state: str) -> tuple[float, float]:
    """Wall and CPU seconds of json.loads on every line of the files, in a process of its own."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADS, *(os.path.join(state, name) for name in FILES)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    _, wall, cpu = done.stdout.split()
    return float(wall), float(cpu)


def measure(
    tmp: str, name: str, events: int, padding: int, runs: int, per_week: int
) -> dict[str, float] | None:
    """Build one year, time `lookout report` over it against json.loads of its lines, interleaved;
    the report's start-up (over an empty state directory) is taken out. None if the count is
    wrong."""
    state = os.path.join(tmp, name)
    now_ms = int(time.time() * 1000)
    copies = build(state, events, now_ms, padding)
    lines = sum(1 for n in FILES for _ in open(os.path.join(state, n), "rb"))  # noqa: SIM115
    size = sum(os.path.getsize(os.path.join(state, n)) for n in FILES) / 1e6
    env = child_env(tmp, state)
    env["PYTHONPATH"] = str(ROOT)
    empty = {**env, "LOOKOUT_STATE_DIR": os.path.join(tmp, f"{name}-empty")}
    print(
        f"{name}: {lines} events in {len(FILES)} files ({size:.0f} MB), {copies} copies of the"
        f" week + {padding} ordinary lines each"
    )
    walls, cpus, loads_wall, loads_cpu, floor_wall, floor_cpu = [], [], [], [], [], []
    data: dict[str, object] = {}
    for _ in range(runs):
        wall, cpu, data = run_report(env)
        walls.append(wall)
        cpus.append(cpu)
        wall, cpu = run_loads(state)
        loads_wall.append(wall)
        loads_cpu.append(cpu)
        wall, cpu, _ = run_report(empty)
        floor_wall.append(wall)
        floor_cpu.append(cpu)
    med = statistics.median
    out = {
        "wall": med(walls),
        "cpu": med(cpus),
        "ratio": (med(cpus) - med(floor_cpu)) / med(loads_cpu),
        "wall_ratio": (med(walls) - med(floor_wall)) / med(loads_wall),
    }
    print(
        f"  lookout report --since 365d: median {out['wall']:.2f} s wall, {out['cpu']:.2f} s CPU"
        f" (start-up alone {med(floor_wall):.2f} s wall, {med(floor_cpu):.2f} s CPU)"
    )
    print(
        f"  json.loads of each line: median {med(loads_wall):.2f} s wall, {med(loads_cpu):.2f} s"
        f" CPU; ratio report / json.loads: {out['ratio']:.2f}x CPU, {out['wall_ratio']:.2f}x wall"
    )
    expected = per_week * copies
    if data.get("episodes") != expected:
        print(f"FAIL: {data.get('episodes')} episodes, expected {expected}")
        return None
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--max-s", type=float, default=2.0, help="target median CPU at --padding (2.0 s)"
    )
    parser.add_argument(
        "--max-ratio",
        type=float,
        default=1.5,
        help="target CPU ratio report / json.loads, dialogs only (1.5)",
    )
    parser.add_argument(
        "--padding", type=int, default=600, help="ordinary lines after each week (600)"
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from lookout import ledger

    per_week = len(ledger.read(str(WEEK)).waits)
    subprocess.run(  # pre-compile, so the first run is not the one paying for it
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "lookout")], check=True
    )
    print(f"load average {load()} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        worst = measure(tmp, "dialogs-only", args.events, 0, args.runs, per_week)
        shutil.rmtree(os.path.join(tmp, "dialogs-only"))
        usual = measure(tmp, "realistic", args.events, args.padding, args.runs, per_week)
    if worst is None or usual is None:
        return 1
    print(f"load average {load()}")
    if usual["cpu"] > args.max_s:  # CPU: what the machine's load does not change much
        print(f"FAIL: realistic {usual['cpu']:.2f} s CPU > {args.max_s:.2f} s")
        return 1
    if worst["ratio"] > args.max_ratio:
        print(f"FAIL: dialogs only {worst['ratio']:.2f}x > {args.max_ratio:.2f}x json.loads")
        return 1
    print(
        f"ok: dialogs only {worst['ratio']:.2f}x <= {args.max_ratio:.2f}x json.loads,"
        f" realistic {usual['ratio']:.2f}x and {usual['cpu']:.2f} s CPU <= {args.max_s:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
