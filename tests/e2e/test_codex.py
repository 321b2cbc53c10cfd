"""The real OpenAI Codex CLI, offline: `install.py --agent codex` in a fresh HOME/CODEX_HOME, then
`codex exec` turns against a loopback mock of the Responses API. A turn shows up in the
installed `lookout status --json` as a Codex session, through hooks and through legacy notify.

Codex is pinned here (CODEX_VERSION) and installed from npm into the test cache; the tests skip
only when the npm registry is unreachable. Codex never talks to anything but 127.0.0.1: the model
provider is the mock, the features that reach out (plugins, apps, model discovery, updates,
analytics) are off, and every proxy variable points at a closed loopback port.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import npm_client
from tests.e2e.agent_machine import AgentMachine
from tests.e2e.loopback_api import LoopbackAPI

pytestmark = pytest.mark.e2e

CODEX_VERSION = "0.169.0"
PACKAGE = "@openai/codex"
# Read at import, before the autouse fixture points HOME and XDG_* at a temporary directory.
_ENV = dict(os.environ)
DEAD_PROXY = "http://127.0.0.1:9"
REPLY = "Renamed foo to bar."


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The pinned Codex, installed into the test cache on first use; skip if npm is offline."""
    return npm_client.ensure(PACKAGE, CODEX_VERSION, "codex", "codex")


# --- a mock Responses API ----------------------------------------------------------------------


def said(rid: str, text: str) -> dict[str, Any]:
    """The assistant's message `text`, as the output item of response `rid`."""
    return {
        "type": "message",
        "role": "assistant",
        "id": f"msg_{rid}",
        "content": [{"type": "output_text", "text": text}],
    }


class ResponsesAPI(LoopbackAPI):
    """POST .../responses answers one SSE stream: the item `answer` makes of the request's input
    (here the assistant's REPLY), then completed."""

    PREFIX = "/v1"

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, Any]] = []
        self.ids = itertools.count(1)

    def answer(self, items: list[dict[str, Any]], rid: str) -> dict[str, Any]:
        return said(rid, REPLY)

    def post(self, request: BaseHTTPRequestHandler, body: bytes) -> None:
        if not request.path.endswith("/responses"):
            request.send_error(404)
            return
        self.requests.append(json.loads(body))
        rid = f"resp_mock_{next(self.ids)}"
        item = self.answer(self.requests[-1].get("input") or [], rid)
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        events = [
            {"type": "response.created", "response": {"id": rid}},
            {"type": "response.output_item.done", "item": item},
            {"type": "response.completed", "response": {"id": rid, "usage": usage}},
        ]
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        self.reply(request, data.encode(), "text/event-stream")


@pytest.fixture
def responses_api() -> Iterator[ResponsesAPI]:
    with ResponsesAPI() as api:
        yield api


# --- the user's machine --------------------------------------------------------------------------

# The user's own config.toml: comments and a profile that install/uninstall must keep as they are.
CONFIG = """\
# Codex, talking to the test's loopback mock only.
model = "mock-model"   # no metadata for it: Codex falls back to defaults
model_provider = "mock"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
api_key_model_discovery = false
in_app_updates = false

[model_providers.mock]
name = "mock"
base_url = "{url}"
wire_api = "responses"
env_key = "LOOKOUT_E2E_MOCK_KEY"
"""


class Machine(AgentMachine):
    agent = "codex"

    def __init__(self, root: Path, codex: Path, api: ResponsesAPI) -> None:
        super().__init__(root)
        self.codex_home = self.home / ".codex"
        self.codex = codex
        self.api = api
        self.codex_home.mkdir(parents=True)
        self.project.mkdir()
        self.config = self.user_file = self.codex_home / "config.toml"
        self.config.write_text(CONFIG.format(url=api.url))

    def env(self) -> dict[str, str]:
        # No LOOKOUT_* state/config variables: lookout finds its files from HOME, as for a user.
        env = {
            "PATH": _ENV.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "LOOKOUT_CODEX": str(self.codex),
            "LOOKOUT_E2E_MOCK_KEY": "sk-lookout-e2e-dummy",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        for var in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy"):
            env[var] = DEAD_PROXY
        return env

    def codex_exec(self, prompt: str, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [
                str(self.codex),
                "exec",
                "--skip-git-repo-check",
                "-C",
                str(self.project),
                *args,
                prompt,
            ],
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"codex exec failed:\n{done.stdout}\n{done.stderr}"
        assert REPLY in done.stdout, done.stdout
        return done

    def turn(self, prompt: str) -> subprocess.CompletedProcess[str]:
        # Codex runs only hooks the user trusted (/hooks in the TUI); a test vets them itself.
        return self.codex_exec(prompt, "--dangerously-bypass-hook-trust")

    def wait_session(self, session_id: str, status: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        shown: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            shown = self.status()
            for s in shown:
                if s["session_id"] == session_id and s["status"] == status:
                    return s
            time.sleep(0.1)
        raise AssertionError(f"no {status} session {session_id} in lookout status: {shown}")

    def wait_known(self, session_id: str, timeout: float = 20) -> dict[str, Any]:
        """The session once lookout status shows it (ended ones too)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for s in self.status():
                if s["session_id"] == session_id:
                    return s
            time.sleep(0.1)
        raise AssertionError(f"no session {session_id} in lookout status")


@pytest.fixture
def machine(tmp_path: Path, codex_bin: Path, responses_api: ResponsesAPI) -> Machine:
    # tmp_path/home belongs to the autouse isolated_env: this user lives beside it.
    return Machine(tmp_path / "user", codex_bin, responses_api)


def session_id_of(done: subprocess.CompletedProcess[str]) -> str:
    for line in done.stderr.splitlines():
        if line.startswith("session id:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"codex exec printed no session id:\n{done.stderr}")


def test_a_codex_turn_through_hooks(machine: Machine) -> None:
    out = machine.install()  # the line that says it installed: test_agents.py
    assert f"codex: Codex {CODEX_VERSION} has hooks: using ~/.codex/hooks.json" in out
    assert "installed 13 hooks into ~/.codex/hooks.json (new file)" in out
    assert "StopFailure" not in (machine.codex_home / "hooks.json").read_text()
    done = machine.turn("rename foo to bar")
    session = session_id_of(done)
    # `codex exec` has exited, so the session is over: by its SessionEnd (0.169.0), or, had that
    # been lost, by its process, gone (issue 22 #7).
    shown = machine.wait_session(session, "ended")
    assert shown["reason"] in ("other", "process_gone") and shown["alive"] is False
    # Its model requests ran lookout's PreModelRequest hook: signs of life for stuck detection.
    assert "clamping" not in done.stderr  # Interrupt's and SessionEnd's timeouts are Codex's 3 s
    assert isinstance(shown["pid"], int) and shown["pid"] != os.getpid()
    assert shown["agent"] == "codex"
    assert shown["cwd"] == str(machine.project)
    assert machine.api.requests, "codex never asked the mock model"
    assert machine.errors() == ""
    # Untrusted hooks do not run: nothing new is recorded for a second session.
    before = {s["session_id"] for s in machine.status()}
    other = session_id_of(machine.codex_exec("again"))
    assert other not in {s["session_id"] for s in machine.status()} | before


def test_a_codex_turn_through_legacy_notify(machine: Machine) -> None:
    original = machine.config.read_text()
    out = machine.install("--codex-notify")
    assert "codex: --codex-notify: using notify in ~/.codex/config.toml" in out
    assert "set notify in ~/.codex/config.toml (backup: " in out
    text = machine.config.read_text()
    lines = text.splitlines(keepends=True)
    added = [line for line in lines if line not in original.splitlines(keepends=True)]
    assert len(added) == 1 and added[0].startswith("notify = ["), text  # only that line
    assert lines.index(added[0]) < lines.index("[analytics]\n")  # top level, before the tables
    done = machine.codex_exec("rename foo to bar")
    thread = session_id_of(done)  # notify's thread-id is the session id
    shown = machine.wait_known(thread)
    assert shown["agent"] == "codex"
    # The notify program records its parent when that is the codex process (issue 38, T2; so
    # it was in every run here): `codex exec` has exited since, so the session has ended. Had
    # codex exited before the program asked (its parent is then whoever adopted it), no pid
    # would be recorded, and the session would stay idle.
    if shown["pid"] is None:
        assert shown["status"] == "idle", shown
    else:
        assert (shown["status"], shown["reason"]) == ("ended", "process_gone"), shown
    assert machine.errors() == ""
    machine.uninstall()
    assert machine.config.read_text() == original
