"""lookout.commands.parser: the declarations and argument types of every command line."""

from __future__ import annotations

import pytest

from lookout.commands import main, parser


@pytest.mark.parametrize(
    ("text", "seconds"), [("7d", 604800), ("1h30m", 5400), ("45", 45), ("2w", 1209600)]
)
def test_parse_duration(text: str, seconds: int) -> None:
    assert parser.parse_duration(text) == seconds


def test_every_declared_command_runs_a_function() -> None:
    declared = parser.subparsers(parser.build_parser())
    assert set(declared) == set(main.COMMANDS)
    built = parser.subparsers(main.build_parser())
    assert all(sub.get_default("func") is main.COMMANDS[name] for name, sub in built.items())
