"""Gemini CLI: its hooks in ~/.gemini/settings.json (Claude Code's matcher groups, timeouts in
ms)."""

from __future__ import annotations

from lookout import events

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from lookout.agents.base import Commentary, Facts, Payload
    from lookout.install import hookfiles
    from lookout.steer.agents import Steering

NAME = "gemini"
TITLE = "Gemini CLI"
STAMPED = False  # records are ordered by when the hook ran
CHILD_HOOKS = True  # `bash -c <command>` (procs.CHILD_HOOKS)
SCRIPT = "gemini.py"  # in hooks/: its one script, for every event
# What Allow approves (issue 38): run_shell_command's published arguments are `command`,
# `description` ("a brief description of the command's purpose, shown to the user"), `dir_path`.
COMMENTARY: dict[str, Commentary] = {
    "run_shell_command": {"runs": "command", "fields": frozenset({"description"})},
}
# The events registered. PreCompress is left out on purpose (0.61.0 fires it before every model
# request, compressing or not), so are the per-model-call events.
EVENTS = (
    "SessionStart",
    "SessionEnd",
    "BeforeAgent",
    "AfterAgent",
    "BeforeTool",
    "AfterTool",
    "Notification",
)
# Keys of Gemini CLI's `hooks` object that are settings, not events.
CONFIG_KEYS = ("enabled", "disabled", "notifications")

_EVENTS = {
    "SessionStart": "SessionStart",
    "SessionEnd": "SessionEnd",
    "BeforeAgent": "UserPromptSubmit",
    "AfterAgent": "Stop",
    "BeforeTool": "PreToolUse",
    "AfterTool": "PostToolUse",
    "Notification": "Notification",
}


def translate(data: Payload, name: str | None) -> Payload | None:
    event = events.nonempty(data.get("hook_event_name")) or name or ""
    mapped = _EVENTS.get(event)
    if mapped is None:
        return None
    out = events.base_payload(mapped, data.get("session_id"), data.get("cwd"))
    if mapped in ("SessionStart", "SessionEnd"):
        out["source"] = events.first(data, "source", "reason")
    elif mapped == "UserPromptSubmit":
        out["prompt"] = data.get("prompt")
    elif mapped == "Stop":
        out["last_assistant_message"] = data.get("prompt_response")
    elif mapped in ("PreToolUse", "PostToolUse"):
        out["tool_name"] = data.get("tool_name")
        out["tool_input"] = data.get("tool_input")
    else:
        # The only type Gemini sends: a tool confirmation dialog is on screen.
        kind = events.nonempty(data.get("notification_type"))
        out["notification_type"] = "permission_prompt" if kind == "ToolPermission" else kind
        details = data.get("details")
        what = None
        if isinstance(details, dict):
            what = events.first(details, "command", "filePath", "fileName", "url", "title")
        out["message"] = what if isinstance(what, str) else data.get("message")
    return out


def answer(raw: bytes) -> bytes:
    return b""


# How lookout types into it, interrupts it and starts it (lookout.steer.agents.Keys).
STEER: Steering | None = {
    "checked": "0.61.0",
    # "Queued (press ↑ to edit)", sent when the turn ends (tests/e2e/test_steer.py)
    "queues_while_working": True,
    "interrupt": ("Escape",),  # "Request cancelled."
    "multiline": False,
    "prompt_argv": lambda prompt: [f"--prompt-interactive={prompt}"],
    "program": "gemini",
    "processes": ("gemini",),
    "reports_interrupt": False,  # no hook fires for a cancelled request
}


# -- install and doctor ---------------------------------------------------------------------------

FACTS: Facts = {
    "checked_against": "real client 0.61.0",
    "permission": True,
    "question": False,
    "elicitation": False,
    "failed_turn": False,
    "outcome_question": True,
    "ended": True,
    "subagents": False,
}


def home() -> Path:
    from lookout.install import hookfiles

    return hookfiles.agent_home(".gemini")


def config_path() -> Path:
    return home() / "settings.json"


def wanted(python: str, runtime: Path) -> list[tuple[str, dict[str, Any]]]:
    from lookout.install import hookfiles

    return [
        (
            event,
            {
                "name": f"lookout-{event}",
                "type": "command",
                "command": hookfiles.command(python, runtime, SCRIPT),
                "timeout": hookfiles.TIMEOUT_S * 1000,  # Gemini CLI counts milliseconds
            },
        )
        for event in EVENTS
    ]


def installer() -> hookfiles.Spec:
    from lookout.install import hookfiles

    return hookfiles.Spec(
        NAME, TITLE, SCRIPT, "groups", config_path(), home(), EVENTS, wanted, CONFIG_KEYS
    )
