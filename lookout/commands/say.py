"""`lookout say SESSION TEXT`: send TEXT to a session as your next message (lookout.steer), and
say which way it went and what was delivered. Also how interrupt and start show an outcome."""

from __future__ import annotations

import argparse
import json

from lookout.commands import args, hubcli
from lookout.errors import LookoutError
from lookout.steer import core
from lookout.steer.shapes import Outcome
from lookout.steer.show import lines


def declare(p: argparse.ArgumentParser) -> None:
    """Send TEXT to SESSION as your next message: typed into its tmux pane (then Enter), else, for
    Claude Code, written to its inbox socket (shown to the model as a message from another Claude
    session). Never into an open dialog; to a working session only where the agent queues it.
    Says which way it went and what was delivered."""
    args.needs_steer(p)
    args.session(p, optional=False)
    p.add_argument(
        "text", metavar="TEXT", help="the message (newlines allowed where the agent keeps them)"
    )
    p.add_argument(
        "--via",
        choices=("pane", "socket"),
        help="pane: type into its tmux pane; socket: Claude Code's inbox (default: the pane when"
        " lookout knows it, else the socket)",
    )
    args.json_flag(p, "the outcome as JSON")


def run(args: argparse.Namespace) -> int:
    return say(args.session, args.text, via=args.via, as_json=args.json)


def say(session: str, text: str, *, via: str | None, as_json: bool) -> int:
    other = hubcli.remote(session)
    if other is not None:  # HOST:SESSION on the fleet's hub
        if via is not None:
            raise LookoutError("--via is for this host's sessions", hint="leave it out")
        cfg, host, key = other
        return hubcli.steer(cfg, host, "say", session=key, text=text, as_json=as_json)
    return show(core.say(session, text, via=via, source="terminal"), as_json)


def show(outcome: Outcome, as_json: bool) -> int:
    """The outcome: JSON as it is, or a few exact lines (every text visible-escaped)."""
    if as_json:
        print(json.dumps(outcome))
        return 0
    for line in lines(outcome):
        print(line)
    return 0
