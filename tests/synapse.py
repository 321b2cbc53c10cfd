"""A real Matrix homeserver for tests (issue 40): Synapse from PyPI, pinned, installed once into a
venv of its own in the test cache (`$LOOKOUT_TEST_CACHE` or ~/.cache/lookout-tests/
synapse-<version>, under a file lock, as tests/e2e/npm_client.py installs the npm clients), so
its many dependencies never enter lookout's .venv. `Synapse` runs it offline on a loopback port
with SQLite and a shared registration secret (no open registration, no TLS, no federation),
registers users with its own `register_new_matrix_user`, and logs them in. The tests skip only
when PyPI is unreachable."""

from __future__ import annotations

import json
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import filelock
import pytest

from tests.e2e.npm_client import _ENV, cache_root

VERSION = "1.163.2"
PACKAGE = f"matrix-synapse=={VERSION}"
SERVER_NAME = "localhost"
DONE = ".installed"  # written last: a venv without it is a half-done install, made again


def _venv_python(target: Path) -> Path:
    return target / "bin" / "python"


def _installed(target: Path) -> bool:
    return (target / DONE).read_text().strip() == VERSION if (target / DONE).exists() else False


def ensure(version: str = VERSION) -> Path:
    """The venv holding Synapse `version`, made on first use."""
    target = cache_root() / f"synapse-{version}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(target) + ".lock", timeout=900):
        if _installed(target):
            return target
        shutil.rmtree(target, ignore_errors=True)  # a venv cannot be moved: made in place
        made = subprocess.run(
            [sys.executable, "-m", "venv", str(target)],
            capture_output=True,
            text=True,
            timeout=300,
            env=_ENV,
        )
        if made.returncode != 0:
            pytest.fail(f"python -m venv {target} failed:\n{made.stderr[-2000:]}")
        pip = [
            str(_venv_python(target)),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
        ]
        done = subprocess.run(
            [*pip, PACKAGE], capture_output=True, text=True, timeout=900, env=_ENV
        )
        if done.returncode != 0:
            shutil.rmtree(target, ignore_errors=True)
            if "Could not find a version" in done.stderr or "connection" in done.stderr.lower():
                pytest.skip(f"PyPI unreachable: pip install {PACKAGE}: {done.stderr[-300:]}")
            pytest.fail(f"pip install {PACKAGE} failed:\n{done.stderr[-2000:]}")
        (target / DONE).write_text(VERSION)
        return target


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Tests send many events a second; Synapse's defaults would answer M_LIMIT_EXCEEDED.
_FAST = {"per_second": 1000, "burst_count": 1000}


class Synapse:
    """`with Synapse(root) as hs:` serves http://127.0.0.1:PORT (hs.url)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.venv = ensure()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.secret = secrets.token_urlsafe(24)
        self.proc: subprocess.Popen[bytes] | None = None

    def _config(self) -> Path:
        path = self.root / "homeserver.yaml"
        subprocess.run(
            [str(_venv_python(self.venv)), "-m", "synapse.app.homeserver", "--server-name",
             SERVER_NAME, "--config-path", str(path), "--generate-config", "--report-stats=no"],
            cwd=self.root, check=True, capture_output=True, timeout=120, env=_ENV,
        )  # fmt: skip
        generated = path.read_text()
        signing = next(
            line.split(":", 1)[1].strip().strip('"')
            for line in generated.splitlines()
            if line.startswith("signing_key_path:")
        )
        config = {  # JSON is YAML: the whole config, no generated line kept but the key's path
            "server_name": SERVER_NAME,
            "pid_file": str(self.root / "homeserver.pid"),
            "listeners": [{
                "port": self.port, "bind_addresses": ["127.0.0.1"], "type": "http",
                "tls": False, "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }],
            "database": {"name": "sqlite3", "args": {"database": str(self.root / "hs.db")}},
            "log_config": str(self.root / f"{SERVER_NAME}.log.config"),
            "media_store_path": str(self.root / "media"),
            "registration_shared_secret": self.secret,
            "enable_registration": False,
            "report_stats": False,
            "macaroon_secret_key": secrets.token_urlsafe(32),
            "form_secret": secrets.token_urlsafe(32),
            "signing_key_path": signing,
            "trusted_key_servers": [],
            "suppress_key_server_warning": True,
            "rc_message": _FAST,
            "rc_login": {"address": _FAST, "account": _FAST, "failed_attempts": _FAST},
            "rc_joins": {"local": _FAST, "remote": _FAST},
            "rc_invites": {"per_room": _FAST, "per_user": _FAST, "per_issuer": _FAST},
            "rc_registration": _FAST,
        }  # fmt: skip
        path.write_text(json.dumps(config, indent=1))
        return path

    def __enter__(self) -> Synapse:
        self.config = self._config()
        self.log = open(self.root / "synapse.out", "wb")
        self.proc = subprocess.Popen(
            [str(_venv_python(self.venv)), "-m", "synapse.app.homeserver", "--config-path",
             str(self.config)],
            cwd=self.root, stdout=self.log, stderr=subprocess.STDOUT, env=_ENV,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"synapse exited: {(self.root / 'synapse.out').read_text()}")
            try:
                self.request("GET", "/_matrix/client/versions")
                return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("synapse did not answer within 180 s")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None, token: str | None = None
    ) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=30) as resp:
            doc: dict[str, Any] = json.loads(resp.read() or b"{}")
            return doc

    def register(self, user: str) -> User:
        """A new user (its password random), logged in."""
        password = secrets.token_hex(16)  # never a leading "-" (read as a flag)
        tool = self.venv / "bin" / "register_new_matrix_user"
        subprocess.run(
            [str(tool), "-c", str(self.config), "-u", user, "-p", password, "--no-admin",
             self.url],
            check=True, capture_output=True, timeout=120, env=_ENV,
        )  # fmt: skip
        login = self.request(
            "POST",
            "/_matrix/client/v3/login",
            {"type": "m.login.password", "identifier": {"type": "m.id.user", "user": user},
             "password": password},
        )  # fmt: skip
        return User(self, str(login["user_id"]), str(login["access_token"]))


class User:
    """A logged-in account: what an owner (or a stranger) does in a room with a client."""

    def __init__(self, hs: Synapse, user_id: str, token: str) -> None:
        self.hs, self.user_id, self.token = hs, user_id, token
        self._txn = 0

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.hs.request(method, "/_matrix/client/v3" + path, body, self.token)

    def create_room(self, *invite: User, encrypted: bool = False) -> str:
        body: dict[str, Any] = {"preset": "private_chat", "invite": [u.user_id for u in invite]}
        if encrypted:
            algorithm = {"algorithm": "m.megolm.v1.aes-sha2"}
            state = {"type": "m.room.encryption", "state_key": "", "content": algorithm}
            body["initial_state"] = [state]
        room = str(self.call("POST", "/createRoom", body)["room_id"])
        for user in invite:
            user.call("POST", f"/rooms/{q(room)}/join", {})
        return room

    def send(self, room: str, content: dict[str, Any], kind: str = "m.room.message") -> str:
        self._txn += 1
        path = f"/rooms/{q(room)}/send/{kind}/t{time.monotonic_ns()}-{self._txn}"
        return str(self.call("PUT", path, content)["event_id"])

    def react(self, room: str, event_id: str, key: str) -> str:
        rel = {"rel_type": "m.annotation", "event_id": event_id, "key": key}
        return self.send(room, {"m.relates_to": rel}, "m.reaction")

    def reply(self, room: str, event_id: str, text: str) -> str:
        content = {"msgtype": "m.text", "body": text,
                   "m.relates_to": {"m.in_reply_to": {"event_id": event_id}}}  # fmt: skip
        return self.send(room, content)

    def say(self, room: str, text: str) -> str:
        return self.send(room, {"msgtype": "m.text", "body": text})

    def messages(self, room: str) -> list[dict[str, Any]]:
        """The room's newest events, oldest first."""
        got = self.call("GET", f"/rooms/{q(room)}/messages?dir=b&limit=100")
        return list(reversed(got.get("chunk") or []))

    def event(self, room: str, event_id: str) -> dict[str, Any]:
        return self.call("GET", f"/rooms/{q(room)}/event/{q(event_id)}")


def q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


class Accounts:
    """The homeserver of a test session and its three accounts: lookout's bot, the owner who
    answers, and a stranger in the same rooms."""

    def __init__(self, synapse: Synapse) -> None:
        self.synapse = synapse
        self.bot = synapse.register("lookoutbot")
        self.owner = synapse.register("owner")
        self.stranger = synapse.register("stranger")


@pytest.fixture(scope="session")
def hs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Accounts]:
    """One Synapse for the whole test session (started once, its accounts registered)."""
    with Synapse(tmp_path_factory.mktemp("synapse")) as synapse:
        yield Accounts(synapse)
