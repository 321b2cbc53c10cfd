"""`lookout interrupt SESSION`: stop a session's current turn, as its interrupt key (Esc) does in
its tmux pane (lookout.steer), and say what came of it."""

from __future__ import annotations

import argparse

from lookout.commands import args, hubcli
from lookout.commands.say import show
from lookout.steer import core


def declare(p: argparse.ArgumentParser) -> None:
    """Press the agent's interrupt key (Esc) in SESSION's tmux pane to stop its current turn, and
    say whether it stopped. Claude Code's inbox socket has no way to interrupt: this needs the
    pane."""
    args.needs_steer(p)
    args.session(p, optional=False)
    args.json_flag(p, "the outcome as JSON")


def run(args: argparse.Namespace) -> int:
    return interrupt(args.session, as_json=args.json)


def interrupt(session: str, *, as_json: bool) -> int:
    other = hubcli.remote(session)
    if other is not None:  # HOST:SESSION on the fleet's hub
        cfg, host, key = other
        return hubcli.steer(cfg, host, "interrupt", session=key, as_json=as_json)
    return show(core.interrupt(session, source="terminal"), as_json)
