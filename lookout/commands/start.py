"""`lookout start PROJECT [--agent A] [--prompt TEXT]`: a new session in a new tmux window in an
allowed project (lookout.steer), named once its first hook arrived."""

from __future__ import annotations

import argparse

from lookout.commands import args, hubcli
from lookout.commands.say import show
from lookout.steer import core
from lookout.words import STEER_AGENTS


def declare(p: argparse.ArgumentParser) -> None:
    """Start the agent's own program in a new tmux window whose working directory is PROJECT (one of
    [steer] projects), in the tmux session lookout runs in, else in a session named `lookout` on
    the default tmux server; print its SESSION once its first hook arrives."""
    args.needs_steer(p)
    p.add_argument("project", metavar="PROJECT", help="the project's directory")
    p.add_argument(
        "--agent", choices=STEER_AGENTS, help="which agent (default: the first of [steer] agents)"
    )
    p.add_argument("--prompt", metavar="TEXT", help="its first message")
    p.add_argument(
        "--wait",
        type=args.duration,
        default=30,
        metavar="DURATION",
        help="how long to wait for its first hook (30s)",
    )
    args.json_flag(p, "the outcome as JSON")


def run(args: argparse.Namespace) -> int:
    return start(
        args.project, agent=args.agent, prompt=args.prompt, wait_s=args.wait, as_json=args.json
    )


def start(
    project: str, *, agent: str | None, prompt: str | None, wait_s: int, as_json: bool
) -> int:
    other = hubcli.remote(project)
    if other is not None:  # HOST:PROJECT on the fleet's hub
        cfg, host, key = other
        return hubcli.steer(
            cfg,
            host,
            "start",
            project=key,
            text=prompt or "",
            agent=agent or "",
            as_json=as_json,
            timeout_s=float(min(wait_s, 30)) + 5.0,
        )
    outcome = core.start(project, agent, prompt, source="terminal", wait_s=float(wait_s))
    return show(outcome, as_json)
