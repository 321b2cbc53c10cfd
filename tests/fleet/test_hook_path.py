"""The fleet never touches the hook path: with a [fleet] configured (and a bridge possibly
running), a hook that records and one that notifies load neither lookout.fleet nor paho."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import write_config
from tests.test_layout import HOOK_PATH, modules_after_hook


@pytest.mark.parametrize(
    ("script", "payload"),
    [
        ("pre_tool_use.py", "PreToolUse-Bash.json"),
        ("permission_request.py", "PermissionRequest-Bash.json"),
    ],
)
def test_hooks_never_load_the_fleet(
    tmp_path: Path, state_dir: Path, script: str, payload: str
) -> None:
    write_config(
        '[fleet]\nmqtt = "mqtt://127.0.0.1:1883"\nhome_assistant = true\n'
        '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["permission"]\nchannels = ["d"]\n'
    )
    loaded = modules_after_hook(tmp_path, script, payload)
    assert not {m for m in loaded if m.startswith(("lookout.fleet", "paho"))}
    assert "ssl" not in loaded and "socket" not in loaded
    if script == "pre_tool_use.py":
        assert {m for m in loaded if m.startswith("lookout")} == HOOK_PATH
    assert (state_dir / "events.jsonl").exists()
