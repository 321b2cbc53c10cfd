"""A click on the macOS alert's Focus action (alerter stand-in), from the real hook scripts:
the sender jumps the attached tmux client to the session's pane, as on Linux, and brings the
terminal app forward (`open -b`, a stand-in)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import PAYLOADS, ROOT, wait_for, write_config
from tests.jump.world import World
from tests.platform.standins import standins

CONFIG = """
[channels.desktop]
type = "desktop"
[[rules]]
when = ["permission"]
channels = ["desktop"]
"""


@pytest.fixture
def world() -> Iterator[World]:
    with World() as w:
        yield w


def deliveries(state: Path) -> list[dict[str, object]]:
    path = state / "deliveries.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_a_focus_click_jumps_to_the_pane_and_raises_the_terminal(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_dir: Path
) -> None:
    write_config(CONFIG)
    box = standins(tmp_path, monkeypatch, "macos", "alerter", "open", "ps")
    click = tmp_path / "click"
    monkeypatch.setenv("LOOKOUT_STANDIN_CLICK", str(click))
    monkeypatch.setenv("__CFBundleIdentifier", "com.apple.Terminal")
    client = world.attach("alpha")
    pane = world.pane("beta:1.1")
    project = f"mac-{uuid.uuid4().hex[:6]}"
    body = {**json.loads((PAYLOADS / "PermissionRequest-Bash.json").read_text())}
    body["cwd"] = f"/w/{project}"
    pid = world.tmux("display-message", "-p", "#{pid}")
    env = {**os.environ, "TMUX": f"{world.socket},{pid},1", "TMUX_PANE": pane}
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "hooks" / "permission_request.py")],
        input=json.dumps(body).encode(),
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    (argv,) = wait_for(lambda: box.argvs("alerter"), what="the alert")
    assert argv[argv.index("-actions") + 1] == "Focus"
    assert argv[argv.index("-title") + 1] == f"{project} · needs permission"
    assert world.where(client).startswith("alpha:")

    click.write_text("Focus\n")  # the user clicks Focus; alerter prints it
    clicked = wait_for(
        lambda: [d for d in deliveries(state_dir) if d["result"] == "clicked"],
        what="the click",
    )
    assert [d["detail"] for d in clicked] == [
        f"Focus: tmux beta:1.{pane} on client {client}; open -b com.apple.Terminal"
    ]
    assert world.where(client) == f"beta:1.{pane}"
    assert box.argvs("open") == [["-b", "com.apple.Terminal"]]
