"""Cursor: its hooks in ~/.cursor/hooks.json (`version: 1`, one flat list of handlers per event);
every hook answers on stdout, which Cursor reads as JSON."""

from __future__ import annotations

from lookout import events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from lookout.agents.base import Commentary, Facts, Payload
    from lookout.install import hookfiles
    from lookout.steer.agents import Steering

NAME = "cursor"
TITLE = "Cursor"
STAMPED = False  # records are ordered by when the hook ran
CHILD_HOOKS = False  # unverified: its sessions keep no pid
SCRIPT = "cursor.py"  # in hooks/: its one script, for every event
# What Allow approves (issue 38): its shell hooks carry the command alone (no `explanation`), so
# every field of every tool counts.
COMMENTARY: dict[str, Commentary] = {}
# Not beforeShellExecution / beforeMCPExecution, permission gates whose verdict Cursor reads from
# stdout (a no-op answer there is not documented, a wrong one blocks every command); the after*
# events say the same tool ran and expect nothing.
EVENTS = (
    "sessionStart",
    "sessionEnd",
    "beforeSubmitPrompt",
    "afterShellExecution",
    "afterMCPExecution",
    "stop",
)

_EVENTS = {
    "sessionStart": "SessionStart",
    "sessionEnd": "SessionEnd",
    "beforeSubmitPrompt": "UserPromptSubmit",
    "beforeShellExecution": "PreToolUse",
    "afterShellExecution": "PostToolUse",
    "beforeMCPExecution": "PreToolUse",
    "afterMCPExecution": "PostToolUse",
    "stop": "Stop",
}


def translate(data: Payload, name: str | None) -> Payload | None:
    event = events.nonempty(data.get("hook_event_name")) or name or ""
    mapped = _EVENTS.get(event)
    if mapped is None:
        return None
    roots = data.get("workspace_roots")
    root = roots[0] if isinstance(roots, list) and roots else None
    session = events.first(data, "conversation_id", "session_id")
    out = events.base_payload(mapped, session, events.first(data, "cwd", "workspace_root") or root)
    out["prompt_id"] = data.get("generation_id")
    if mapped in ("SessionStart", "SessionEnd"):
        out["source"] = events.first(data, "source", "reason")
    elif mapped == "UserPromptSubmit":
        out["prompt"] = data.get("prompt")
    elif event in ("beforeShellExecution", "afterShellExecution"):
        out["tool_name"] = "Shell"
        out["tool_input"] = {"command": data.get("command")}
    elif mapped in ("PreToolUse", "PostToolUse"):
        out["tool_name"] = data.get("tool_name")
        out["tool_input"] = events.tool_args(data.get("tool_input"))
    else:
        status = data.get("status")
        if status == "error":
            out["hook_event_name"] = "StopFailure"
            out["error"] = "error"
        out["last_assistant_message"] = "aborted" if status == "aborted" else ""
    return out


def answer(raw: bytes) -> bytes:
    # Cursor parses every hook's stdout as JSON (an empty one is an error): `{}` decides
    # nothing; a prompt hook says to go on, which is what it would do without lookout.
    return b'{"continue": true}\n' if b'"beforeSubmitPrompt"' in raw else b"{}\n"


STEER: Steering | None = None  # lookout does not type into it (its keys were never checked)


# -- install and doctor ---------------------------------------------------------------------------

FACTS: Facts = {
    "checked_against": "published schema only",
    "permission": False,
    "question": False,
    "elicitation": False,
    "failed_turn": True,
    "outcome_question": False,
    "ended": True,
    "subagents": False,
}


def home() -> Path:
    from lookout.install import hookfiles

    return hookfiles.agent_home(".cursor")


def config_path() -> Path:
    return home() / "hooks.json"


def wanted(python: str, runtime: Path) -> list[tuple[str, dict[str, Any]]]:
    from lookout.install import hookfiles

    command = hookfiles.command(python, runtime, SCRIPT)
    return [(event, {"command": command, "timeout": hookfiles.TIMEOUT_S}) for event in EVENTS]


def installer() -> hookfiles.Spec:
    from lookout.install import hookfiles

    return hookfiles.Spec(NAME, TITLE, SCRIPT, "flat", config_path(), home(), EVENTS, wanted)
