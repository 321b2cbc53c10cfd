"""`lookout say SESSION TEXT`: send TEXT to a session as your next message (lookout.steer), and
say which way it went and what was delivered. Also how interrupt and start show an outcome."""

from __future__ import annotations

import json

from lookout.steer import core
from lookout.steer.shapes import Outcome
from lookout.steer.show import lines


def say(session: str, text: str, *, via: str | None, as_json: bool) -> int:
    return show(core.say(session, text, via=via, source="terminal"), as_json)


def show(outcome: Outcome, as_json: bool) -> int:
    """The outcome: JSON as it is, or a few exact lines (every text visible-escaped)."""
    if as_json:
        print(json.dumps(outcome))
        return 0
    for line in lines(outcome):
        print(line)
    return 0
