"""What reconciling costs `lookout status`: median wall time of `lookout status --json` over 20
sessions waiting on a permission dialog whose transcripts are 50 MB each (the dialog's call near the
end, as while it is open), vs the same 20 sessions with no transcript to read. Also the worst case:
the call is not within the last 1 MB (reading stops at the bound). Target: <= 1.5x.
Writes only to temporary dirs (one 50 MB file, shared by the sessions)."""

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

from _common import child_env, quiet_config, verdict

ROOT = Path(__file__).resolve().parent.parent
OPEN_DIALOG = ROOT / "tests" / "fixtures" / "transcripts" / "permission-approved-running.jsonl"
TARGET = 1.5
CALL = {"command": 'python3 -c "import time; time.sleep(20)"', "description": "mock command"}
CALL_ID = "toolu_mock_000009"


def padding(megabytes: int) -> bytes:
    """Transcript-shaped filler: a ~64 KB context line and a short exchange, repeated."""
    big = (
        json.dumps(
            {
                "type": "attachment",
                "attachment": {"type": "prompt_snapshot", "systemPrompt": ["x" * 64_000]},
            }
        )
        + "\n"
    )
    user = (
        json.dumps(
            {
                "type": "user",
                "message": {"role": "user", "content": "earlier"},
                "timestamp": "2026-11-26T00:00:00.000Z",
            }
        )
        + "\n"
    )
    block = (big + user).encode()
    return block * (megabytes * 1_000_000 // len(block) + 1)


def build(state_dir: str, transcript: str, sessions: int) -> None:
    sys.path.insert(0, str(ROOT))
    from lookout import runner

    env = {"CLAUDE_PID": str(os.getpid()), "CLAUDE_CODE_ENTRYPOINT": "cli"}
    ts = 1795659900000
    for n in range(sessions):
        base = {
            "session_id": f"bench-{n:03d}",
            "transcript_path": transcript,
            "cwd": f"/home/dev/p{n}",
            "prompt_id": "p",
        }
        for body in (
            {"hook_event_name": "SessionStart", "source": "startup"},
            {"hook_event_name": "UserPromptSubmit", "prompt": "go"},
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": CALL,
                "tool_use_id": CALL_ID,
            },
            {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": CALL},
        ):
            ts += 10
            runner.record(json.dumps({**base, **body}).encode(), None, ts, state_dir, env)


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=env, cwd=ROOT, check=False)
    elapsed = time.perf_counter() - start
    shown = json.loads(proc.stdout)["sessions"] if proc.returncode == 0 else []
    if proc.returncode or any(s["status"] != "attention" for s in shown):
        raise SystemExit(f"error: lookout status: {proc.returncode} {proc.stderr!r}")
    return elapsed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megabytes", type=int, default=50, help="transcript size (50)")
    parser.add_argument("--sessions", type=int, default=20, help="sessions waiting (20)")
    parser.add_argument("--runs", type=int, default=11, help="timed runs of each (11)")
    parser.add_argument("--max-ratio", type=float, help="exit 1 when the ratio is above")
    parser.add_argument("--python", default=sys.executable, help="interpreter (this one)")
    args = parser.parse_args(argv)
    status = [args.python, "-m", "lookout", "status", "--json"]
    with tempfile.TemporaryDirectory(prefix="lookout-bench-") as tmp:
        os.environ["LOOKOUT_CONFIG"] = quiet_config(tmp)
        near = os.path.join(tmp, "near.jsonl")  # the open dialog's call at the end
        with open(near, "wb") as f:
            f.write(padding(args.megabytes))
            f.write(OPEN_DIALOG.read_bytes())
        far = os.path.join(tmp, "far.jsonl")  # its call buried under 5 MB: the bound stops it
        shutil.copyfile(near, far)
        with open(far, "ab") as f:
            f.write(padding(5))
        dirs = {}
        for name, transcript in (("none", "/nonexistent/t.jsonl"), ("near", near), ("far", far)):
            dirs[name] = os.path.join(tmp, name)
            build(dirs[name], transcript, args.sessions)
        samples: dict[str, list[float]] = {name: [] for name in dirs}
        for i in range(args.runs + 1):
            for name in dirs:
                elapsed = timed(status, child_env(tmp, dirs[name]))
                if i:
                    samples[name].append(elapsed)
    ms = {name: statistics.median(s) * 1000 for name, s in samples.items()}
    print(
        f"reconcile cost: `lookout status --json`, {args.sessions} sessions in attention, "
        f"{args.runs} runs, {args.python}"
    )
    print(f"  no transcript                      {ms['none']:7.2f} ms")
    print(
        f"  {args.megabytes} MB transcripts, dialog at the end {ms['near']:7.2f} ms"
        f"  ({ms['near'] / ms['none']:.2f}x)"
    )
    print(
        f"  worst case, call beyond 1 MB       {ms['far']:7.2f} ms  ({ms['far'] / ms['none']:.2f}x)"
    )
    print(f"  target for the normal case <= {TARGET:.1f}x")
    return verdict(ms["near"] / ms["none"], args.max_ratio)


if __name__ == "__main__":
    raise SystemExit(main())
