"""The real client waiting on a permission in its tmux pane; the user's client is attached to
another tmux session of that server; the installed `lookout jump` brings it to Claude's pane."""

from __future__ import annotations

import subprocess
import time

import pytest

from ..receivers import require
from .harness import CHECKOUT, ClaudePane, Sandbox, wait_for

pytestmark = pytest.mark.e2e


def where(pane: ClaudePane, client: str) -> str:
    fmt = "#{client_name} #{session_name}:#{window_index}.#{pane_id}"
    for line in pane.tmux("list-clients", "-F", fmt).splitlines():
        name, _, shown = line.partition(" ")
        if name == client:
            return shown
    return ""


def test_jump_brings_the_client_to_the_waiting_claude(sandbox: Sandbox) -> None:
    require("tmux", "script")
    sandbox.trust_project(idle_ms=2000)
    with ClaudePane(sandbox, "--permission-mode", "manual") as pane:
        session = pane.ready()
        pane.tmux("new-session", "-d", "-s", "elsewhere")
        tmux_env = {"PATH": pane.env["PATH"], "TMUX_TMPDIR": str(pane.tmpdir), "TERM": "xterm"}
        attached = subprocess.Popen(
            ["script", "-qfc", f"tmux -L {pane.name} attach -t elsewhere", "/dev/null"],
            env=tmux_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            client = wait_for(
                lambda: pane.tmux("list-clients", "-F", "#{client_name}").strip() or None,
                10,
                "an attached client",
            )
            assert where(pane, client).startswith("elsewhere:")
            pane.type("[[bash: touch lookout-e2e-jump]]")
            pane.wait_screen("Do you want to proceed?")
            sandbox.wait_event(session, "PermissionRequest", timeout=5)

            shown = sandbox.session_status(session)
            claude = pane.pane_id
            assert shown["tmux"] == {
                "socket": shown["tmux"]["socket"],
                "pane": claude,
                "session": "e2e",
                "window": 0,
            }
            assert shown["tmux"]["socket"].endswith(f"/{pane.name}")
            done = subprocess.run(
                [*sandbox.install.lookout, "jump"],
                cwd=CHECKOUT,
                env=sandbox.env(),
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert (done.returncode, done.stderr) == (0, ""), done.stderr
            assert where(pane, client) == f"e2e:0.{claude}"
            # "1. Yes". The client can drop an Enter that comes while it redraws the dialog
            # (here: right after the client switched panes), so press again until it is taken.
            for attempt in range(5):
                pane.keys("Enter")
                try:
                    sandbox.wait_event(session, "Stop", timeout=6 if attempt < 4 else 15)
                    break
                except AssertionError:
                    if attempt == 4:
                        raise
            time.sleep(0.2)
            sandbox.assert_no_errors()
        finally:
            attached.kill()
            attached.wait(5)
