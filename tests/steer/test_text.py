"""What lookout will type or send: printable text and newlines only, at most max_chars, and no
line an agent's input box would run as a command."""

from __future__ import annotations

import pytest

from lookout.steer import text
from lookout.steer.shapes import SteerError


@pytest.mark.parametrize(
    "kept", ["hello", "two\nlines", "caf\u00e9 \u65e5\u672c \U0001f680", "a;", "$HOME `x` \\n"]
)
def test_what_is_kept_exactly(kept: str) -> None:
    assert text.check(kept, 100) == kept


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("\x1b]52;c;aGk=\x07", "text"),  # OSC 52: set the clipboard
        ("\u0085next", "text"),  # NEL (C1)
        ("soft\u00adhyphen", "text"),
        ("\ufeffbom", "text"),
        ("x" * 11, "too_long"),
        ("", "text"),
    ],
)
def test_what_is_refused(bad: str, reason: str) -> None:
    with pytest.raises(SteerError) as info:
        text.check(bad, 10 if reason == "too_long" else 100)
    assert info.value.reason == reason


def test_command_prefixes() -> None:
    assert text.command_prefix("/exit") == "/"
    assert text.command_prefix("  !rm -rf x") == "!"
    assert text.command_prefix("\n\t/exit") == "/"
    assert text.command_prefix("see /etc") is None
    assert text.escaped("\x1b") == "\\x1b" and text.escaped("\u200b") == "\\u200b"
