"""lookout's vocabulary, defined once: the statuses, the reasons a session waits, the kinds of
notification and of channel, the format versions, and the clock. Stdlib only and tiny: the hook
path imports it. shapes.py holds the same words as typing Literals (tests/test_words.py keeps
them equal)."""

from __future__ import annotations

import time

WORKING = "working"
ATTENTION = "attention"
IDLE = "idle"
ENDED = "ended"
DONE = "done"  # a finished subagent (children only)
STATUSES = (WORKING, ATTENTION, IDLE, ENDED)
CHILD_STATUSES = (*STATUSES, DONE)

# The reasons a session waits on the user; the intents of these kinds raise attention.
ATTENTION_KINDS = ("permission", "question", "plan", "elicitation", "input", "error")

# What a notification is about: the attention reasons, then the rest of a turn's life.
KINDS = (
    *ATTENTION_KINDS,
    "done",
    "idle",
    "subagent_done",
    "session_start",
    "session_end",
    "message",
    "resolved",
)

# The kinds of channel; those that leave the machine; those that can replace an alert they sent
# when its episode resolves.
CHANNEL_TYPES = ("desktop", "ntfy", "webhook", "command", "apprise", "telegram")
REMOTE_TYPES = ("ntfy", "webhook", "apprise", "telegram")
UPDATABLE_TYPES = ("desktop", "ntfy", "telegram")

# How much of a session a channel or the bus may carry.
CONTENT_LEVELS = ("full", "summary", "none")

# The snapshot's shape (shapes.Session); a snapshot of another version is read as absent.
SNAPSHOT_VERSION = 1
# The job file's shape (shapes.Job); the sender drops a job of another version unread.
JOB_VERSION = 1


def now_ms() -> int:
    """The wall clock in milliseconds, as every time stamp lookout writes."""
    return int(time.time() * 1000)


# A run nobody sits at, so nobody can answer its dialogs: `claude -p` and SDK programs
# (CLAUDE_CODE_ENTRYPOINT sdk-*), and `opencode run` (its plugin says so).
OPENCODE_RUN = "opencode-run"


def print_mode(entrypoint: object) -> bool:
    return isinstance(entrypoint, str) and (
        entrypoint.startswith("sdk-") or entrypoint == OPENCODE_RUN
    )
