"""Loopback stand-ins for notification services, for tests (unit and end-to-end).

- `Receiver`: a threaded HTTP server on 127.0.0.1 that records every request (`.requests`) and
  answers through a `respond(request) -> (status, body)` callback; `delay_s` makes it hang.
- `ntfy_receiver(token=...)`: follows ntfy's publish wire format (header or JSON publish, RFC 2047
  titles, priorities, Bearer/Basic auth with 401/403 answers, sequence_id updates, `?poll=1`).
- `webhook_receiver(status)`: Slack/Discord/JSON webhooks (records the JSON bodies).
- `NotificationBus`: a private D-Bus session bus with a real notification daemon
  (lxqt-notificationd) and `busctl monitor` capturing every Notify call as a dict.
- `TmuxServer`: a private tmux server (`tmux -L <name>`) for focus tests.

Binaries missing: `require(...)` skips with a clear reason, or fails when CI=true.
"""

from __future__ import annotations

import base64
import email.header
import json
import os
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.helpers import short_tmpdir


def require(*binaries: str) -> None:
    """Skip (or, under CI=true, fail) when a binary the test needs is absent."""
    missing = [b for b in binaries if shutil.which(b) is None]
    if missing:
        reason = (
            f"needs {', '.join(missing)} (apt-get install libnotify-bin lxqt-notificationd tmux)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {reason}")
        pytest.skip(reason)


# -- HTTP ----------------------------------------------------------------------------------------


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Response = tuple[int, Any]  # (status, dict -> JSON | bytes | str)


@dataclass
class Receiver:
    respond: Callable[[Request], Response] = lambda req: (200, {"ok": True})
    delay_s: float = 0.0
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                req = Request(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                receiver.requests.append(req)
                if receiver.delay_s:
                    time.sleep(receiver.delay_s)
                status, out = receiver.respond(req)
                data = (
                    out
                    if isinstance(out, bytes)
                    else (
                        out.encode() if isinstance(out, str) else (json.dumps(out) + "\n").encode()
                    )
                )
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout tests)

            do_POST = do_PUT = do_GET = _handle

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, count: int = 1, timeout_s: float = 10.0) -> list[Request]:
        deadline = time.monotonic() + timeout_s
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.requests


_NTFY_PRIORITIES = {
    "min": 1,
    "1": 1,
    "low": 2,
    "2": 2,
    "default": 3,
    "3": 3,
    "high": 4,
    "4": 4,
    "max": 5,
    "urgent": 5,
    "5": 5,
}


def _decode_header(value: str) -> str:
    # ntfy decodes RFC 2047 encoded words in header values.
    return str(email.header.make_header(email.header.decode_header(value)))


class NtfyReceiver(Receiver):
    """ntfy's publish API. `token`: the only accepted credential (Bearer token or `user:pass`);
    with a token set, anonymous publishing is denied (403) and wrong credentials get 401."""

    def __init__(self, token: str | None = None, delay_s: float = 0.0) -> None:
        self.token = token
        self.messages: list[dict[str, Any]] = []
        super().__init__(respond=self._respond, delay_s=delay_s)

    def _auth(self, req: Request) -> Response | None:
        if self.token is None:
            return None
        auth = req.headers.get("authorization")
        if auth is None:
            return 403, {"code": 40301, "http": 403, "error": "forbidden"}
        expected = (
            f"Basic {base64.b64encode(self.token.encode()).decode()}"
            if ":" in self.token
            else f"Bearer {self.token}"
        )
        if auth != expected:
            return 401, {"code": 40101, "http": 401, "error": "unauthorized"}
        return None

    def _respond(self, req: Request) -> Response:
        if req.method == "GET" and req.path.endswith("/json"):
            topic = req.path.strip("/").split("/")[0]
            lines = "".join(json.dumps(m) + "\n" for m in self.messages if m["topic"] == topic)
            return 200, lines
        denied = self._auth(req)
        if denied:
            return denied
        if req.path == "/":
            try:
                pub = req.json()
            except ValueError:
                return 400, {"code": 40001, "http": 400, "error": "invalid request: bad JSON"}
            topic = pub.get("topic", "")
            title, text = pub.get("title", ""), pub.get("message", "")
            priority = pub.get("priority", 3)
            tags, click, seq = pub.get("tags", []), pub.get("click", ""), pub.get("sequence_id")
            actions = pub.get("actions") or []
            # ntfy: at most 3 actions; view needs label and url (it adds an id to each).
            if (
                not isinstance(actions, list)
                or len(actions) > 3
                or not all(
                    isinstance(a, dict)
                    and a.get("action") in ("view", "http", "broadcast")
                    and a.get("label")
                    and (a.get("action") == "broadcast" or a.get("url"))
                    for a in actions
                )
            ):
                return 400, {"code": 40018, "http": 400, "error": "invalid action"}
        else:
            actions = []
            topic = req.path.strip("/")
            q = {k: v[0] for k, v in req.query.items()}
            h = req.headers

            def get(*names: str) -> str:
                for n in names:
                    if n in h:
                        return _decode_header(h[n])
                    if n in q:
                        return q[n]
                return ""

            title = get("title", "x-title", "t")
            text = req.body.decode("utf-8").strip()
            raw_p = get("priority", "x-priority", "p") or "3"
            if raw_p not in _NTFY_PRIORITIES:
                return 400, {"code": 40007, "http": 400, "error": "invalid priority"}
            priority = _NTFY_PRIORITIES[raw_p]
            tags = [t for t in get("tags", "x-tags").split(",") if t]
            click, seq = get("click", "x-click"), get("x-sequence-id") or None
        if not topic or len(topic) > 64 or not all(c.isalnum() or c in "-_" for c in topic):
            return 400, {"code": 40009, "http": 400, "error": "invalid topic"}
        if not isinstance(priority, int) or not 1 <= priority <= 5:
            return 400, {"code": 40007, "http": 400, "error": "invalid priority"}
        msg = {
            "id": uuid.uuid4().hex[:12],
            "time": int(time.time()),
            "event": "message",
            "topic": topic,
            "title": title,
            "message": text or "triggered",
            "priority": priority,
            "tags": tags,
        }
        if click:
            msg["click"] = click
        if seq:
            msg["sequence_id"] = seq
        if actions:
            msg["actions"] = [{"id": uuid.uuid4().hex[:10], **a} for a in actions]
        self.messages.append(msg)
        return 200, msg


def ntfy_receiver(token: str | None = None, delay_s: float = 0.0) -> NtfyReceiver:
    return NtfyReceiver(token=token, delay_s=delay_s)


def webhook_receiver(status: int = 200, delay_s: float = 0.0) -> Receiver:
    def respond(req: Request) -> Response:
        if status == 204:
            return status, b""
        return (status, {"ok": True}) if status < 400 else (status, b"invalid_token")

    return Receiver(respond=respond, delay_s=delay_s)


# -- D-Bus notification daemon --------------------------------------------------------------


class NotificationBus:
    """A private session bus + lxqt-notificationd + a busctl monitor of Notify calls (and of the
    daemon's ActionInvoked/NotificationClosed signals, in `signals`). `env` holds
    DBUS_SESSION_BUS_ADDRESS for the processes under test. With `display=True` the daemon draws
    its alerts on a private Xvfb screen, where `click_alert()` clicks them like a user."""

    BINARIES = ("dbus-daemon", "lxqt-notificationd", "busctl", "notify-send")
    PROBE = "LookoutTestProbe"  # a signal the monitor's match takes, to know it is listening
    DISPLAY_BINARIES = ("Xvfb", "xdotool")

    def __init__(self, display: bool = False, daemon: list[str] | None = None) -> None:
        self.display = display
        self.daemon = daemon or ["lxqt-notificationd"]
        self.signals: list[tuple[str, list[Any]]] = []
        self.tmp = str(short_tmpdir("lookout-bus-"))
        self.address = f"unix:path={self.tmp}/bus"
        # The daemon gets its own HOME: it must never read or write the real ~/.config.
        self.env = {
            **os.environ,
            "DBUS_SESSION_BUS_ADDRESS": self.address,
            "XDG_RUNTIME_DIR": self.tmp,
            "QT_QPA_PLATFORM": "offscreen",
            "HOME": self.tmp,
            "XDG_CONFIG_HOME": f"{self.tmp}/config",
            "XDG_CACHE_HOME": f"{self.tmp}/cache",
            "XDG_DATA_HOME": f"{self.tmp}/data",
        }
        self.procs: list[subprocess.Popen[bytes]] = []
        self.calls: list[dict[str, Any]] = []
        self._monitor: subprocess.Popen[bytes] | None = None
        self._monitor_ready = threading.Event()

    def __enter__(self) -> NotificationBus:
        if self.display:
            self._start_display()
        self._start(
            [
                "dbus-daemon",
                "--session",
                "--nofork",
                "--nopidfile",
                f"--address={self.address}",
                "--print-address=1",
            ]
        )
        self._wait(lambda: os.path.exists(f"{self.tmp}/bus"), "dbus-daemon socket")
        self._start(self.daemon)
        self._wait(
            lambda: (
                subprocess.run(
                    [
                        "busctl",
                        f"--address={self.address}",
                        "status",
                        "org.freedesktop.Notifications",
                    ],
                    capture_output=True,
                    env=self.env,
                ).returncode
                == 0
            ),
            "lxqt-notificationd on the bus",
        )
        self._monitor = self._start(
            [
                "busctl",
                f"--address={self.address}",
                "monitor",
                "--json=short",
                "--match",
                "interface='org.freedesktop.Notifications',member='Notify'",
                "--match",
                "type='signal',interface='org.freedesktop.Notifications'",
            ],
            stdout=True,
        )
        threading.Thread(target=self._read_monitor, daemon=True).start()
        # The monitor sees nothing until it has installed its match: signal until it has seen
        # one (a fixed pause was too short on a busy machine, and a missed Notify fails a test).
        self._wait(self._probed, "busctl monitor's match")
        return self

    def _probed(self) -> bool:
        if self._monitor_ready.is_set():
            return True
        subprocess.run(
            ["busctl", f"--address={self.address}", "emit", "/org/lookout/probe",
             "org.freedesktop.Notifications", self.PROBE],
            env=self.env, capture_output=True, timeout=10,
        )  # fmt: skip
        return self._monitor_ready.wait(0.1)

    def _start(self, argv: list[str], stdout: bool = False) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            argv,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.procs.append(proc)
        return proc

    def _wait(self, ready: Callable[[], bool], what: str, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not come up in {timeout_s}s")
            time.sleep(0.02)

    def _read_monitor(self) -> None:
        assert self._monitor is not None and self._monitor.stdout is not None
        for line in self._monitor.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("type") == "signal" and msg.get("member") == self.PROBE:
                self._monitor_ready.set()
                continue
            if msg.get("type") == "signal" and msg.get("member") in (
                "ActionInvoked",
                "NotificationClosed",
            ):
                self.signals.append((msg["member"], msg["payload"]["data"]))
                continue
            if msg.get("member") != "Notify" or msg.get("type") != "method_call":
                continue
            data = msg["payload"]["data"]
            app, replaces, _icon, summary, body, actions, hints, timeout = data
            urgency = hints.get("urgency", {}).get("data")
            self.calls.append(
                {
                    "app_name": app,
                    "replaces_id": replaces,
                    "summary": summary,
                    "body": body,
                    "urgency": urgency,
                    "hints": hints,
                    "expire_timeout": timeout,
                    "actions": actions,
                }
            )

    def wait_calls(self, count: int = 1, timeout_s: float = 10.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        while len(self.calls) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.calls

    def _start_display(self) -> None:
        """A private X screen (Xvfb picks a free display number and tells it on a pipe)."""
        read_fd, write_fd = os.pipe()
        proc = subprocess.Popen(
            [
                "Xvfb",
                "-displayfd",
                str(write_fd),
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ],
            pass_fds=(write_fd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.procs.append(proc)
        os.close(write_fd)
        number = b""
        with os.fdopen(read_fd, "rb") as pipe:
            while not number.endswith(b"\n"):
                chunk = pipe.read(1)
                if not chunk:
                    raise RuntimeError("Xvfb did not start")
                number += chunk
        self.env["DISPLAY"] = f":{number.decode().strip()}"
        self.env.pop("QT_QPA_PLATFORM", None)

    # Where lxqt-notificationd draws an alert's buttons (measured on this 300 px wide alert with
    # Focus, Allow and Deny): a click there invokes that action; elsewhere, the default one. The
    # buttons are the alert's last row, 38 px above its bottom edge whatever its body's height
    # (a negative y counts from the bottom).
    ALLOW_AT = (150, -38)
    DENY_AT = (210, -38)
    # Without Focus (a session lookout cannot switch to), Allow and Deny share the row.
    LAYOUTS: ClassVar[dict[tuple[str, ...], dict[str, tuple[int, int]]]] = {
        ("default", "allow", "deny"): {"allow": ALLOW_AT, "deny": DENY_AT},
        ("allow", "deny"): {"allow": (75, -38), "deny": (225, -38)},
        ("default", "deny"): {"deny": (225, -38)},
        ("deny",): {"deny": (150, -38)},
    }

    @classmethod
    def button_at(cls, actions: list[str], key: str) -> tuple[int, int]:
        """Where the button for action `key` is, on an alert with these (key, label) actions."""
        return cls.LAYOUTS[tuple(actions[::2])][key]

    def click_alert(self, timeout_s: float = 10.0, at: tuple[int, int] = (150, 30)) -> None:
        """Click the (top) alert on screen, as a user would: the daemon runs its default action
        (or, `at` one of its buttons, that button's action)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = subprocess.run(
                ["xdotool", "search", "--onlyvisible", "--class", "lxqt-notificationd"],
                env=self.env,
                capture_output=True,
                text=True,
            ).stdout.split()
            if found:
                break
            if time.monotonic() > deadline:
                raise RuntimeError("no alert on screen")
            time.sleep(0.05)
        y = at[1]
        if y < 0:  # from the bottom, once the popup has its height (it grows as it is laid out)
            before, after = None, self.window_geometry(found[0])
            while after != before:
                time.sleep(0.05)
                before, after = after, self.window_geometry(found[0])
            y += after[3]
        subprocess.run(
            ["xdotool", "mousemove", "--window", found[0], str(at[0]), str(y), "click", "1"],
            env=self.env,
            check=True,
        )

    def window_geometry(self, window: str) -> tuple[int, int, int, int]:
        """(x, y, width, height) of an X window on the private screen."""
        out = subprocess.run(
            ["xdotool", "getwindowgeometry", "--shell", window],
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        values = dict(line.split("=", 1) for line in out.split() if "=" in line)
        return (int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"]))

    def wait_signal(self, member: str, timeout_s: float = 10.0) -> list[Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for name, data in self.signals:
                if name == member:
                    return data
            time.sleep(0.02)
        raise AssertionError(f"no {member} signal in {timeout_s}s: {self.signals}")

    def __exit__(self, *exc: object) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


# -- tmux --------------------------------------------------------------------------------------


class TmuxServer:
    """A private tmux server. `env` points TMUX at it, as inside a pane of that server."""

    def __init__(self) -> None:
        self.name = f"lookout-test-{uuid.uuid4().hex[:8]}"
        self.tmp = str(short_tmpdir("lookout-tmux-"))
        self.env = {**os.environ, "TMUX_TMPDIR": self.tmp}
        self.env.pop("TMUX", None)
        self.clients: list[subprocess.Popen[bytes]] = []

    def tmux(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.name, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return proc.stdout.strip()

    def __enter__(self) -> TmuxServer:
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "80", "-y", "24")
        socket = self.tmux("display-message", "-p", "#{socket_path}")
        pid = self.tmux("display-message", "-p", "#{pid}")
        self.env["TMUX"] = f"{socket},{pid},0"
        return self

    def attach_client(self) -> None:
        """An attached client, through `script` giving it a pseudo-terminal."""
        require("script")
        cmd = f"tmux -L {self.name} attach -t main"
        proc = subprocess.Popen(
            ["script", "-qfc", cmd, "/dev/null"],
            env={**self.env, "TERM": "xterm"},
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.clients.append(proc)
        deadline = time.monotonic() + 10
        while not self.tmux("list-clients", "-F", "#{client_name}"):
            if time.monotonic() > deadline:
                raise RuntimeError("tmux client did not attach")
            time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        try:
            self.tmux("kill-server")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass
        for proc in self.clients:
            proc.kill()
            proc.wait(5)
        shutil.rmtree(self.tmp, ignore_errors=True)
