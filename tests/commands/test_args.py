"""lookout.commands.args: what several commands declare alike, and the argument types."""

from __future__ import annotations

import argparse

import pytest

from lookout.commands import args
from lookout.errors import LookoutError


@pytest.mark.parametrize(
    ("text", "seconds"), [("7d", 604800), ("1h30m", 5400), ("45", 45), ("2w", 1209600)]
)
def test_parse_duration(text: str, seconds: int) -> None:
    assert args.parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "error"),
    [("soon", "invalid duration 'soon'"), ("1h30", "invalid duration '1h30': 30 has no unit")],
)
def test_a_bad_duration_is_argparses_error(text: str, error: str) -> None:
    with pytest.raises(LookoutError):
        args.parse_duration(text)
    with pytest.raises(argparse.ArgumentTypeError, match=f"^{error}$"):
        args.duration(text)


def test_names_drops_spaces_and_empties() -> None:
    assert args.names(" permission, ,question ,") == ["permission", "question"]
