"""Which Claude Code events lookout listens to, and how each is registered.

The one table the installer, the plugin's hooks.json and the tests read. Pure data, no imports.
"""

from __future__ import annotations

# (event, script in hooks/, run async). Async only where arrival order cannot change a status:
# the store stamps each record with the time its hook started and the state machine ignores a
# record that started before the session's last status change (see machine.apply).
EVENTS: tuple[tuple[str, str, bool], ...] = (
    ("SessionStart", "session_start.py", False),
    ("Setup", "setup.py", False),
    ("UserPromptSubmit", "user_prompt_submit.py", False),
    ("UserPromptExpansion", "user_prompt_expansion.py", False),
    ("PreToolUse", "pre_tool_use.py", False),
    ("PermissionRequest", "permission_request.py", False),
    ("PermissionDenied", "permission_denied.py", False),
    ("PostToolUse", "post_tool_use.py", False),
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

# Any other event (newer clients keep adding them) can be recorded with this script.
GENERIC_SCRIPT = "event.py"

# Seconds. Hooks finish in milliseconds; a short timeout bounds the damage of a stuck disk.
TIMEOUT_S = 10


def script_for(event: str) -> str:
    for name, script, _ in EVENTS:
        if name == event:
            return script
    return GENERIC_SCRIPT
