"""Days without a restart (issue 35): a synthetic week (bench/soak_week.py: about 50 sessions of
Claude Code, Codex and Gemini CLI in 5 projects, 200,000 hook deliveries: dialogs, answers,
subagents, failed turns, ends) replayed at up to 100x against the hooks of a runtime that
install.py built in a temporary HOME, with everything that lives long running throughout:

- `lookout serve`, with a page signed in as a browser signs in (lookout/web/auth.py) keeping an
  event stream open, another stream reopened every minute (a reload), and the page's polls
  (/api/requests every 2 s, /api/report every minute, a session's timeline);
- `lookout bridge` on a real Mosquitto with the shipped ACL (Home Assistant discovery on);
- the notification sender, started by the hooks as usual, sending to a webhook receiver on
  loopback, a command channel and Telegram (the Bot API double, tests/telegram_api.py);
- `[remote] enabled = true`: Claude Code's permission dialogs wait in the deciding hook, answered
  by a press on Telegram (the poller in between), from the dashboard, or at the terminal.

It prints, for each long-lived process (serve, bridge, each sender and poller process over its
life): resident memory after warm-up and at the end, open descriptors and threads (from
/proc/<pid>/status and /proc/<pid>/fd, each the least of FLOOR_S of samples: a request in flight
is not growth); the alerts expected (the script and the rules), sent
(deliveries.jsonl), received, duplicated and lost, judged once the outbox is empty and every
sender and poller has exited; and `lookout report --json` against the script's own count of
dialogs per project and reason.

    python bench/soak.py [--minutes N | --days D] [--speed 100] [--rotate-bytes B] [--seed 1]
                         [--keep] [--json]

`--json` prints the figures as one JSON object on stdout (tests/test_bench.py asserts the goals
from it) and the readable lines on stderr.

The full week at 100x runs 101 minutes. Writes only to a temporary directory."""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import itertools
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from soak_week import (  # noqa: E402
    AGENTS,
    DONE_PROJECTS,
    PROJECTS,
    WEEK_EVENTS,
    WEEK_S,
    WEEK_SESSIONS,
    Dialog,
    Session,
    Step,
    Week,
    build,
)

from lookout.web import auth  # noqa: E402  (the page's request signature, as auth.js makes it)
from tests.mosquitto import Broker  # noqa: E402
from tests.receivers import Receiver  # noqa: E402
from tests.telegram_api import BotApi  # noqa: E402

TG_TOKEN = "123456:AAH-soak-token"
CHAT, USER = 1001, 42
HOST = "soakhost"
MQTT_PASSWORD = "pw-soakhost-bench"
TOKEN = re.compile(r"soak-[dt]\d+")
SAMPLE_S = 2.0
GROWTH_MAX = 10.0  # % RSS after warm-up
FLAT_SLACK = 2  # descriptors / threads: a request in flight at the moment of a sample
FLOOR_S = 10.0  # each figure at warm-up and at the end: the least of the samples this long
RECORDER = """import os, sys
line = repr((sys.argv[2], os.environ.get("LOOKOUT_KIND"), os.environ.get("LOOKOUT_TITLE"),
             os.environ.get("LOOKOUT_BODY"))) + "\\n"
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
os.write(fd, line.encode("utf-8", "backslashreplace"))
os.close(fd)
"""


def tokens(text: str) -> set[str]:
    """The dialog and turn tokens in a text (soak-d1 is not in soak-d12)."""
    return set(TOKEN.findall(text))


OUT = sys.stdout  # the readable lines; stderr with --json (stdout then holds the JSON alone)


def log(text: str) -> None:
    print(text, file=OUT, flush=True)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# -- the installed runtime ---------------------------------------------------------------------


@dataclass
class Place:
    tmp: Path
    home: Path
    env: dict[str, str]
    state: Path
    lookout: str
    hooks: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # agent -> event -> cmds
    deciding: str = ""  # the deciding hook's command (Claude Code's PermissionRequest)
    cmd_log: Path = Path()


def config_text(place: Place, webhook: str, api: str, broker: str) -> str:
    recorder = place.tmp / "recorder.py"
    recorder.write_text(RECORDER)
    argv = json.dumps([sys.executable, "-I", "-S", str(recorder), str(place.cmd_log)])[:-1]
    return f"""# bench/soak.py
[remote]
enabled = true
wait_s = 900
tools = ["Bash"]

[channels.hook]
type = "webhook"
url = "{webhook}/soak"
format = "json"
content = "full"

[channels.cmd]
type = "command"
argv = {argv}, "{{session_id}}"]

[channels.tg]
type = "telegram"
token_env = "SOAK_TG_TOKEN"
chat_id = {CHAT}
allowed_user_ids = [{USER}]
api_url = "{api}"
content = "full"

[[rules]]
when = ["permission", "question", "plan", "elicitation", "input", "error"]
channels = ["hook", "cmd"]

[[rules]]
when = ["done"]
channels = ["cmd"]
projects = {json.dumps(list(DONE_PROJECTS))}

[[rules]]
when = ["permission"]
channels = ["tg"]
agents = ["claude"]

[fleet]
mqtt = "{broker}"
username = "{HOST}"
password_env = "SOAK_MQTT_PASSWORD"
host = "{HOST}"
home_assistant = true
"""


def install(place: Place) -> None:
    """install.py for Claude Code, Codex and Gemini CLI into the temporary HOME, with this
    interpreter (no pip, no network); then the installed hooks' commands, as the clients read
    them."""
    for agent in AGENTS:
        done = subprocess.run(
            [
                sys.executable,
                str(ROOT / "install.py"),
                "--agent",
                agent,
                "--python",
                sys.executable,
            ],
            env=place.env,
            cwd=place.home,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode:
            raise SystemExit(f"error: install.py --agent {agent}: {done.stdout}{done.stderr}")
    files = {
        "claude": place.home / ".claude" / "settings.json",
        "codex": place.home / ".codex" / "hooks.json",
        "gemini": place.home / ".gemini" / "settings.json",
    }
    for agent, path in files.items():
        table: dict[str, list[str]] = {}
        for event, groups in json.loads(path.read_text())["hooks"].items():
            for group in groups:
                for h in group["hooks"]:
                    if "remote_answer.py" in h["command"]:
                        if agent == "claude":  # Codex's waits only while away (issue 41)
                            place.deciding = h["command"]
                    else:
                        table.setdefault(event, []).append(h["command"])
        place.hooks[agent] = table
    if not place.deciding:
        raise SystemExit("error: install.py registered no deciding hook ([remote] enabled)")


# -- the long-lived processes' resources -------------------------------------------------------


@dataclass
class Sample:
    t: float
    rss_kb: int
    fds: int
    threads: int


@dataclass
class Proc:
    role: str
    pid: int
    samples: list[Sample] = field(default_factory=list)

    def lived(self) -> float:
        return self.samples[-1].t - self.samples[0].t if self.samples else 0.0


def sample(pid: int, t: float) -> Sample | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    rss = threads = 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
        elif line.startswith("State:") and line.split()[1] == "Z":
            return None
    return Sample(t, rss, fds, threads)


ROLES = (("lookout.sender.sender", "sender"), ("lookout.surfaces.telegram", "poller"))


class Sampler(threading.Thread):
    """Every SAMPLE_S: resident memory, descriptors and threads of serve, bridge, and of every
    sender and Telegram poller of this state directory (found by their command lines)."""

    def __init__(self, state: Path, fixed: dict[str, int]) -> None:
        super().__init__(daemon=True)
        self.state = str(state)
        self.fixed = fixed
        # (role, pid, start time): a pid the system gave again to a later sender is another one
        self.procs: dict[tuple[str, int, bytes], Proc] = {}
        self.known: dict[int, tuple[str, bytes]] = {}  # pid -> (role, start) or not ours
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def ours(self) -> dict[int, str]:
        """pid -> role of the senders and pollers running now."""
        found = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            try:
                start = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[19]
            except (OSError, IndexError):
                continue
            seen = self.known.get(pid)
            if seen is None or seen[1] != start:
                role = None
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
                except OSError:
                    continue
                if self.state in cmdline:
                    role = next((r for marker, r in ROLES if marker in cmdline), None)
                self.known[pid] = (role or "", start)
                seen = self.known[pid]
            if seen[0]:
                found[pid] = seen[0]
        return found

    def take(self) -> None:
        now = time.monotonic()
        with self.lock:
            targets = {**{pid: role for role, pid in self.fixed.items()}, **self.ours()}
            for pid, role in targets.items():
                s = sample(pid, now)
                if s is not None:
                    start = (self.known.get(pid) or ("", b""))[1]
                    self.procs.setdefault((role, pid, start), Proc(role, pid)).samples.append(s)

    def run(self) -> None:
        while not self.stop.wait(SAMPLE_S):
            self.take()


# -- the dashboard, as a signed-in page uses it -----------------------------------------------


class Page:
    """A browser page signed in with a one-time code: each request signed with the session's
    key (auth.js), streams read as Server-Sent Events."""

    def __init__(self, port: int, code: str) -> None:
        self.port = port
        self.origin = f"http://127.0.0.1:{port}"
        status, body = self._plain("POST", "/api/login", {"code": code})
        if status != 200:
            raise SystemExit(f"error: the dashboard refused the sign-in code: {body}")
        self.session, self.key = body["session"], base64.urlsafe_b64decode(body["key"] + "==")
        challenge = secrets.token_urlsafe(24)
        status, hello = self._plain(
            "POST", "/api/hello", {"session": self.session, "challenge": challenge}
        )
        want = auth.b64(auth._hmac(self.key, "lookout proof", challenge))
        if status != 200 or hello.get("proof") != want:
            raise SystemExit("error: the dashboard did not prove it knows the session's key")
        self.counts: Counter[str] = Counter()
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def _plain(self, method: str, path: str, body: object) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            data = json.dumps(body).encode()
            conn.request(
                method, path, data, {"Content-Type": "application/json", "Origin": self.origin}
            )
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read() or b"{}")
        finally:
            conn.close()

    def headers(self, method: str, target: str, body: bytes) -> dict[str, str]:
        ts, nonce = str(int(time.time() * 1000)), secrets.token_urlsafe(18)
        mac = auth.request_mac(self.key, method, target, ts, nonce, body)
        return {
            "Authorization": f"{auth.SCHEME} {self.session} {ts} {nonce} {mac}",
            "Origin": self.origin,
            "Content-Type": "application/json",
        }

    def call(self, method: str, target: str, body: object = None) -> tuple[int, Any]:
        data = b"" if body is None else json.dumps(body).encode()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, target, data or None, self.headers(method, target, data))
            resp = conn.getresponse()
            raw = resp.read()
        except OSError as exc:
            self.note(f"{method} {target}: {exc}")
            return 0, None
        finally:
            conn.close()
        with self.lock:
            self.counts[f"{method} {target.split('?')[0].split('/')[2]}"] += 1
        if resp.status != 200:
            self.note(f"{method} {target}: HTTP {resp.status} {raw[:200]!r}")
        try:
            return resp.status, json.loads(raw)
        except ValueError:
            return resp.status, None

    def note(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)

    def stream(self, stop: threading.Event, for_s: float | None = None) -> None:
        """One SSE connection: read until `for_s` passed (a reload), the stop, or it drops."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request("GET", "/api/stream", headers=self.headers("GET", "/api/stream", b""))
            resp = conn.getresponse()
            if resp.status != 200:
                self.note(f"stream: HTTP {resp.status}")
                return
            with self.lock:
                self.counts["streams opened"] += 1
            until = None if for_s is None else time.monotonic() + for_s
            while not stop.is_set() and (until is None or time.monotonic() < until):
                line = resp.fp.readline()
                if not line:
                    self.note("stream: the server closed it")
                    return
                if line.startswith(b"event: "):
                    with self.lock:
                        self.counts["sse " + line[7:].strip().decode()] += 1
        except OSError as exc:
            if not stop.is_set():
                self.note(f"stream: {exc}")
        finally:
            conn.close()

    def run(self, stop: threading.Event, sessions: list[str]) -> list[threading.Thread]:
        def long_stream() -> None:
            while not stop.is_set():
                self.stream(stop)
                stop.wait(2)  # the page reconnects after 2 s

        def reloads() -> None:
            while not stop.is_set():
                self.call("GET", "/api/sessions?all=1")
                self.stream(stop, for_s=60)

        def polls() -> None:
            n = 0
            while not stop.wait(2):
                self.call("GET", "/api/requests?all=1")
                if n % 30 == 0:
                    self.call("GET", "/api/report")
                if n % 5 == 0 and sessions:
                    sid = sessions[n // 5 % len(sessions)]
                    self.call("GET", f"/api/sessions/{sid}/events?limit=50")
                n += 1

        threads = [threading.Thread(target=f, daemon=True) for f in (long_stream, reloads, polls)]
        for t in threads:
            t.start()
        return threads


# -- the replay --------------------------------------------------------------------------------


class Replay:
    def __init__(self, place: Place, week: Week, speed: float, page: Page, api: BotApi) -> None:
        self.place = place
        self.week = week
        self.speed = speed
        self.page = page
        self.api = api
        self.lock = threading.Lock()
        self.runs = 0
        self.failures: list[str] = []
        self.answered: Counter[str] = Counter()
        self.late_s = 0.0  # how far behind the schedule the replay fell, at most
        self.t0 = 0.0
        self.deciders: list[subprocess.Popen[bytes]] = []

    def fail(self, text: str) -> None:
        with self.lock:
            self.failures.append(text)

    def env_for(self, session: Session) -> dict[str, str]:
        env = dict(self.place.env)
        if session.agent == "claude":
            env.update(
                CLAUDE_PID=str(os.getpid()),
                CLAUDE_PROJECT_DIR=session.cwd,
                CLAUDE_CODE_ENTRYPOINT="cli",
            )
        return env

    def fire(self, session: Session, event: str, payload: dict[str, Any]) -> None:
        """Every command the agent's installed hook file runs for `event`, through the shell
        its client uses, one after the other; each must exit 0 saying nothing."""
        if "timestamp" in payload:  # Gemini CLI stamps its events
            payload["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        shell = "bash" if session.agent == "gemini" else "sh"
        data = json.dumps(payload).encode()
        for command in self.place.hooks[session.agent].get(event, []):
            try:
                proc = subprocess.run(
                    [shell, "-c", command],
                    input=data,
                    capture_output=True,
                    env=self.env_for(session),
                    cwd=session.cwd,
                    timeout=60,
                )
            except subprocess.TimeoutExpired:
                self.fail(f"{session.agent} {event}: still running after 60 s")
                continue
            with self.lock:
                self.runs += 1
            if proc.returncode or proc.stderr or proc.stdout:
                self.fail(
                    f"{session.agent} {event}: exit {proc.returncode}, stdout"
                    f" {proc.stdout[:200]!r}, stderr {proc.stderr[:300]!r}"
                )

    def wait_until(self, at: float) -> None:
        due = self.t0 + at / self.speed
        left = due - time.monotonic()
        if left > 0:
            time.sleep(left)
        else:
            with self.lock:
                self.late_s = max(self.late_s, -left)

    def session(self, session: Session) -> None:
        try:
            for step in session.steps:
                self.wait_until(step.at)
                if step.dialog is not None and step.dialog.answer is not None:
                    self.remote(session, step)
                else:
                    self.fire(session, step.event, step.payload)
        except Exception as exc:  # a bench bug: say so, and let the others finish
            import traceback

            self.fail(f"session {session.sid}: {exc}\n{traceback.format_exc()}")

    # A Claude Code permission dialog with [remote] on: the deciding hook and the recording one
    # run side by side (the client starts both), the request waits, then its answer comes.

    def remote(self, session: Session, step: Step) -> None:
        d = step.dialog
        assert d is not None and d.answer is not None
        data = json.dumps(step.payload).encode()
        decider = subprocess.Popen(
            ["sh", "-c", self.place.deciding],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env_for(session),
            cwd=session.cwd,
        )
        with self.lock:
            self.deciders.append(decider)
        assert decider.stdin is not None
        decider.stdin.write(data)
        decider.stdin.close()
        decider.stdin = None  # communicate() must not flush it again
        self.fire(session, step.event, step.payload)
        rec = self.pending(d, decider)
        if rec is None:
            self.finish(decider, d, None)
            return
        if step.notify is not None:
            self.wait_until(step.at + min(6.0, step.answer_after))
            self.fire(session, "Notification", step.notify)
        self.wait_until(step.at + step.answer_after)
        if d.answer == "telegram" and not self.press(d):
            d.answer = "terminal"  # no button to press: answered at the terminal instead
        if d.answer == "dashboard":
            status, _ = self.page.call(
                "POST", f"/api/requests/{rec['id']}", {"decision": "allow", "nonce": rec["nonce"]}
            )
            if status != 200:
                self.fail(f"{d.token}: the dashboard's answer got HTTP {status}")
                d.answer = "terminal"
        if d.answer == "denied":
            decider.send_signal(signal.SIGTERM)  # No at the dialog: the client tells the hook so
            self.finish(decider, d, "")
            return
        if d.answer == "terminal":  # Yes at the dialog: the tool runs; the hook sees it
            assert step.resolve is not None
            self.fire(session, "PostToolUse", step.resolve)
            self.finish(decider, d, "")
            return
        self.finish(decider, d, "allow")
        assert step.resolve is not None
        self.fire(session, "PostToolUse", step.resolve)

    def pending(self, d: Dialog, decider: subprocess.Popen[bytes]) -> dict[str, Any] | None:
        """The request the deciding hook recorded for this dialog (through the page's API)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            _, body = self.page.call("GET", "/api/requests")
            for rec in (body or {}).get("requests", []):
                if (
                    d.token in tokens(json.dumps(rec.get("tool_input")))
                    and rec.get("status") == "pending"
                ):
                    return dict(rec)
            if decider.poll() is not None:
                break
            time.sleep(0.1)
        self.fail(f"{d.token}: the deciding hook recorded no pending request")
        return None

    def press(self, d: Dialog) -> bool:
        """Allow under the dialog's Telegram message, once its buttons are there."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for (chat, mid), message in list(self.api.messages.items()):
                if d.token not in tokens(message.get("text", "")) or not message.get(
                    "reply_markup"
                ):
                    continue
                allow = [data for label, data in self.api.buttons(chat, mid) if label == "Allow"]
                if allow:
                    self.api.press(mid, allow[0], USER)
                    return True
            time.sleep(0.1)
        self.fail(f"{d.token}: no Telegram message with Allow within 120 s")
        return False

    def finish(self, decider: subprocess.Popen[bytes], d: Dialog, want: str | None) -> None:
        """The deciding hook's exit: `want` "allow" (its decision printed), "" (nothing)."""
        try:
            out, err = decider.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            decider.kill()
            out, err = decider.communicate()
            self.fail(f"{d.token}: the deciding hook still waited 120 s after its answer")
        with self.lock:
            self.answered[d.answer or "?"] += 1
        said = None
        with contextlib.suppress(ValueError, KeyError, TypeError):
            said = json.loads(out)["hookSpecificOutput"]["decision"]["behavior"]
        ok = (
            decider.returncode == 0
            and not err
            and (want is None or (out == b"" if want == "" else said == want))
        )
        if not ok:
            self.fail(
                f"{d.token} ({d.answer}): deciding hook exit {decider.returncode},"
                f" stdout {out[:200]!r}, stderr {err[:300]!r}"
            )

    def run(self) -> None:
        self.t0 = time.monotonic()
        threads = [
            threading.Thread(target=self.session, args=(s,), daemon=True)
            for s in self.week.sessions
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


# -- deliveries.jsonl, followed across rotation ------------------------------------------------


class Follower(threading.Thread):
    """Reads every line appended to a file that is rotated by renaming (store.Locked.append):
    the open descriptor is read to its end before the new file is opened."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.lines: list[dict[str, Any]] = []
        self.stop = threading.Event()
        self.f: Any = None
        self.buf = b""

    def _drain(self) -> None:
        while chunk := self.f.read(1 << 20):
            self.buf += chunk
        *whole, self.buf = self.buf.split(b"\n")
        for raw in whole:
            with contextlib.suppress(ValueError):
                self.lines.append(json.loads(raw))

    def poll(self) -> None:
        if self.f is None:
            try:
                self.f = open(self.path, "rb")  # noqa: SIM115 - reopened across rotation
            except FileNotFoundError:
                return
        self._drain()
        try:
            if os.stat(self.path).st_ino != os.fstat(self.f.fileno()).st_ino:
                self._drain()
                self.f.close()
                self.f = None
                self.buf = b""
                self.poll()
        except FileNotFoundError:
            pass

    def run(self) -> None:
        while not self.stop.wait(0.5):
            self.poll()


# -- the verdicts ------------------------------------------------------------------------------


def processes_left(place: Place, sampler: Sampler, replay: Replay) -> list[str]:
    left = [f"{role} {pid}" for pid, role in sampler.ours().items()]
    left += [f"deciding hook {p.pid}" for p in replay.deciders if p.poll() is None]
    outbox = place.state / "outbox"
    if outbox.is_dir():
        left += [f"outbox/{n}" for n in os.listdir(outbox) if n.endswith(".json")]
    return left


def drain(place: Place, sampler: Sampler, replay: Replay, limit_s: float) -> tuple[bool, float]:
    """Wait (on the processes themselves, not a fixed sleep) until the outbox is empty and every
    sender, poller and deciding hook has exited."""
    start = time.monotonic()
    while True:
        left = processes_left(place, sampler, replay)
        if not left:
            return True, time.monotonic() - start
        if time.monotonic() - start > limit_s:
            log(f"  drain: still there after {limit_s:.0f} s: {', '.join(left[:8])}")
            return False, time.monotonic() - start
        time.sleep(0.5)


def received(
    place: Place, webhook: Receiver, api: BotApi
) -> tuple[Counter[tuple[str, str]], list[str]]:
    got: Counter[tuple[str, str]] = Counter()
    stray = []

    def count(channel: str, text: str) -> None:
        found = tokens(text)
        if len(found) != 1:
            stray.append(f"{channel}: {text[:160]!r}")
        for token in found:
            got[(channel, token)] += 1

    for req in list(webhook.requests):
        body = req.json()
        count("hook", f"{body.get('title')}\n{body.get('message')}")
    if place.cmd_log.exists():
        import ast

        for line in place.cmd_log.read_text(errors="replace").splitlines():
            _sid, _kind, title, body = ast.literal_eval(line)
            count("cmd", f"{title}\n{body}")
    for params in api.sent("sendMessage"):
        count("tg", str(params.get("text")))
    return got, stray


def judge_alerts(
    week: Week, got: Counter[tuple[str, str]], deliveries: list[dict[str, Any]]
) -> tuple[list[str], dict[str, dict[str, int]]]:
    expected = week.expected_alerts()
    rows: dict[str, dict[str, int]] = {}
    for channel in ("hook", "cmd", "tg"):
        exp = {k for k in expected if k[0] == channel}
        rec = {k: n for k, n in got.items() if k[0] == channel}
        sent = sum(
            1
            for d in deliveries
            if d.get("channel") == channel and d.get("result") == "sent" and not d.get("update")
        )
        failed = sum(
            1 for d in deliveries if d.get("channel") == channel and d.get("result") == "failed"
        )
        rows[channel] = {
            "expected": len(exp),
            "sent": sent,
            "received": sum(rec.values()),
            "duplicated": sum(n - 1 for n in rec.values() if n > 1),
            "lost": len(exp - set(rec)),
            "unexpected": len(set(rec) - exp),
            "failed": failed,
        }
    problems = []
    for channel, row in rows.items():
        for what in ("duplicated", "lost", "unexpected", "failed"):
            if row[what]:
                problems.append(f"{channel}: {row[what]} {what}")
    lost = sorted(set(expected) - set(got))[:5]
    if lost:
        problems.append(f"first lost: {lost}")
    dups = [k for k, n in got.items() if n > 1][:5]
    if dups:
        problems.append(f"first duplicated: {dups}")
    return problems, rows


def report_check(place: Place, week: Week) -> tuple[list[str], dict[str, Any]]:
    """`lookout report --json` per project against the script's dialogs per project and reason."""

    def run(*args: str) -> dict[str, Any]:
        out = subprocess.run(
            [place.lookout, "report", "--json", "--since", "30d", *args],
            env=place.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if out.returncode:
            raise SystemExit(f"error: lookout report: {out.stderr}")
        data: dict[str, Any] = json.loads(out.stdout)
        return data

    want = week.episodes()
    problems = []
    total = run()
    if total["episodes"] != len(week.dialogs):
        problems.append(f"report: {total['episodes']} episodes, the script has {len(week.dialogs)}")
    cells = exact = 0
    for project in PROJECTS:
        data = run("--project", project)
        got = {row["reason"]: row["episodes"] for row in data["by_reason"]}
        reasons = {r for (p, r) in want if p == project} | set(got)
        for reason in sorted(reasons):
            cells += 1
            n = want.get((project, reason), 0)
            if got.get(reason, 0) == n:
                exact += 1
            else:
                problems.append(f"report: {project}/{reason}: {got.get(reason, 0)}, script {n}")
    return problems, {
        "episodes": total["episodes"],
        "script": len(week.dialogs),
        "cells": cells,
        "cells_exact": exact,
        "exact": not problems,
    }


def events_check(place: Place, replay: Replay) -> tuple[list[str], dict[str, Any]]:
    """events.jsonl and its rotated files: one record per hook run, no duplicate, no seq gap."""
    files = sorted(place.state.glob("events.jsonl*"))
    lines = dups = hooks = 0
    seqs: dict[str, list[int]] = {}
    for path in files:
        with open(path, "rb") as f:
            for raw in f:
                with contextlib.suppress(ValueError):
                    rec = json.loads(raw)
                    lines += 1
                    dups += bool(rec.get("duplicate"))
                    if rec.get("event") not in ("Reconciled", "RemoteDecision", "Ack", "Steered"):
                        hooks += 1
                    seqs.setdefault(str(rec.get("session_id")), []).append(int(rec.get("seq") or 0))
    gaps = 0
    whole = True
    for values in seqs.values():
        values.sort()
        if values and values[0] != 1:
            whole = False  # its start was rotated away
            continue
        gaps += sum(1 for a, b in itertools.pairwise(values) if b != a + 1)
    problems = []
    if dups:
        problems.append(f"events: {dups} records marked duplicate (every payload is unique)")
    if whole and hooks != replay.runs:
        problems.append(f"events: {hooks} hook records for {replay.runs} hook runs")
    if gaps:
        problems.append(f"events: {gaps} gaps in the per-session seq")
    return problems, {
        "lines": lines,
        "hook_records": hooks,
        "hook_runs": replay.runs,
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
        "everything_kept": whole,
        "duplicates": dups,
        "seq_gaps": gaps,
    }


def rows_for(procs: list[Proc], warm_s: float) -> list[tuple[Proc, Sample, Sample]]:
    """(proc, warm sample, largest after warm-up) for each process that lived past warm-up."""
    out = []
    for p in procs:
        if not p.samples:
            continue
        after = [s for s in p.samples if s.t >= p.samples[0].t + warm_s]
        if after:
            out.append((p, after[0], max(after, key=lambda s: s.rss_kb)))
    return out


def flat_min(samples: list[Sample], t: float, window: float, attr: str) -> int:
    near = [getattr(s, attr) for s in samples if t <= s.t <= t + window]
    return min(near) if near else int(getattr(samples[-1], attr))


def judge_process(p: Proc, warm: Sample, biggest: Sample) -> dict[str, Any]:
    """One long-lived process's figures. Each figure at warm-up and at the end is the least of
    the samples within FLOOR_S: a request in flight (its buffers, its thread, its socket) is
    not growth; a leak raises the floor. The largest after warm-up is shown beside them."""
    after = [s for s in p.samples if s.t >= warm.t]
    end = p.samples[-1].t - FLOOR_S
    rss_warm = flat_min(p.samples, warm.t, FLOOR_S, "rss_kb")
    rss_end = min(s.rss_kb for s in p.samples if s.t >= end)
    return {
        "role": p.role,
        "pid": p.pid,
        "lived_s": round(p.lived(), 1),
        "samples": len(p.samples),
        "rss_warm_kb": rss_warm,
        "rss_end_kb": rss_end,
        "rss_max_kb": biggest.rss_kb,
        "growth_pct": round((rss_end - rss_warm) / rss_warm * 100, 2),
        "fds_warm": flat_min(p.samples, warm.t, FLOOR_S, "fds"),
        "fds_end": min(s.fds for s in p.samples if s.t >= end),
        "fds_max": max(s.fds for s in after),
        "threads_warm": flat_min(p.samples, warm.t, FLOOR_S, "threads"),
        "threads_end": min(s.threads for s in p.samples if s.t >= end),
        "threads_max": max(s.threads for s in after),
        # RSS at warm-up and at each further quarter of the run: a plateau or a slope
        "rss_quarters_kb": [
            after[min(len(after) - 1, len(after) * q // 4)].rss_kb for q in range(5)
        ],
    }


def resources(
    procs: list[Proc], warm_s: float, max_growth: float
) -> tuple[list[str], dict[str, Any]]:
    """The table of long-lived processes and a line for the short-lived senders and pollers."""
    problems: list[str] = []
    log(
        f"  {'process':<9} {'pid':>7} {'lived':>7} {'RSS warm':>9} {'RSS end':>8} {'RSS max':>8}"
        f" {'growth':>7} {'fds warm/end/max':>17} {'threads warm/end/max':>21}"
    )
    fixed = [p for p in procs if p.role in ("serve", "bridge")]
    others = sorted(
        (p for p in procs if p.role not in ("serve", "bridge")), key=lambda p: -p.lived()
    )
    rows = [judge_process(*r) for r in rows_for(fixed, warm_s) + rows_for(others, warm_s)]
    for r in rows:
        log(
            f"  {r['role']:<9} {r['pid']:>7} {r['lived_s'] / 60:>6.1f}m"
            f" {r['rss_warm_kb'] / 1024:>7.1f}MB {r['rss_end_kb'] / 1024:>6.1f}MB"
            f" {r['rss_max_kb'] / 1024:>6.1f}MB {r['growth_pct']:>+6.1f}%"
            f" {r['fds_warm']:>7}/{r['fds_end']}/{r['fds_max']:<5}"
            f" {r['threads_warm']:>9}/{r['threads_end']}/{r['threads_max']:<5}"
        )
        who = f"{r['role']} {r['pid']}"
        if r["growth_pct"] > max_growth:
            problems.append(f"{who}: RSS grew {r['growth_pct']:.1f}% after warm-up")
        if r["fds_end"] > r["fds_warm"] + FLAT_SLACK:
            problems.append(f"{who}: descriptors {r['fds_warm']} -> {r['fds_end']}")
        if r["threads_end"] > r["threads_warm"] + FLAT_SLACK:
            problems.append(f"{who}: threads {r['threads_warm']} -> {r['threads_end']}")
    judged = {r["pid"] for r in rows}
    short: dict[str, Any] = {}
    for role in ("sender", "poller"):
        all_of = [p for p in others if p.role == role]
        if not all_of:
            continue
        every = [s for p in all_of for s in p.samples]
        short[role] = {
            "processes": len(all_of),
            "longest_s": round(all_of[0].lived(), 1),
            "shorter_than_warmup": sum(1 for p in all_of if p.pid not in judged),
            "rss_max_kb": max(s.rss_kb for s in every),
            "fds_max": max(s.fds for s in every),
            "threads_max": max(s.threads for s in every),
        }
        s = short[role]
        log(
            f"  {role}s: {s['processes']} processes over the run, longest"
            f" {s['longest_s'] / 60:.1f} min; {s['shorter_than_warmup']} lived less than the"
            f" warm-up ({warm_s:.0f} s); largest RSS {s['rss_max_kb'] / 1024:.1f} MB, most fds"
            f" {s['fds_max']}, most threads {s['threads_max']}"
        )
    return problems, {"warmup_s": round(warm_s, 1), "long_lived": rows, "short_lived": short}


def alerts(
    place: Place, webhook: Receiver, api: BotApi, follower: Follower, week: Week
) -> tuple[list[str], dict[str, Any]]:
    got, stray = received(place, webhook, api)
    problems, rows = judge_alerts(week, got, follower.lines)
    log(
        f"  {'alerts':<14} {'expected':>9} {'sent':>7} {'received':>9} {'duplicated':>11}"
        f" {'lost':>5} {'unexpected':>11} {'failed':>7}"
    )
    names = {"hook": "hook (webhook)", "cmd": "cmd (command)", "tg": "tg (telegram)"}
    for channel, row in rows.items():
        log(
            f"  {names[channel]:<14} {row['expected']:>9,} {row['sent']:>7,} {row['received']:>9,}"
            f" {row['duplicated']:>11} {row['lost']:>5} {row['unexpected']:>11} {row['failed']:>7}"
        )
    if stray:
        problems.append(f"{len(stray)} messages without exactly one token: {stray[:3]}")
    for d in [d for d in follower.lines if d.get("result") == "failed"][:3]:
        log(f"    failed: {d.get('channel')} {d.get('kind')}: {d.get('detail')}")
    telegram = {
        "messages": len(api.sent("sendMessage")),
        "edited": len(api.sent("editMessageText")),
        "presses": len(api.sent("answerCallbackQuery")),
        "get_updates": len(api.sent("getUpdates")),
    }
    log(
        f"  telegram: {telegram['messages']:,} messages, {telegram['edited']:,} edited to their"
        f" outcome or handled, {telegram['presses']} presses acknowledged,"
        f" {telegram['get_updates']:,} getUpdates"
    )
    return problems, {"channels": rows, "stray": len(stray), "telegram": telegram}


def errors_and_page(place: Place, page: Page) -> tuple[list[str], dict[str, Any]]:
    problems = []
    errors = place.state / "errors.log"
    text = errors.read_text(errors="replace") if errors.exists() else ""
    heads = Counter(line[:120] for line in text.splitlines() if line and not line[0].isspace())
    log(f"  errors.log: {len(text.splitlines())} lines")
    for head, n in heads.most_common(8):
        log(f"    {n} x {head}")
    if "Traceback" in text:
        problems.append("errors.log holds a traceback")
    with page.lock:
        counts = dict(page.counts)
        errs = list(page.errors)
    log(f"  dashboard: {', '.join(f'{k} {v:,}' for k, v in sorted(counts.items()))}")
    real_errors = [e for e in errs if "HTTP 200" not in e]
    if real_errors:
        log(f"    {len(real_errors)} errors, first: {real_errors[:3]}")
        problems.append(f"dashboard: {len(real_errors)} failed requests")
    return problems, {
        "errors_log_lines": len(text.splitlines()),
        "dashboard": counts,
        "dashboard_errors": len(real_errors),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=float, default=7.0, help="simulated days (7)")
    ap.add_argument("--minutes", type=float, help="wall minutes instead (--days = this x speed)")
    ap.add_argument("--speed", type=float, default=100.0, help="simulated seconds per second")
    ap.add_argument("--events", type=int, help="hook deliveries (200,000 a week, pro rata)")
    ap.add_argument("--sessions", type=int, help="sessions (50 a week, pro rata, at least 6)")
    ap.add_argument("--rotate-bytes", type=int, help="LOOKOUT_ROTATE_BYTES for the run")
    ap.add_argument("--warmup", type=float, default=0.15, help="fraction of the run (0.15)")
    ap.add_argument("--max-growth", type=float, default=GROWTH_MAX, help="%% RSS after warm-up")
    ap.add_argument("--drain-s", type=float, default=900.0, help="how long the drain may take")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--json", action="store_true", help="the figures as one JSON object on stdout")
    args = ap.parse_args()
    if args.json:
        global OUT
        OUT = sys.stderr
    days = args.minutes * 60 * args.speed / 86400 if args.minutes else args.days
    seconds = days * 86400
    events = args.events or round(WEEK_EVENTS * seconds / WEEK_S)
    n_sessions = args.sessions or max(6, round(WEEK_SESSIONS * seconds / WEEK_S))

    tmp = Path(tempfile.mkdtemp(prefix="lk-soak-", dir="/tmp"))
    try:
        return soak(args, tmp, seconds, events, n_sessions)
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class Run:
    """Everything the verdict reads."""

    args: argparse.Namespace
    place: Place
    week: Week
    replay: Replay
    page: Page
    api: BotApi
    webhook: Receiver
    follower: Follower
    times: tuple[float, float]  # replay start, replay end (monotonic)
    drained: bool
    drain_s: float
    bridge: subprocess.Popen[bytes]
    serve: subprocess.Popen[bytes]
    summary: dict[str, Any]


@contextlib.contextmanager
def running(argv: list[str], env: dict[str, str], out: Path) -> Iterator[subprocess.Popen[bytes]]:
    with open(out, "wb") as f:
        proc = subprocess.Popen(argv, env=env, stdout=f, stderr=subprocess.STDOUT, cwd="/")
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # Ctrl-C: how serve and bridge stop
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_for(what: str, probe: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.1)
    raise SystemExit(f"error: {what} within {timeout:.0f} s")


def soak(args: argparse.Namespace, tmp: Path, seconds: float, events: int, n_sessions: int) -> int:
    home = tmp / "h"
    for project in PROJECTS:
        (home / "src" / project / ".git").mkdir(parents=True)
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "SOAK_TG_TOKEN": TG_TOKEN,
        "SOAK_MQTT_PASSWORD": MQTT_PASSWORD,
    }
    if args.rotate_bytes:
        env["LOOKOUT_ROTATE_BYTES"] = str(args.rotate_bytes)
    place = Place(
        tmp,
        home,
        env,
        home / ".local" / "state" / "lookout",
        str(home / ".local" / "bin" / "lookout"),
        cmd_log=tmp / "cmd.log",
    )
    t_build = time.monotonic()
    week = build(seconds, events, n_sessions, args.seed, str(home))
    log(
        f"soak: {seconds / 86400:.2f} simulated days at {args.speed:g}x"
        f" ({seconds / args.speed / 60:.1f} min planned), {len(week.sessions)} sessions"
        f" ({len(PROJECTS)} projects, {len(AGENTS)} agents), {week.events:,} events,"
        f" {len(week.dialogs):,} dialogs, seed {args.seed}"
        f" (built in {time.monotonic() - t_build:.0f} s)"
    )
    load_start = load()
    log(f"  load average at the start {load_start}")
    users = {HOST: MQTT_PASSWORD, "ha": "pw-ha-soak"}
    (tmp / "broker").mkdir()
    broker = Broker(
        tmp / "broker", acl=ROOT / "tests" / "fixtures" / "mosquitto" / "acl", users=users
    )
    broker.start()
    webhook = Receiver()
    with contextlib.ExitStack() as stack:
        stack.callback(broker.kill)
        stack.enter_context(webhook)
        api = stack.enter_context(BotApi(TG_TOKEN, chats=(CHAT,)))
        config = home / ".config" / "lookout" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(config_text(place, webhook.url, api.url, broker.url))
        install(place)
        place.state.mkdir(parents=True, exist_ok=True)
        serve = stack.enter_context(
            running([place.lookout, "serve", "--port", "0"], env, tmp / "serve.out")
        )
        bridge = stack.enter_context(running([place.lookout, "bridge"], env, tmp / "bridge.out"))
        started = wait_for(
            "serve printed no sign-in link",
            lambda: re.search(
                rb"sign in: http://127\.0\.0\.1:(\d+)/login#code=([A-Za-z0-9_-]+)",
                (tmp / "serve.out").read_bytes(),
            ),
        )
        page = Page(int(started.group(1)), started.group(2).decode())
        stop = threading.Event()
        stack.callback(stop.set)
        page.run(stop, [s.sid for s in week.sessions])
        sampler = Sampler(place.state, {"serve": serve.pid, "bridge": bridge.pid})
        sampler.start()
        stack.callback(sampler.stop.set)
        follower = Follower(place.state / "deliveries.jsonl")
        follower.start()
        replay = Replay(place, week, args.speed, page, api)
        t_start = time.monotonic()
        replay.run()
        t_replayed = time.monotonic()
        log(
            f"  replayed in {(t_replayed - t_start) / 60:.1f} min (achieved"
            f" {week.seconds / (t_replayed - t_start):.0f}x; at most {replay.late_s:.1f} s behind"
            f" the schedule); load average {load()}"
        )
        sampler.take()
        drained, drain_s = drain(place, sampler, replay, args.drain_s)
        for _ in range(5):  # serve and bridge at the end, still under the page's load
            time.sleep(SAMPLE_S)
            sampler.take()
        follower.stop.set()
        follower.join()
        follower.poll()
        sampler.stop.set()
        stop.set()
        with sampler.lock:
            procs = list(sampler.procs.values())
        with open(tmp / "samples.jsonl", "w") as f:  # for a look afterwards (--keep)
            for p in procs:
                for x in p.samples:
                    f.write(json.dumps({"role": p.role, "pid": p.pid, **x.__dict__}) + "\n")
        with open(tmp / "telegram-calls.jsonl", "w") as f:
            for at, method, params in list(api.calls):
                f.write(json.dumps({"t": at, "method": method, "params": params}) + "\n")
        summary = {
            "days": round(seconds / 86400, 3),
            "speed": args.speed,
            "sessions": len(week.sessions),
            "events": week.events,
            "dialogs": len(week.dialogs),
            "seed": args.seed,
            "rotate_bytes": args.rotate_bytes,
            "replay_s": round(t_replayed - t_start, 1),
            "achieved_speed": round(week.seconds / (t_replayed - t_start), 1),
            "late_s": round(replay.late_s, 1),
            "load_start": load_start,
            "cpus": os.cpu_count(),
        }
        run = Run(
            args,
            place,
            week,
            replay,
            page,
            api,
            webhook,
            follower,
            (t_start, t_replayed),
            drained,
            drain_s,
            bridge,
            serve,
            summary,
        )
        return verdict(run, procs)


def verdict(run: Run, procs: list[Proc]) -> int:
    args, replay = run.args, run.replay
    t_start, t_replayed = run.times
    warm_s = max(30.0, (t_replayed - t_start) * args.warmup)
    problems: list[str] = []
    answered = ", ".join(f"{k} {n}" for k, n in sorted(replay.answered.items()))
    log(f"  hooks: {replay.runs:,} runs, {len(replay.failures)} failed; remote answers: {answered}")
    for text in replay.failures[:10]:
        log(f"    {text}")
    if replay.failures:
        problems.append(f"{len(replay.failures)} hook runs failed")
    log(
        f"  drain: {'done' if run.drained else 'NOT done'} in {run.drain_s:.1f} s (outbox empty,"
        " every sender, poller and deciding hook exited)"
    )
    if not run.drained:
        problems.append("the drain did not finish")
    for proc, name in ((run.serve, "serve"), (run.bridge, "bridge")):
        if proc.poll() is not None:
            problems.append(f"{name} exited {proc.returncode} during the run")
    result: dict[str, Any] = {
        "run": run.summary,
        "hooks": {
            "runs": replay.runs,
            "failed": len(replay.failures),
            "answers": dict(replay.answered),
        },
        "drain": {"done": run.drained, "s": round(run.drain_s, 1)},
    }
    log("")
    more, result["processes"] = resources(procs, warm_s, args.max_growth)
    problems += more
    log("")
    more, result["alerts"] = alerts(run.place, run.webhook, run.api, run.follower, run.week)
    problems += more
    log("")
    more, result["report"] = report_check(run.place, run.week)
    problems += more
    log(f"  report: {said('report', result['report'])}")
    more, result["events"] = events_check(run.place, replay)
    problems += more
    log(f"  events.jsonl: {said('events', result['events'])}")
    more, result["errors"] = errors_and_page(run.place, run.page)
    problems += more
    log(f"  load average at the end {load()}")
    result["load_end"] = load()
    result["problems"] = problems
    result["ok"] = not problems
    if args.json:
        print(json.dumps(result), flush=True)
    if problems:
        log("FAIL: " + "; ".join(problems[:12]))
        return 1
    log("ok")
    return 0


def said(key: str, part: dict[str, Any]) -> str:
    if key == "report":
        return (
            f"{part['episodes']:,} episodes (script {part['script']:,}); per project x reason:"
            f" {part['cells_exact']}/{part['cells']} cells exact"
        )
    kept = "everything kept" if part["everything_kept"] else "the oldest rotated away"
    return (
        f"{part['lines']:,} lines ({part['hook_records']:,} from hooks) in {part['files']}"
        f" files, {part['bytes'] / 1e6:.1f} MB, {kept}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
