"""Status at scale: median wall time of `lookout status --json` over a state directory with 1,000
recorded events vs one with 1,000,000 (all in events.jsonl, the worst case: nothing rotated),
both holding the same 20 session snapshots. Target: <= 1.5x. Writes only to temporary dirs."""

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
from typing import Any

from _common import child_env, quiet_config, verdict

ROOT = Path(__file__).resolve().parent.parent
PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"
TARGET = 1.5

# One session's life in payload fixtures; sessions stop at different points, so the snapshot
# holds every status: working, attention (permission, error), idle, ended, with subagents.
SCRIPT = [
    "SessionStart-startup",
    "UserPromptSubmit",
    "PreToolUse-Bash",
    "PostToolUse-Bash",
    "PreToolUse-Agent",
    "SubagentStart-general-purpose",
    "SubagentStop-general-purpose",
    "PostToolUse-Agent",
    "PreToolUse-Write",
    "PermissionRequest-Bash",
    "PostToolUse-Write",
    "Stop",
    "Notification-idle_prompt",
    "UserPromptSubmit",
    "StopFailure-rate_limit",
    "SessionEnd-prompt_input_exit",
]


def build(state_dir: str, events: int | None, sessions: int, now_ms: int) -> None:
    """Record `sessions` sessions through the real runner, then pad events.jsonl with copies of
    the recorded lines up to `events` lines (None: no padding)."""
    sys.path.insert(0, str(ROOT))
    from lookout import runner

    env = {"CLAUDE_PID": str(os.getpid()), "TMUX_PANE": "%1"}
    ts = now_ms - 600_000
    for n in range(sessions):
        for step, name in enumerate(SCRIPT[: 3 + (n * 5) % (len(SCRIPT) - 2)]):
            payload = json.loads((PAYLOADS / f"{name}.json").read_text())
            payload["session_id"] = f"bench-session-{n:03d}"
            payload["cwd"] = f"/home/dev/projects/project-{n % 7}"
            payload["tool_use_id"] = f"toolu_{n}_{step}"
            ts += 250
            runner.record(json.dumps(payload).encode(), name.split("-")[0], ts, state_dir, env)
    if events is None:
        return
    path = Path(state_dir, "events.jsonl")
    recorded = path.read_bytes().splitlines(keepends=True)
    missing = events - len(recorded)
    if missing < 0:
        raise SystemExit(f"error: {events} events is fewer than the {len(recorded)} recorded")
    block = b"".join(recorded[i % len(recorded)] for i in range(min(missing, 10_000)))
    per_block = block.count(b"\n")
    with open(path, "ab") as f:
        left = missing
        while left >= per_block and per_block:
            f.write(block)
            left -= per_block
        f.write(b"".join(block.splitlines(keepends=True)[:left]))


def comparable(out: bytes) -> Any:
    """`status --json` less what depends on the moment it ran (a running tool's seconds)."""
    shown = json.loads(out)
    for s in shown["sessions"]:
        if isinstance(s.get("tool"), dict):
            s["tool"].pop("running_s", None)
    return shown


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=env, cwd=ROOT, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode or proc.stderr:
        raise SystemExit(f"error: lookout status exited {proc.returncode}: {proc.stderr!r}")
    return elapsed, proc.stdout


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=1_000, help="events in the small log")
    parser.add_argument("--large", type=int, default=1_000_000, help="events in the large log")
    parser.add_argument("--sessions", type=int, default=20, help="sessions in both (20)")
    parser.add_argument("--runs", type=int, default=15, help="timed runs of each (15)")
    parser.add_argument("--max-ratio", type=float, help="exit 1 when large / small is above")
    parser.add_argument("--python", default=sys.executable, help="interpreter (this one)")
    args = parser.parse_args(argv)

    subprocess.run(
        [args.python, "-m", "compileall", "-q", str(ROOT / "lookout")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    status = [args.python, "-m", "lookout", "status", "--json"]
    now_ms = int(time.time() * 1000)
    with tempfile.TemporaryDirectory(prefix="lookout-bench-") as tmp:
        # Recording in this process may consult notification rules: never the user's config.
        os.environ["LOOKOUT_CONFIG"] = quiet_config(tmp)
        os.environ["XDG_CONFIG_HOME"] = os.path.join(tmp, "config")
        dirs = {"small": os.path.join(tmp, "small"), "large": os.path.join(tmp, "large")}
        sizes = {}
        for name, count in (("small", args.small), ("large", args.large)):
            build(dirs[name], count, args.sessions, now_ms)
            events = Path(dirs[name], "events.jsonl")
            sizes[name] = (events.read_bytes().count(b"\n"), events.stat().st_size)
        envs = {name: child_env(tmp, d) for name, d in dirs.items()}
        samples: dict[str, list[float]] = {"small": [], "large": []}
        outputs: dict[str, bytes] = {}
        for i in range(args.runs + 1):
            for name in ("small", "large") if i % 2 else ("large", "small"):
                elapsed, out = timed(status, envs[name])
                if i:  # the first round warms the page cache and bytecode
                    samples[name].append(elapsed)
                outputs[name] = out

    shown = {name: len(json.loads(out)["sessions"]) for name, out in outputs.items()}
    small, large = (statistics.median(samples[n]) * 1000 for n in ("small", "large"))
    ratio = large / small
    print(f"status at scale: `lookout status --json`, {args.runs} interleaved runs, {args.python}")
    for name, ms in (("small", small), ("large", large)):
        lines, size = sizes[name]
        print(
            f"  {lines:>9,} events ({size / 1e6:7.1f} MB), {args.sessions} sessions: "
            f"{ms:7.2f} ms  ({shown[name]} shown)"
        )
    print(f"  ratio large / small  {ratio:5.2f}x  (target <= {TARGET:.1f}x)")
    if sizes["small"][0] != args.small or sizes["large"][0] != args.large:
        print("FAIL: the logs do not hold the requested number of events")
        return 1
    if comparable(outputs["small"]) != comparable(outputs["large"]):
        print("FAIL: both directories hold the same sessions but status differs")
        return 1
    if not shown["small"]:
        print("FAIL: status shows no session")
        return 1
    return verdict(ratio, args.max_ratio)


if __name__ == "__main__":
    raise SystemExit(main())
