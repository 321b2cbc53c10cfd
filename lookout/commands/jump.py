"""`lookout jump`: switch to the pane of a session (see jump.locate), or print where it is."""

from __future__ import annotations

import argparse
import json
import sys

from lookout.commands import args
from lookout.commands.args import UsageError
from lookout.jump import locate as places


def declare(p: argparse.ArgumentParser) -> None:
    """Switch a tmux client to the pane a session runs in, across tmux sessions and windows, on the
    tmux server it was started in (kitty and WezTerm windows through their own CLIs). Without
    SESSION: the session that has waited longest for you, then the most recently idle; run again
    to go on to the next one."""
    args.session(p)
    args.client(p)
    p.add_argument(
        "--print",
        action="store_true",
        help="print the target (session:window.%%pane), switch nothing",
    )
    args.json_flag(p, "with --print: the target as JSON")


def run(args: argparse.Namespace) -> int:
    if args.json and not args.print:
        raise UsageError("--json goes with --print")
    return jump(args.session, client=args.client, print_only=args.print, as_json=args.json)


def jump(query: str | None, *, client: str | None, print_only: bool, as_json: bool) -> int:
    landed = places.jump(query, client=client, print_only=print_only)
    if as_json:
        print(
            json.dumps(
                {
                    "session_id": landed.session_id,
                    "title": landed.title,
                    "project": landed.project,
                    "via": landed.via,
                    "target": landed.target,
                    "socket": landed.socket,
                }
            )
        )
    elif print_only:
        print(places.printable(landed.target))
    elif sys.stdout.isatty():
        # From a key binding (run-shell) say nothing: tmux would show it over the pane.
        on = f" on client {landed.client}" if landed.client else ""
        who = places.name({"title": landed.title, "session_id": landed.session_id})
        print(f"{who}: {landed.via} {places.printable(landed.target)}{on}")
    return 0
