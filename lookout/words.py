"""lookout's vocabulary, defined once: the statuses, the reasons a session waits, the kinds of
notification, the format versions, and the clock. Stdlib only and tiny: the hook
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

# The rest of a turn's life, none of which asks the user to act: quiet hours mute these unless a
# rule says otherwise (lookout.config.notify).
LIFE_KINDS = ("done", "idle", "subagent_done", "session_start", "session_end", "message")

# What a notification is about: the attention reasons, the rest of a turn's life, an attention
# answered elsewhere, and what lookout itself sees.
KINDS = (
    *ATTENTION_KINDS,
    *LIFE_KINDS,
    "resolved",
    # Sent when time passes with no event (lookout.timers): a working session gone silent, and
    # a usage limit that lifted while its session still waits.
    "stuck",
    "limit_lifted",
)
# The reason of an attention nothing reported, inferred from silence (docs/statuses.md).
STUCK = "stuck"

# The agents `lookout start` can start and `say` can type into: those whose plug-in declares its
# STEER (lookout.agents.<name>), copied for config/ and the surfaces below the plug-ins' floor
# (tests/steer/test_agents.py keeps the two equal).
STEER_AGENTS = ("claude", "codex", "gemini", "opencode")

# Whose permission requests may be answered from afar (docs/agents.md, issue 41). Claude Code
# runs its deciding hook beside its own dialog (the first answer wins), so the hook always waits.
# Codex runs it before its prompt and holds the prompt until it returns, so it waits only while
# the user said they are away (`lookout away on`); otherwise it returns at once. OpenCode's plugin
# starts it beside its own dialog and gives its answer to that dialog (docs/agents.md): always.
ANSWERED_ALWAYS = ("claude", "opencode")
ANSWERED_WHEN_AWAY = ("codex",)

# How much of a session a channel or the bus may carry.
CONTENT_LEVELS = ("full", "summary", "none")
# The `summary` level's one line: what a remote channel, the bus and a Telegram alert show of it.
SUMMARY_CHARS = 140

# The snapshot's shape (shapes.Session); an older one is read as absent, a newer one is left alone.
SNAPSHOT_VERSION = 1
# The job files' format (notify/outbox.py); the sender drops an older job unread, leaves a newer
# one.
JOB_VERSION = 1
# The config cache's entries (config/cache.py): another version's entry is a miss, never misread.
# 4: the config has `fleet` and `remote` tables. 5: each channel carries its type's traits
# (`remote`, `updatable`, `loud`: what the rules read without loading lookout/channels/).
# 6: and the `sessions` table. 7: and `host` (fleet.host, which alerts name) with [fleet].
CONFIG_CACHE_VERSION = 7

# Every file lookout writes, with the format of what this version writes there
# (docs/state-files.md). Format 1 is the shape every version so far has written; where a file of
# format 1 carries no "v" it is format 1. A later format puts "v": N first in the file (in each
# record of a .jsonl): a lookout that knows only older formats reads such a file as absent and
# never rewrites or removes it (store.write_json_atomic refuses), and `lookout doctor` names it.
FORMATS = {
    "events.jsonl": 1,
    "sessions/*.json": SNAPSHOT_VERSION,
    "outbox/*.json": JOB_VERSION,
    "spool/*.json": 1,  # a delivery waiting for events.lock (store.spool)
    "deliveries.jsonl": 1,
    "notify-state.json": 1,
    "notify-refs.json": 1,
    "notify-digests.json": 1,
    "config-cache.json": CONFIG_CACHE_VERSION,
    "requests/*.json": 1,
    "answer-tokens.json": 1,
    "telegram-messages.json": 1,
    "slack-messages.json": 1,
    "matrix-messages.json": 1,
    "trust.json": 1,
    "bridge-cursor.json": 1,
    "maintained.json": 1,
    "clock.json": 1,
    "serve.json": 1,
    "serve.codes": 1,
    "suggest-applied.json": 1,
    "steer-rate.json": 1,
    "away.json": 1,  # the away switch (lookout.away)
    "sound-played.json": 1,  # the sound channel's debounce
    "installed.json": 1,  # in the runtime home, as the next two
    "codex-notify.json": 1,
    "runtime.json": 1,
}


def now_ms() -> int:
    """The wall clock in milliseconds, as every time stamp lookout writes."""
    return int(time.time() * 1000)


def clock(ms: int) -> str:
    """A time as the user reads it here: 15:05 today, else "Nov 29 18:19"."""
    moment = time.localtime(ms / 1000)
    if time.strftime("%Y-%m-%d", moment) == time.strftime("%Y-%m-%d", time.localtime()):
        return time.strftime("%H:%M", moment)
    return time.strftime("%b %d %H:%M", moment)


# A run nobody sits at, so nobody can answer its dialogs: `claude -p` and SDK programs
# (CLAUDE_CODE_ENTRYPOINT sdk-*), and `opencode run` (its plugin says so).
OPENCODE_RUN = "opencode-run"


def print_mode(entrypoint: object) -> bool:
    return isinstance(entrypoint, str) and (
        entrypoint.startswith("sdk-") or entrypoint == OPENCODE_RUN
    )


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> int:
    """Seconds in `7d`, `12h`, `1h30m`, `45s` or a bare number of seconds; LookoutError (with a
    hint) for anything else. Every surface that takes a DURATION reads it here."""
    from lookout.errors import LookoutError  # not on a hook's path

    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    total, number = 0, ""
    for ch in text:
        if ch.isdigit():
            number += ch
        elif ch in _UNITS and number:
            total += int(number) * _UNITS[ch]
            number = ""
        else:
            raise LookoutError(
                f"invalid duration {text!r}", hint="use a number with a unit: 30s, 15m, 12h, 7d"
            )
    if number:
        raise LookoutError(f"invalid duration {text!r}: {number} has no unit", hint="e.g. 7d")
    return total
