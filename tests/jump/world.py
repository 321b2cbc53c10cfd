"""A private tmux server with two tmux sessions, several windows and split panes, clients attached
from pseudo-terminals (`script`), and agent sessions recorded by the real hook scripts run inside
those panes (so TMUX and TMUX_PANE are the panes' own)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.helpers import PAYLOADS, ROOT
from tests.helpers import lookout as run_lookout
from tests.receivers import TmuxServer, require


class World(TmuxServer):
    """alpha: window 0 (%0), window 1 split in two; beta: window 0, window 1 split in two."""

    def __enter__(self) -> World:
        require("tmux", "script")
        super().__enter__()
        self.socket = self.tmux("display-message", "-p", "#{socket_path}")
        self.tmux("rename-session", "-t", "main", "alpha")
        self.tmux("new-window", "-t", "alpha")
        self.tmux("split-window", "-t", "alpha:1")
        self.tmux("new-session", "-d", "-s", "beta", "-x", "80", "-y", "24")
        self.tmux("new-window", "-t", "beta")
        self.tmux("split-window", "-h", "-t", "beta:1")
        self.clients_by_name: dict[str, subprocess.Popen[bytes]] = {}
        return self

    def pane(self, target: str) -> str:
        return self.tmux("display-message", "-p", "-t", target, "#{pane_id}")

    def attach(self, session: str = "alpha") -> str:
        """Attach a client from a pseudo-terminal; return its name (its tty)."""
        before = set(self.tmux("list-clients", "-F", "#{client_name}").split())
        proc = subprocess.Popen(
            ["script", "-qfc", f"tmux -L {self.name} attach -t {session}", "/dev/null"],
            env={k: v for k, v in self.env.items() if k != "TMUX"} | {"TERM": "xterm"},
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.clients.append(proc)
        deadline = time.monotonic() + 10
        while True:
            new = set(self.tmux("list-clients", "-F", "#{client_name}").split()) - before
            if new:
                name = new.pop()
                self.clients_by_name[name] = proc
                return name
            if time.monotonic() > deadline:
                raise RuntimeError("tmux client did not attach")
            time.sleep(0.05)

    def press(self, client: str, keys: bytes) -> None:
        """Type into the client's terminal."""
        stdin = self.clients_by_name[client].stdin
        assert stdin is not None
        stdin.write(keys)
        stdin.flush()

    def where(self, client: str) -> str:
        """session:window.%pane the client shows. (`display -p -c CLIENT` would expand the format
        for the best client's pane, not CLIENT's, in tmux 3.3a; list-clients expands per client.)"""
        fmt = "#{client_name} #{session_name}:#{window_index}.#{pane_id}"
        for line in self.tmux("list-clients", "-F", fmt).splitlines():
            name, _, shown = line.partition(" ")
            if name == client:
                return shown
        raise AssertionError(f"client {client} is not attached")

    def run_in(self, pane: str, command: str, done: Path, timeout_s: float = 20.0) -> None:
        """Run a shell command inside a pane and wait for it to finish (it touches `done`)."""
        self.tmux("send-keys", "-t", pane, f"{command}; touch {shlex.quote(str(done))}", "Enter")
        deadline = time.monotonic() + timeout_s
        while not done.exists():
            if time.monotonic() > deadline:
                screen = self.tmux("capture-pane", "-p", "-t", pane)
                raise RuntimeError(f"command in {pane} did not finish:\n{screen}")
            time.sleep(0.05)

    def hook(self, pane: str, tmp: Path, stem: str, **fields: Any) -> None:
        """Run the real hook script for payload `stem` inside `pane`."""
        body = {**json.loads((PAYLOADS / f"{stem}.json").read_text()), **fields}
        event = body["hook_event_name"]
        script = ROOT / "hooks" / f"{_snake(event)}.py"
        data = tmp / f"{stem}-{pane[1:]}-{time.monotonic_ns()}.json"
        data.write_text(json.dumps(body))
        q = shlex.quote
        command = f"{q(sys.executable)} -I -S {q(str(script))} < {q(str(data))}"
        self.run_in(pane, command, data.with_suffix(".done"))


def _snake(event: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in event).lstrip("_")


def lookout(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """The real entry point."""
    return run_lookout(
        *args, cwd=cwd, env=env if env is not None else os.environ.copy(), timeout=60
    )
