"""`python3 install.py` run exactly as a user runs it, in a fresh HOME, then a real print-mode
session: its hooks run cleanly and `lookout status --json` (the installed command) shows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .harness import CHECKOUT, Install, Sandbox, describe, run_install_py, sequence
from .mock_api import MockAPI

pytestmark = pytest.mark.e2e


def test_install_py_in_a_fresh_home_then_a_real_session(
    tmp_path: Path, claude_bin: Path, mock_api: MockAPI
) -> None:
    if not (CHECKOUT / "install.py").exists():
        pytest.fail("install.py is missing from the checkout")
    root = tmp_path / "user"  # the autouse isolated_env already owns tmp_path/home
    home = root / "home"
    home.mkdir(parents=True)
    done = run_install_py(home)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    settings = home / ".claude" / "settings.json"
    lookout = home / ".local" / "bin" / "lookout"
    assert lookout.exists(), done.stdout
    registered = json.loads(settings.read_text())["hooks"]
    assert {"SessionStart", "Stop", "PermissionRequest", "SessionEnd"} <= set(registered)

    # No LOOKOUT_* variables: state and config are found from HOME, as on a user's machine.
    install = Install(home, settings, (str(lookout),))
    sandbox = Sandbox(root, claude_bin, install, mock_api.url, isolated_paths=False)
    sandbox.prepare()
    run = sandbox.claude_print("[[bash: echo installed]]", "--allowedTools", "Bash")
    assert run.returncode == 0, run.stderr
    for hook in run.hook_runs:
        assert (hook.exit_code, hook.outcome, hook.stdout) == (0, "success", ""), hook
    sandbox.wait_event(run.session_id, "SessionEnd")
    sandbox.assert_no_errors()
    rows = sandbox.records(run.session_id)
    assert sequence(rows)[:2] == [
        ("SessionStart", "idle", None),
        ("UserPromptSubmit", "working", None),
    ], describe(rows)
    assert sequence(rows)[-2:] == [("Stop", "idle", None), ("SessionEnd", "ended", "other")], (
        describe(rows)
    )
    shown = sandbox.session_status(run.session_id)
    assert shown["status"] == "ended", shown
    assert shown["cwd"] == str(sandbox.project), shown
