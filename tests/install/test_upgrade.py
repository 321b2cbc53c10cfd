"""Upgrading while sessions run (issue 35): install.py of an older commit of this repository into
a temporary HOME, sessions in every status (a remote request waiting, an escalation open), then
install.py of this tree over it while a loop fires the installed hooks every 50 ms, through their
real commands from settings.json with real payloads. No hook may fail or say anything, no event
may be lost or recorded twice, and every piece of state must carry over. And the other way: an
older install.py over this tree's runtime."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import IN_CI, PAYLOADS, ROOT, recorder, wait_for
from tests.mosquitto import PASSWORD, USER, Broker

PY = sys.executable
# Older commits of this repository's main: the previous main (the release before runtimes/), and
# the main the half-copied-package failure was found on (no lookout/words.py yet).
PREVIOUS_MAIN = "69338df"
BEFORE_WORDS = "67db790"
# The last main that was 0.1.0, with runtimes/ (its runtime.json says "lookout": "0.1.0").
LAST_0_1_0 = "2f2823a"
PASSWORD_ENV = "LOOKOUT_TEST_MQTT_PASSWORD"
# What the loop fires, in turn, each for one of a few sessions of its own.
LOOP = ("UserPromptSubmit", "PreToolUse-Bash", "PostToolUse-Bash", "Stop")


def checkout_of(commit: str, into: Path) -> Path:
    """The commit's install.py, package and hooks, from this repository's history."""
    into.mkdir()
    done = subprocess.run(
        f"git -C {ROOT} archive {commit} install.py pyproject.toml lookout hooks"
        f" | tar -x -C {into}",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        message = f"commit {commit} is not in this clone: {done.stderr.strip()}"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return into


class Home:
    """A user's home with lookout installed into it; everything goes through the real entry
    points: install.py, the hook commands in settings.json, and ~/.local/bin/lookout."""

    def __init__(self, root: Path, broker: Broker) -> None:
        self.root = root
        self.home = root / "user"
        self.home.mkdir()
        self.state = self.home / ".local" / "state" / "lookout"
        self.runtime = self.home / ".local" / "share" / "lookout"
        self.config = self.home / ".config" / "lookout" / "config.toml"
        self.tmux = Path(tempfile.mkdtemp(prefix="lk-", dir="/tmp"))  # a short socket path
        self.env = {
            "HOME": str(self.home),
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TMUX_TMPDIR": str(self.tmux),
            PASSWORD_ENV: PASSWORD,
        }
        self.broker = broker
        self.program, self.calls = recorder(root)
        self.waiting: subprocess.Popen[bytes] | None = None  # a deciding hook
        self.bridge: subprocess.Popen[bytes] | None = None

    def write_config(self, fleet: bool = True) -> None:
        log = f'["{self.program}", "{{title}}"]'
        self.config.parent.mkdir(parents=True, exist_ok=True)
        self.config.write_text(
            "[channels.log]\n"
            'type = "command"\n'
            f"argv = {log}\n"
            "[channels.later]\n"
            'type = "command"\n'
            f"argv = {log}\n"
            "[[rules]]\n"
            'when = ["permission"]\n'
            'channels = ["log"]\n'
            "escalate_after_s = 3600\n"
            'escalate_to = ["later"]\n'
            "[remote]\n"
            "enabled = true\n"
            "wait_s = 900\n"
        )
        if fleet:
            with self.config.open("a") as fh:
                fh.write(
                    "[fleet]\n"
                    f'mqtt = "{self.broker.url}"\n'
                    f'username = "{USER}"\n'
                    f'password_env = "{PASSWORD_ENV}"\n'
                    'host = "upgrade"\n'
                )

    def install(self, checkout: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PY, str(checkout / "install.py"), "--python", PY],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    def lookout(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.home / ".local" / "bin" / "lookout"), *argv],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def commands(self) -> dict[str, list[str]]:
        """Each event's hook commands, as the installed settings.json has them now."""
        data = json.loads((self.home / ".claude" / "settings.json").read_text())
        return {
            event: [h["command"] for group in groups for h in group["hooks"]]
            for event, groups in data["hooks"].items()
        }

    def start_hook(self, command: str, payload: bytes) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
        )
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.close()
        proc.stdin = None  # written whole: communicate() only reads
        return proc

    def fire(self, name: str, session: str, **fields: Any) -> None:
        """Every recording hook of the payload's event, as Claude Code runs them, to the end."""
        event = name.split("-")[0]
        data = payload(name, session, **fields)
        for command in self.commands()[event]:
            if "remote_answer.py" in command:
                continue
            proc = self.start_hook(command, data)
            out, err = proc.communicate(timeout=60)
            assert (proc.returncode, out, err) == (0, b"", b""), (name, command)

    def events(self) -> list[dict[str, Any]]:
        path = self.state / "events.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def statuses(self) -> dict[str, str]:
        done = self.lookout("status", "--json", "--all")
        assert done.returncode == 0, done.stderr
        return {s["session_id"]: s["status"] for s in json.loads(done.stdout)["sessions"]}

    def requests(self) -> list[Path]:
        directory = self.state / "requests"
        return sorted(directory.glob("*.json")) if directory.is_dir() else []

    def escalations(self) -> list[Path]:
        return sorted((self.state / "outbox").glob("esc-*.json"))

    def carried(self) -> dict[str, bytes]:
        """The state that must come through an upgrade byte for byte."""
        files = {
            "config": self.config,
            "trust": self.state / "trust.json",
            "tmux": self.home / ".tmux.conf",
            "registry": self.runtime / "installed.json",
            **{f"request {p.name}": p for p in self.requests()},
            **{f"escalation {p.name}": p for p in self.escalations()},
        }
        return {name: path.read_bytes() for name, path in files.items()}


def payload(name: str, session: str, **fields: Any) -> bytes:
    body = json.loads((PAYLOADS / f"{name}.json").read_text())
    body.update(session_id=session, cwd="/w/demo", **fields)
    return json.dumps(body).encode()


def bash(command: str) -> dict[str, Any]:
    return {"tool_input": {"command": command, "description": command}}


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    directory = tmp_path / "broker"
    directory.mkdir()
    b = Broker(directory)
    b.start()
    try:
        yield b
    finally:
        b.kill()


@pytest.fixture
def world(tmp_path: Path, broker: Broker) -> Iterator[Home]:
    w = Home(tmp_path, broker)
    try:
        yield w
    finally:
        for proc in (w.waiting, w.bridge):
            if proc is not None and proc.poll() is None:
                proc.kill()
        # The sender that holds the open escalation: ours, ended by its pid.
        for pid in senders(w.state):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(w.tmux, ignore_errors=True)


def senders(state: Path) -> list[int]:
    from tests.notify.jobs import senders as found

    return found(state)


def sessions_in_every_status(w: Home) -> None:
    """working, idle, ended, an error, a finished subagent, and one waiting at a permission
    dialog whose deciding hook waits for a remote answer (a pending request) while its
    escalation is scheduled (an open escalation)."""
    w.fire("SessionStart", "s-working")
    w.fire("UserPromptSubmit", "s-working")
    w.fire("PreToolUse-Bash", "s-working", **bash("make test"))
    w.fire("UserPromptSubmit", "s-idle")
    w.fire("Stop", "s-idle")
    w.fire("SessionStart", "s-ended")
    w.fire("SessionEnd", "s-ended")
    w.fire("UserPromptSubmit", "s-error")
    w.fire("StopFailure-rate_limit", "s-error")
    w.fire("UserPromptSubmit", "s-sub")
    w.fire("SubagentStart", "s-sub")
    w.fire("SubagentStop", "s-sub")
    w.fire("UserPromptSubmit", "s-wait")
    w.fire("PreToolUse-Bash", "s-wait", **bash("make deploy"))
    deciding = [c for c in w.commands()["PermissionRequest"] if "remote_answer.py" in c]
    assert len(deciding) == 1, "install.py put the deciding hook in ([remote] enabled)"
    w.waiting = w.start_hook(
        deciding[0], payload("PermissionRequest-Bash", "s-wait", **bash("make deploy"))
    )
    w.fire("PermissionRequest-Bash", "s-wait", **bash("make deploy"))
    wait_for(w.requests, what="the pending remote request")
    wait_for(w.escalations, what="the open escalation")
    wait_for(lambda: w.calls.exists(), what="the permission alert")


def other_state(w: Home) -> None:
    """A trusted project, the tmux block, the fleet's cursor and a bridge that runs."""
    project = w.home / "app"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "lookout.toml").write_text(
        f'[channels.proj]\ntype = "command"\nargv = ["{w.program}", "{{title}}"]\n'
    )
    (project / ".claude" / "lookout.toml").chmod(0o600)
    done = w.lookout("trust", str(project), "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    done = w.lookout("tmux-setup", "--apply")
    assert done.returncode == 0, done.stdout + done.stderr
    done = w.lookout("bridge", "--once")
    assert done.returncode == 0, done.stdout + done.stderr
    bridge = w.bridge = subprocess.Popen(
        [str(w.home / ".local" / "bin" / "lookout"), "bridge"],
        env=w.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    lock = w.state / "bridge.lock"
    wait_for(lambda: lock.exists() and lock.read_text().strip() == str(bridge.pid), what="bridge")


class Loop:
    """Fires the installed hooks every 50 ms (each started without waiting for the last), with
    the commands settings.json names at that moment, until stopped; keeps every outcome."""

    def __init__(self, w: Home) -> None:
        self.w = w
        self.sent: list[tuple[str, str, str]] = []  # (event, session, marker)
        self.outcomes: list[tuple[str, int, bytes, bytes]] = []
        self.running: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self.stop.is_set():
            name = LOOP[i % len(LOOP)]
            session = f"loop-{(i // len(LOOP)) % 3}"
            marker = f"echo loop {i}"
            commands = self.w.commands()[name.split("-")[0]]
            for command in commands:
                proc = self.w.start_hook(command, payload(name, session, **bash(marker)))
                self.running.append((command, proc))
            self.sent.append((name, session, marker))
            i += 1
            self._collect()
            self.stop.wait(0.05)

    def _collect(self, wait: bool = False) -> None:
        left = []
        for command, proc in self.running:
            if wait or proc.poll() is not None:
                out, err = proc.communicate(timeout=120)
                self.outcomes.append((command, proc.returncode, out, err))
            else:
                left.append((command, proc))
        self.running = left

    def __enter__(self) -> Loop:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=120)
        self._collect(wait=True)


def assert_every_hook_ran_and_recorded_once(w: Home, loop: Loop, before: int) -> None:
    failed = [(c, rc, out, err[-400:]) for c, rc, out, err in loop.outcomes if rc or out or err]
    assert failed == [], f"{len(failed)} of {len(loop.outcomes)} hooks failed: {failed[:3]}"
    recorded = [e for e in w.events()[before:] if str(e.get("session_id")).startswith("loop-")]
    assert len(recorded) == len(loop.sent)
    sent_bash = sorted(m for name, _, m in loop.sent if name.endswith("-Bash"))
    got_bash = sorted(e["summary"] for e in recorded if e["event"] in ("PreToolUse", "PostToolUse"))
    assert got_bash == sent_bash  # each exactly once


def timed_install(w: Home, checkout: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    done = w.install(checkout)
    return done, time.monotonic() - start


@pytest.mark.real
@pytest.mark.slow
@pytest.mark.parametrize("old", [PREVIOUS_MAIN, BEFORE_WORDS])
def test_an_upgrade_while_sessions_run_loses_nothing(
    world: Home, tmp_path: Path, old: str, capsys: pytest.CaptureFixture[str]
) -> None:
    w = world
    w.write_config()
    done = w.install(checkout_of(old, tmp_path / "old"))
    assert done.returncode == 0, done.stdout + done.stderr
    sessions_in_every_status(w)
    other_state(w)
    statuses = w.statuses()
    assert set(statuses.values()) >= {"working", "idle", "ended", "attention"}
    carried = w.carried()
    ledger = (w.state / "events.jsonl").read_bytes()
    before = len(w.events())

    with Loop(w) as loop:
        wait_for(lambda: len(loop.outcomes) >= 5, what="hooks fired before the install")
        done, took = timed_install(w, ROOT)
        fired_during = len(loop.sent)
        # A few more after it, through whatever settings.json now says.
        wait_for(lambda: len(loop.sent) >= fired_during + 10, what="hooks after the install")
    with capsys.disabled():
        print(f"\n{old} -> tree: install {took:.2f} s, {fired_during} hook rounds during it")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_every_hook_ran_and_recorded_once(w, loop, before)
    from lookout.install import runtimes  # (here: on the code before runtimes/, the above fails)

    assert f"switched from {runtimes.LEGACY_NAME} to runtimes/" in done.stdout
    assert w.bridge is not None
    restart = f"restart: lookout bridge (pid {w.bridge.pid}) still runs the previous version"
    assert restart in done.stdout.splitlines()
    assert (w.state / "events.jsonl").read_bytes().startswith(ledger)
    assert w.carried() == carried
    assert {s: w.statuses().get(s) for s in statuses} == statuses
    # The new runtime is whole, byte-compiled, its hook pack current for the hooks' interpreter.
    current = runtimes.current(w.runtime)
    assert current is not None and runtimes.intact(current)
    assert list((current / "lookout" / "__pycache__").glob("runner.*.pyc"))
    probe = subprocess.run(
        [
            PY,
            "-I",
            "-S",
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); from lookout import hookpack;"
            " print(hookpack.is_current(sys.argv[1] + '/lookout'))",
            str(current),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.stdout.strip() == "True", probe.stderr
    doctor = w.lookout("doctor")
    assert doctor.returncode == 0 and doctor.stdout.endswith("no problems found\n"), doctor.stdout

    # The request the old deciding hook waits on, answered by the new command: the old hook
    # (started before the switch, still on the old code) answers Claude Code.
    (request,) = w.requests()
    done = w.lookout("answer", request.stem, "allow")
    assert done.returncode == 0, done.stdout + done.stderr
    assert w.waiting is not None
    out, err = w.waiting.communicate(timeout=120)
    assert w.waiting.returncode == 0 and err == b""
    assert json.loads(out)["hookSpecificOutput"]["decision"]["behavior"] == "allow"
    w.fire("PostToolUse-Bash", "s-wait", **bash("make deploy"))
    wait_for(lambda: not w.escalations(), what="the escalation to end with its episode")
    # The bridge that ran through it, restarted as the install said: it goes on from the
    # cursor the old one kept (nothing published again from the start).
    assert w.bridge is not None
    w.bridge.send_signal(signal.SIGTERM)
    assert w.bridge.wait(timeout=60) == 0
    cursor = json.loads((w.state / "bridge-cursor.json").read_text())
    w.fire("Stop", "s-working")
    done = w.lookout("bridge", "--once")
    assert done.returncode == 0, done.stdout + done.stderr
    after = json.loads((w.state / "bridge-cursor.json").read_text())
    assert after["offset"] > cursor["offset"]
    assert set(after["published"]) >= set(cursor["published"])
    # The next install removes the runtime before runtimes/ (nothing runs it any more).
    wait_for(lambda: not senders(w.state), what="the old sender to exit", timeout=60)
    assert (w.runtime / "lookout").is_dir()
    done = w.install(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (w.runtime / "lookout").exists()


@pytest.mark.real
@pytest.mark.slow
def test_an_older_install_py_over_this_runtime_works_too(world: Home, tmp_path: Path) -> None:
    """The previous main's installer knows nothing of runtimes/: it writes its package into
    lookout/ (which this layout leaves to it) before its hook scripts, each through the links
    and atomically, so a hook runs either this runtime or that package, whole. The next install
    from this tree builds a whole runtime again."""
    w = world
    w.write_config(fleet=False)
    done = w.install(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    sessions_in_every_status(w)
    statuses = w.statuses()
    before = len(w.events())
    old = checkout_of(PREVIOUS_MAIN, tmp_path / "old")
    with Loop(w) as loop:
        wait_for(lambda: len(loop.outcomes) >= 5, what="hooks fired before the install")
        done = w.install(old)
        fired = len(loop.sent)
        wait_for(lambda: len(loop.sent) >= fired + 10, what="hooks after the install")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_every_hook_ran_and_recorded_once(w, loop, before)
    assert {s: w.statuses().get(s) for s in statuses} == statuses
    assert w.lookout("--version").returncode == 0
    # The current runtime was written into: this tree's install.py builds a whole one again.
    before = len(w.events())
    with Loop(w) as loop:
        wait_for(lambda: len(loop.outcomes) >= 5, what="hooks fired before the install")
        done = w.install(ROOT)
        fired = len(loop.sent)
        wait_for(lambda: len(loop.sent) >= fired + 10, what="hooks after the install")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_every_hook_ran_and_recorded_once(w, loop, before)
    from lookout.install import runtimes

    assert "switched from runtimes/" in done.stdout
    current = runtimes.current(w.runtime)
    assert current is not None and runtimes.intact(current)
    doctor = w.lookout("doctor")
    assert doctor.returncode == 0 and doctor.stdout.endswith("no problems found\n"), doctor.stdout


@pytest.mark.real
@pytest.mark.slow
@pytest.mark.parametrize("old", [PREVIOUS_MAIN, LAST_0_1_0])
def test_an_upgrade_says_from_which_version_and_where_the_changelog_is(
    world: Home, tmp_path: Path, old: str
) -> None:
    """install.py over an older version names both and the changelog its runtime ships, from
    the layout before runtimes/ (which was only ever 0.1.0) and from a runtime whose manifest
    says 0.1.0; the same version again says nothing of the kind."""
    from lookout import version
    from lookout.install import runtimes

    w = world
    w.write_config(fleet=False)
    done = w.install(checkout_of(old, tmp_path / "old"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "upgraded" not in done.stdout
    done = w.install(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    current = runtimes.current(w.runtime)
    assert current is not None and runtimes.intact(current)
    changes = current / "CHANGELOG.md"
    line = f"upgraded 0.1.0 -> {version.version()} (what changed: ~/{changes.relative_to(w.home)})"
    assert line in done.stdout.splitlines()
    assert changes.read_bytes() == (ROOT / "CHANGELOG.md").read_bytes()
    assert f"\n## [{version.version()}] - " in changes.read_text()
    done = w.install(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "upgraded" not in done.stdout
