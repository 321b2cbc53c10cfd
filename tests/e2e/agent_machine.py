"""What the real-client tests of the other agents (Codex, Gemini CLI, OpenCode) share: a user's
machine (a fresh HOME beside the test's own, the user's config file for the client), lookout
installed into it by `install.py --agent NAME`, and the installed `lookout status --json`, its
events file and its errors log read back. Each agent's test file subclasses AgentMachine with its
client's environment, its config file and its headless turn (test_agents.py runs that turn for
every agent)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.helpers import ROOT


class AgentMachine:
    agent = ""  # install.py's --agent
    user_file: Path  # the client's config file the user owns: install and uninstall keep it

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "project"

    def env(self) -> dict[str, str]:
        raise NotImplementedError

    def turn(self, prompt: str) -> subprocess.CompletedProcess[str]:
        """One headless turn of the client in the project (it ends its session or exits)."""
        raise NotImplementedError

    def install(self, *args: str) -> str:
        done = subprocess.run(
            [
                sys.executable,
                "install.py",
                "--agent",
                self.agent,
                "--python",
                sys.executable,
                *args,
            ],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        return done.stdout

    def uninstall(self) -> str:
        done = subprocess.run(
            [sys.executable, "install.py", "--agent", self.agent, "--uninstall"],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def lookout(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The installed `lookout` command, as the user runs it."""
        return subprocess.run(
            [str(self.home / ".local" / "bin" / "lookout"), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )

    def status(self) -> list[dict[str, Any]]:
        done = self.lookout("status", "--json", "--all")
        assert done.returncode == 0, done.stderr
        sessions: list[dict[str, Any]] = json.loads(done.stdout)["sessions"]
        return sessions

    def wait(self, status: str, reason: str | None = None, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        shown: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            shown = self.status()
            for s in shown:
                if s["status"] == status and (reason is None or s["reason"] == reason):
                    return s
            time.sleep(0.2)
        raise AssertionError(f"no {status}/{reason} session in lookout status: {shown}")

    def records(self) -> list[dict[str, Any]]:
        path = self.home / ".local" / "state" / "lookout" / "events.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def errors(self) -> str:
        log = self.home / ".local" / "state" / "lookout" / "errors.log"
        return log.read_text() if log.exists() else ""
