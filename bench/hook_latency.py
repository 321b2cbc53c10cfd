"""Hook latency: median wall time of hooks/pre_tool_use.py (or, with --agent, that agent's hook on
its own tool-call payload), run exactly as installed (`python -I -S`), on a real payload vs a bare
`python -c pass` of the same interpreter, interleaved. Target: <= 1.3x. Writes only to a
temporary state directory."""

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

from _common import child_env, quiet_config, verdict

ROOT = Path(__file__).resolve().parent.parent
PAYLOAD = ROOT / "tests" / "fixtures" / "payloads" / "PreToolUse-Bash.json"
TARGET = 1.3
WARMUP = 5
FIXTURES = ROOT / "tests" / "fixtures"
# --agent: (hook script, its tool-call payload, arguments the installed command passes)
AGENTS = {
    "claude": ("pre_tool_use.py", PAYLOAD, []),
    "gemini": ("gemini.py", FIXTURES / "gemini" / "BeforeTool.json", []),
    "copilot": ("copilot.py", FIXTURES / "copilot" / "preToolUse-bash.json", ["preToolUse"]),
    "cursor": ("cursor.py", FIXTURES / "cursor" / "beforeShellExecution.json", []),
}


def precompile(python: str) -> None:
    """Bytecode for the package, so that no run pays for compiling it."""
    subprocess.run(
        [python, "-m", "compileall", "-q", str(ROOT / "lookout")],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def timed(argv: list[str], stdin: bytes, env: dict[str, str], answer: bytes = b"") -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode or proc.stdout != answer or proc.stderr:
        raise SystemExit(
            f"error: {argv[-1]} exited {proc.returncode}: {proc.stdout + proc.stderr!r}"
        )
    return elapsed


def in_process_cost(runs: int, state_dir: str) -> tuple[float, float]:
    """(import of lookout.runner in a fresh -I -S interpreter, median runner.record), in ms."""
    probe = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-X",
            "importtime",
            "-c",
            f"import sys; sys.path.insert(0, {str(ROOT)!r}); import lookout.runner",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    import_us = 0
    for line in probe.stderr.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == "lookout.runner":
            import_us = int(parts[1])
    # PreToolUse asks for no notification, but never let a bench read the user's config.
    os.environ["LOOKOUT_CONFIG"] = quiet_config(os.path.dirname(state_dir))
    sys.path.insert(0, str(ROOT))
    from lookout import runner

    base = json.loads(PAYLOAD.read_text())
    samples = []
    for i in range(runs):
        raw = json.dumps({**base, "tool_use_id": f"toolu_inproc_{i}"}).encode()
        start = time.perf_counter()
        runner.record(raw, "PreToolUse", int(time.time() * 1000), state_dir, {})
        samples.append(time.perf_counter() - start)
    return import_us / 1000, statistics.median(samples) * 1000


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=60, help="timed runs of each command (60)")
    parser.add_argument(
        "--max-ratio", type=float, help="exit 1 when hook / python -c pass is above"
    )
    parser.add_argument("--python", default=sys.executable, help="interpreter (this one)")
    parser.add_argument("--agent", choices=sorted(AGENTS), default="claude", help="whose hook")
    args = parser.parse_args(argv)

    precompile(args.python)
    script, payload, extra = AGENTS[args.agent]
    base = json.loads(payload.read_text())
    with tempfile.TemporaryDirectory(prefix="lookout-bench-") as tmp:
        env = child_env(tmp)
        commands = {
            "python -c pass": [args.python, "-c", "pass"],
            "python -I -S -c pass": [args.python, "-I", "-S", "-c", "pass"],
            f"hook (-I -S {script})": [
                args.python,
                "-I",
                "-S",
                str(ROOT / "hooks" / script),
                *extra,
            ],
        }
        names = list(commands)
        samples: dict[str, list[float]] = {name: [] for name in names}
        for i in range(WARMUP + args.runs):
            # A different delivery each time (the same bytes twice would be a duplicate).
            stdin = json.dumps({**base, "tool_use_id": f"toolu_bench_{i}", "n": i}).encode()
            # Rotate the order so that no command always runs right after another.
            for k in range(len(names)):
                name = names[(i + k) % len(names)]
                # Cursor's hook answers `{}` (Cursor reads stdout as JSON); the others say nothing.
                answer = b"{}\n" if name.endswith("cursor.py)") else b""
                elapsed = timed(commands[name], stdin, env, answer)
                if i >= WARMUP:
                    samples[name].append(elapsed)
        events = Path(env["LOOKOUT_STATE_DIR"], "events.jsonl").read_bytes().count(b"\n")
        if events != WARMUP + args.runs:
            print(f"error: the hook recorded {events} events, expected {WARMUP + args.runs}")
            return 1
        import_ms, record_ms = in_process_cost(args.runs, os.path.join(tmp, "inproc"))

    med = {name: statistics.median(s) * 1000 for name, s in samples.items()}
    hook, bare, isolated = med[names[2]], med[names[0]], med[names[1]]
    ratio = hook / bare
    print(f"hook latency: {args.runs} interleaved runs each, median wall time, {args.python}")
    for name in names:
        print(f"  {name:<30} {med[name]:7.2f} ms")
    print(f"  ratio hook / python -c pass        {ratio:5.2f}x  (target <= {TARGET:.1f}x)")
    print(f"  ratio hook / python -I -S -c pass  {hook / isolated:5.2f}x  (same flags as the hook)")
    print(
        f"  in process: import lookout.runner {import_ms:.2f} ms, runner.record {record_ms:.2f} ms"
    )
    return verdict(ratio, args.max_ratio)


if __name__ == "__main__":
    raise SystemExit(main())
