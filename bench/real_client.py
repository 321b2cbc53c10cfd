"""Overhead of lookout on the real Claude Code client: wall time of the same `claude -p` scenario
(one Bash tool call) with and without lookout's hooks, interleaved runs, median ratio.

Usage: .venv/bin/python bench/real_client.py [--runs 15] [--checkout] [--baseline B] [--json]
Offline: the client talks only to a loopback mock API (tests/e2e/mock_api.py).

The baseline (--baseline interpreter, the default) is the same client with the same hook entries
(events, async, timeouts, the same interpreter), each running `python -I -S -c pass`: what is
left is lookout's own cost. Target: <= 1.03x (issue 23). `--baseline none` compares with no
hooks at all.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CHECKOUT))

from tests.e2e.client import ensure_client, offline_env  # noqa: E402
from tests.e2e.harness import hookspec_settings, run_install_py  # noqa: E402
from tests.e2e.mock_api import MockAPI  # noqa: E402

PROMPT = "[[bash: echo bench]] [[say: done]]"
TARGET = 1.03


def make_home(root: Path, name: str, settings: dict[str, object] | None) -> Path:
    home = root / name
    (home / ".claude").mkdir(parents=True)
    (home / "project").mkdir()
    if settings is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    return home


def interpreter_settings(lookout_home: Path) -> dict[str, object]:
    """lookout's installed settings with every command a bare start of the same interpreter."""
    import shlex

    settings = json.loads((lookout_home / ".claude" / "settings.json").read_text())
    python = lookout_home / ".local" / "share" / "lookout" / "venv" / "bin" / "python"
    bare = f"trap '' TERM; exec {shlex.quote(str(python))} -I -S -c pass"
    for groups in settings["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = bare
    return settings


def children_cpu_s() -> float:
    """CPU time (user + system) of the child processes waited for so far: the client and the
    hooks it waited for. Unlike wall time it hardly moves with the machine's load."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(claude: Path, home: Path, url: str) -> tuple[float, float, list[str], list[str]]:
    """Wall time, CPU time, the hook runs the client reported, and those that were not clean."""
    argv = [
        str(claude),
        "-p",
        PROMPT,
        "--allowedTools",
        "Bash",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-hook-events",
    ]
    env = offline_env(home, url)
    used = children_cpu_s()
    started = time.perf_counter()
    done = subprocess.run(
        argv, cwd=home / "project", env=env, capture_output=True, text=True, timeout=120
    )
    elapsed = time.perf_counter() - started
    cpu = children_cpu_s() - used
    if done.returncode != 0:
        raise SystemExit(f"claude failed ({done.returncode}): {done.stderr[-2000:]}")
    hooks, unclean = [], []
    for line in done.stdout.splitlines():
        event = json.loads(line) if line.startswith("{") else {}
        if event.get("subtype") == "hook_response":
            hooks.append(str(event.get("hook_name")))
            if event.get("exit_code") != 0 or event.get("stdout"):
                unclean.append(f"{event.get('hook_name')}: {event.get('outcome')}")
    return elapsed, cpu, hooks, unclean


def make_async(home: Path, events: list[str]) -> None:
    """Mark lookout's entries for these events `"async": true` (to measure a registration)."""
    path = home / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    for event in events:
        for group in settings["hooks"].get(event, []):
            for handler in group["hooks"]:
                handler["async"] = True
    path.write_text(json.dumps(settings, indent=2))


def statuses(home: Path) -> list[str]:
    """event -> status lines of the last session lookout recorded in this HOME."""
    path = home / ".local" / "state" / "lookout" / "events.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    last = rows[-1]["session_id"] if rows else None
    out = []
    for row in rows:
        if row["session_id"] == last:
            reason = f"/{row['reason']}" if row.get("reason") else ""
            detail = f" ({row['detail']})" if row.get("detail") else ""
            out.append(f"{row['event']} -> {row['status']}{reason}{detail}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="measured runs per variant (15)")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured runs per variant (2)")
    parser.add_argument(
        "--checkout",
        action="store_true",
        help="hooks from this checkout (lookout.hookspec) instead of install.py",
    )
    parser.add_argument(
        "--async",
        dest="make_async",
        default="",
        metavar="EVENTS",
        help="also register these events async (comma-separated), to measure",
    )
    parser.add_argument(
        "--baseline",
        choices=("interpreter", "none"),
        default="interpreter",
        help="compare with the same hooks as bare interpreter starts (default) or no hooks",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)

    claude = ensure_client()
    with tempfile.TemporaryDirectory(prefix="lookout-bench-") as tmp, MockAPI() as api:
        root = Path(tmp)
        if args.checkout:
            with_lookout = make_home(root, "lookout", hookspec_settings())
            how = "checkout hooks (hookspec)"
        else:
            with_lookout = root / "lookout"
            with_lookout.mkdir()
            done = run_install_py(with_lookout)
            if done.returncode != 0:
                raise SystemExit(f"install.py failed:\n{done.stdout}\n{done.stderr}")
            (with_lookout / "project").mkdir()
            how = "python3 install.py"
        extra_async = [e for e in args.make_async.split(",") if e]
        if extra_async:
            make_async(with_lookout, extra_async)
            how += f", also async: {', '.join(extra_async)}"
        if args.baseline == "none" or args.checkout:
            bare = make_home(root, "bare", {})
        else:
            bare = make_home(root, "bare", interpreter_settings(with_lookout))
        times: dict[str, list[float]] = {"bare": [], "lookout": []}
        cpus: dict[str, list[float]] = {"bare": [], "lookout": []}
        fired: list[str] = []
        unclean: list[str] = []
        for i in range(args.warmup + args.runs):
            # Alternate which variant goes first, so drift and caching favour neither.
            order = [("bare", bare), ("lookout", with_lookout)]
            for name, home in order if i % 2 == 0 else reversed(order):
                elapsed, cpu, hooks, bad = run_once(claude, home, api.url)
                unclean += bad
                if i >= args.warmup:
                    times[name].append(elapsed)
                    cpus[name].append(cpu)
                if name == "lookout":
                    fired = hooks
        time.sleep(1.0)  # SessionEnd is async: let the last record land
        recorded = statuses(with_lookout)

    bare_ms = statistics.median(times["bare"]) * 1000
    lookout_ms = statistics.median(times["lookout"]) * 1000
    ratio = lookout_ms / bare_ms
    # Each pair ran back to back: the median of the per-pair ratios is not moved by the machine
    # getting slower or faster during the run (a shared VM does, by 10% and more).
    pairs = zip(times["bare"], times["lookout"], strict=True)
    paired = statistics.median([lk / b for b, lk in pairs])
    cpu_bare, cpu_lookout = (statistics.median(cpus[n]) * 1000 for n in ("bare", "lookout"))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())  # the figures mean little on a busy box
    result = {
        "load_average": load,
        "how": how,
        "runs": args.runs,
        "baseline": "none" if args.checkout else args.baseline,
        "bare_median_ms": round(bare_ms, 1),
        "lookout_median_ms": round(lookout_ms, 1),
        "ratio": round(ratio, 3),
        "paired_ratio": round(paired, 3),
        "cpu_bare_median_ms": round(cpu_bare, 1),
        "cpu_lookout_median_ms": round(cpu_lookout, 1),
        "cpu_ratio": round(cpu_lookout / cpu_bare, 3),
        "target": TARGET,
        "hooks_fired": fired,
        "statuses": recorded,
        "unclean_hook_runs": unclean,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"lookout via {how}, {args.runs} interleaved runs each (+{args.warmup} warm-up)")
        print(f"  load average {load}")
        label = (
            "bare hooks:" if args.baseline == "interpreter" and not args.checkout else "no hooks:"
        )
        print(f"  {label:<16} median {bare_ms:7.1f} ms")
        print(f"  with lookout:    median {lookout_ms:7.1f} ms")
        print(f"  ratio: {ratio:.3f}x (target <= {TARGET}x): {'OK' if ratio <= TARGET else 'OVER'}")
        print(f"  median of the {args.runs} back-to-back pairs' ratios: {paired:.3f}x")
        print(
            f"  CPU time (client + the hooks it waited for): bare {cpu_bare:.1f} ms, with lookout"
            f" {cpu_lookout:.1f} ms, ratio {cpu_lookout / cpu_bare:.3f}x"
        )
        print(
            f"hook runs the client reported ({len(fired)}; not those still running at its exit, "
            "e.g. the async SessionEnd): " + ", ".join(fired)
        )
        print("statuses lookout recorded for the last session:")
        for line in recorded:
            print(f"  {line}")
        if unclean:
            print(f"hook runs not clean (exit code != 0 or stdout): {len(unclean)}")
            for line in sorted(set(unclean)):
                print(f"  {line} x{unclean.count(line)}")
    return 1 if unclean else 0


if __name__ == "__main__":
    raise SystemExit(main())
