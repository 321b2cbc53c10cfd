"""The real OpenAI Codex TUI (0.169.0), interactive, two windows of a private tmux server at once,
against a loopback mock of the Responses API: as its users run it, not `codex exec`.

Codex's hooks are trusted the way Codex itself records it (`[hooks.state]` in config.toml, the
hash lookout's doctor checks), never with `--dangerously-bypass-hook-trust`: that flag also
keeps the TUI off Codex's shared background server, which is what these tests are about.

The mock answers `RUN: <command>` with an `exec_command` call (and `ESCALATE` makes Codex ask
first), anything else with a short reply.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from lookout.agents import codex_config
from tests.e2e import npm_client
from tests.e2e.test_codex import CODEX_VERSION, CONFIG, PACKAGE
from tests.helpers import ROOT, wait_for

pytestmark = pytest.mark.e2e

_ENV = dict(os.environ)
REPLY = "OK from the mock."


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return npm_client.ensure(PACKAGE, CODEX_VERSION, "codex", "codex")


def _sse(items: list[dict[str, Any]], rid: str) -> bytes:
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    events = [{"type": "response.created", "response": {"id": rid}}]
    events += [{"type": "response.output_item.done", "item": item} for item in items]
    events.append({"type": "response.completed", "response": {"id": rid, "usage": usage}})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _answer(body: dict[str, Any], rid: str) -> list[dict[str, Any]]:
    """What the model says to one request: a tool call for a `RUN:` prompt not yet run."""
    items = body.get("input") or []
    last = items[-1] if items else {}
    tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    text = ""
    if isinstance(last, dict) and last.get("role") == "user":
        text = " ".join(c.get("text", "") for c in last.get("content") or [] if isinstance(c, dict))
    if "RUN: " in text and "exec_command" in tools:
        command = text.split("RUN: ", 1)[1].strip()
        args: dict[str, Any] = {"cmd": command.replace(" ESCALATE", "")}
        if command.endswith("ESCALATE"):
            args |= {"sandbox_permissions": "require_escalated", "justification": "it must"}
        call = {
            "type": "function_call",
            "id": f"fc_{rid}",
            "call_id": f"call_{rid}",
            "name": "exec_command",
            "arguments": json.dumps(args),
        }
        return [call]
    message = {
        "type": "message",
        "role": "assistant",
        "id": f"msg_{rid}",
        "content": [{"type": "output_text", "text": REPLY}],
    }
    return [message]


class Mock:
    def __init__(self) -> None:
        ids = itertools.count(1)
        self.bodies: list[dict[str, Any]] = []  # every request, in order
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.endswith("/responses"):
                    self.send_error(404)
                    return
                rid = f"resp_{next(ids)}"
                bodies.append(json.loads(body))
                raw = _sse(_answer(bodies[-1], rid), rid)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


class Desk:
    """One user: HOME, lookout installed for Codex, its hooks trusted, a private tmux server."""

    def __init__(self, root: Path, codex: Path, mock: Mock) -> None:
        self.home = root / "home"
        self.codex_home = self.home / ".codex"
        self.codex = codex
        self.mock = mock
        self.codex_home.mkdir(parents=True)
        self.projects = [root / "alpha", root / "beta"]
        # Codex asks before an escalated command (its default policy for an interactive user).
        config = 'approval_policy = "on-request"\nsandbox_mode = "workspace-write"\n'
        config += CONFIG.format(url=mock.url)
        # /tmp is no writable root: the sandbox would make its guarded folders there (/tmp/.git)
        config += "\n[sandbox_workspace_write]\nexclude_slash_tmp = true\n"
        config += "exclude_tmpdir_env_var = true\n"
        for project in self.projects:
            project.mkdir()
            config += f'\n[projects."{project}"]\ntrust_level = "trusted"\n'
        self.config = self.codex_home / "config.toml"
        self.config.write_text(config)
        self.tmux = npm_client.Tmux(root, "codex-tui")
        self.install()
        self.trust()

    def env(self) -> dict[str, str]:
        return npm_client.offline_env(
            self.home,
            CODEX_HOME=str(self.codex_home),
            LOOKOUT_CODEX=str(self.codex),
            LOOKOUT_E2E_MOCK_KEY="sk-lookout-e2e-dummy",
        )

    def install(self) -> None:
        done = subprocess.run(
            [sys.executable, "install.py", "--agent", "codex", "--python", sys.executable],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr

    def trust(self) -> None:
        """What `/hooks` -> trust writes: one record per hook, its hash over the hook."""
        hooks_json = self.codex_home / "hooks.json"
        installed = json.loads(hooks_json.read_text())["hooks"]
        records = "".join(
            f'\n[hooks.state."{hooks_json}:{codex_config.snake(event)}:0:0"]\n'
            f'trusted_hash = "{codex_config.trust_hash(event, {}, groups[0]["hooks"][0])}"\n'
            for event, groups in installed.items()
        )
        with self.config.open("a") as fh:
            fh.write(records)

    def lookout(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.home / ".local" / "bin" / "lookout"), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )

    def sessions(self) -> list[dict[str, Any]]:
        done = self.lookout("status", "--json", "--all")
        assert done.returncode == 0, done.stderr
        found: list[dict[str, Any]] = json.loads(done.stdout)["sessions"]
        return found

    def session_in(self, project: Path) -> dict[str, Any] | None:
        return next((s for s in self.sessions() if s["cwd"] == str(project)), None)

    def records(self) -> list[dict[str, Any]]:
        path = self.home / ".local" / "state" / "lookout" / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def open(self, index: int, *flags: str) -> str:
        """`codex` in a window of its own, in project `index`; returns the window's target."""
        exports = " ".join(f"{k}={npm_client._q(v)}" for k, v in self.env().items())
        project = self.projects[index]
        argv = " ".join(npm_client._q(a) for a in [str(self.codex), *flags])
        # The pane's own tmux variables pass through, as in a user's terminal.
        tmux = 'TMUX="$TMUX" TMUX_PANE="$TMUX_PANE"'
        command = f"cd {npm_client._q(str(project))} && exec env -i {exports} {tmux} {argv}"
        if index == 0:
            self.tmux.tmux("new-session", "-d", "-s", "e2e", "-x", "160", "-y", "50", command)
        else:
            self.tmux.tmux("new-window", "-t", "e2e", command)
        target = f"e2e:{index}"
        self.wait_screen(target, "Ask Codex")
        return target

    def screen(self, target: str) -> str:
        return self.tmux.tmux("capture-pane", "-p", "-t", target)

    def wait_screen(self, target: str, needle: str) -> str:
        wait_for(lambda: needle in self.screen(target), timeout=90, what=needle, every=0.25)
        return self.screen(target)

    def prompt(self, target: str, text: str) -> None:
        self.tmux.tmux("send-keys", "-t", target, "-l", text)
        time.sleep(0.5)  # text and Enter in one burst are a paste to Codex: Enter turns newline
        for _ in range(5):
            self.tmux.tmux("send-keys", "-t", target, "Enter")
            # Taken: the composer is empty again (its placeholder) or startup holds the prompt.
            taken = ("Ask Codex", "Waiting for startup", "esc to interrupt")
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                screen = self.screen(target)
                if any(mark in screen.split(text, 1)[-1] for mark in taken):
                    return
                time.sleep(0.2)
        raise AssertionError(f"Codex never took the prompt:\n{self.screen(target)}")

    def status_of(
        self,
        project: Path,
        status: str,
        detail: str | None = None,
        timeout: float = 90,
        what: str = "",
    ) -> dict[str, Any]:
        """The session in `project` once its status is `status` (and its detail `detail`)."""
        found: dict[str, Any] = {}

        def shown() -> bool:
            found.update(self.session_in(project) or {})
            right = detail is None or found.get("detail") == detail
            return found.get("status") == status and right

        try:
            wait_for(shown, timeout=timeout, what=what or f"{project.name} {status}", every=0.1)
        except BaseException:
            screens = [self.screen(f"e2e:{i}") for i in range(len(self.projects))]
            print("\n----\n".join(screens), self.sessions(), sep="\n")
            raise
        return found

    def close(self) -> None:
        """The tmux server, then every Codex process left under this HOME (the daemon)."""
        self.tmux.kill()
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
            if f"CODEX_HOME={self.codex_home}".encode() in environ.split(b"\0"):
                try:
                    os.kill(int(pid), 9)
                except OSError:
                    pass


@pytest.fixture
def desk(tmp_path: Path, codex_bin: Path) -> Iterator[Desk]:
    mock = Mock()
    made = Desk(tmp_path / "user", codex_bin, mock)
    try:
        yield made
    finally:
        made.close()
        mock.server.shutdown()
        mock.server.server_close()


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (Codex runs an approved command as its own child)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in os.listdir(f"/proc/{parent}/task"):
            try:
                kids = Path(f"/proc/{parent}/task/{task}/children").read_text().split()
            except OSError:
                continue
            todo += map(int, kids)
            found += map(int, kids)
    return found


def _argv(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    except OSError:
        return []


def _started_ms(pid: int) -> float:
    """When `pid` started, epoch ms to the clock tick: its start after boot (/proc/PID/stat)
    past the boot's epoch (now less CLOCK_BOOTTIME: /proc/stat's btime is whole seconds)."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot_s = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    return (boot_s + ticks / os.sysconf("SC_CLK_TCK")) * 1000


def _ms(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000


def approve_a_long_command(desk: Desk, target: str, project: Path, session: dict[str, Any]) -> None:
    """A long command Codex asks about, approved at its prompt: working while it runs (its
    process, a child of the session's codex: the TUI's own, or the shared daemon), long before
    its PostToolUse, within 1 s of the answer; Esc during it: idle at the Interrupt record."""
    desk.prompt(target, "RUN: sleep 40 ESCALATE")
    asked = desk.status_of(project, "attention")
    assert (asked["reason"], asked["summary"]) == ("permission", "sleep 40")
    # Codex shows its prompt only once its PermissionRequest hooks returned (the status turns
    # attention at the hook): a key pressed before the prompt shows is lost.
    desk.wait_screen(target, "Would you like to run")
    desk.tmux.tmux("send-keys", "-t", target, "y")
    approved = desk.status_of(project, "working")
    assert (approved["detail"], approved["evidence"]) == ("Bash", "process")
    mine = [r for r in desk.records() if r["session_id"] == session["session_id"]]
    proof = mine[-1]
    assert (proof["event"], proof["outcome"]) == ("Reconciled", "approved"), proof
    # Within 1 s of the answer: the command's own start (the kernel's stamp) to the record's.
    (ran,) = [p for p in _descendants(session["pid"]) if _argv(p) == ["sleep", "40"]]
    lag_ms = _ms(proof["ts"]) - _started_ms(ran)
    print(f"approved: working {lag_ms:.0f} ms after the command started")
    assert -20 <= lag_ms <= 1000, lag_ms
    # Esc during the approved command: idle at its Interrupt record.
    desk.tmux.tmux("send-keys", "-t", target, "Escape")
    idle = desk.status_of(project, "idle")
    mine = [r for r in desk.records() if r["session_id"] == session["session_id"]]
    stopped = [r for r in mine if r["event"] == "Interrupt"][-1]
    assert idle["since"] == stopped["ts"] and _ms(stopped["ts"]) > _ms(proof["ts"])


def test_two_windows_of_the_shared_daemon_are_named_by_doctor(desk: Desk) -> None:
    """Codex's default: both windows' sessions run in one `codex app-server` daemon, whose hooks
    name neither window; lookout says so instead of guessing (docs/agents.md)."""
    desk.prompt(desk.open(0), "hello from alpha")
    alpha = desk.status_of(desk.projects[0], "idle")
    desk.prompt(desk.open(1), "hello from beta")  # the first window's daemon serves it
    beta = desk.status_of(desk.projects[1], "idle")
    assert alpha["session_id"] != beta["session_id"]
    assert alpha["agent"] == beta["agent"] == "codex"
    assert alpha["pid"] == beta["pid"]  # the daemon's, whichever window
    doctor = json.loads(desk.lookout("doctor", "--json").stdout)
    (warned,) = [c for c in doctor["checks"] if "shared background server" in c["message"]]
    assert warned["message"].startswith("2 Codex session(s)")
    assert warned["hint"].startswith("start codex with --no-daemon")
    # Every pane action refuses either session (the daemon sits in the first window's pane),
    # naming --no-daemon as the way, and types nothing anywhere.
    config = desk.home / ".config" / "lookout" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[steer]\nenabled = true\n")
    for session in (alpha, beta):
        for action in (("say", session["session_id"], "typed"), ("jump", session["session_id"])):
            done = desk.lookout(*action)
            assert done.returncode != 0 and "no pane of its own" in done.stderr, done
            assert "--no-daemon" in done.stderr and "Traceback" not in done.stderr, done
    assert "typed" not in desk.screen("e2e:0") + desk.screen("e2e:1")
    approve_a_long_command(desk, "e2e:1", desk.projects[1], beta)  # the daemon runs it
    # Quit the first window: its session ends by the SessionEnd the daemon fires once it lets
    # the window's thread go (0.169.0: about 60 s after the window quit), the daemon serving on.
    desk.tmux.tmux("send-keys", "-t", "e2e:0", "C-c")
    ended = desk.status_of(desk.projects[0], "ended")
    assert ended["session_id"] == alpha["session_id"]
    assert (desk.session_in(desk.projects[1]) or {}).get("status") == "idle"


def test_no_daemon_windows_have_their_own_pane_esc_idles_and_a_quit_ends(desk: Desk) -> None:
    first = desk.open(0, "--no-daemon")
    desk.prompt(first, "hello from alpha")
    alpha = desk.status_of(desk.projects[0], "idle")
    second = desk.open(1, "--no-daemon")
    desk.prompt(second, "RUN: sleep 30")
    beta = desk.status_of(desk.projects[1], "working", "Bash", 60, "beta running its command")
    panes = desk.tmux.tmux("list-panes", "-s", "-t", "e2e", "-F", "#{window_index} #{pane_id}")
    by_window = dict(line.split() for line in panes.splitlines())
    assert (alpha["tmux_pane"], beta["tmux_pane"]) == (by_window["0"], by_window["1"])
    assert alpha["pid"] != beta["pid"]
    # Esc while the command runs: Codex fires Interrupt (no Stop), and that record is idle.
    desk.tmux.tmux("send-keys", "-t", second, "Escape")
    desk.status_of(desk.projects[1], "idle")
    idle = desk.status_of(desk.projects[1], "idle")
    mine = [r for r in desk.records() if r["session_id"] == beta["session_id"]]
    (stopped,) = [r for r in mine if r["event"] == "Interrupt"]
    assert (stopped["status"], stopped["detail"]) == ("idle", None)
    assert idle["since"] == stopped["ts"]  # idle at the Interrupt record itself
    approve_a_long_command(desk, second, desk.projects[1], beta)
    # Quit the first window (Ctrl-C on an empty composer quits): its SessionEnd ends the session.
    desk.tmux.tmux("send-keys", "-t", first, "C-c")
    ended = desk.status_of(desk.projects[0], "ended")
    assert ended["reason"] in ("other", "process_gone")
    assert any(
        r["event"] == "SessionEnd" for r in desk.records() if r["session_id"] == alpha["session_id"]
    )


def _texts(body: dict[str, Any]) -> list[str]:
    """The user's messages in one request, in order."""
    return [
        " ".join(c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict))
        for item in body.get("input") or []
        if isinstance(item, dict) and item.get("role") == "user"
    ]


def test_say_to_a_working_session_is_queued_into_its_running_turn(desk: Desk) -> None:
    """Issue 41: what is typed while Codex works waits for the running turn's next step ("Messages
    to be submitted after next tool call"): `say` types it and reports queued, and the model gets
    it in the same turn, in the request after the command's output."""
    config = desk.home / ".config" / "lookout" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[steer]\nenabled = true\nprojects = ["{desk.projects[0]}"]\n')
    window = desk.open(0, "--no-daemon")
    desk.prompt(window, "RUN: sleep 8")
    found = desk.status_of(desk.projects[0], "working", "Bash", 60, "the command running")
    text = "one more thing while you work"
    done = desk.lookout("say", found["session_id"], text, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["via"], out["result"], out["status"]) == ("pane", "queued", "working"), out
    sid = found["session_id"]

    def carrying() -> list[dict[str, Any]]:
        """The model requests with the message as a user message of its own (Codex's title
        request quotes the conversation inside its own prompt: not one of them)."""
        return [b for b in list(desk.mock.bodies) if text in _texts(b)]

    wait_for(carrying, timeout=60, what="the model taking the queued message", every=0.2)
    # Within the running turn: the same request carries the command's call and its output,
    # after the prompt that started the turn, and the message comes last, after the output.
    kinds = [(i.get("type"), i.get("role")) for i in carrying()[0]["input"] if isinstance(i, dict)]
    user = ("message", "user")
    assert kinds[-3:] == [("function_call", None), ("function_call_output", None), user], kinds
    assert _texts(carrying()[0])[-2:] == ["RUN: sleep 8", text]
    desk.status_of(desk.projects[0], "idle")
    records = [r for r in desk.records() if r["session_id"] == sid]
    assert [r["event"] for r in records].count("Stop") == 1, [r["event"] for r in records]
    steered = [r for r in records if r["event"] == "Steered"]
    assert [(s["outcome"], s["steer"]["action"]) for s in steered] == [("queued", "say")]
