"""lookout.paths' os-free helpers answer as os.path does for the paths lookout meets (the
notifying hook uses them instead of loading `os`)."""

from __future__ import annotations

import os
import os.path
from pathlib import Path

import pytest

from lookout import paths


@pytest.mark.parametrize(
    "path",
    ["/", "//", "/a/b", "/a/b/", "/a/./b", "/a/../b", "/../a", "/a/b/../../..", "/a//b/.", "/a/.."],
)
def test_normpath_is_os_paths_for_absolute_paths(path: str) -> None:
    expected = os.path.normpath(path)
    # POSIX keeps a leading "//" (implementation-defined); lookout's paths never start so.
    assert paths.normpath(path) == (
        "/" + expected.lstrip("/") if expected.startswith("//") else expected
    )


@pytest.mark.parametrize("path", ["~", "~/", "~/work/*", "/abs/~", "rel/~", "", "~root", "~root/x"])
@pytest.mark.parametrize("home", ["/home/dev", "/home/dev/", "/"])
def test_expanduser_is_os_paths(path: str, home: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", home)
    assert paths.expanduser(path) == os.path.expanduser(path)


def test_expanduser_without_home_asks_the_password_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HOME")
    assert paths.expanduser("~/x") == os.path.expanduser("~/x")


def test_exists_isdir_isfile_are_os_paths(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    (tmp_path / "d").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "f")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    for name in ("f", "d", "link", "dangling", "gone", "f/below", "nul\0byte"):
        path = str(tmp_path / name)
        assert paths.exists(path) == os.path.exists(path), name
        assert paths.isdir(path) == os.path.isdir(path), name
        assert paths.isfile(path) == os.path.isfile(path), name
