"""Concurrency: W concurrent writers x N hook runs each (16 x 250 by default), every one a real
`python -I -S hooks/pre_tool_use.py` process. Verifies exactly W*N whole, parseable lines with a
gapless per-session seq, and compares the wall time with W*N bare interpreter starts run with
the same concurrency. Writes only to a temporary state directory."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import child_env

ROOT = Path(__file__).resolve().parent.parent
PAYLOAD = ROOT / "tests" / "fixtures" / "payloads" / "PreToolUse-Bash.json"
SESSIONS = 4  # writers share sessions, so seq is contended


def lanes(writers: int, per: int, job: Callable[[int, int], None]) -> float:
    """Wall time of `writers` threads each running job(w, i) for i in range(per), in order."""

    def lane(w: int) -> None:
        for i in range(per):
            job(w, i)

    start = time.perf_counter()
    with ThreadPoolExecutor(writers) as pool:
        for future in [pool.submit(lane, w) for w in range(writers)]:
            future.result()
    return time.perf_counter() - start


def verify(events_path: Path, errors_path: Path, writers: int, per: int) -> list[str]:
    """Everything wrong with the log; empty when every event is there exactly once."""
    problems: list[str] = []
    data = events_path.read_bytes() if events_path.exists() else b""
    lines = data.split(b"\n")
    if lines[-1] != b"":
        problems.append("the file does not end with a newline")
    lines = lines[:-1]
    if len(lines) != writers * per:
        problems.append(f"{len(lines)} lines, expected {writers * per}")
    seqs: dict[str, list[int]] = defaultdict(list)
    summaries = set()
    for n, line in enumerate(lines):
        try:
            record = json.loads(line)
        except ValueError:
            problems.append(f"line {n + 1} does not parse: {line[:80]!r}")
            continue
        seqs[record["session_id"]].append(record["seq"])
        summaries.add(record["summary"])
        if record["duplicate"]:
            problems.append(f"line {n + 1} flagged duplicate")
    if len(summaries) != writers * per:
        problems.append(f"{len(summaries)} distinct events, expected {writers * per}")
    for session_id, got in sorted(seqs.items()):
        if got != list(range(1, len(got) + 1)):
            problems.append(f"session {session_id}: seq has gaps, repeats or disorder")
    if errors_path.exists():
        problems.append(f"errors.log: {errors_path.read_text()[:300]}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=16, help="concurrent writers (16)")
    parser.add_argument("--events", type=int, default=250, help="events per writer (250)")
    parser.add_argument("--max-ratio", type=float, help="exit 1 when hooks / bare is above")
    parser.add_argument("--python", default=sys.executable, help="interpreter (this one)")
    args = parser.parse_args(argv)
    writers, per, total = args.writers, args.events, args.writers * args.events

    subprocess.run(
        [args.python, "-m", "compileall", "-q", str(ROOT / "lookout")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    base = json.loads(PAYLOAD.read_text())
    hook = [args.python, "-I", "-S", str(ROOT / "hooks" / "pre_tool_use.py")]
    bare = [args.python, "-I", "-S", "-c", "pass"]
    with tempfile.TemporaryDirectory(prefix="lookout-bench-") as tmp:
        env = child_env(tmp)
        failures: list[str] = []

        def stdin(w: int, i: int) -> bytes:
            return json.dumps(
                {
                    **base,
                    "session_id": f"bench-{w % SESSIONS}",
                    "tool_use_id": f"toolu_{w}_{i}",
                    "tool_input": {"command": f"echo {w}-{i}"},
                }
            ).encode()

        def run(argv: list[str]) -> Callable[[int, int], None]:
            def job(w: int, i: int) -> None:
                proc = subprocess.run(argv, input=stdin(w, i), capture_output=True, env=env)
                if proc.returncode or proc.stdout or proc.stderr:
                    failures.append(f"{argv[-1]}: exit {proc.returncode} {proc.stderr[:200]!r}")

            return job

        # Bare first, hooks second, bare again: the mean of the two bare runs brackets drift.
        bare_1 = lanes(writers, per, run(bare))
        hooks_s = lanes(writers, per, run(hook))
        bare_2 = lanes(writers, per, run(bare))
        bare_s = (bare_1 + bare_2) / 2
        state = Path(env["LOOKOUT_STATE_DIR"])
        problems = failures[:5] + verify(state / "events.jsonl", state / "errors.log", writers, per)

    ratio = hooks_s / bare_s
    print(f"concurrency: {writers} writers x {per} hook runs = {total} events, {args.python}")
    print(f"  hooks          {hooks_s:7.2f} s  {total / hooks_s:8.0f} events/s")
    print(
        f"  bare starts    {bare_s:7.2f} s  {total / bare_s:8.0f} starts/s  (python -I -S -c pass)"
    )
    print(f"  ratio hooks / bare starts  {ratio:5.2f}x")
    if problems:
        print("FAIL: " + "\n  ".join(problems))
        return 1
    print(f"  {total} whole, parseable lines; per-session seq gapless")
    if args.max_ratio is not None and ratio > args.max_ratio:
        print(f"FAIL: {ratio:.2f}x > {args.max_ratio:.2f}x")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
