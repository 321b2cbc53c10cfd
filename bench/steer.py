"""How fast `lookout say` reaches a real Claude Code session, and `lookout interrupt` stops one.

Usage: .venv/bin/python bench/steer.py [--runs 30] [--interrupts 5] [--max-ms 1000] [--json]
Offline: the pinned client (tests/e2e/client.py) in a private tmux server against the loopback
mock API, lookout's hooks from this checkout, [steer] on in a config of its own.

say: from starting `lookout say SESSION TEXT` (a new process, as a user runs it) to the mock's
answer to TEXT on the pane's screen (polled every 10 ms), once the session is idle again.
Target: p95 <= 1 s (issue 33).
interrupt: from the Steered record's time stamp (Esc sent) to the first record that shows the
session idle, during a 30 s command; measured from the records' own time stamps. Target <= 2 s.
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
from datetime import datetime
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CHECKOUT))

from bench._common import load  # noqa: E402
from tests.e2e.client import ensure_client  # noqa: E402
from tests.e2e.harness import ClaudePane, Install, Sandbox, hookspec_settings  # noqa: E402
from tests.e2e.test_steer import ANSWER, LOOP, LatestPrompt  # noqa: E402

MAX_INTERRUPT_MS = 2000


def ms(record: dict[str, Any]) -> float:
    return datetime.fromisoformat(record["ts"].replace("Z", "+00:00")).timestamp() * 1000


def records(sandbox: Sandbox, session: str) -> list[dict[str, Any]]:
    try:
        lines = sandbox.events_file.read_text().splitlines()
    except FileNotFoundError:
        return []
    rows = [json.loads(line) for line in lines if line.strip()]
    return [r for r in rows if r.get("session_id") == session]


def wait(probe: Any, timeout: float, what: str, step: float = 0.01) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"FAIL: timed out waiting for {what}")
        time.sleep(step)


def lookout(sandbox: Sandbox, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "lookout", *args],
        cwd=CHECKOUT,
        env=sandbox.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def idle(sandbox: Sandbox, session: str) -> bool:
    rows = [r for r in records(sandbox, session) if r["event"] != "Steered"]
    return bool(rows) and rows[-1]["status"] == "idle"


def bench_say(sandbox: Sandbox, pane: ClaudePane, session: str, runs: int) -> list[float]:
    """Milliseconds from starting `lookout say` to the answer on screen, per run."""
    out = []
    for n in range(runs):
        wait(lambda: idle(sandbox, session), 30, "the session idle")
        answer = f"steer-bench-{n}-{os.getpid()}"
        started = time.monotonic()
        proc = lookout(sandbox, "say", session, f"go {n} [[say: {answer}]]")
        wait(lambda a=answer: ANSWER + a in pane.screen(), 30, f"answer {n} on screen")
        out.append((time.monotonic() - started) * 1000)
        _, err = proc.communicate(timeout=30)
        if proc.returncode != 0:
            raise SystemExit(f"FAIL: lookout say exited {proc.returncode}: {err.strip()}")
    return out


def bench_interrupt(sandbox: Sandbox, pane: ClaudePane, session: str, runs: int) -> list[float]:
    """Milliseconds from the Steered (Esc) record to the session seen idle, per run."""
    out = []
    for n in range(runs):
        wait(lambda: idle(sandbox, session), 30, "the session idle")
        before = len(records(sandbox, session))
        say = lookout(sandbox, "say", session, f"loop {n} [[bash: {LOOP}]] [[say: looped]]")
        say.communicate(timeout=60)
        wait(
            lambda b=before: any(r["event"] == "PreToolUse" for r in records(sandbox, session)[b:]),
            30,
            "the command running",
        )
        proc = lookout(sandbox, "interrupt", session, "--json")
        stdout, err = proc.communicate(timeout=60)
        if proc.returncode != 0:
            raise SystemExit(f"FAIL: lookout interrupt exited {proc.returncode}: {err.strip()}")
        rows = records(sandbox, session)[before:]
        steered = next(
            r for r in rows if r["event"] == "Steered" and r["steer"]["action"] == "interrupt"
        )
        stopped = wait(
            lambda s=steered, b=before: next(
                (
                    r
                    for r in sorted(records(sandbox, session)[b:], key=ms)
                    if r["event"] != "Steered" and r["status"] == "idle" and ms(r) >= ms(s)
                ),
                None,
            ),
            30,
            "the session idle after Esc",
        )
        out.append(ms(stopped) - ms(steered))
        if json.loads(stdout)["result"] != "interrupted":
            raise SystemExit(f"FAIL: interrupt {n}: {stdout.strip()}")
    return out


def dist(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {
        "n": len(ordered),
        "min": ordered[0],
        "p50": statistics.median(ordered),
        "p95": p95,
        "max": ordered[-1],
    }


def shown(name: str, d: dict[str, float]) -> str:
    return (
        f"{name}: n={d['n']:.0f} min {d['min']:.0f} ms, p50 {d['p50']:.0f} ms,"
        f" p95 {d['p95']:.0f} ms, max {d['max']:.0f} ms"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--interrupts", type=int, default=5)
    parser.add_argument("--max-ms", type=float, default=1000.0, help="say p95 target")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    claude = ensure_client()
    with tempfile.TemporaryDirectory(prefix="lk-steer-", dir="/tmp") as tmp, LatestPrompt() as api:
        root = Path(tmp)
        settings = root / "settings.json"
        settings.write_text(json.dumps(hookspec_settings()))
        install = Install(root, settings, (sys.executable, "-m", "lookout"))
        sandbox = Sandbox(root, claude, install, api.url).prepare()
        sandbox.trust_project(idle_ms=60_000)
        sandbox.config.write_text("[steer]\nenabled = true\nper_minute = 600\n")
        with ClaudePane(sandbox, "--permission-mode", "manual", "--allowedTools", "Bash") as pane:
            session = pane.ready()
            say = dist(bench_say(sandbox, pane, session, args.runs))
            stop = (
                dist(bench_interrupt(sandbox, pane, session, args.interrupts))
                if args.interrupts
                else None
            )
            errors = sandbox.state_dir / "errors.log"
            problems = errors.read_text() if errors.exists() else ""
    if args.json:
        print(json.dumps({"say": say, "interrupt": stop, "load": load()}))
    print(f"load {load()}")
    print(shown("say -> answer on screen", say))
    if stop is not None:
        print(shown("interrupt (Esc) -> idle, from records", stop))
    if problems:
        print(f"FAIL: errors.log:\n{problems[-2000:]}")
        return 1
    if say["p95"] > args.max_ms:
        print(f"FAIL: say p95 {say['p95']:.0f} ms > {args.max_ms:.0f} ms")
        return 1
    if stop is not None and stop["max"] > MAX_INTERRUPT_MS:
        print(f"FAIL: interrupt max {stop['max']:.0f} ms > {MAX_INTERRUPT_MS} ms")
        return 1
    print(f"ok: say p95 {say['p95']:.0f} ms <= {args.max_ms:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
