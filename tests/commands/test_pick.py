"""`lookout pick` (a tmux menu) and the tmux-setup bindings, pressed in a real attached client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lookout import runner
from tests.helpers import payload, short_tmpdir, wait_for
from tests.jump.world import World, lookout

pytestmark = pytest.mark.usefixtures("no_notifications")

API = "aaaa1111-0000-4000-8000-000000000001"
WEB = "bbbb2222-0000-4000-8000-000000000002"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with World() as w:
        w.api = w.pane("beta:1.1")  # type: ignore[attr-defined]
        w.web = w.pane("alpha:1.0")  # type: ignore[attr-defined]
        w.hook(w.api, tmp_path, "PermissionRequest-Bash", session_id=API, cwd="/w/api")  # type: ignore[attr-defined]
        w.hook(w.web, tmp_path, "Stop", session_id=WEB, cwd="/w/web")  # type: ignore[attr-defined]
        yield w


def test_print_lists_attention_first_with_number_keys(world: World, tmp_path: Path) -> None:
    # A third session outside tmux: listed, greyed out.
    body = dict(payload("PreToolUse-Bash"), session_id="dddd", cwd="/w/doc")
    runner.record(
        json.dumps(body).encode(),
        None,
        int(time.time() * 1000),
        os.environ["LOOKOUT_STATE_DIR"],
        {},
    )
    out = lookout("pick", "--print")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        f"1  api  attention permission  touch t.txt       → beta:1.{world.api}",  # type: ignore[attr-defined]
        "2  doc  working               cat ./nosuch.txt  → (not in tmux)",
        f"3  web  idle                  OK from mock      → alpha:1.{world.web}",  # type: ignore[attr-defined]
    ]


def test_two_sessions_of_one_project_are_told_apart_by_their_short_ids(world: World) -> None:
    # issue 22 item 17: OpenCode's ids share a time prefix; the menu names each uniquely.
    for n, sid in enumerate(("ses_de99b7c6aa", "ses_de99b067bb")):
        body = dict(payload("Stop"), session_id=sid, cwd="/w/oc")
        runner.record(json.dumps(body).encode(), None, int(time.time() * 1000) - n * 1000,
                      os.environ["LOOKOUT_STATE_DIR"], {})  # fmt: skip
    out = lookout("pick", "--print")
    assert out.returncode == 0, out.stderr
    names = [line.split()[1:3] for line in out.stdout.splitlines()]
    assert ["oc", "ses_de99b7"] in names and ["oc", "ses_de99b0"] in names
    assert ["api", "attention"] in names  # a project alone in the list keeps its plain name


def test_choosing_from_the_menu_switches_the_client(world: World) -> None:
    client = world.attach("alpha")
    proc = subprocess.Popen(
        [sys.executable, "-m", "lookout", "pick", "--client", client],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.7)  # the menu is drawn in the client
    world.press(client, b"1")
    out, err = proc.communicate(timeout=15)
    assert (proc.returncode, out, err) == (0, "", "")
    assert world.where(client) == f"beta:1.{world.api}"  # type: ignore[attr-defined]


def test_labels_cannot_run_tmux_formats(world: World, tmp_path: Path) -> None:
    canary = short_tmpdir("lk") / "p"  # short: the label is cut at 72
    world.hook(
        world.web,
        tmp_path,
        "Stop",
        session_id=WEB,
        cwd="/w/web",  # type: ignore[attr-defined]
        last_assistant_message=f"#(touch {canary}) \x1b[31mred",
    )
    out = lookout("pick", "--print")
    assert "\x1b" not in out.stdout  # control characters never reach tmux or the terminal
    assert f"web  idle                  #(touch {canary})  [31mred" in out.stdout
    client = world.attach("alpha")
    proc = subprocess.Popen([sys.executable, "-m", "lookout", "pick", "-c", client])
    time.sleep(0.7)
    world.press(client, b"\x1b")  # Escape closes the menu
    assert proc.wait(15) == 0
    time.sleep(0.3)
    assert not canary.exists()


def test_pick_outside_tmux_without_a_client_says_how(world: World) -> None:
    out = lookout("pick")
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "error: lookout pick shows a tmux menu: run it inside tmux",
        "hint: or bind it to a key: lookout tmux-setup --apply (prefix A)",
    ]


def test_the_setup_bindings_jump_and_pick_from_the_keyboard(world: World, tmp_path: Path) -> None:
    conf = tmp_path / "tmux.conf"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    out = lookout("tmux-setup", "--apply", "--file", str(conf), env=env)
    assert out.returncode == 0, out.stderr
    assert f"{Path(sys.executable).parent}/lookout jump" in conf.read_text()
    world.tmux("source-file", str(conf))
    client = world.attach("alpha")
    world.press(client, b"\x02a")  # prefix a: the session waiting longest
    wait_for(lambda: world.where(client) == f"beta:1.{world.api}")  # type: ignore[attr-defined]
    world.press(client, b"\x02A")  # prefix A: the menu; 2 is web
    time.sleep(1.0)
    world.press(client, b"2")
    wait_for(lambda: world.where(client) == f"alpha:1.{world.web}")  # type: ignore[attr-defined]
