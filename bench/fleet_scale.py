"""The fleet at scale: N hosts x M sessions, each host a real `lookout bridge` process with its
own state directory, against one real Mosquitto on a loopback port.

Measures `lookout status --fleet --json` (the real command: start, connect, gather every retained
message, print) and the delay from a hook to the `--watch` subscription seeing its change: the
hook is the real hook script on a random host and session; the watcher is lookout's own viewer
(lookout.fleet.watch.Fleet) in this process, timing each message as it arrives.

    python bench/fleet_scale.py [--hosts 50] [--sessions 20] [--hooks 200] [--runs 5]
                                [--max-p95-ms MS] [--max-status-s S]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import child_env  # noqa: E402
from lookout import runner  # noqa: E402
from lookout.config import fleet  # noqa: E402
from lookout.fleet import watch  # noqa: E402
from tests.mosquitto import PASSWORD, USER, Broker  # noqa: E402

PW_ENV = "LOOKOUT_BENCH_MQTT_PASSWORD"
PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"


def payload(name: str, sid: str) -> dict[str, object]:
    body = json.loads((PAYLOADS / f"{name}.json").read_text())
    body["session_id"] = sid
    return body


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--hooks", type=int, default=200, help="hooks timed to the watcher")
    ap.add_argument("--runs", type=int, default=5, help="runs of status --fleet --json")
    ap.add_argument("--max-p95-ms", type=float, default=None)
    ap.add_argument("--max-status-s", type=float, default=None)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="lookout-fleet-bench-"))
    broker_dir = tmp / "broker"
    broker_dir.mkdir()
    broker = Broker(broker_dir)
    broker.start()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        hosts = []
        for h in range(args.hosts):
            name = f"host{h:03d}"
            root = tmp / name
            root.mkdir()
            env = child_env(str(root))
            Path(env["LOOKOUT_CONFIG"]).write_text(
                f'[fleet]\nmqtt = "{broker.url}"\nusername = "{USER}"\n'
                f'password_env = "{PW_ENV}"\nhost = "{name}"\n'
            )
            env[PW_ENV] = PASSWORD
            now = int(time.time() * 1000)
            for s in range(args.sessions):
                raw = json.dumps(payload("SessionStart-startup", f"{name}-s{s:02d}")).encode()
                runner.record(raw, None, now, env["LOOKOUT_STATE_DIR"], {})
            hosts.append((name, env))
        print(
            f"{args.hosts} hosts x {args.sessions} sessions = {args.hosts * args.sessions}"
            f" sessions, one bridge process per host, Mosquitto {broker.url}"
        )

        started = time.monotonic()
        for _name, env in hosts:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "lookout", "bridge"],
                    env=env,
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        viewer_env = dict(hosts[0][1])
        os.environ[PW_ENV] = PASSWORD
        cfg = fleet.validate(
            {"mqtt": broker.url, "username": USER, "password_env": PW_ENV, "host": "bench"}
        )
        total = args.hosts * args.sessions
        while True:
            snap = watch.gather(cfg).snapshot()
            online = sum(1 for h in snap["hosts"] if h["online"])
            if online == args.hosts and len(snap["sessions"]) == total:
                break
            if time.monotonic() - started > 120:
                print(f"FAIL: only {online} hosts / {len(snap['sessions'])} sessions after 120 s")
                return 1
            time.sleep(0.2)
        print(f"all bridges up and published: {time.monotonic() - started:.1f} s")
        print(f"one bridge: {rss_kb(procs[0].pid) / 1024:.1f} MB RSS")

        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-m", "lookout", "status", "--fleet", "--json", "--all"],
                env=viewer_env,
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            times.append(time.perf_counter() - t0)
            got = json.loads(out.stdout)
            assert len(got["sessions"]) == total and len(got["hosts"]) == args.hosts
        status_s = statistics.median(times)
        print(
            f"lookout status --fleet --json ({total} sessions): median {status_s * 1000:.0f} ms"
            f" of {args.runs} (min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f})"
        )

        # The watcher: each message's arrival time, by (host, session segment, status).
        arrivals: dict[tuple[str, str, str], float] = {}
        lock = threading.Lock()
        watcher = watch.Fleet(cfg)
        inner = watcher._on_message

        def on_message(c: object, u: object, msg: object) -> None:
            inner(c, u, msg)
            where = watch.topics.parse(cfg.topic_prefix, msg.topic)  # type: ignore[attr-defined]
            if where and where[1] == "sessions" and msg.payload:  # type: ignore[attr-defined]
                status = json.loads(msg.payload).get("status", "")  # type: ignore[attr-defined]
                with lock:
                    arrivals.setdefault((where[0], where[2] or "", status), time.perf_counter())

        watcher._on_message = on_message  # type: ignore[method-assign]
        watcher.start()
        rng = random.Random(16)
        state = {}  # (host, sid) -> current status we drive it to
        from_end: list[float] = []
        from_start: list[float] = []
        for i in range(args.hooks):
            hi = rng.randrange(args.hosts)
            name, env = hosts[hi]
            sid = f"{name}-s{rng.randrange(args.sessions):02d}"
            want = "working" if state.get((name, sid)) == "attention" else "attention"
            script, body = (
                ("user_prompt_submit", payload("UserPromptSubmit", sid))
                if want == "working"
                else ("permission_request", payload("PermissionRequest-Bash", sid))
            )
            # Distinct bytes every time: the same payload twice is a duplicate delivery.
            body["tool_use_id"] = f"toolu_bench_{i}"
            body["prompt"] = f"bench prompt {i}"
            with lock:
                arrivals.pop((name, sid, want), None)
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-I", "-S", str(ROOT / "hooks" / f"{script}.py")],
                input=json.dumps(body).encode(),
                env=env,
                check=True,
            )
            t1 = time.perf_counter()
            deadline = t1 + 10
            while time.perf_counter() < deadline:
                with lock:
                    seen = arrivals.get((name, sid, want))
                if seen is not None:
                    break
                time.sleep(0.001)
            else:
                print(f"FAIL: {name}/{sid} -> {want} not seen within 10 s")
                return 1
            state[(name, sid)] = want
            from_end.append((seen - t1) * 1000)
            from_start.append((seen - t0) * 1000)
        watcher.stop()
        print(
            f"hook -> --watch update, {args.hooks} hooks on random hosts/sessions:"
            f" from the hook's exit p50 {pct(from_end, 50):.0f} ms, p95 {pct(from_end, 95):.0f} ms,"
            f" max {max(from_end):.0f} ms; from the hook's start p50 {pct(from_start, 50):.0f} ms,"
            f" p95 {pct(from_start, 95):.0f} ms"
        )
        failed = []
        if args.max_p95_ms is not None and pct(from_end, 95) > args.max_p95_ms:
            failed.append(f"p95 {pct(from_end, 95):.0f} ms > {args.max_p95_ms:g} ms")
        if args.max_status_s is not None and status_s > args.max_status_s:
            failed.append(f"status --fleet {status_s:.2f} s > {args.max_status_s:g} s")
        print(f"FAIL: {'; '.join(failed)}" if failed else "ok")
        return 1 if failed else 0
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        broker.kill()


if __name__ == "__main__":
    raise SystemExit(main())
