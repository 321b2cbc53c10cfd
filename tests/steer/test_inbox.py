"""Claude Code's inbox socket, as `lookout say` uses it: a registry file and a listening socket
that stand in for a live Claude Code (this test process is the "client": its pid, its procStart,
its socket), the frames written, and every check that refuses a socket before a byte goes out.
The real client reads these frames in tests/e2e/test_steer.py."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout import client_sessions
from lookout.steer import inbox
from tests.commands.test_main import deliver, lookout
from tests.helpers import write_config

pytestmark = pytest.mark.usefixtures("no_notifications")

SID = "cccc3333-0000-4000-8000-000000000003"
TOKEN = "0123456789abcdef0123456789abcdef"


class FakeClient:
    """A socket this process listens on, and the registry file naming it."""

    def __init__(self, home: Path) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="lk-socks-", dir="/tmp"))
        self.dir.chmod(0o700)
        self.path = self.dir / f"{os.getpid()}.sock"
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(self.path))
        self.server.listen(4)
        self.got: list[bytes] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()
        self.sessions = home / ".claude" / "sessions"
        self.sessions.mkdir(parents=True, exist_ok=True)
        self.registry(pid=os.getpid())

    def registry(self, **over: Any) -> None:
        pid = over.get("pid", os.getpid())
        for old in self.sessions.glob("*.json"):
            old.unlink()
        entry = {
            "pid": pid,
            "sessionId": SID,
            "procStart": client_sessions.proc_start(pid),
            "version": "2.1.332",
            "peerProtocol": 1,
            "peerFeatures": ["notify_idle"],
            "kind": "interactive",
            "entrypoint": "cli",
            "messagingSocketPath": str(self.path),
            "status": "idle",
            **{k: v for k, v in over.items() if k != "pid"},
        }
        (self.sessions / f"{pid}.json").write_text(json.dumps(entry))

    def key(self, token: str = TOKEN, mode: int = 0o600) -> Path:
        digest = hashlib.sha256(str(self.path).encode()).hexdigest()
        path = self.sessions / f"{os.getpid()}.{digest}.key"
        path.write_text(json.dumps({"peerToken": token, "procStart": "1"}))
        path.chmod(mode)
        return path

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
                self.got.append(data)

    def frames(self) -> list[dict[str, Any]]:
        assert len(self.got) == 1, self.got
        return [json.loads(line) for line in self.got[0].decode().splitlines()]

    def close(self) -> None:
        self.server.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def client(isolated_env: Path, state_dir: Path) -> Iterator[FakeClient]:
    write_config("[steer]\nenabled = true\n")
    # The session as its hooks recorded it: outside tmux (no pane), so the inbox is the way.
    deliver(state_dir, {"session_id": SID, "cwd": "/w/api", "hook_event_name": "Stop"})
    fake = FakeClient(isolated_env)
    yield fake
    fake.close()


def say(*args: str) -> subprocess.CompletedProcess[str]:
    return lookout("say", *args)


def test_a_session_without_a_pane_gets_the_message_through_its_inbox(client: FakeClient) -> None:
    client.key()
    done = say("api", 'ship it; then "tell me"\nsecond line', "--json")
    assert done.returncode == 0, done.stderr
    assert client.frames() == [
        {"type": "auth", "token": TOKEN},
        {
            "type": "user",
            "session_id": SID,
            "from": "lookout",
            "message": {"role": "user", "content": 'ship it; then "tell me"\nsecond line'},
        },
    ]
    out = json.loads(done.stdout)
    assert (out["via"], out["target"], out["result"], out["keys"]) == (
        "socket",
        str(client.path),
        "sent",  # no Claude Code here to take it: no prompt hook came
        [],
    )
    assert "as a message from another Claude session, not as typed by you" in out["framing"]


def test_the_terminal_says_which_way_and_what(client: FakeClient) -> None:
    done = say("--via", "socket", "api", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"api (cccc3333): sent to its inbox socket {client.path}: sent (idle)",
        "text: hello",
        "note: sent to its inbox: Claude Code shows it to the model as a message from another"
        " Claude session, not as typed by you",
    ]
    assert client.frames()[0]["type"] == "user"  # no key file: no auth line


def refused(client: FakeClient, error: str) -> None:
    done = say("api", "hello")
    assert done.returncode == 1, done.stdout
    assert done.stderr.splitlines()[0] == (
        "error: api (cccc3333): lookout knows no tmux pane for it (it was not started inside"
        f" tmux), and its inbox socket cannot be used: {error}"
    )
    assert client.got == []


def test_an_unknown_protocol_is_not_spoken(client: FakeClient) -> None:
    client.registry(peerProtocol=2)
    refused(client, "its inbox speaks protocol 2, not 1")


def test_a_symlink_or_a_file_is_no_socket(client: FakeClient) -> None:
    link = client.dir / "link.sock"
    link.symlink_to(client.path)
    client.registry(messagingSocketPath=str(link))
    refused(client, f"{link} is not a socket")


def test_a_socket_in_a_directory_others_can_write_is_not_used(client: FakeClient) -> None:
    client.dir.chmod(0o777)
    refused(client, f"{client.dir} can be written by another user")


def test_a_gone_process_or_a_reused_pid_is_no_entry(client: FakeClient) -> None:
    client.registry(procStart="1")  # another process had this pid
    refused(client, "Claude Code's registry has no live entry for it")


def test_a_socket_another_process_listens_on_is_refused(client: FakeClient) -> None:
    # The registry names a live process (its procStart checks out), but the socket is ours.
    other = subprocess.Popen(["sleep", "60"])
    try:
        client.registry(pid=other.pid)
        done = say("api", "hello")
    finally:
        other.kill()
        other.wait()
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        f"error: the process listening on {client.path} is pid {os.getpid()} (uid"
        f" {os.geteuid()}), not the session's Claude Code (pid {other.pid}): nothing was sent"
    )
    assert client.got in ([], [b""])  # connected, and closed without a byte


def test_a_key_file_others_could_read_or_write_is_not_used(client: FakeClient) -> None:
    client.key(mode=0o644)
    assert say("api", "hello").returncode == 0
    assert [f["type"] for f in client.frames()] == ["user"]


def test_a_key_path_that_is_no_regular_file_is_not_waited_on(client: FakeClient) -> None:
    # A FIFO of ours at the key's path: opening it to read would wait for a writer forever.
    path = client.key()
    path.unlink()
    os.mkfifo(path, 0o600)
    assert say("api", "hello").returncode == 0
    assert [f["type"] for f in client.frames()] == ["user"]


def test_frames_are_one_json_object_per_line() -> None:
    raw = inbox.frames("s1", "a\nb \u00e9", "tok")
    assert raw.count(b"\n") == 2 and raw.endswith(b"\n")
    assert [json.loads(line) for line in raw.splitlines()][1]["message"]["content"] == "a\nb \u00e9"
