"""Other agents' hook payloads -> the Claude Code-shaped payload events.parse reads, so every agent
shares one state machine, store, notification path and view. Pure and lenient, on the hook path
(stdlib only, no json/typing at run time).

Each translator returns None for a delivery lookout does not track. Only the fields lookout uses
are carried over: never a whole tool output, never an e-mail address or a transcript path.
docs/agents.md says, per agent, which statuses its events can and cannot express."""

from __future__ import annotations

from lookout import _jsonfast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Payload = dict[str, object]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _first(data: Payload, *keys: str) -> object:
    for key in keys:
        if key in data and data[key] is not None:
            return data[key]
    return None


def _args(value: object) -> object:
    """Tool arguments: an object, or a JSON string of one (Copilot's toolArgs, Cursor's MCP)."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return _jsonfast.loads(value)
        except ValueError:
            return {}
    return value


def _base(name: str, session_id: object, cwd: object) -> Payload:
    return {"hook_event_name": name, "session_id": _str(session_id) or "", "cwd": _str(cwd) or ""}


# -- Gemini CLI (~/.gemini/settings.json hooks; payloads carry hook_event_name) ----------------

_GEMINI = {
    "SessionStart": "SessionStart",
    "SessionEnd": "SessionEnd",
    "BeforeAgent": "UserPromptSubmit",
    "AfterAgent": "Stop",
    "BeforeTool": "PreToolUse",
    "AfterTool": "PostToolUse",
    "Notification": "Notification",
}


def gemini(data: Payload, name: str | None) -> Payload | None:
    event = _str(data.get("hook_event_name")) or name or ""
    mapped = _GEMINI.get(event)
    if mapped is None:
        return None
    out = _base(mapped, data.get("session_id"), data.get("cwd"))
    if mapped in ("SessionStart", "SessionEnd"):
        out["source"] = _first(data, "source", "reason")
    elif mapped == "UserPromptSubmit":
        out["prompt"] = data.get("prompt")
    elif mapped == "Stop":
        out["last_assistant_message"] = data.get("prompt_response")
    elif mapped in ("PreToolUse", "PostToolUse"):
        out["tool_name"] = data.get("tool_name")
        out["tool_input"] = data.get("tool_input")
    else:
        # The only type Gemini sends: a tool confirmation dialog is on screen.
        kind = _str(data.get("notification_type"))
        out["notification_type"] = "permission_prompt" if kind == "ToolPermission" else kind
        details = data.get("details")
        what = None
        if isinstance(details, dict):
            what = _first(details, "command", "filePath", "fileName", "url", "title")
        out["message"] = what if isinstance(what, str) else data.get("message")
    return out


# -- GitHub Copilot CLI (camelCase events and keys; the event name comes from the command) -----

_COPILOT = {
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


def copilot(data: Payload, name: str | None) -> Payload | None:
    # camelCase payloads carry no event name (the notification's does): the command passes it.
    event = name or _str(data.get("hook_event_name")) or ""
    mapped = _COPILOT.get(event)
    if mapped is None:
        return None
    out = _base(mapped, _first(data, "sessionId", "session_id"), data.get("cwd"))
    if mapped in ("SessionStart", "SessionEnd"):
        out["source"] = _first(data, "source", "reason")
    elif mapped == "UserPromptSubmit":
        out["prompt"] = data.get("prompt")
    elif mapped in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        out["tool_name"] = _first(data, "toolName", "tool_name")
        out["tool_input"] = _args(_first(data, "toolArgs", "tool_input"))
        if mapped == "PostToolUseFailure":
            out["error"] = data.get("error")
    elif mapped in ("SubagentStart", "SubagentStop"):
        agent = _str(_first(data, "agentName", "agent_name"))
        if agent is None:
            return None
        # Copilot names its subagents but gives them no id: one child per name.
        out["agent_id"] = f"copilot:{agent}"
        out["agent_type"] = agent
    elif mapped == "ErrorOccurred":
        error = data.get("error")
        text = _first(error, "message") if isinstance(error, dict) else error
        if data.get("recoverable") is False:
            # The turn is over: a failed turn, like Claude Code's StopFailure.
            out["hook_event_name"] = "StopFailure"
            out["error"] = _str(_first(data, "errorContext", "error_context")) or "error"
            out["last_assistant_message"] = text
        else:
            out["message"] = text
    elif mapped == "Notification":
        out["notification_type"] = data.get("notification_type")
        out["message"] = _first(data, "message", "title")
    return out


# -- Cursor (~/.cursor/hooks.json; payloads carry hook_event_name and conversation_id) ---------

_CURSOR = {
    "sessionStart": "SessionStart",
    "sessionEnd": "SessionEnd",
    "beforeSubmitPrompt": "UserPromptSubmit",
    "beforeShellExecution": "PreToolUse",
    "afterShellExecution": "PostToolUse",
    "beforeMCPExecution": "PreToolUse",
    "afterMCPExecution": "PostToolUse",
    "stop": "Stop",
}


def cursor(data: Payload, name: str | None) -> Payload | None:
    event = _str(data.get("hook_event_name")) or name or ""
    mapped = _CURSOR.get(event)
    if mapped is None:
        return None
    roots = data.get("workspace_roots")
    root = roots[0] if isinstance(roots, list) and roots else None
    session = _first(data, "conversation_id", "session_id")
    out = _base(mapped, session, _first(data, "cwd", "workspace_root") or root)
    out["prompt_id"] = data.get("generation_id")
    if mapped in ("SessionStart", "SessionEnd"):
        out["source"] = _first(data, "source", "reason")
    elif mapped == "UserPromptSubmit":
        out["prompt"] = data.get("prompt")
    elif event in ("beforeShellExecution", "afterShellExecution"):
        out["tool_name"] = "Shell"
        out["tool_input"] = {"command": data.get("command")}
    elif mapped in ("PreToolUse", "PostToolUse"):
        out["tool_name"] = data.get("tool_name")
        out["tool_input"] = _args(data.get("tool_input"))
    else:
        status = data.get("status")
        if status == "error":
            out["hook_event_name"] = "StopFailure"
            out["error"] = "error"
        out["last_assistant_message"] = "aborted" if status == "aborted" else ""
    return out


# -- OpenCode (lookout's plugin forwards trimmed bus events; see install/opencode.py) -----------


def opencode(data: Payload, name: str | None) -> Payload | None:
    """The plugin already tracked what needs memory (turn edges, the last assistant text, which
    tool a permission or question belongs to); this maps its `type` to lookout's events."""
    kind = _str(data.get("type")) or name or ""
    session = data.get("sessionID")
    cwd = data.get("directory")
    tool: Payload = {"tool_name": data.get("tool"), "tool_input": data.get("input")}
    if data.get("callID") is not None:
        tool["tool_use_id"] = data.get("callID")
    if kind == "session.created":
        return {**_base("SessionStart", session, cwd), "source": "startup"}
    if kind == "lookout.resume":
        return {**_base("SessionStart", session, cwd), "source": "resume"}
    if kind == "lookout.exit":
        return {**_base("SessionEnd", session, cwd), "source": "exit"}
    if kind == "turn.start":
        return {**_base("UserPromptSubmit", session, cwd), "prompt": data.get("prompt")}
    if kind == "turn.end":
        return {**_base("Stop", session, cwd), "last_assistant_message": data.get("text")}
    if kind == "session.error":
        out = _base("StopFailure", session, cwd)
        out["error"] = _str(data.get("error")) or "error"
        out["last_assistant_message"] = data.get("message")
        return out
    if kind == "tool.start":
        return {**_base("PreToolUse", session, cwd), **tool}
    if kind in ("tool.end", "tool.error"):
        name = "PostToolUse" if kind == "tool.end" else "PostToolUseFailure"
        return {**_base(name, session, cwd), **tool}
    if kind in ("permission.asked", "question.asked"):
        return {**_base("PermissionRequest", session, cwd), **tool}
    if kind in ("permission.replied", "question.replied", "question.rejected"):
        return {**_base("PermissionReplied", session, cwd), **tool}
    return None


TRANSLATORS: dict[str, Callable[[Payload, str | None], Payload | None]] = {
    "gemini": gemini,
    "copilot": copilot,
    "cursor": cursor,
    "opencode": opencode,
}
