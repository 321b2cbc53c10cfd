"""GitHub Copilot CLI: a hooks file of lookout's own, $COPILOT_HOME/hooks/lookout.json (`version:
1`, camelCase events; each command passes the event name, which its payloads do not carry)."""

from __future__ import annotations

from lookout import events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from lookout.agents.base import Commentary, Facts, Payload
    from lookout.install import hookfiles
    from lookout.steer.agents import Steering

NAME = "copilot"
TITLE = "Copilot CLI"
STAMPED = False  # records are ordered by when the hook ran
CHILD_HOOKS = False  # unverified: its sessions keep no pid
SCRIPT = "copilot.py"  # in hooks/: its one script, for every event
# What Allow approves (issue 38): its bash tool's arguments are `command` and the model's
# `description` of it (tests/fixtures/copilot/preToolUse-bash.json), beside its switches.
COMMENTARY: dict[str, Commentary] = {
    "bash": {"runs": "command", "fields": frozenset({"description"})},
}
# permissionRequest fires before its rules and auto-approval (it is not "waiting"); preCompact
# has no end event.
EVENTS = (
    "sessionStart",
    "sessionEnd",
    "userPromptSubmitted",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "notification",
    "agentStop",
    "subagentStart",
    "subagentStop",
    "errorOccurred",
)

_EVENTS = {
    "sessionStart": "SessionStart",
    "sessionEnd": "SessionEnd",
    "userPromptSubmitted": "UserPromptSubmit",
    "preToolUse": "PreToolUse",
    "postToolUse": "PostToolUse",
    "postToolUseFailure": "PostToolUseFailure",
    "agentStop": "Stop",
    "subagentStart": "SubagentStart",
    "subagentStop": "SubagentStop",
    "errorOccurred": "ErrorOccurred",
    "notification": "Notification",
    # The VS Code-compatible PascalCase names (snake_case payloads).
    "SessionStart": "SessionStart",
    "SessionEnd": "SessionEnd",
    "UserPromptSubmit": "UserPromptSubmit",
    "PreToolUse": "PreToolUse",
    "PostToolUse": "PostToolUse",
    "PostToolUseFailure": "PostToolUseFailure",
    "Stop": "Stop",
    "SubagentStop": "SubagentStop",
    "ErrorOccurred": "ErrorOccurred",
    "Notification": "Notification",
}


def translate(data: Payload, name: str | None) -> Payload | None:
    # camelCase payloads carry no event name (the notification's does): the command passes it.
    event = name or events.nonempty(data.get("hook_event_name")) or ""
    mapped = _EVENTS.get(event)
    if mapped is None:
        return None
    out = events.base_payload(
        mapped, events.first(data, "sessionId", "session_id"), data.get("cwd")
    )
    if mapped in ("SessionStart", "SessionEnd"):
        out["source"] = events.first(data, "source", "reason")
    elif mapped == "UserPromptSubmit":
        out["prompt"] = data.get("prompt")
    elif mapped in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        out["tool_name"] = events.first(data, "toolName", "tool_name")
        out["tool_input"] = events.tool_args(events.first(data, "toolArgs", "tool_input"))
        if mapped == "PostToolUseFailure":
            out["error"] = data.get("error")
    elif mapped in ("SubagentStart", "SubagentStop"):
        agent = events.nonempty(events.first(data, "agentName", "agent_name"))
        if agent is None:
            return None
        # Copilot names its subagents but gives them no id: one child per name.
        out["agent_id"] = f"copilot:{agent}"
        out["agent_type"] = agent
    elif mapped == "ErrorOccurred":
        error = data.get("error")
        text = events.first(error, "message") if isinstance(error, dict) else error
        if data.get("recoverable") is False:
            # The turn is over: a failed turn, like Claude Code's StopFailure.
            out["hook_event_name"] = "StopFailure"
            context = events.first(data, "errorContext", "error_context")
            out["error"] = events.nonempty(context) or "error"
            out["last_assistant_message"] = text
        else:
            out["message"] = text
    elif mapped == "Notification":
        out["notification_type"] = data.get("notification_type")
        out["message"] = events.first(data, "message", "title")
    return out


def answer(raw: bytes) -> bytes:
    return b""


STEER: Steering | None = None  # lookout does not type into it (its keys were never checked)


# -- install and doctor ---------------------------------------------------------------------------

FACTS: Facts = {
    "checked_against": "published schema only",
    "permission": True,
    "question": True,
    "elicitation": True,
    "failed_turn": True,
    "outcome_question": False,
    "ended": True,
    "subagents": True,
}


def home() -> Path:
    from lookout.install import hookfiles

    return hookfiles.agent_home(".copilot", "COPILOT_HOME")


def config_path() -> Path:
    """A hooks file of lookout's own among Copilot CLI's user-level hook files."""
    return home() / "hooks" / "lookout.json"


def wanted(python: str, runtime: Path) -> list[tuple[str, dict[str, Any]]]:
    from lookout.install import hookfiles

    return [
        (
            event,
            {
                "type": "command",
                "bash": hookfiles.command(python, runtime, SCRIPT, event),
                "timeoutSec": hookfiles.TIMEOUT_S,
            },
        )
        for event in EVENTS
    ]


def installer() -> hookfiles.Spec:
    from lookout.install import hookfiles

    return hookfiles.Spec(NAME, TITLE, SCRIPT, "flat", config_path(), home(), EVENTS, wanted)
