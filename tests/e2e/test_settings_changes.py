"""What install.py tells a user about a running Claude Code (2.1.332), proven with the real
client: a running session picks up install and uninstall within seconds, without a restart, and
keeps lookout's hooks when it writes the settings file itself; and `--uninstall --purge` leaves no
hook behind in a project installed from elsewhere (no `exec: ...: not found` on every event)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from lookout import hookspec

from ..receivers import require
from .harness import ClaudePane, Install, Sandbox, run_install_py, wait_for
from .mock_api import MockAPI

pytestmark = pytest.mark.e2e
N = len(hookspec.EVENTS)


def sandbox_for(root: Path, claude_bin: Path, mock_api: MockAPI) -> Sandbox:
    home = root / "home"
    (home / "project").mkdir(parents=True)
    install = Install(home, home / ".claude" / "settings.json", (str(home / ".local/bin/lookout"),))
    return Sandbox(root, claude_bin, install, mock_api.url, isolated_paths=False)


def installed(sb: Sandbox, *args: str) -> str:
    done = run_install_py(sb.home, *args, cwd=sb.project)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return done.stdout


def prompts(sb: Sandbox) -> int:
    return sum(1 for r in sb.records() if r["event"] == "UserPromptSubmit")


def test_a_running_client_reloads_and_keeps_our_hooks(
    tmp_path: Path, claude_bin: Path, mock_api: MockAPI
) -> None:
    require("tmux")
    sb = sandbox_for(tmp_path / "u", claude_bin, mock_api)
    installed(sb)  # the runtime...
    installed(sb, "--uninstall")  # ...but no hooks: install had created the file, so it goes
    assert not sb.install.settings.exists()
    sb.trust_project(idle_ms=600_000)  # no idle reminders in the way
    with ClaudePane(sb, "--permission-mode", "manual") as pane:
        pane.wait_screen("\u276f", 20)
        time.sleep(1)
        pane.type("hello")
        pane.wait_screen("OK from mock")
        assert sb.records() == []

        out = installed(sb)
        pid = pane.tmux("display-message", "-p", "-t", "e2e", "#{pane_pid}").strip()
        note = next(line for line in out.splitlines() if "Claude Code is running" in line)
        assert note.startswith("note: Claude Code is running (pid ") and pid in note, out
        assert note.endswith("it picks up the change within a few seconds, no restart needed"
                             " (checked with Claude Code 2.1.332)")  # fmt: skip
        time.sleep(3)
        pane.type("recorded now?")
        wait_for(lambda: prompts(sb) == 1, 10, "the prompt after install to be recorded")

        assert "Claude Code is running" not in installed(sb)  # nothing changed: nothing said
        installed(sb, "--uninstall")
        time.sleep(3)
        pane.type("and now?")
        pane.wait_screen("and now?")
        time.sleep(3)
        assert prompts(sb) == 1, "the session still ran lookout's hooks after uninstall"

        # The client writes settings.local.json itself ("don't ask again"): ours stay.
        installed(sb, "--scope", "local")
        local = sb.project / ".claude" / "settings.local.json"
        time.sleep(3)
        pane.type("[[bash: git --version]] [[say: done]]")
        pane.wait_screen("Do you want to proceed?")
        session = sb.records()[-1]["session_id"]
        sb.wait_event(session, "PermissionRequest", timeout=10)
        time.sleep(1.5)  # the dialog takes keys only once it has settled
        pane.keys("Down")
        pane.wait_screen("\u276f 2. Yes, and don")
        time.sleep(0.5)
        assert "\u276f 2. Yes, and don" in pane.screen()
        pane.keys("Enter")
        try:
            wait_for(lambda: "permissions" in json.loads(local.read_text()), 10, "its write")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the screen:\n{pane.screen()}") from None
        data = json.loads(local.read_text())
        assert any(rule.startswith("Bash(git") for rule in data["permissions"]["allow"]), data
        ours = [h for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
        assert len(ours) == N
        sb.wait_event(session, "PostToolUse", timeout=10)


def test_purge_leaves_no_hook_behind_in_a_project_installed_from_elsewhere(
    tmp_path: Path, claude_bin: Path, mock_api: MockAPI
) -> None:
    sb = sandbox_for(tmp_path / "u", claude_bin, mock_api)
    installed(sb, "--scope", "local")  # from inside the project, as the review did
    run = sb.claude_print("[[say: with hooks]]")
    assert run.returncode == 0 and [h.exit_code for h in run.hook_runs] == [0] * len(run.hook_runs)
    assert run.hook_runs, "the project's hooks ran"

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run_install_py(sb.home, "--uninstall", "--purge", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert f"removed ~/project/.claude/settings.local.json ({N} hooks; install had created" in (
        done.stdout
    )
    assert not (sb.project / ".claude").exists()
    assert not (sb.home / ".local" / "share" / "lookout").exists()
    run = sb.claude_print("[[say: after purge]]")
    assert run.returncode == 0, run.stderr
    assert run.hook_runs == []  # no hook left to fail on every event
