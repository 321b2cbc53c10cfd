"""What several commands declare alike: the SESSION argument, --json, --project, --client,
--dry-run, channel's and rule's ACTION, the steering note, and the argument types (durations,
counts, name lists). Each command declares the rest itself, in its module's `declare`
(commands/main.py calls it only for the command that runs)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from lookout.errors import LookoutError
from lookout.words import parse_duration

TYPE_CHECKING = False
if TYPE_CHECKING:
    # An ArgumentParser or one of its groups: what add_argument is called on.
    Container = argparse._ActionsContainer
    # A parser's subcommands: what add_parser is called on.
    Actions = argparse._SubParsersAction[argparse.ArgumentParser]

SESSION_HELP = "a session id or its start, a project or a title"
STEER_NOTE = " Needs [steer] enabled = true in your own config (docs/steer.md)."


class UsageError(Exception):
    """A command line argparse took but the command refuses: main.py says it as argparse's own
    error (the usage, `lookout: error: ...`, exit 2)."""


def duration(text: str) -> int:
    """argparse's type for a DURATION."""
    try:
        return parse_duration(text)
    except LookoutError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def count(text: str) -> int:
    """argparse's type for N: a whole number >= 0."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def names(text: str) -> list[str]:
    """`permission,question` -> ["permission", "question"] (spaces allowed, empties dropped)."""
    return [part.strip() for part in text.split(",") if part.strip()]


def session(p: Container, *, optional: bool = True, help: str = SESSION_HELP) -> None:
    """The SESSION argument (sessions.resolve reads it)."""
    p.add_argument("session", nargs="?" if optional else None, metavar="SESSION", help=help)


def json_flag(p: Container, help: str = "machine-readable output", dest: str = "json") -> None:
    p.add_argument("--json", action="store_true", dest=dest, help=help)


def call(command: Callable[..., int], ns: argparse.Namespace) -> int:
    """`command(**arguments)`: a command whose arguments are declared under the names (dest) its
    function takes runs them with this one line, not a list of `name=args.name`."""
    given = dict(vars(ns))
    given.pop("command", None)  # the subcommand's name (main.py's subparsers)
    return command(**given)


def dry_run(p: Container, help: str = "print the diff, change nothing") -> None:
    p.add_argument("--dry-run", action="store_true", help=help)


def config_table(p: argparse.ArgumentParser, table: str, more: str) -> Actions:
    """channel's and rule's ACTION, add or remove, of one kind of table in the user's config
    (commands/configure.py writes it); each action then declares its own arguments, and
    dry_run."""
    from lookout import paths

    p.description = f"Add or remove a {table} table in {paths.tilde(paths.config_path())}{more}"
    return p.add_subparsers(dest="action", metavar="ACTION", required=True)


def needs_steer(p: argparse.ArgumentParser) -> None:
    """say's, interrupt's and start's description (their declare's docstring) ends with where
    steering is switched on."""
    p.description = f"{p.description or ''}{STEER_NOTE}"


def project(p: Container, what: str) -> None:
    """--project DIR, `what` saying what the directory is for."""
    p.add_argument(
        "--project", metavar="DIR", default=None, help=f"{what} (default: the current directory)"
    )


def client(p: Container) -> None:
    """jump's and pick's -c/--client."""
    p.add_argument(
        "-c",
        "--client",
        metavar="CLIENT",
        help="the tmux client to switch (a name from `tmux list-clients`, e.g. /dev/pts/3;"
        " default: the one of this terminal, else the most recently active)",
    )


_width: int | None = None


def help_width() -> int:
    """What argparse's help formatter would ask shutil.get_terminal_size for, asked once."""
    global _width
    if _width is None:
        try:
            columns = int(os.environ.get("COLUMNS", ""))
        except ValueError:
            columns = 0
        if columns <= 0:
            try:
                columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
            except (AttributeError, ValueError, OSError):
                columns = 0
        _width = (columns or 80) - 2
    return _width


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that tells its help formatter the width. argparse makes a formatter on
    every add_argument, each asking the terminal (through shutil, which loads bz2 and lzma):
    ~10 ms of every command line."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=help_width())  # type: ignore[call-arg]
