"""The plugin path: `claude --plugin-dir <checkout>` (no install.py, no settings hooks) records
statuses the same way as an install."""

from __future__ import annotations

import pytest

from .harness import CHECKOUT, Sandbox, describe, sequence

pytestmark = pytest.mark.e2e


def test_plugin_dir_records_the_same_statuses(sandbox: Sandbox) -> None:
    sandbox.prepare(settings={})  # no hooks in settings.json: only the plugin's
    run = sandbox.claude_print(
        "[[bash: echo plugin > out.txt]]", "--allowedTools", "Bash", "--plugin-dir", str(CHECKOUT)
    )
    assert run.returncode == 0, run.stderr
    hooks = run.hook_runs
    assert {h.name for h in hooks} >= {"SessionStart:startup", "UserPromptSubmit", "Stop"}, hooks
    for hook in hooks:
        assert (hook.exit_code, hook.outcome, hook.stdout) == (0, "success", ""), hook
    sandbox.wait_event(run.session_id, "SessionEnd")
    sandbox.assert_no_errors()
    rows = sandbox.records(run.session_id)
    assert sequence(rows) == [
        ("SessionStart", "idle", None),
        ("UserPromptSubmit", "working", None),
        ("PreToolUse", "working", None),
        ("PostToolUse", "working", None),
        ("PostToolBatch", "working", None),
        ("Stop", "idle", None),
        ("SessionEnd", "ended", "other"),
    ], describe(rows)
    shown = sandbox.session_status(run.session_id)
    assert shown["status"] == "ended", shown
