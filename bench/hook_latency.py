"""Hook latency: median wall time of hooks/pre_tool_use.py (or, with --agent, that agent's hook on
its own tool-call payload), run exactly as installed (`python -I -S`), on a real payload vs its
floor, a bare `python -I -S -c pass` of the same interpreter (and `python -c pass`), interleaved.
Goal: hook minus floor <= 2 ms (--max-ms). --phases prints where the hook's time goes. Writes
only to a temporary state directory."""

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

from _common import child_env, children_cpu_s, load, quiet_config, verdict

ROOT = Path(__file__).resolve().parent.parent
PAYLOAD = ROOT / "tests" / "fixtures" / "payloads" / "PreToolUse-Bash.json"
TARGET = 1.3  # hook / python -c pass (--max-ratio)
TARGET_MS = 2.0  # hook minus python -I -S -c pass (--max-ms)
WARMUP = 5
FIXTURES = ROOT / "tests" / "fixtures"
# --agent: (hook script, its tool-call payload, arguments the installed command passes)
AGENTS = {
    "claude": ("pre_tool_use.py", PAYLOAD, []),
    "gemini": ("gemini.py", FIXTURES / "gemini" / "BeforeTool.json", []),
    "copilot": ("copilot.py", FIXTURES / "copilot" / "preToolUse-bash.json", ["preToolUse"]),
    "cursor": ("cursor.py", FIXTURES / "cursor" / "beforeShellExecution.json", []),
}


def installed(python: str, tmp: str) -> Path:
    """A runtime laid out as install.py lays it out for `python` (package, hooks, bytecode and
    the precompiled hook path): the hooks a user runs, not the checkout's."""
    sys.path.insert(0, str(ROOT))
    from lookout.install import runtime

    home = Path(tmp, "runtime")
    runtime.install_code(home, python)
    return home


def code_root(home: Path) -> str:
    """The directory holding the installed runtime's `lookout` package (runtimes/<name>)."""
    from lookout.install import runtimes

    return str(runtimes.code_root(home))


def timed(argv: list[str], stdin: bytes, env: dict[str, str], answer: bytes = b"") -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode or proc.stdout != answer or proc.stderr:
        raise SystemExit(
            f"error: {argv[-1]} exited {proc.returncode}: {proc.stdout + proc.stderr!r}"
        )
    return elapsed


def in_process_cost(python: str, home: Path, runs: int, state_dir: str) -> tuple[float, float]:
    """(loading the hook path as a hook does, in a fresh -I -S interpreter; median
    runner.record), in ms."""
    probe = subprocess.run(
        [
            python,
            "-I",
            "-S",
            "-c",
            "import sys, time; t = time.perf_counter(); sys.path.insert(0, sys.argv[1]);"
            " from lookout import hookpack; hookpack.boot(); import lookout.runner;"
            " print(time.perf_counter() - t)",
            code_root(home),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    import_ms = float(probe.stdout) * 1000
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
    return import_ms, statistics.median(samples) * 1000


# --phases: what a hook's milliseconds go to. The probe imports the hook path's modules one by one
# in the order `-X importtime` reports (so each step pays only its own module), then runs the
# runner with these functions timed. Startup is a bare `python -I -S -c pass`; exit is the rest.
TIMED = (
    ("JSON parse", "lookout.runner", "_parse"),
    ("events.parse (+ digest)", "lookout.events", "parse"),
    ("lock (ensure_dir, open, flock)", "lookout.store.Locked", "__enter__"),
    ("read snapshot", "lookout.store.Locked", "read_session"),
    ("machine.apply", "lookout.machine", "apply"),
    ("write snapshot (tmp + rename)", "lookout.store.Locked", "write_session"),
    ("append events.jsonl", "lookout.store.Locked", "append"),
    ("unlock", "lookout.store.Locked", "__exit__"),
    ("notification check", "lookout.runner", "_notify"),
    ("fds 1 and 2 to /dev/null", "lookout.runner", "_silence"),
    ("state directory from the environment", "lookout.paths", "state_dir"),
)
PROBE = r"""
import time
t0 = time.perf_counter_ns()
import sys
out, root, script, order = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
TIMED = __TIMED__
steps = []
sys.path.insert(0, root)
mark = time.perf_counter_ns()
for name in order:
    __import__(name)
    now = time.perf_counter_ns()
    steps.append(("import " + name, now - mark))
    mark = now
pack = sys.modules.get("lookout.hookpack")
if pack is not None:  # the shim's next step: its own call then finds everything loaded
    start = time.perf_counter_ns()
    pack.boot()  # as the shim: no GC, then the record group
    if "lookout.runner" not in sys.modules:
        raise SystemExit("the runtime's hook pack is not current")
    steps.append(("load the precompiled hook path", time.perf_counter_ns() - start))
timed = {}
def wrap(label, owner, attr):
    real = getattr(owner, attr)
    def timed_call(*args, **kwargs):
        start = time.perf_counter_ns()
        try:
            return real(*args, **kwargs)
        finally:
            timed[label] = timed.get(label, 0) + time.perf_counter_ns() - start
    setattr(owner, attr, timed_call)
for label, module, attr in TIMED:
    name, _, cls = module.partition(".Locked")
    owner = sys.modules.get(name)
    if owner is not None and cls == "" and module.endswith(".Locked"):
        owner = getattr(owner, "Locked", None)
    if owner is not None and hasattr(owner, attr):
        wrap(label, owner, attr)
sys.argv = [script]
import io, posix
real_exit = posix._exit
def no_exit(code):  # the hook's exit_now: end the exec, keep the probe to write its figures
    raise SystemExit(code)
posix._exit = no_exit
start = time.perf_counter_ns()
raw = sys.stdin.buffer.read()  # the client's write: the hook waits for it the same way
steps.append(("read stdin", time.perf_counter_ns() - start))
sys.stdin = io.TextIOWrapper(io.BytesIO(raw))
start = time.perf_counter_ns()
with open(script) as fh:
    source = fh.read()
try:
    # exec of the text, as the interpreter runs a script: compile() would pay ~1 ms once to set
    # up its AST support, which running a script never does.
    exec(source, {"__name__": "__main__", "__file__": script})
except SystemExit:
    pass
total = time.perf_counter_ns() - start
steps += [(label, timed.get(label, 0)) for label, _, _ in TIMED]
steps.append(("the rest (shim, runner glue)", total - sum(timed.values())))
with open(out, "w") as fh:
    for label, ns in steps:
        fh.write(f"{label}\t{ns}\n")
    fh.write(f"in process\t{time.perf_counter_ns() - t0}\n")
real_exit(0)  # as the hook ends (exit_now): no teardown
"""


def import_order(
    python: str, script: Path, stdin: bytes, env: dict[str, str]
) -> list[tuple[str, int]]:
    """The modules the hook imports beyond a bare interpreter's, children first, each with its
    own (self) import time in µs as `-X importtime` reports it."""
    bare = subprocess.run(
        [python, "-I", "-S", "-X", "importtime", "-c", "pass"],
        capture_output=True,
        text=True,
        check=True,
    )
    hook = subprocess.run(
        [python, "-I", "-S", "-X", "importtime", str(script)],
        input=stdin,
        capture_output=True,
        env=env,
        check=False,
    )

    def parse(text: str) -> list[tuple[str, int, int, int]]:
        rows = []  # (name, depth, self µs, cumulative µs), children first
        for line in text.splitlines():
            parts = line.split("|")
            if (
                len(parts) == 3
                and parts[0].startswith("import time:")
                and parts[1].strip().isdigit()
            ):
                name = parts[2].rstrip()
                depth = (len(name) - len(name.lstrip())) // 2
                rows.append((name.strip(), depth, int(parts[0].split(":")[1]), int(parts[1])))
        return rows

    seen = {row[0] for row in parse(bare.stderr)}
    # A stdlib module's own imports can be circular (os <-> posixpath): it is one step, with its
    # cumulative time; lookout's modules and what they import directly are steps of their own.
    kept: list[tuple[str, int]] = []
    stack: list[tuple[int, str]] = []
    for name, depth, self_us, cumulative_us in reversed(parse(hook.stderr.decode())):
        while stack and stack[-1][0] >= depth:
            stack.pop()
        inside_stdlib = any(not a.startswith("lookout") for _, a in stack)
        stack.append((depth, name))
        if name in seen or inside_stdlib:
            continue
        kept.append((name, self_us if name.startswith("lookout") else cumulative_us))
    return kept[::-1]


def phases(
    python: str, home: Path, script: Path, base: dict[str, object], runs: int, tmp: str
) -> int:
    """Print where a hook's time goes: median of `runs` probes, interleaved with a bare start."""
    env = child_env(tmp, os.path.join(tmp, "phases-state"))
    stdin = json.dumps({**base, "tool_use_id": "toolu_phases_order"}).encode()
    order = import_order(python, script, stdin, env)
    out = os.path.join(tmp, "phases.tsv")
    probe = PROBE.replace("__TIMED__", repr(TIMED))
    root = code_root(home)
    argv = [python, "-I", "-S", "-c", probe, out, root, str(script), *(n for n, _ in order)]
    rows: dict[str, list[float]] = {}
    bare: list[float] = []
    walls: list[float] = []
    for i in range(WARMUP + runs):
        stdin = json.dumps({**base, "tool_use_id": f"toolu_phases_{i}", "n": i}).encode()
        pair = [("bare", [python, "-I", "-S", "-c", "pass"]), ("probe", argv)]
        for name, cmd in pair if i % 2 else pair[::-1]:
            elapsed = timed(cmd, stdin, env)
            if i < WARMUP:
                continue
            if name == "bare":
                bare.append(elapsed * 1000)
                continue
            walls.append(elapsed * 1000)
            with open(out) as fh:
                for line in fh:
                    label, _, ns = line.rstrip("\n").partition("\t")
                    rows.setdefault(label, []).append(int(ns) / 1e6)
    med = {label: statistics.median(v) for label, v in rows.items()}
    start, wall = statistics.median(bare), statistics.median(walls)
    print(f"where a hook's time goes ({script.name}, {runs} probes, medians in ms; load {load()})")
    print(f"  {'interpreter start + exit (python -I -S -c pass)':<48} {start:6.3f}")
    self_us = dict(order)
    for label, ms in med.items():
        if label == "in process":
            continue
        note = ""
        if label.startswith("import "):
            note = f"  (-X importtime self {self_us.get(label[7:], 0) / 1000:.3f})"
        print(f"  {label:<48} {ms:6.3f}{note}")
    imports = sum(ms for label, ms in med.items() if label.startswith("import "))
    print(f"  {'= imports':<48} {imports:6.3f}")
    print(f"  {'= in process (imports + hook)':<48} {med['in process']:6.3f}")
    print(f"  {'probe wall time':<48} {wall:6.3f}")
    print(f"  {'probe minus bare start':<48} {wall - start:6.3f}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=60, help="timed runs of each command (60)")
    parser.add_argument(
        "--max-ratio", type=float, help="exit 1 when hook / python -c pass is above"
    )
    parser.add_argument(
        "--max-ms", type=float, help="exit 1 when hook minus python -I -S -c pass is above (ms)"
    )
    parser.add_argument("--python", default=sys.executable, help="interpreter (this one)")
    parser.add_argument("--agent", choices=sorted(AGENTS), default="claude", help="whose hook")
    parser.add_argument(
        "--phases", action="store_true", help="print where the hook's time goes, then exit"
    )
    args = parser.parse_args(argv)

    script, payload, extra = AGENTS[args.agent]
    base = json.loads(payload.read_text())
    if args.phases:
        if args.agent != "claude":
            raise SystemExit("error: --phases times the claude hook only")
        with tempfile.TemporaryDirectory(prefix="lookout-bench-") as tmp:
            home = installed(args.python, tmp)
            return phases(args.python, home, home / "hooks" / script, base, args.runs, tmp)
    with tempfile.TemporaryDirectory(prefix="lookout-bench-") as tmp:
        home = installed(args.python, tmp)
        env = child_env(tmp)
        commands = {
            "python -c pass": [args.python, "-c", "pass"],
            "python -I -S -c pass": [args.python, "-I", "-S", "-c", "pass"],
            f"hook (-I -S {script})": [
                args.python,
                "-I",
                "-S",
                str(home / "hooks" / script),
                *extra,
            ],
        }
        names = list(commands)
        samples: dict[str, list[float]] = {name: [] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        for i in range(WARMUP + args.runs):
            # A different delivery each time (the same bytes twice would be a duplicate).
            stdin = json.dumps({**base, "tool_use_id": f"toolu_bench_{i}", "n": i}).encode()
            # Rotate the order so that no command always runs right after another.
            for k in range(len(names)):
                name = names[(i + k) % len(names)]
                # Cursor's hook answers `{}` (Cursor reads stdout as JSON); the others say nothing.
                answer = b"{}\n" if name.endswith("cursor.py)") else b""
                used = children_cpu_s()
                elapsed = timed(commands[name], stdin, env, answer)
                if i >= WARMUP:
                    samples[name].append(elapsed)
                    cpu[name].append(children_cpu_s() - used)
        events = Path(env["LOOKOUT_STATE_DIR"], "events.jsonl").read_bytes().count(b"\n")
        if events != WARMUP + args.runs:
            print(f"error: the hook recorded {events} events, expected {WARMUP + args.runs}")
            return 1
        import_ms, record_ms = in_process_cost(
            args.python, home, args.runs, os.path.join(tmp, "inproc")
        )

    med = {name: statistics.median(s) * 1000 for name, s in samples.items()}
    hook, bare, isolated = med[names[2]], med[names[0]], med[names[1]]
    ratio = hook / bare
    print(f"hook latency: {args.runs} interleaved runs each, median wall time, {args.python}")
    print(f"  load average {load()}")
    for name in names:
        print(f"  {name:<30} {med[name]:7.2f} ms")
    extra = hook - isolated
    cpu_ms = {name: statistics.median(s) * 1000 for name, s in cpu.items()}
    print(f"  hook minus python -I -S -c pass   {extra:5.2f} ms (goal <= {TARGET_MS:.1f} ms)")
    print(f"  ratio hook / python -I -S -c pass  {hook / isolated:5.2f}x  (same flags as the hook)")
    print(f"  ratio hook / python -c pass        {ratio:5.2f}x  (target <= {TARGET:.1f}x)")
    cpu_hook, cpu_floor = cpu_ms[names[2]], cpu_ms[names[1]]
    print(
        f"  CPU time (user+sys): hook {cpu_hook:.2f} ms, python -I -S -c pass {cpu_floor:.2f} ms,"
        f" hook minus floor {cpu_hook - cpu_floor:.2f} ms"
    )
    print(
        f"  in process: loading the hook path {import_ms:.2f} ms, runner.record {record_ms:.2f} ms"
    )
    if args.max_ms is not None and extra > args.max_ms:
        print(f"FAIL: {extra:.2f} ms > {args.max_ms:.2f} ms")
        return 1
    return verdict(ratio, args.max_ratio)


if __name__ == "__main__":
    raise SystemExit(main())
