"""Hook wall time with and without a notification being dispatched, as ratios to `python -c pass`.

Runs the real hook scripts the way Claude Code does (`<python> -I -S hooks/<script>`), in a
throwaway HOME/state/config, interleaving the three commands, and prints medians:

    python bench/notify_dispatch.py [--runs 40]

- no dispatch: hooks/post_tool_use.py (a tool finished; no notification intent)
- decided:     hooks/permission_request.py with a config whose rules match nothing (the hook
               loads the cached config and runs the rules, sends nothing)
- dispatch:    hooks/permission_request.py (attention: a rule matches, a job file is written
               and the detached sender is started; the hook does not wait for it)
Between runs the bench waits for the previous sender to finish, so that the background process
does not compete with the next measurement.
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
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"


def timed(argv: list[str], stdin: bytes, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv, input=stdin, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - start


def payload(name: str, **changes: object) -> bytes:
    data = json.loads((PAYLOADS / f"{name}.json").read_text())
    data.update(changes)
    return json.dumps(data).encode()


def wait_senders(log: Path, expected: int, timeout_s: float = 10) -> None:
    """Until the detached senders have recorded `expected` results."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= expected:
            return
        time.sleep(0.005)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args(argv)
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="lookout-bench-", ignore_cleanup_errors=True) as tmp:
        home = Path(tmp)
        state = home / "state"
        cfg = home / "config.toml"
        cfg.write_text(
            '[channels.cmd]\ntype = "command"\nargv = ["true"]\n'
            '[[rules]]\nwhen = ["permission"]\nchannels = ["cmd"]\n'
        )
        nomatch = home / "nomatch.toml"
        nomatch.write_text(
            '[channels.cmd]\ntype = "command"\nargv = ["true"]\n'
            '[[rules]]\nwhen = ["session_end"]\nchannels = ["cmd"]\n'
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TMUX"))}
        # Bytecode is written once and reused, as for an installed runtime.
        env.update(
            HOME=str(home),
            LOOKOUT_STATE_DIR=str(state),
            LOOKOUT_CONFIG=str(cfg),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_STATE_HOME=str(home / ".state"),
        )
        base = [py, "-c", "pass"]
        plain = [py, "-I", "-S", str(ROOT / "hooks" / "post_tool_use.py")]
        notify = [py, "-I", "-S", str(ROOT / "hooks" / "permission_request.py")]
        env_nomatch = {
            **env,
            "LOOKOUT_CONFIG": str(nomatch),
            "LOOKOUT_STATE_DIR": str(home / "state-nomatch"),
        }
        times: dict[str, list[float]] = {"base": [], "plain": [], "decided": [], "notify": []}
        dispatched = 0
        for i in range(args.runs + 3):  # 3 warm-up rounds: bytecode, config cache
            sid = str(uuid.uuid4())
            rounds = [
                ("base", base, b"", env),
                ("plain", plain, payload("PostToolUse-Bash", session_id=sid), env),
                (
                    "decided",
                    notify,
                    payload("PermissionRequest-Bash", session_id=sid + "-d"),
                    env_nomatch,
                ),
                ("notify", notify, payload("PermissionRequest-Bash", session_id=sid + "-p"), env),
            ]
            rounds = rounds[i % 4 :] + rounds[: i % 4]  # interleave, rotating the order
            for name, cmd, stdin, run_env in rounds:
                t = timed(cmd, stdin, run_env)
                if i >= 3:
                    times[name].append(t)
                if name == "notify":
                    dispatched += 1
                    wait_senders(state / "deliveries.jsonl", dispatched)
        deliveries = (state / "deliveries.jsonl").read_text().splitlines()
        sent = sum(json.loads(x)["result"] == "sent" for x in deliveries)
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    print(f"python -c pass:                    {med['base']:6.1f} ms")
    print(
        f"hook, no notification:             {med['plain']:6.1f} ms  "
        f"ratio {med['plain'] / med['base']:.2f}"
    )
    print(
        f"hook, rules run, nothing sent:     {med['decided']:6.1f} ms  "
        f"ratio {med['decided'] / med['base']:.2f}"
    )
    print(
        f"hook, notification dispatched:     {med['notify']:6.1f} ms  "
        f"ratio {med['notify'] / med['base']:.2f}"
    )
    print(
        f"(medians of {args.runs} interleaved runs; {sent} notifications sent by the "
        f"detached senders)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
