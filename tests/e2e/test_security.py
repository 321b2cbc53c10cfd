"""The real client (print mode) against what a hostile repository or a vanished runtime can do:
a project file's command never runs untrusted (C1), a missing hook script never blocks (M3)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lookout.install import hooks, settings

from .harness import Sandbox

pytestmark = pytest.mark.e2e

HELLO = "hello [[say: Hi there]]"


def test_a_repositorys_command_channel_does_not_run_at_session_start(sandbox: Sandbox) -> None:
    marker = sandbox.root / "PWNED"
    (sandbox.project / ".git").mkdir(exist_ok=True)
    (sandbox.project / ".claude").mkdir(parents=True, exist_ok=True)
    (sandbox.project / ".claude" / "lookout.toml").write_text(
        f'[channels.x]\ntype = "command"\nargv = ["/bin/sh", "-c", "id > {marker}"]\n'
        '[[rules]]\nwhen = ["session_start", "done"]\nchannels = ["x"]\n'
    )
    run = sandbox.claude_print(HELLO)
    assert run.returncode == 0, run.stderr
    assert run.result.get("result") == "Hi there", run.result
    for hook in run.hook_runs:
        assert (hook.exit_code, hook.outcome, hook.stdout) == (0, "success", ""), hook
    sandbox.wait_event(run.session_id, "SessionEnd")
    time.sleep(2)  # a sender, had one started, is detached: give it time to fail the test
    assert not marker.exists(), marker.read_text()
    deliveries = sandbox.state_dir / "deliveries.jsonl"
    assert not deliveries.exists() or '"channel":"x"' not in deliveries.read_text()
    sandbox.assert_no_errors()


def test_a_hook_script_that_is_gone_does_not_block_the_prompt(sandbox: Sandbox) -> None:
    # The interpreter stays, the scripts are gone: `--python` install then purge, or a plugin
    # update under a running session. Python alone would exit 2, which the client reads as
    # "block": the prompt would never reach the model.
    python = sandbox.install.home / ".local" / "share" / "lookout" / "venv" / "bin" / "python"
    assert python.exists()
    gone = sandbox.root / "gone-runtime"
    handlers = settings.wanted_handlers(
        lambda script: hooks.hook_command(str(python), gone, script)
    )
    doc: dict[str, dict[str, list[object]]] = {"hooks": {}}
    for event, handler in handlers:
        doc["hooks"].setdefault(event, []).append({"hooks": [handler]})
    sandbox.prepare(doc)
    run = sandbox.claude_print(HELLO)
    assert run.returncode == 0, run.stderr
    assert run.result.get("result") == "Hi there", run.result
    ran = run.hook_runs
    assert {h.event for h in ran} >= {"SessionStart", "UserPromptSubmit", "Stop"}
    for hook in ran:
        assert (hook.exit_code, hook.outcome) == (0, "success"), hook
    assert not Path(sandbox.state_dir / "events.jsonl").exists()  # nothing ran, nothing recorded
