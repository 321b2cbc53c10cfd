"""What a steering action returns (Outcome) and the one error it raises when it refuses
(SteerError, a LookoutError with a machine-readable `reason` for the surfaces). Pure."""

from __future__ import annotations

from typing import TypedDict

from lookout.errors import LookoutError

# The surfaces that may steer, each rate-limited on its own (config [steer] per_minute).
SURFACES = ("terminal", "dashboard", "telegram", "slack", "matrix")
ACTIONS = ("say", "interrupt", "start")


class Outcome(TypedDict):
    """What was done, to which session, which way, and what came of it."""

    action: str  # say | interrupt | start
    session_id: str
    session: str  # how messages name it: `demo (cf0b6c18)`
    agent: str
    via: str  # pane | socket (start: pane, the new window's)
    target: str  # the tmux pane (session:window.%pane) or the inbox socket's path
    text: str  # exactly what was delivered (say, start's prompt); "" for interrupt
    keys: list[str]  # the keys pressed after the text: ["Enter"], ["Escape"]
    # say: delivered (the agent took it: its prompt hook fired) | queued (working: taken at its
    # next step) | typed / sent (no hook seen yet); interrupt: interrupted | sent;
    # start: started | no_hook (the window runs, no hook came)
    result: str
    status: str | None  # the session's status afterwards, as lookout knows it
    framing: str  # what the agent sees the text as
    note: str | None  # what the user should know besides
    ts: str  # when it was done (the Steered event's ts)


class SteerError(LookoutError):
    """A refusal (or a failed delivery) with its reason: disabled, surface, text, too_long,
    rate, no_session, ambiguous, attention, working, draft, ended, no_way, agent, project,
    failed."""

    def __init__(self, reason: str, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason
