"""The e2e harness itself: every Unix socket the tests create has a short path, whatever the
names of pytest's temporary folders and of $TMPDIR (a socket's path holds at most 107 bytes)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.helpers import short_tmpdir
from tests.receivers import require

from .harness import ClaudePane, Install, Sandbox

pytestmark = pytest.mark.real  # a real tmux server (no client: `cat` stands in for it)

SUN_PATH_MAX = 107


def long_folder(tmp_path: Path) -> Path:
    """A private folder whose path is about 150 bytes, as a CI checkout's basetemp can be."""
    folder = tmp_path / ("x" * 60) / ("y" * 60)
    folder.mkdir(parents=True, mode=0o700)
    return folder


def test_a_pane_under_a_long_temporary_folder_gets_a_short_socket(tmp_path: Path) -> None:
    require("tmux")
    root = long_folder(tmp_path)
    (root / "home").mkdir()
    install = Install(root, root / "settings.json", ("lookout",))
    sandbox = Sandbox(root, Path("/bin/cat"), install, "http://127.0.0.1:9")
    with ClaudePane(sandbox) as pane:
        assert pane.socket.is_socket()
        assert len(os.fsencode(pane.socket)) <= SUN_PATH_MAX - 20, pane.socket
        assert pane.tmux("list-sessions", "-F", "#{session_name}").split() == ["e2e"]
    assert not pane.tmpdir.exists()


def test_short_tmpdir_leaves_a_long_tmpdir_for_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(long_folder(tmp_path)))
    made = short_tmpdir("lk-")
    try:
        assert made.parent == Path("/tmp"), made
        assert made.stat().st_mode & 0o777 == 0o700
    finally:
        made.rmdir()
