"""The away switch with the real OpenAI Codex (issue 41): the interactive TUI in a private tmux,
`approval_policy = "on-request"`, against a loopback Responses API whose model asks to run a
command outside the sandbox (`sandbox_permissions: "require_escalated"`, as Codex's model does),
so Codex asks for approval. Codex runs its PermissionRequest hooks before its own prompt:

- away on: the request waits (the pane says `Running hook`, no prompt); `lookout answer ID allow`
  runs the command; `lookout answer ID deny --message TEXT` blocks it, and the pane shows the
  message;
- away off: Codex's own prompt comes at once, and no request is recorded;
- away turned off while a request waits: the prompt comes, and the hook let go within 1 s of the
  switch (the request's own stamp against the Away event's).

Times come from the records' own stamps; the pane is read until what is waited for shows."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import npm_client
from tests.e2e.test_codex import (  # noqa: F401 - codex_bin: the pinned Codex fixture
    Machine,
    ResponsesAPI,
    codex_bin,
    said,
)
from tests.helpers import wait_for

pytestmark = pytest.mark.e2e

JUSTIFICATION = "the test needs it"


class AskingAPI(ResponsesAPI):
    """POST .../responses: a user message `ESC: <cmd>` gets an `exec_command` call of `<cmd>`
    that asks to run outside the sandbox; the call's output (whatever it is) gets the text
    `done: <cmd>`; anything else (Codex's title request, say) gets `ok`."""

    @staticmethod
    def answer(items: list[dict[str, Any]], rid: str) -> dict[str, Any]:
        last = items[-1] if items else {}
        asked = ""
        for it in items:
            if it.get("type") == "message" and it.get("role") == "user":
                texts = [c.get("text", "") for c in it.get("content") or []]
                asked = next((t for t in texts if t.startswith("ESC: ")), asked)
        if last.get("type") == "function_call_output" and asked:
            text = f"done: {asked[5:]}"
        elif last.get("type") == "message" and asked and asked in json.dumps(last):
            arguments = {
                "cmd": asked[5:],
                "sandbox_permissions": "require_escalated",
                "justification": JUSTIFICATION,
            }
            return {
                "type": "function_call",
                "id": f"fc_{rid}",
                "call_id": f"call_{rid}",
                "name": "exec_command",
                "arguments": json.dumps(arguments),
            }
        else:
            text = "ok"
        return said(rid, text)


@pytest.fixture
def asking_api() -> Iterator[AskingAPI]:
    with AskingAPI() as api:
        yield api


class AwayMachine(Machine):
    """Machine (test_codex.py) whose Codex asks before it runs an escalated command, with
    lookout's `[remote]` on."""

    def __init__(self, root: Path, codex: Path, api: AskingAPI) -> None:
        super().__init__(root, codex, api)  # type: ignore[arg-type]
        text = self.config.read_text().replace(
            "\n[analytics]",
            '\napproval_policy = "on-request"\nsandbox_mode = "workspace-write"\n\n[analytics]',
            1,
        )
        self.config.write_text(f'{text}\n[projects."{self.project}"]\ntrust_level = "trusted"\n')
        config = self.home / ".config" / "lookout" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text("[remote]\nenabled = true\nwait_s = 120\n")
        self.state = self.home / ".local" / "state" / "lookout"

    def said(self, *args: str) -> str:
        """The installed `lookout`'s output, which must succeed (AgentMachine.lookout's result)."""
        done = self.lookout(*args)
        assert done.returncode == 0, f"lookout {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout

    def records(self) -> list[dict[str, Any]]:
        path = self.state / "requests"
        found = [json.loads(p.read_text()) for p in path.glob("*.json")] if path.exists() else []
        return sorted(found, key=lambda r: int(r["created_ms"]))

    def pending(self, cmd: str) -> dict[str, Any]:
        def probe() -> dict[str, Any]:
            for rec in self.records():
                if rec["status"] == "pending" and cmd in rec["detail"]:
                    return rec
            return {}

        return wait_for(probe, 90, f"the request for {cmd!r}")

    def events(self) -> list[dict[str, Any]]:
        lines = (self.state / "events.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    def away_events(self) -> list[dict[str, Any]]:
        return [r for r in self.events() if r["event"] == "Away"]


def _ms(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000


def _runs(screen: npm_client.Tmux, command: str) -> bool:
    """Whether Codex runs `command` now: the pane's process has it below itself."""
    pid = int(screen.tmux("display-message", "-p", "-t", "e2e", "#{pane_pid}").strip())
    todo, found = [pid], []
    while todo:
        parent = todo.pop()
        for task in os.listdir(f"/proc/{parent}/task") if os.path.isdir(f"/proc/{parent}") else []:
            try:
                kids = [
                    int(k) for k in Path(f"/proc/{parent}/task/{task}/children").read_text().split()
                ]
            except OSError:
                continue
            todo += kids
            found += kids
    for kid in found:
        try:
            argv = Path(f"/proc/{kid}/cmdline").read_bytes().decode().split("\0")[:-1]
        except OSError:
            continue
        if " ".join(argv) == command:
            return True
    return False


def ask(screen: npm_client.Tmux, cmd: str) -> None:
    """Type `ESC: cmd` and Enter apart (a burst is taken as a paste: Enter would be a newline)."""
    screen.text(f"ESC: {cmd}")
    time.sleep(0.5)
    screen.keys("Enter")


def test_codex_answered_from_afar_while_away(
    tmp_path: Path,
    codex_bin: Path,  # noqa: F811 - the fixture
    asking_api: AskingAPI,
) -> None:
    machine = AwayMachine(tmp_path / "user", codex_bin, asking_api)
    out = machine.install()
    assert "remote answers are on: a permission request waits while `lookout away` is on" in out
    machine.said("away", "on")
    screen = npm_client.Tmux(machine.root, "codex-away")
    try:
        # Hooks are vetted by the test (in place of /hooks); no daemon: one TUI, its own process.
        screen.start(
            [str(codex_bin), "--no-daemon", "--dangerously-bypass-hook-trust",
             "ESC: touch made_by_allow"],
            machine.env(), machine.project,
        )  # fmt: skip
        # Away: the request waits for an answer from afar, and Codex shows no prompt meanwhile.
        rec = machine.pending("touch made_by_allow")
        assert rec["agent"] == "codex" and rec["allow_always"] is False
        listed = json.loads(machine.said("answer", "--json"))
        assert listed[0]["detail"] == f"touch made_by_allow\ndescription: {JUSTIFICATION}"
        assert listed[0]["offers_allow"] is True
        screen.wait_for("Running hook")
        assert "Would you like to run" not in screen.screen()
        machine.said("answer", rec["id"], "allow")
        wait_for(lambda: (machine.project / "made_by_allow").exists(), 60, "the command run")
        screen.wait_for("done: touch made_by_allow")
        assert "Would you like to run" not in screen.screen()

        # A long command allowed from afar: working within 1 s of the answer (the request's
        # resolved stamp against the RemoteDecision record's), until Esc makes it idle.
        ask(screen, "sleep 40")
        rec = machine.pending("sleep 40")
        machine.said("answer", rec["id"], "allow")
        running = machine.wait_session(rec["session_id"], "working", 60)
        assert (running["detail"], running["summary"]) == ("Bash", "sleep 40"), running
        answered = next(r for r in machine.records() if r["id"] == rec["id"])
        (decided,) = [
            r for r in machine.events() if r["event"] == "RemoteDecision"
            and r["session_id"] == rec["session_id"] and "sleep 40" in r["summary"]
        ]  # fmt: skip
        assert decided["status"] == "working", decided
        lag_ms = _ms(decided["ts"]) - answered["resolved_ms"]
        print(f"allowed from afar: working {lag_ms:.0f} ms after the answer")
        assert 0 <= lag_ms <= 1000, lag_ms
        wait_for(lambda: _runs(screen, "sleep 40"), 60, "the command running")
        screen.keys("Escape")  # during the command: idle at Codex's Interrupt record
        idle = machine.wait_session(rec["session_id"], "idle", 60)
        stopped = [r for r in machine.events() if r["event"] == "Interrupt"][-1]
        assert idle["since"] == stopped["ts"] and stopped["status"] == "idle"

        # Denied from afar, with a message: Codex blocks the command and shows why.
        ask(screen, "touch made_by_deny")
        rec = machine.pending("touch made_by_deny")
        machine.said("answer", rec["id"], "deny", "--message", "not now, use staging")
        shown = screen.wait_for("Blocked by hook")
        wait_for(lambda: "not now, use staging" in screen.screen(), 30, "the message shown")
        screen.wait_for("done: touch made_by_deny")
        assert not (machine.project / "made_by_deny").exists(), shown

        # Away turned off while a request waits: released at once, Codex's own prompt asks.
        ask(screen, "touch made_by_release")
        rec = machine.pending("touch made_by_release")
        machine.said("away", "off")
        screen.wait_for("Would you like to run")
        off_ms = machine.away_events()[-1]["away"]["since_ms"]
        done = next(r for r in machine.records() if r["id"] == rec["id"])
        assert done["status"] == "released"
        assert 0 <= done["resolved_ms"] - off_ms <= 1000, (done["resolved_ms"], off_ms)
        screen.keys("y")  # answered at the terminal
        wait_for(lambda: (machine.project / "made_by_release").exists(), 60, "the command run")
        screen.wait_for("done: touch made_by_release")

        # Present (away off): Codex's own prompt at once, and no request is recorded for it.
        ask(screen, "touch made_by_prompt")
        screen.wait_for("Would you like to run")
        assert not [r for r in machine.records() if "made_by_prompt" in r["detail"]]
        screen.keys("Escape")
    finally:
        screen.kill()
    assert machine.errors() == ""
