"""Which Claude Code events lookout listens to, and how each is registered (another agent's own
events are in its module, lookout.agents.<name>).

The one table the installer, the plugin's hooks.json and the tests read, and the contract the
two PermissionRequest hooks share (`request_id`). Pure data and one pure function; no imports at
load.
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

# Any other event (newer clients keep adding them) can be recorded with this script.
GENERIC_SCRIPT = "event.py"

# The deciding PermissionRequest hook (lookout.remote), registered as a second PermissionRequest
# entry only when the user's config says `[remote] enabled = true`. Its timeout follows wait_s.
REMOTE_SCRIPT = "remote_answer.py"
REMOTE_EVENT = "PermissionRequest"
# Its installed `timeout` is wait_s plus this: the hook gives up (silently) before the client
# would kill it, and has time left to deliver an answer that came in at the last moment.
TIMEOUT_MARGIN_S = 15


def request_id(session_id: str, agent_id: str | None, prompt_id: str | None, key: str) -> str:
    """The same for every hook that sees this PermissionRequest payload (it has no tool_use_id):
    the recording hook links its notification to the request the deciding hook records."""
    import hashlib

    text = "\0".join((session_id, agent_id or "", prompt_id or "", key))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


# Seconds. Hooks finish in milliseconds; a short timeout bounds the damage of a stuck disk.
TIMEOUT_S = 10
