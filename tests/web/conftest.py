"""Fixtures for the dashboard: the server in this process (for the HTTP tests), `lookout serve`
as a real process, and a real headless Chromium (Debian's chromium + chromium-driver)."""

from __future__ import annotations

import base64
import hmac
import http.client
import json
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lookout.web import auth
from lookout.web.hub import Hub
from lookout.web.server import Dashboard
from lookout.web.source import LocalSource
from tests.helpers import IN_CI, ROOT, short_tmpdir

TOKEN = "t" * 43


@dataclass
class Client:
    """HTTP requests to a running dashboard."""

    port: int
    token: str
    server: Dashboard | None = None

    def request(
        self,
        method: str,
        path: str,
        *,
        auth: str | None = "bearer",
        headers: dict[str, str] | None = None,
        body: bytes | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        if auth == "bearer":
            sent["Authorization"] = f"Bearer {self.token}"
        elif auth == "cookie":
            sent["Cookie"] = f"lookout_token={self.token}"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers=sent)
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            conn.close()

    def json(self, path: str, **kwargs: Any) -> tuple[int, Any]:
        status, _, body = self.request("GET", path, **kwargs)
        return status, json.loads(body)

    def stream(self, path: str = "/api/stream") -> http.client.HTTPResponse:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("GET", path, headers={"Authorization": f"Bearer {self.token}"})
        return conn.getresponse()


@dataclass
class Page:
    """What a signed-in dashboard page does, in Python (lookout/web/static/auth.js): a session
    id and its key from a one-time code, the server's proof, and requests signed with the key."""

    port: int
    session: str
    key: bytes
    offset_ms: int = 0

    @classmethod
    def sign_in(cls, port: int, code: str) -> Page:
        status, body = _post(port, "/api/login", {"code": code})
        assert status == 200, body
        key = base64.urlsafe_b64decode(body["key"] + "=" * (-len(body["key"]) % 4))
        return cls(port, body["session"], key, body["now_ms"] - int(time.time() * 1000))

    def hello(self, challenge: str | None = None) -> tuple[int, dict[str, Any]]:
        """The server's answer to a challenge; asserts a 200 carries the right proof."""
        challenge = challenge or secrets.token_urlsafe(24)
        status, body = _post(
            self.port, "/api/hello", {"session": self.session, "challenge": challenge}
        )
        if status == 200:
            want = hmac.new(self.key, f"lookout proof\0{challenge}".encode(), "sha256")
            assert body["proof"] == base64.urlsafe_b64encode(want.digest()).decode().rstrip("=")
        return status, body

    def authorization(
        self, method: str, target: str, body: bytes = b"", ts: int | None = None
    ) -> str:
        ts = int(time.time() * 1000) + self.offset_ms if ts is None else ts
        nonce = secrets.token_urlsafe(18)
        mac = auth.request_mac(self.key, method, target, str(ts), nonce, body)
        return f"Lookout {self.session} {ts} {nonce} {mac}"

    def request(
        self,
        method: str,
        target: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        sent["Authorization"] = self.authorization(method, target, body or b"")
        if body is not None:
            sent.setdefault("Content-Type", "application/json")
        return send(self.port, method, target, sent, body)

    def json(self, target: str) -> tuple[int, Any]:
        status, _, body = self.request("GET", target)
        return status, json.loads(body)


def send(
    port: int, method: str, target: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP request, exactly as given (a replay sends what was recorded)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            if name.lower() != "content-length":
                conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body or b"")))
        conn.endheaders(body or b"")
        response = conn.getresponse()
        headers = dict(response.getheaders())
        if headers.get("Content-Type", "").startswith("text/event-stream"):
            return response.status, headers, b""  # a stream that was let in: it never ends
        return response.status, headers, response.read()
    finally:
        conn.close()


def _post(port: int, path: str, value: object) -> tuple[int, Any]:
    headers = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json"}
    status, _, body = send(port, "POST", path, headers, json.dumps(value).encode())
    return status, json.loads(body)


def read_event(response: http.client.HTTPResponse) -> tuple[str, Any]:
    """The next SSE message (event name, parsed data), skipping `retry:` and comments."""
    name, data = "message", None
    while True:
        line = response.readline().decode("utf-8")
        if not line:
            raise EOFError("the stream ended")
        line = line.rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
        elif line == "" and data is not None:
            return name, data


@pytest.fixture
def dashboard(state_dir: Path, no_notifications: None) -> Iterator[Client]:
    """A dashboard on a free loopback port, served from this process."""
    hub = Hub(LocalSource(str(state_dir)), lambda: None)
    hub.start()
    server = Dashboard("127.0.0.1", 0, hub, TOKEN, str(state_dir))
    # A short poll: shutdown() waits for it (the default 0.5 s, at every test's end).
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield Client(server.server_address[1], TOKEN, server)
    finally:
        server.shutdown()
        server.server_close()
        hub.stop()


# -- a real `lookout serve` -------------------------------------------------------------------


@dataclass
class Served:
    base: str  # http://127.0.0.1:PORT
    login: str  # the one-time sign-in link (http://127.0.0.1:PORT/login#code=...)
    token: str  # the API token, as `lookout serve --token` prints it
    process: subprocess.Popen[str]
    env: dict[str, str] | None = None

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)

    def new_login(self) -> str:
        """Another one-time sign-in link, as `lookout serve --url` prints it."""
        port = self.base.rsplit(":", 1)[1]
        done = subprocess.run(
            [sys.executable, "-m", "lookout", "serve", "--url", "--port", port],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip
        return done.stdout.strip()


def start_serve(*args: str, env: dict[str, str] | None = None) -> Served:
    """`lookout serve` through the real entry point, on a free loopback port."""
    process = subprocess.Popen(
        [sys.executable, "-m", "lookout", "serve", "--port", "0", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    login = ""
    for _ in range(5):
        line = process.stdout.readline()
        if line.startswith("sign in: "):
            login = line.split()[-1]
            break
    if not login:
        process.kill()
        _, err = process.communicate(timeout=10)
        raise AssertionError(f"lookout serve did not start: {err}")
    token = subprocess.run(
        [sys.executable, "-m", "lookout", "serve", "--token"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=30, check=True,
    ).stdout.strip()  # fmt: skip
    return Served(login.split("/login")[0], login, token, process, env)


def browser_sign_in(driver: Any, served: Served, link: str | None = None) -> None:
    """Open a one-time sign-in link (a fresh one from `lookout serve --url` unless given) and
    wait until the page has exchanged it for its session."""
    driver.get(link or served.new_login())
    deadline = time.monotonic() + 10
    script = (
        "return location.pathname === '/' && Boolean(window.lookout)"
        " && window.lookout.state() === 'signed-in'"
    )
    while not driver.execute_script(script):
        if time.monotonic() > deadline:
            raise AssertionError("the page did not sign in with the link")
        time.sleep(0.01)


@pytest.fixture
def served(state_dir: Path, no_notifications: None) -> Iterator[Served]:
    served = start_serve()
    yield served
    served.stop()


# -- a real browser ---------------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
BROWSER_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,860",
]


def _need(path: str) -> None:
    if not os.path.exists(path):
        if IN_CI:
            pytest.fail(f"{path} is missing (.ci/run installs chromium and chromium-driver)")
        pytest.skip(f"{path} is missing (apt-get install chromium chromium-driver)")


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """One headless Chromium for the whole run, with a fresh profile, driven by Selenium with
    the system's chromedriver (Selenium Manager never downloads anything)."""
    _need(CHROMIUM)
    _need(CHROMEDRIVER)
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    profile = str(short_tmpdir("lookout-chromium-"))
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*BROWSER_FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    # Chromium's own sockets (the profile's SingletonSocket) go under $TMPDIR: a short one.
    tmp = str(short_tmpdir("lookout-chromium-tmp-"))
    service = Service(CHROMEDRIVER, env={**os.environ, "TMPDIR": tmp})
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def browser(chromium: Any) -> Iterator[Any]:
    """The shared browser: signed out, desktop size, light mode."""
    chromium.get("about:blank")
    chromium.execute_cdp_cmd("Network.clearBrowserCookies", {})
    chromium.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    chromium.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    yield chromium
    chromium.get("about:blank")
