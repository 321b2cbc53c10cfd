"""The real OpenCode, offline: `install.py --agent opencode` writes lookout's plugin into a fresh
HOME, and OpenCode talks only to a loopback mock of an OpenAI-compatible chat completions API (a
custom provider with `baseURL`). A turn with a tool call and a permission request shows up in the
installed `lookout status --json` as an OpenCode session: in `opencode run` (which rejects the
permission itself) and in the TUI (tmux), where the dialog is attention until it is answered.

OpenCode is pinned here (VERSION) and installed from npm into the test cache."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from lookout import store
from tests.helpers import wait_for

from . import npm_client
from .agent_machine import AgentMachine
from .loopback_api import LoopbackAPI

pytestmark = pytest.mark.e2e

VERSION = "1.18.33"
REPLY = "OK from mock"
COMMAND = "echo hi-from-tool"
QUESTION = "Which database should I use?"


class ChatAPI(LoopbackAPI):
    """POST /v1/chat/completions: a `bash` tool call while the user's prompt says USE_TOOL and no
    tool answered yet, else REPLY; streamed as OpenAI chunks, or one JSON for a non-stream call
    (OpenCode's title request)."""

    PREFIX = "/v1"

    def __init__(self) -> None:
        super().__init__()
        self.requests = 0
        self.bodies: list[dict[str, Any]] = []  # every request, in order
        self.command = COMMAND  # what its bash tool call runs
        self.tool = "bash"  # or "question"; "fail" answers every request with a 400

    def post(self, request: BaseHTTPRequestHandler, raw_body: bytes) -> None:
        body = json.loads(raw_body)
        self.requests += 1
        self.bodies.append(body)
        if self.tool == "fail":
            error = {"error": {"message": "mock bad request", "type": "invalid_request"}}
            self.reply(request, json.dumps(error).encode(), "application/json", 400)
            return
        messages = body.get("messages") or [{}]
        users = json.dumps([m for m in messages if m.get("role") == "user"])
        tool = "USE_TOOL" in users and messages[-1].get("role") != "tool"
        base = {"id": "c1", "object": "chat.completion.chunk", "model": "mock-model"}
        usage = {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
        if not body.get("stream"):
            message = {"role": "assistant", "content": "Mock title"}
            doc = {
                **base,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": usage,
            }
            self.reply(request, json.dumps(doc).encode(), "application/json")
            return
        if tool and body.get("tools"):
            if self.tool == "question":
                options = [{"label": "sqlite", "description": "small"}]
                ask = {"question": QUESTION, "header": "Database", "options": options}
                arguments = json.dumps({"questions": [ask]})
            else:
                arguments = json.dumps({"command": self.command, "description": "Echo"})
            call = {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": self.tool, "arguments": arguments},
            }
            delta: dict[str, Any] = {"role": "assistant", "tool_calls": [call]}
            finish = "tool_calls"
        else:
            delta, finish = {"role": "assistant", "content": REPLY}, "stop"
        chunks = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**base, "choices": [], "usage": usage},
        ]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self.reply(request, data.encode(), "text/event-stream")


def binary() -> Path:
    return npm_client.ensure("opencode-ai", VERSION, "opencode", "opencode")


@pytest.fixture(scope="session")
def opencode_bin() -> Path:
    return binary()


class Machine(AgentMachine):
    agent = "opencode"

    def __init__(self, root: Path, opencode: Path, api: ChatAPI) -> None:
        super().__init__(root)
        self.opencode = opencode
        self.config_dir = self.home / ".config" / "opencode"
        self.config_dir.mkdir(parents=True)
        self.project.mkdir()
        config = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "model": "mock/mock-model",
            "small_model": "mock/mock-model",
            "permission": {"bash": "ask"},
            "provider": {
                "mock": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Mock",
                    "options": {"baseURL": api.url, "apiKey": "sk-lookout-e2e-dummy"},
                    "models": {"mock-model": {"name": "Mock model", "tool_call": True}},
                }
            },
        }
        self.user_file = self.config_dir / "opencode.json"
        self.user_file.write_text(json.dumps(config, indent=2))
        # OpenCode npm-installs @opencode-ai/plugin into its config directory at start and waits
        # for it (~70 s of retries offline); a lock file that already lists it skips that.
        (self.config_dir / "node_modules").mkdir()
        lock = {
            "lockfileVersion": 3,
            "packages": {"": {"dependencies": {"@opencode-ai/plugin": VERSION}}},
        }
        (self.config_dir / "package-lock.json").write_text(json.dumps(lock))

    def env(self) -> dict[str, str]:
        return npm_client.offline_env(
            self.home,
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_SHARE="1",
            OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        )

    def turn(self, prompt: str) -> subprocess.CompletedProcess[str]:
        done = opencode_run(self, prompt)
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        return done


@pytest.fixture
def api() -> Iterator[ChatAPI]:
    with ChatAPI() as api:
        yield api


@pytest.fixture
def machine(tmp_path: Path, opencode_bin: Path, api: ChatAPI) -> Machine:
    return Machine(tmp_path / "user", opencode_bin, api)


def opencode_run(machine: Machine, prompt: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(machine.opencode), "run", prompt],
        cwd=machine.project,
        env=machine.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_opencode_run_with_a_permission_request(machine: Machine) -> None:
    machine.install()  # its line, and a plain turn's ended session: test_agents.py
    config = machine.home / ".config" / "lookout" / "config.toml"
    config.write_text(
        '[channels.log]\ntype = "command"\nargv = ["/bin/true"]\n'
        '[[rules]]\nwhen = ["permission", "resolved"]\nchannels = ["log"]\n'
    )
    done = opencode_run(machine, "USE_TOOL now")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "auto-rejecting" in done.stdout + done.stderr  # `run` answers permissions itself
    shown = machine.wait("ended")  # the plugin reports the process's exit
    # One process per bus event, started without waiting: they may record out of order (a late
    # one is marked and changes nothing); by the plugin's stamp the order is the bus order.
    records = sorted(machine.records(), key=lambda r: r["ts"])
    events = [r["event"] for r in records]
    assert events == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PermissionReplied",
        "PostToolUseFailure",
        "Stop",
        "SessionEnd",
    ], records
    asked = next(r for r in records if r["event"] == "PermissionRequest")
    assert asked["summary"] == COMMAND
    # `run` rejects within milliseconds: if the answer was recorded first, the request is late.
    assert asked["late"] or (asked["status"], asked["reason"]) == ("attention", "permission")
    # Nobody can answer an `opencode run` dialog (it rejects it itself): recorded, never sent,
    # as for `claude -p`.
    assert shown["print_mode"] is True
    deliveries = machine.home / ".local" / "state" / "lookout" / "deliveries.jsonl"
    sent = [json.loads(line) for line in deliveries.read_text().splitlines()]
    assert [(d["kind"], d["result"], d["reason"]) for d in sent] == [
        ("permission", "skipped", "print_mode"),
        ("resolved", "skipped", "print_mode"),
    ], sent
    assert machine.errors() == ""


def test_opencode_tui_permission_is_attention_until_answered(machine: Machine) -> None:
    machine.install()
    screen = npm_client.Tmux(machine.root, "opencode")
    try:
        screen.start(
            [str(machine.opencode), "--prompt", "USE_TOOL now"], machine.env(), machine.project
        )
        screen.wait_for("Allow once", timeout=90)
        shown = machine.wait("attention", "permission")
        assert (shown["agent"], shown["detail"], shown["summary"]) == ("opencode", "bash", COMMAND)
        screen.keys("Enter")  # Allow once
        shown = machine.wait("idle")
        assert shown["summary"] == REPLY
        kinds = [k for r in machine.records() for k in r["notify"]]
        assert kinds.count("permission") == 1 and kinds.count("resolved") == 1
        # The plugin's hooks run as children of OpenCode's process: quitting the TUI (which
        # fires no event) leaves it gone, and the status says so (issue 22 #7).
        assert isinstance(shown["pid"], int) and shown["alive"] is True
        screen.keys("C-c")
        shown = machine.wait("ended", timeout=30)
        assert (shown["reason"], shown["alive"]) == ("process_gone", False)
    finally:
        screen.kill()
    assert machine.errors() == ""


def test_opencode_failed_turn_is_attention_error(machine: Machine, api: ChatAPI) -> None:
    machine.install()
    api.tool = "fail"
    done = opencode_run(machine, "say hi")
    assert "mock bad request" in done.stdout + done.stderr
    machine.wait("ended")
    records = sorted(machine.records(), key=lambda r: r["ts"])
    assert [r["event"] for r in records] == [
        "SessionStart",
        "UserPromptSubmit",
        "StopFailure",  # the idle after session.error does not hide the failure
        "SessionEnd",
    ]
    failed = records[2]
    assert (failed["status"], failed["reason"], failed["error"]) == (
        "attention",
        "error",
        "APIError",
    )
    assert failed["notify"] == ["error"]
    assert machine.errors() == ""


def test_opencode_tui_question_is_attention_until_answered(machine: Machine, api: ChatAPI) -> None:
    machine.install()
    api.tool = "question"
    screen = npm_client.Tmux(machine.root, "opencode-q")
    env = {**machine.env(), "OPENCODE_ENABLE_QUESTION_TOOL": "1"}
    try:
        screen.start([str(machine.opencode), "--prompt", "USE_TOOL now"], env, machine.project)
        screen.wait_for(QUESTION, timeout=90)
        shown = machine.wait("attention", "question")
        assert (shown["agent"], shown["summary"]) == ("opencode", QUESTION)
        screen.keys("Enter")  # the first option
        shown = machine.wait("idle")
        kinds = [k for r in machine.records() for k in r["notify"]]
        assert kinds.count("question") == 1 and kinds.count("resolved") == 1
    finally:
        screen.kill()
    assert machine.errors() == ""


def _user_texts(body: dict[str, Any]) -> list[str]:
    """The user's messages in one chat request, in order (content as a string or as parts)."""
    out = []
    for m in body.get("messages") or []:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"text": content}]
        out.append(" ".join(str(p.get("text") or "") for p in parts if isinstance(p, dict)))
    return out


def test_opencode_say_while_it_works_is_queued_into_the_running_turn(
    machine: Machine, api: ChatAPI
) -> None:
    """Issue 41: typed while OpenCode works, a message shows "QUEUED" and the model gets it in
    the same busy stretch, after the running tool's result: `say` types it and reports queued."""
    machine.install()
    config = machine.home / ".config" / "lookout" / "config.toml"
    config.write_text(f'[steer]\nenabled = true\nprojects = ["{machine.project}"]\n')
    user = json.loads(machine.user_file.read_text())
    machine.user_file.write_text(json.dumps({**user, "permission": {"bash": "allow"}}))
    api.command = "sleep 8"
    screen = npm_client.Tmux(machine.root, "opencode-say")
    try:
        argv = [str(machine.opencode), "--prompt", "USE_TOOL now"]
        screen.start(argv, machine.env(), machine.project, in_tmux=True)
        running: dict[str, Any] = {}

        def tool_running() -> bool:  # the tool runs (tool.start), not only the turn
            running.update(next(iter(machine.status()), {}))
            return (running.get("status"), running.get("detail")) == ("working", "bash")

        wait_for(tool_running, timeout=90, what="the tool running", every=0.2)
        assert running["tmux_pane"], running
        text = "one more thing while you work"
        done = machine.lookout("say", running["session_id"], text, "--json")
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert (out["via"], out["result"], out["status"]) == ("pane", "queued", "working"), out
        screen.wait_for("QUEUED", timeout=30)

        def carrying() -> list[dict[str, Any]]:
            return [b for b in list(api.bodies) if text in _user_texts(b)]

        wait_for(carrying, timeout=60, what="the model taking the queued message", every=0.2)
        roles = [m.get("role") for m in carrying()[0]["messages"]]
        assert roles[-3:] == ["assistant", "tool", "user"], roles  # after the tool's result
        assert _user_texts(carrying()[0]) == ["USE_TOOL now", text]
        machine.wait("idle", timeout=60)
        mine = [r for r in machine.records() if r["session_id"] == running["session_id"]]
        events = [r["event"] for r in mine]
        assert events.count("Stop") == 1 and events.count("UserPromptSubmit") == 1, events
        (steered,) = [r for r in mine if r["event"] == "Steered"]
        assert (steered["outcome"], steered["steer"]["action"]) == ("queued", "say")
    finally:
        screen.kill()
    assert machine.errors() == ""


# docs/agents.md's evidence on answering OpenCode from afar: what a plugin can do to a tool call
# and to a permission request of the real 1.18.33 (lookout's own plugin does neither yet).
REFUSING_PLUGIN = """export const Refuse = async () => ({
  "tool.execute.before": async (input) => {
    if (input.tool === "bash") throw new Error("Blocked by a plugin: denied from afar");
  },
});
"""
REPLYING_PLUGIN = """export const Reply = async ({ client }) => ({
  event: async ({ event }) => {
    if (event.type !== "permission.asked") return;
    const p = event.properties;
    await client.postSessionIdPermissionsPermissionId({
      path: { id: p.sessionID, permissionID: p.id },
      body: { response: "once" },
    });
  },
});
"""


def test_opencode_plugin_throwing_in_tool_execute_before_refuses_the_tool(
    machine: Machine, api: ChatAPI
) -> None:
    marker = machine.root / "ran"
    api.command = f"touch {marker}"
    user = json.loads(machine.user_file.read_text())
    machine.user_file.write_text(json.dumps({**user, "permission": {"bash": "allow"}}))
    (machine.config_dir / "plugin").mkdir(exist_ok=True)
    (machine.config_dir / "plugin" / "refuse.js").write_text(REFUSING_PLUGIN)
    done = opencode_run(machine, "USE_TOOL now")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "Blocked by a plugin: denied from afar" in done.stdout + done.stderr
    assert not marker.exists()  # the tool never ran
    # The model got the refusal as the tool's result, with the plugin's message.
    results = [m for b in api.bodies for m in b.get("messages") or [] if m.get("role") == "tool"]
    assert results and "denied from afar" in json.dumps(results[-1]), results


def test_opencode_plugin_answers_a_permission_beside_its_dialog(
    machine: Machine, api: ChatAPI
) -> None:
    # The dialog is up (the TUI, `bash: ask`); a plugin's own client replies to the request, as
    # the dialog would: the command runs with no key pressed at the terminal.
    marker = machine.project / "ran"
    api.command = f"touch {marker}"
    (machine.config_dir / "plugin").mkdir(exist_ok=True)
    (machine.config_dir / "plugin" / "reply.js").write_text(REPLYING_PLUGIN)
    screen = npm_client.Tmux(machine.root, "opencode-reply")
    try:
        screen.start(
            [str(machine.opencode), "--prompt", "USE_TOOL now"], machine.env(), machine.project
        )
        wait_for(marker.exists, timeout=120, what="the command run by the plugin's answer")
        screen.wait_for(REPLY, timeout=60)
    finally:
        screen.kill()


# Answered from afar (issue 41): with [remote] on, lookout's plugin starts the deciding hook
# beside OpenCode's dialog and gives its answer to that dialog through OpenCode's own client.


def _remote_machine(machine: Machine) -> Path:
    """[remote] on in the user's own config, then the install (which writes the plugin's
    deciding hook in); the state directory."""
    config = machine.home / ".config" / "lookout" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[remote]\nenabled = true\nwait_s = 120\n")
    machine.install()
    return machine.home / ".local" / "state" / "lookout"


def _requests(state: Path) -> list[dict[str, Any]]:
    path = state / "requests"
    found = [json.loads(p.read_text()) for p in path.glob("*.json")] if path.exists() else []
    return sorted(found, key=lambda r: int(r["created_ms"]))


def _pending(state: Path, cmd: str) -> dict[str, Any]:
    def probe() -> dict[str, Any]:
        for rec in _requests(state):
            if rec["status"] == "pending" and cmd in rec["detail"]:
                return rec
        return {}

    found: dict[str, Any] = wait_for(probe, timeout=120, what=f"the request for {cmd!r}")
    return found


def _status(state: Path, rid: str) -> str:
    return str(next(r for r in _requests(state) if r["id"] == rid)["status"])


def _alive(pid: int) -> bool:
    """Whether `pid` runs (an exited child not yet reaped counts as gone)."""
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return False


def _tool_results(api: ChatAPI) -> list[dict[str, Any]]:
    return [m for b in list(api.bodies) for m in b.get("messages") or [] if m.get("role") == "tool"]


@pytest.mark.parametrize("answer", ["allow", "deny"])
def test_opencode_answered_from_afar(machine: Machine, api: ChatAPI, answer: str) -> None:
    state = _remote_machine(machine)
    marker = machine.project / "ran"
    api.command = f"touch {marker}"
    screen = npm_client.Tmux(machine.root, f"opencode-{answer}")
    try:
        screen.start(
            [str(machine.opencode), "--prompt", "USE_TOOL now"], machine.env(), machine.project
        )
        rec = _pending(state, api.command)
        assert (rec["agent"], rec["tool_name"], rec["allow_always"]) == ("opencode", "bash", False)

        # The recording hook's episode (its alert's request) names this very request.
        def episode() -> dict[str, Any]:
            snap = store.read_session(str(state), rec["session_id"]) or {}
            found: dict[str, Any] = (snap.get("main") or {}).get("episode") or {}
            return found

        opened = wait_for(episode, timeout=30, what="the request's episode")
        assert opened["tool_key"] == rec["tool_key"], opened
        listed = json.loads(machine.lookout("answer", "--json").stdout)
        (shown,) = [r for r in listed if r["id"] == rec["id"]]
        # The whole call is shown; its description is the model's commentary (issue 38).
        assert shown["detail"] == f"{api.command}\ndescription: Echo", shown
        assert shown["offers_allow"] is True, shown
        screen.wait_for("Allow once", timeout=60)  # OpenCode's own dialog is up meanwhile
        done = machine.lookout("answer", rec["id"], answer)
        assert done.returncode == 0, done.stdout + done.stderr
        assert _status(state, rec["id"]) == ("allowed" if answer == "allow" else "denied")
        if answer == "allow":
            # The command ran, and the model got its result.
            wait_for(lambda: _tool_results(api), timeout=60, what="the tool's result")
            screen.wait_for(REPLY, timeout=60)
            assert marker.exists()
            assert machine.wait("idle", timeout=60)["summary"] == REPLY
        else:
            # Rejected as at its dialog: the command never ran, the turn stopped there.
            shown = machine.wait("idle", timeout=60)
            assert not marker.exists() and not _tool_results(api), shown
        kinds = [k for r in machine.records() for k in r["notify"]]
        assert kinds.count("permission") == 1, kinds
    finally:
        screen.kill()
    assert machine.errors() == ""


def test_opencode_answered_at_the_terminal_ends_the_remote_request(
    machine: Machine, api: ChatAPI
) -> None:
    state = _remote_machine(machine)
    marker = machine.project / "ran"
    api.command = f"touch {marker}"
    screen = npm_client.Tmux(machine.root, "opencode-local")
    try:
        screen.start(
            [str(machine.opencode), "--prompt", "USE_TOOL now"], machine.env(), machine.project
        )
        rec = _pending(state, api.command)
        assert _alive(rec["pid"])  # the deciding child waits beside the dialog
        screen.wait_for("Allow once", timeout=60)
        screen.keys("Enter")  # Allow once, at the terminal
        wait_for(marker.exists, timeout=60, what="the command allowed at the terminal")
        wait_for(
            lambda: _status(state, rec["id"]) == "answered_locally",
            timeout=30,
            what="the request answered in the terminal",
        )
        wait_for(lambda: not _alive(rec["pid"]), timeout=30, what="the deciding child gone")
        late = machine.lookout("answer", rec["id"], "deny")
        # "allowed" once lookout saw the call run (its tool.execute.after may come after the
        # plugin stopped the child), else only "answered": never denied, never taken.
        said = re.search(r"is (allowed|answered) in the terminal; nothing", late.stderr)
        assert late.returncode != 0 and said, late
        machine.wait("idle", timeout=60)
    finally:
        screen.kill()
    assert machine.errors() == ""
