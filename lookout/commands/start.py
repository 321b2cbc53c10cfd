"""`lookout start PROJECT [--agent A] [--prompt TEXT]`: a new session in a new tmux window in an
allowed project (lookout.steer), named once its first hook arrived."""

from __future__ import annotations

from lookout.commands.say import show
from lookout.steer import core


def start(
    project: str, *, agent: str | None, prompt: str | None, wait_s: int, as_json: bool
) -> int:
    outcome = core.start(project, agent, prompt, source="terminal", wait_s=float(wait_s))
    return show(outcome, as_json)
