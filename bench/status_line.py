"""The status line: median wall time of `lookout status --line` (what tmux runs every few seconds)
over 50 recorded sessions in every status, vs its floor, a bare `python -c pass` of the same
interpreter, interleaved. Goal: <= 2x. Both run as an installed runtime runs them: a virtual
environment of their own (no editable install's import hook, which alone costs a checkout's
.venv ~15 ms per start) and `python -I <entry>` as ~/.local/bin/lookout does. Writes only to a
temporary directory."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _common import child_env, children_cpu_s, load, quiet_config, verdict
from status_scale import build

ROOT = Path(__file__).resolve().parent.parent
TARGET = 2.0
WARMUP = 3
ENTRY = """import sys

sys.path.insert(0, {root!r})

from lookout.commands.main import main

if __name__ == "__main__":
    raise SystemExit(main())
"""


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=env, cwd=ROOT, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode or proc.stderr:
        raise SystemExit(f"error: {argv[-1]} exited {proc.returncode}: {proc.stderr!r}")
    return elapsed, proc.stdout


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=50, help="recorded sessions (50)")
    parser.add_argument("--runs", type=int, default=30, help="timed runs of each (30)")
    parser.add_argument(
        "--max-ratio", type=float, help="exit 1 when status / python -c pass is above"
    )
    parser.add_argument(
        "--python", default=sys._base_executable, help="base interpreter (this one's)"
    )
    args = parser.parse_args(argv)

    subprocess.run(
        [args.python, "-m", "compileall", "-q", str(ROOT / "lookout")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with tempfile.TemporaryDirectory(prefix="lookout-bench-") as tmp:
        venv = os.path.join(tmp, "venv")
        subprocess.run([args.python, "-m", "venv", "--without-pip", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        entry = os.path.join(tmp, "lookout_cli.py")
        with open(entry, "w", encoding="utf-8") as f:  # as lookout/install/runtime.py writes it
            f.write(ENTRY.format(root=str(ROOT)))
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "lookout status --line": [python, "-I", entry, "status", "--line"],
        }
        os.environ["LOOKOUT_CONFIG"] = quiet_config(tmp)
        os.environ["XDG_CONFIG_HOME"] = os.path.join(tmp, "config")
        state_dir = os.path.join(tmp, "state")
        build(state_dir, None, args.sessions, int(time.time() * 1000))
        env = child_env(tmp, state_dir)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        line = b""
        for i in range(WARMUP + args.runs):
            for name in list(commands) if i % 2 else list(commands)[::-1]:
                used = children_cpu_s()
                elapsed, out = timed(commands[name], env)
                if i >= WARMUP:
                    samples[name].append(elapsed)
                    cpu[name].append(children_cpu_s() - used)
                if name.startswith("lookout"):
                    line = out
    med = {name: statistics.median(s) * 1000 for name, s in samples.items()}
    floor, status = med["python -c pass"], med["lookout status --line"]
    ratio = status / floor
    runs = f"{args.sessions} sessions, {args.runs} interleaved runs"
    print(f"status line: {runs}, a venv of {args.python}")
    print(f"  load average {load()}")
    print(f"  line: {line.decode().strip()}")
    for name, ms in med.items():
        print(f"  {name:<24} {ms:7.2f} ms")
    print(f"  ratio status --line / python -c pass  {ratio:5.2f}x  (goal <= {TARGET:.1f}x)")
    cpu_ms = {name: statistics.median(s) * 1000 for name, s in cpu.items()}
    cpu_floor, cpu_status = cpu_ms["python -c pass"], cpu_ms["lookout status --line"]
    print(
        f"  CPU time (user+sys): status --line {cpu_status:.2f} ms, python -c pass"
        f" {cpu_floor:.2f} ms, ratio {cpu_status / cpu_floor:.2f}x"
    )
    if not line.strip():
        print("FAIL: the status line is empty")
        return 1
    return verdict(ratio, args.max_ratio)


if __name__ == "__main__":
    raise SystemExit(main())
