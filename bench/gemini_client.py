"""Overhead of lookout on the real Gemini CLI: wall time of the same `gemini -p` turn (one
run_shell_command call, --approval-mode yolo) with lookout's hooks and with the same events
registered to a bare `python -I -S -c pass`, interleaved runs, median ratio.

Usage: .venv/bin/python bench/gemini_client.py [--runs 9] [--max-ratio R]
Offline: the client talks only to a loopback mock Gemini API (tests/e2e/test_gemini.py).
Gemini runs hooks synchronously: each tool call waits for BeforeTool and AfterTool.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CHECKOUT))
sys.path.insert(0, str(CHECKOUT / "bench"))

from _common import verdict  # noqa: E402

from tests.e2e import npm_client  # noqa: E402
from tests.e2e.test_gemini import MODEL, REPLY, SETTINGS, VERSION, GeminiAPI  # noqa: E402

TARGET = 1.05


def bare_settings(installed: dict[str, object]) -> dict[str, object]:
    """The same hook entries, each running `python -I -S -c pass` instead of lookout."""
    doc = json.loads(json.dumps(installed))
    hooks = doc["hooks"]
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            for handler in group.get("hooks", []):
                python = handler["command"].split(" -I -S ")[0]
                handler["command"] = f"{python} -I -S -c pass"
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9, help="timed runs of each setup (9)")
    parser.add_argument("--max-ratio", type=float, help="exit 1 when lookout / bare is above")
    args = parser.parse_args(argv)
    gemini = npm_client.ensure("@google/gemini-cli", VERSION, "gemini-cli", "gemini")
    with tempfile.TemporaryDirectory(prefix="lookout-bench-") as tmp, GeminiAPI("true") as api:
        root = Path(tmp)
        homes = {"lookout": root / "lookout", "bare": root / "bare"}
        for home in homes.values():
            (home / ".gemini").mkdir(parents=True)
            (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
        project = root / "project"
        project.mkdir()

        def env(home: Path) -> dict[str, str]:
            return npm_client.offline_env(
                home,
                GEMINI_API_KEY="lookout-bench-dummy",
                GOOGLE_GEMINI_BASE_URL=api.url,
                GEMINI_CLI_TRUST_WORKSPACE="true",
                LOOKOUT_CONFIG=str(root / "quiet.toml"),
            )

        (root / "quiet.toml").write_text("# no rules: no notifications\n")
        install = [sys.executable, "install.py", "--agent", "gemini", "--python", sys.executable]
        done = subprocess.run(
            install, cwd=CHECKOUT, env=env(homes["lookout"]), capture_output=True, text=True
        )
        if done.returncode != 0:
            print(f"error: install.py failed: {done.stderr}")
            return 1
        installed = json.loads((homes["lookout"] / ".gemini" / "settings.json").read_text())
        bare = bare_settings(installed)
        (homes["bare"] / ".gemini" / "settings.json").write_text(json.dumps(bare, indent=2))
        argv_ = [str(gemini), "-p", "USE_TOOL", "-m", MODEL, "--approval-mode", "yolo"]
        samples: dict[str, list[float]] = {name: [] for name in homes}
        for i in range(args.runs + 1):  # the first round warms the caches up
            for name in list(homes)[:: 1 if i % 2 else -1]:
                start = time.perf_counter()
                run = subprocess.run(
                    argv_,
                    cwd=project,
                    env=env(homes[name]),
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                elapsed = time.perf_counter() - start
                if run.returncode != 0 or REPLY not in run.stdout:
                    print(f"error: gemini ({name}) failed: {run.stderr[-500:]}")
                    return 1
                if i:
                    samples[name].append(elapsed)
        state = homes["lookout"] / ".local" / "state" / "lookout" / "events.jsonl"
        recorded = state.read_text().count('"PreToolUse"') if state.exists() else 0
    med = {name: statistics.median(s) for name, s in samples.items()}
    ratio = med["lookout"] / med["bare"]
    print(f"gemini-cli {VERSION}: {args.runs} interleaved `gemini -p` turns with a tool call each")
    for name, s in samples.items():
        print(f"  {name:<8} median {med[name]:6.2f} s  (min {min(s):.2f}, max {max(s):.2f})")
    print(f"  ratio lookout / bare hooks  {ratio:5.3f}x  (target <= {TARGET:.2f}x)")
    print(f"  tool calls recorded by lookout: {recorded}")
    return verdict(ratio, args.max_ratio)


if __name__ == "__main__":
    raise SystemExit(main())
