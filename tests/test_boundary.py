"""lookout.boundary: what reaches the terminal, and how each failure of a command line ends."""

from __future__ import annotations

import pytest

from lookout.boundary import guarded, visible
from lookout.errors import LookoutError


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
