"""lookout.boundary: what reaches the terminal, and how each failure of a command line ends."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from lookout.boundary import guarded, socket_path, unsafe_socket, visible
from lookout.errors import LookoutError
from tests.helpers import short_tmpdir


def test_visible_escapes_every_control_character() -> None:
    assert visible("a\x1b[31mb\x07\x00\x7f\x9b\u202e\tc\nd") == (
        "a\\x1b[31mb\\x07\\x00\\x7f\\x9b\\u202e\\x09c\\x0ad"
    )
    assert visible("line1\nline2\x1b", keep_newlines=True) == "line1\nline2\\x1b"
    assert visible("plain ünïcode · ok") == "plain ünïcode · ok"


def test_guarded_maps_each_failure_to_its_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    def fails(exc: BaseException) -> int:
        raise exc

    assert guarded(lambda: 0) == 0
    assert guarded(lambda: fails(LookoutError("no \x1b[2J", hint="try this"))) == 1
    assert capsys.readouterr().err == "error: no \\x1b[2J\nhint: try this\n"
    assert guarded(lambda: fails(KeyboardInterrupt())) == 130


# -- socket_path: every component of a socket's path (issue 38, T1; the real tmux and a second
# uid: tests/jump/test_jump.py) ----------------------------------------------------------------


@pytest.fixture
def tree() -> Iterator[Path]:
    base = short_tmpdir("lk-sp-")
    try:
        yield base
    finally:
        shutil.rmtree(base)


def bound(path: Path) -> str:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()
    return str(path)


def test_a_socket_of_ones_own_comes_back_with_no_symlink_left(tree: Path) -> None:
    (tree / "real").mkdir()
    bound(tree / "real" / "s")
    (tree / "link").symlink_to("real")  # relative, as the kernel follows it
    (tree / "up").symlink_to(tree / "real" / "..")
    for path in (tree / "real/s", tree / "link/s", tree / "up/link/s", tree / "real/../real/s"):
        assert socket_path(str(path), "it") == (str(tree / "real" / "s"), None)
    assert unsafe_socket(str(tree / "link" / "s"), "it") is None


def test_what_another_user_could_redirect_is_refused(tree: Path) -> None:
    (tree / "open").mkdir()
    (tree / "open").chmod(0o777)  # not sticky: anyone may rename what is in it
    (tree / "open" / "d").mkdir()
    bound(tree / "open" / "d" / "s")
    assert socket_path(str(tree / "open/d/s"), "it")[1] == (
        f"{tree / 'open'} can be written by another user"
    )
    (tree / "real").mkdir()
    bound(tree / "real" / "s")
    (tree / "real" / "last").symlink_to("s")  # the socket itself, never a link to it
    assert socket_path(str(tree / "real/last"), "it")[1] == f"{tree / 'real/last'} is not a socket"
    (tree / "loop").symlink_to("loop")
    assert socket_path(str(tree / "loop/s"), "it")[1] == (
        f"it {tree / 'loop/s'} goes through more than 40 symlinks"
    )
    assert socket_path("rel/s", "it") == ("rel/s", "it 'rel/s' is not an absolute path")


def test_a_socket_not_there_is_the_server_gone_only_where_no_one_else_can_make_it(
    tree: Path,
) -> None:
    assert socket_path(str(tree / "gone" / "s"), "it") == (str(tree / "gone" / "s"), None)
    assert unsafe_socket(str(tree / "gone" / "s"), "it") == f"it {tree / 'gone/s'} is not there"
    (tree / "sticky").mkdir()
    (tree / "sticky").chmod(0o1777)
    assert socket_path(str(tree / "sticky/tmux-0/s"), "it")[1] == (
        f"it {tree / 'sticky/tmux-0/s'}: {tree / 'sticky/tmux-0'} is not there, and others can"
        f" write {tree / 'sticky'}"
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to another uid")
def test_in_a_sticky_directory_only_an_entry_of_ones_own_or_roots_is_gone_through(
    tree: Path,
) -> None:
    (tree / "sticky").mkdir()
    (tree / "sticky").chmod(0o1777)
    (tree / "sticky" / "theirs").mkdir()
    os.chown(tree / "sticky" / "theirs", 2002, 2002)
    (tree / "sticky" / "theirs").chmod(0o755)
    assert socket_path(str(tree / "sticky/theirs/s"), "it")[1] == (
        f"{tree / 'sticky/theirs'} is owned by uid 2002, in {tree / 'sticky'}, which others can"
        " write"
    )
    (tree / "mine").mkdir()
    bound(tree / "mine" / "s")
    (tree / "sticky" / "link").symlink_to(tree / "mine")
    assert socket_path(str(tree / "sticky/link/s"), "it") == (str(tree / "mine" / "s"), None)
    os.lchown(tree / "sticky" / "link", 2002, 2002)
    assert socket_path(str(tree / "sticky/link/s"), "it")[1] == (
        f"{tree / 'sticky/link'} is a symlink owned by uid 2002, not by you or root"
    )
