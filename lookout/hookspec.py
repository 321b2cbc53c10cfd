"""Which Claude Code events lookout listens to, and how each is registered.

The one table the installer, the plugin's hooks.json and the tests read. Pure data, no imports.
"""

from __future__ import annotations

# (event, script in hooks/, run async). Async where arrival order cannot change a status: each
# record carries the time its hook started, and the state machine ignores an async record that
# started before the session's last status change (see machine.apply). PreToolUse and
# PostToolUse fire on every tool call, so they dominate lookout's cost to a session; what they
# signal is also carried by sync events (PermissionRequest names the tool and its dialog,
# PostToolBatch ends the batch). Stop, StopFailure and PostToolBatch stay sync: a `claude -p`
# exits right after them and cancels async hooks still running.
EVENTS: tuple[tuple[str, str, bool], ...] = (
    ("SessionStart", "session_start.py", False),
    ("Setup", "setup.py", False),
    ("UserPromptSubmit", "user_prompt_submit.py", False),
    ("UserPromptExpansion", "user_prompt_expansion.py", False),
    ("PreToolUse", "pre_tool_use.py", True),
    ("PermissionRequest", "permission_request.py", False),
    ("PermissionDenied", "permission_denied.py", False),
    ("PostToolUse", "post_tool_use.py", True),
    ("PostToolUseFailure", "post_tool_use_failure.py", False),
    ("PostToolBatch", "post_tool_batch.py", False),
    ("Notification", "notification.py", True),
    ("Elicitation", "elicitation.py", False),
    ("ElicitationResult", "elicitation_result.py", False),
    ("Stop", "stop.py", False),
    ("StopFailure", "stop_failure.py", False),
    ("SubagentStart", "subagent_start.py", False),
    ("SubagentStop", "subagent_stop.py", False),
    ("TeammateIdle", "teammate_idle.py", False),
    ("PreCompact", "pre_compact.py", False),
    ("PostCompact", "post_compact.py", False),
    ("CwdChanged", "cwd_changed.py", False),
    ("SessionEnd", "session_end.py", True),
)

# OpenAI Codex's Claude-compatible hooks (~/.codex/hooks.json): the same scripts. Codex runs
# matching hooks concurrently and its async semantics differ, so every entry is synchronous.
CODEX_EVENTS: tuple[tuple[str, str, bool], ...] = tuple(
    (name, script, False)
    for name, script, _ in EVENTS
    if name
    in (
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PreCompact",
        "PostCompact",
        "SubagentStart",
        "SubagentStop",
        "Stop",
        "StopFailure",
    )
)

# Other agents run one script each (lookout.adapters translates their payloads); these are the
# events registered for each. Gemini CLI: PreCompress is left out on purpose (0.61.0 fires it
# before every model request, compressing or not), so are the per-model-call events.
AGENT_SCRIPTS = {
    "gemini": "gemini.py",
    "copilot": "copilot.py",
    "cursor": "cursor.py",
    "opencode": "opencode.py",
}
GEMINI_EVENTS = (
    "SessionStart",
    "SessionEnd",
    "BeforeAgent",
    "AfterAgent",
    "BeforeTool",
    "AfterTool",
    "Notification",
)
# Copilot CLI: permissionRequest fires before its rules and auto-approval (it is not "waiting");
# preCompact has no end event. Copilot's hooks get the event name as an argument.
COPILOT_EVENTS = (
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
# Cursor: not beforeShellExecution / beforeMCPExecution, permission gates whose verdict Cursor
# reads from stdout (a no-op answer there is not documented, a wrong one blocks every command);
# the after* events say the same tool ran and expect nothing.
CURSOR_EVENTS = (
    "sessionStart",
    "sessionEnd",
    "beforeSubmitPrompt",
    "afterShellExecution",
    "afterMCPExecution",
    "stop",
)
# The program for Codex's legacy `notify` setting (JSON as its last argument, not on stdin).
CODEX_NOTIFY_SCRIPT = "codex_notify.py"

# Any other event (newer clients keep adding them) can be recorded with this script.
GENERIC_SCRIPT = "event.py"

# The deciding PermissionRequest hook (lookout.remote), registered as a second PermissionRequest
# entry only when the user's config says `[remote] enabled = true`. Its timeout follows wait_s.
REMOTE_SCRIPT = "remote_answer.py"
REMOTE_EVENT = "PermissionRequest"

# Seconds. Hooks finish in milliseconds; a short timeout bounds the damage of a stuck disk.
TIMEOUT_S = 10
GEMINI_TIMEOUT_MS = TIMEOUT_S * 1000  # Gemini CLI counts hook timeouts in milliseconds
