"""Helpers for the e2e tests: a sandboxed HOME with lookout's hooks registered, runs of the real
client in print mode, and readers for what the hooks recorded (events.jsonl, `lookout status`).

Never touches the real HOME: every path lives under the sandbox's temporary directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tests.helpers import ROOT, short_tmpdir

from .client import DUMMY_API_KEY, offline_env

CHECKOUT = ROOT
T = TypeVar("T")


def wait_for(probe: Callable[[], T | None], timeout: float, what: str, step: float = 0.05) -> T:
    """Poll until probe() returns something truthy; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(step)


@dataclass(frozen=True)
class Install:
    """Where lookout's hooks were registered, and how to run its CLI."""

    home: Path
    settings: Path
    lookout: tuple[str, ...]


def hookspec_settings(python: str = sys.executable) -> dict[str, Any]:
    """settings.json content registering the checkout's hooks, straight from lookout.hookspec."""
    from lookout.hookspec import EVENTS, TIMEOUT_S

    hooks: dict[str, Any] = {}
    for event, script, is_async in EVENTS:
        entry: dict[str, Any] = {
            "type": "command",
            "command": f"{python} -I -S {CHECKOUT / 'hooks' / script}",
            "timeout": TIMEOUT_S,
        }
        if is_async:
            entry["async"] = True
        hooks[event] = [{"hooks": [entry]}]
    return {"hooks": hooks}


def python3_for_users() -> str:
    """The interpreter a user gets from `python3` on PATH, resolved past any pyenv shim."""
    found = subprocess.run(
        ["python3", "-c", "import sys; print(sys.executable)"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return found.stdout.strip()


def run_install_py(
    home: Path, *args: str, cwd: Path = CHECKOUT, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run `python3 install.py [args]` from the checkout's install.py, as a user does, inside an
    isolated HOME (from `cwd`, which the project scopes default to)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
    }
    for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT", "SSL_CERT_FILE"):
        if key in os.environ:
            env[key] = os.environ[key]
    return subprocess.run(
        [python3_for_users(), str(CHECKOUT / "install.py"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def installed_lookout(home: Path) -> tuple[str, ...]:
    return (str(home / ".local" / "bin" / "lookout"),)


@dataclass
class HookRun:
    event: str
    name: str
    exit_code: int | None
    outcome: str
    stdout: str
    stderr: str


@dataclass
class PrintRun:
    returncode: int
    session_id: str
    lines: list[dict[str, Any]]
    stderr: str
    seconds: float

    @property
    def hook_runs(self) -> list[HookRun]:
        return [
            HookRun(
                event=line.get("hook_event", ""),
                name=line.get("hook_name", ""),
                exit_code=line.get("exit_code"),
                outcome=line.get("outcome", ""),
                stdout=line.get("stdout", ""),
                stderr=line.get("stderr", ""),
            )
            for line in self.lines
            if line.get("type") == "system" and line.get("subtype") == "hook_response"
        ]

    @property
    def result(self) -> dict[str, Any]:
        return next((line for line in self.lines if line.get("type") == "result"), {})


# Pairs the client fires back to back, the first one async: a record's ts is taken once its
# interpreter is up (~10 ms after the spawn), so the two can start "out of order" by a few ms.
_BACK_TO_BACK = {
    ("PostToolBatch", "PostToolUse"),
    ("PostToolBatch", "PostToolUseFailure"),
    ("PermissionRequest", "PreToolUse"),
}
# Under load (CI on 2 cores running the whole suite) an interpreter start can take 100+ ms.
_BACK_TO_BACK_MS = 250


def _ts_ms(row: dict[str, Any]) -> float:
    from datetime import datetime

    return datetime.fromisoformat(row["ts"].replace("Z", "+00:00")).timestamp() * 1000


def _sync(event: str) -> bool:
    from lookout import hookspec

    return any(name == event and not is_async for name, _, is_async in hookspec.EVENTS)


def client_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in the order the client fired them: ts order, with two corrections.

    The client waits for a sync hook to finish before it fires anything else, so a record that
    got its seq before a sync record's was fired before it, however late its interpreter came
    up (on a loaded box an async PreToolUse can start after the whole tool ran). And a
    back-to-back pair whose async first half started within a few ms after its second half is
    put back."""
    rows = list(rows)
    moved = True
    while moved:
        moved = False
        for i in range(len(rows) - 1):
            a, b = rows[i], rows[i + 1]
            same = a.get("session_id") == b.get("session_id")  # seq counts per session
            if same and _sync(a["event"]) and b.get("seq", 0) < a.get("seq", 0):
                rows[i], rows[i + 1] = b, a
                moved = True
    for i in range(len(rows) - 1):
        a, b = rows[i], rows[i + 1]
        if (a["event"], b["event"]) in _BACK_TO_BACK and _ts_ms(b) - _ts_ms(a) <= _BACK_TO_BACK_MS:
            rows[i], rows[i + 1] = b, a
    return rows


@dataclass
class Sandbox:
    """One isolated HOME and project directory, with lookout's hooks registered in it."""

    root: Path
    claude: Path
    install: Install
    base_url: str
    extra_env: dict[str, str] = field(default_factory=dict)
    # False: lookout's state and config paths come from HOME alone, as on a user's machine.
    isolated_paths: bool = True

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.home / "project"

    @property
    def state_dir(self) -> Path:
        if not self.isolated_paths:
            return self.home / ".local" / "state" / "lookout"
        return self.root / "state"

    @property
    def config(self) -> Path:
        if not self.isolated_paths:
            return self.home / ".config" / "lookout" / "config.toml"
        return self.root / "config.toml"

    def assert_no_errors(self) -> None:
        """The hooks are fail-open: an exception would only show in errors.log."""
        errors = self.state_dir / "errors.log"
        assert not errors.exists(), errors.read_text()[-3000:]

    @property
    def events_file(self) -> Path:
        return self.state_dir / "events.jsonl"

    def prepare(self, settings: dict[str, Any] | None = None) -> Sandbox:
        (self.home / ".claude").mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)
        target = self.home / ".claude" / "settings.json"
        if settings is not None:
            target.write_text(json.dumps(settings, indent=2))
        elif self.install.settings.resolve() != target.resolve():
            shutil.copyfile(self.install.settings, target)
        return self

    def record_payloads(self, *events: str) -> Path:
        """Also register a plain recorder next to lookout's hooks: the client's raw stdin, one
        JSON object per line, for asserting what a status was derived from."""
        target = self.root / "payloads.jsonl"
        settings_file = self.home / ".claude" / "settings.json"
        settings = json.loads(settings_file.read_text())
        command = f"cat >> '{target}'; echo >> '{target}'"
        for event in events:
            settings["hooks"].setdefault(event, []).append(
                {"hooks": [{"type": "command", "command": command, "timeout": 10}]}
            )
        settings_file.write_text(json.dumps(settings, indent=2))
        return target

    def payloads(self, event: str | None = None) -> list[dict[str, Any]]:
        """What the recorder got, in arrival order (every event, or only `event`)."""
        try:
            lines = (self.root / "payloads.jsonl").read_text().splitlines()
        except FileNotFoundError:
            return []
        rows = [json.loads(line) for line in lines if line.strip()]
        return [row for row in rows if event is None or row.get("hook_event_name") == event]

    def trust_project(self, idle_ms: int = 2000) -> None:
        """Pre-accept onboarding, the API key and the project trust, for interactive mode."""
        config = {
            "hasCompletedOnboarding": True,
            "customApiKeyResponses": {"approved": [DUMMY_API_KEY[-20:]], "rejected": []},
            "messageIdleNotifThresholdMs": idle_ms,
            "projects": {
                str(self.project): {
                    "hasTrustDialogAccepted": True,
                    "hasCompletedProjectOnboarding": True,
                }
            },
        }
        (self.home / ".claude.json").write_text(json.dumps(config))

    def env(self, **extra: str) -> dict[str, str]:
        paths = {}
        if self.isolated_paths:
            paths = {"LOOKOUT_STATE_DIR": str(self.state_dir), "LOOKOUT_CONFIG": str(self.config)}
        return offline_env(self.home, self.base_url, **paths, **{**self.extra_env, **extra})

    def claude_print(
        self, prompt: str, *args: str, timeout: float = 60, env: dict[str, str] | None = None
    ) -> PrintRun:
        argv = [
            str(self.claude),
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
            *args,
        ]
        started = time.monotonic()
        done = subprocess.run(
            argv,
            cwd=self.project,
            env=env or self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        seconds = time.monotonic() - started
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        # The first lines of a resumed run still carry a transient id: the result has the real one.
        ids = [line["session_id"] for line in lines if line.get("type") == "result"]
        ids += [line["session_id"] for line in lines if "session_id" in line]
        session = ids[0] if ids else ""
        return PrintRun(done.returncode, session, lines, done.stderr, seconds)

    # --- what lookout recorded ---------------------------------------------------------------

    def records(self, session_id: str | None = None) -> list[dict[str, Any]]:
        try:
            text = self.events_file.read_text()
        except FileNotFoundError:
            return []
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        if session_id is not None:
            rows = [row for row in rows if row.get("session_id") == session_id]
        # Async hooks (PreToolUse, PostToolUse, Notification, SessionEnd) may append after a
        # later event: the order that means something is when each hook started (ts), which
        # every record carries. Arrival order (seq) breaks ties within a millisecond.
        rows.sort(key=lambda row: (row.get("ts", ""), row.get("seq", 0)))
        return client_order(rows)

    def wait_event(
        self, session_id: str, event: str, timeout: float = 10, count: int = 1, **fields: Any
    ) -> dict[str, Any]:
        """The `count`-th record of `event` (with these field values), once it has been written."""

        def probe() -> dict[str, Any] | None:
            rows = [
                row
                for row in self.records(session_id)
                if row.get("event") == event and all(row.get(k) == v for k, v in fields.items())
            ]
            return rows[count - 1] if len(rows) >= count else None

        return wait_for(probe, timeout, f"{event} #{count} {fields or ''} in {self.events_file}")

    def status(self) -> dict[str, Any]:
        done = subprocess.run(
            [*self.install.lookout, "status", "--json", "--all"],
            cwd=CHECKOUT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, f"lookout status failed: {done.stderr}"
        parsed: dict[str, Any] = json.loads(done.stdout)
        return parsed

    def session_status(self, session_id: str) -> dict[str, Any]:
        sessions = [s for s in self.status()["sessions"] if s["session_id"] == session_id]
        assert len(sessions) == 1, f"session {session_id} in status --json: {self.status()}"
        return sessions[0]


def sequence(records: Iterable[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    """(event, session status, reason) per record, duplicates left out.

    `status` is always the session's (the parent's) status, also on a subagent's records."""
    return [
        (row["event"], row["status"], row.get("reason"))
        for row in records
        if not row.get("duplicate")
    ]


def describe(records: Iterable[dict[str, Any]]) -> str:
    """A readable dump for assertion messages."""
    keys = (
        "ts",
        "seq",
        "event",
        "status",
        "reason",
        "detail",
        "agent_id",
        "tool_name",
        "notification_type",
        "duplicate",
        "observed_ms",
    )
    return "\n".join(json.dumps({k: row.get(k) for k in keys}) for row in records)


class ClaudePane:
    """The real client, interactive, in the only pane of a private tmux server.

    `tmux -L <unique>` with its own TMUX_TMPDIR: never the user's server; killed on exit. The
    socket's directory is a short one of its own, never under the sandbox (pytest's basetemp can
    be long enough to push the socket's path over the 107-byte limit)."""

    def __init__(self, sandbox: Sandbox, *args: str, env: dict[str, str] | None = None) -> None:
        self.sandbox = sandbox
        self.name = f"lookout-e2e-{os.getpid()}-{id(self):x}"
        self.tmpdir = short_tmpdir("lk-tmux-")
        self.args = args
        self.env = env or sandbox.env()

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.name, *args],
            capture_output=True,
            text=True,
            timeout=10,
            env={"PATH": self.env["PATH"], "TMUX_TMPDIR": str(self.tmpdir), "TERM": "xterm"},
        )
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def __enter__(self) -> ClaudePane:
        pairs = [x for key, value in self.env.items() for x in ("-e", f"{key}={value}")]
        self.tmux(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "e2e",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
            str(self.sandbox.project),
            *pairs,
            str(self.sandbox.claude),
            *self.args,
        )
        self.tmux("set-option", "-t", "e2e", "remain-on-exit", "on")
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.tmux("kill-server")
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    @property
    def socket(self) -> Path:
        """Where tmux puts the server's socket (TMUX_TMPDIR/tmux-UID/NAME)."""
        return self.tmpdir / f"tmux-{os.getuid()}" / self.name

    @property
    def pane_id(self) -> str:
        return self.tmux("display-message", "-p", "-t", "e2e", "#{pane_id}").strip()

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "e2e")

    def wait_screen(self, text: str, timeout: float = 15) -> float:
        """Wait until `text` is on screen; return the monotonic time it was first seen."""
        try:
            wait_for(lambda: text in self.screen(), timeout, f"{text!r} on screen", step=0.03)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the screen:\n{self.screen()}") from None
        return time.monotonic()

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "e2e", *keys)

    def type(self, text: str) -> None:
        """Type a prompt and submit it: Enter only once the client has drawn the text (keys that
        arrive with the text are taken for part of a paste, and a starved client reads late)."""
        self.tmux("send-keys", "-t", "e2e", "-l", text)
        self.wait_screen(text[-24:], timeout=20)
        time.sleep(0.3)  # the paste settles
        self.keys("Enter")

    def ready(self, timeout: float = 20) -> str:
        """Wait for the prompt and lookout's SessionStart record; return the session id."""
        self.wait_screen("\u276f", timeout)
        row = wait_for(
            lambda: next((r for r in self.sandbox.records() if r["event"] == "SessionStart"), None),
            timeout,
            "SessionStart in events.jsonl",
        )
        time.sleep(0.3)  # the input box takes keys a moment after it is drawn
        return str(row["session_id"])


@dataclass(frozen=True)
class ClientState:
    """One state of the client's own registry file, with its two stamps."""

    session_id: str
    status: str | None
    status_ms: int | None  # the client's own time of the change (statusUpdatedAt)
    written_ms: int  # the file's ctime (its write, or the rename that put it in place)


class ClientLog:
    """Every state the real client's registry (HOME/.claude/sessions/<pid>.json) was seen in,
    watched by a thread. Its stamps are what the real-client tests measure lookout's bounds
    from: the client writes the answer to a dialog there (`busy`, `idle`) as it takes the key, so
    "lookout says it within 1 s" is measured from that write, not from the test's keypress, which
    a starved scheduler can keep from the client for seconds."""

    def __init__(self, sandbox: Sandbox, every: float = 0.01) -> None:
        self.directory = sandbox.home / ".claude" / "sessions"
        self.every = every
        self.states: list[ClientState] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> ClientLog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _watch(self) -> None:
        seen: dict[str, tuple[int, int]] = {}
        while not self._stop.wait(self.every):
            try:
                names = os.listdir(self.directory)
            except OSError:
                continue
            for name in names:
                if name.endswith(".json"):
                    self._look(self.directory / name, name, seen)

    def _look(self, path: Path, name: str, seen: dict[str, tuple[int, int]]) -> None:
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())  # the stamp of the very bytes read
                if seen.get(name) == (st.st_ino, st.st_ctime_ns):
                    return
                raw = json.loads(fh.read())
        except (OSError, ValueError):
            return
        seen[name] = (st.st_ino, st.st_ctime_ns)
        if not isinstance(raw, dict):
            return
        state = ClientState(
            str(raw.get("sessionId")),
            raw.get("status"),
            raw.get("statusUpdatedAt"),
            st.st_ctime_ns // 1_000_000,  # from then on any reader sees it
        )
        last = [s for s in self.states if s.session_id == state.session_id][-1:]
        if not last or (last[0].status, last[0].status_ms) != (state.status, state.status_ms):
            self.states.append(state)

    def wait(
        self,
        session_id: str | None,
        status: Callable[[str | None], bool],
        after_ms: int = 0,
        timeout: float = 20,
    ) -> ClientState:
        """The first state (of `session_id`, or of any session) written at or after `after_ms`
        whose status passes `status`."""

        def probe() -> ClientState | None:
            return next(
                (
                    s
                    for s in list(self.states)
                    if session_id in (None, s.session_id)
                    and s.written_ms >= after_ms
                    and status(s.status)
                ),
                None,
            )

        return wait_for(probe, timeout, f"the client's registry: {self.states}")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def replay_hooks(
    payloads: list[dict[str, Any]], state: Path, lag: int = 0, delayed: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """Run each payload through the checkout's hooks/<script>, as the client would, and return
    the records. A `delayed` event's hook is started in its turn (it takes its start time then)
    but gets its stdin, and so finishes, only after the next `lag` hooks have finished."""
    from lookout.hookspec import EVENTS, GENERIC_SCRIPT

    scripts = {name: script for name, script, _ in EVENTS}

    def script_for(event: str) -> str:
        return scripts.get(event, GENERIC_SCRIPT)

    state.parent.mkdir(parents=True, exist_ok=True)
    (state.parent / "empty.toml").write_text("")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(state.parent),
        "LOOKOUT_STATE_DIR": str(state),
        "LOOKOUT_CONFIG": str(state.parent / "empty.toml"),
        "CLAUDE_PID": str(os.getpid()),
    }
    pending: list[tuple[int, subprocess.Popen[bytes], bytes]] = []

    def finish(proc: subprocess.Popen[bytes], data: bytes) -> None:
        out, _ = proc.communicate(data, timeout=20)
        assert (proc.returncode, out) == (0, b"")

    for i, payload in enumerate(payloads):
        event = payload["hook_event_name"]
        argv = [sys.executable, "-I", "-S", str(CHECKOUT / "hooks" / script_for(event))]
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        data = json.dumps(payload).encode() + b"\n"
        if lag and event in delayed:
            pending.append((i + lag, proc, data))
            time.sleep(0.25)  # the hook has taken its start time before the next one starts
        else:
            finish(proc, data)
        for item in [p for p in pending if p[0] <= i]:
            pending.remove(item)
            finish(item[1], item[2])
    for _, proc, data in pending:
        finish(proc, data)
    lines = (state / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]
