"""The CESP 1.0 event categories and lookout's mapping contract: which category each kind of
notification plays (the spec's section 6: the player publishes its mapping; docs/notifications.md
has the table). Pure."""

from __future__ import annotations

from lookout.words import ATTENTION_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

CORE = (
    "session.start",
    "task.acknowledge",
    "task.complete",
    "task.error",
    "input.required",
    "resource.limit",
)
EXTENDED = ("user.spam", "session.end", "task.progress")
CATEGORIES = CORE + EXTENDED

# The categories a sound channel plays unless its `categories` says otherwise: every one
# lookout maps a kind to.
PLAYED = ("input.required", "task.error", "resource.limit", "task.complete", "session.start",
          "session.end")  # fmt: skip
# "Needs you": within the debounce window such a sound still plays after a lesser one, so a
# finished turn never hides the question that came a second later.
URGENT = frozenset({"input.required", "task.error", "resource.limit"})

# A failed turn whose error is a limit (StopFailure's `error`): a rate or usage limit, credits
# gone, the output's token limit.
LIMIT_ERRORS = frozenset({"rate_limit", "billing_error", "max_output_tokens"})

KIND_CATEGORY: dict[str, str | None] = {
    **dict.fromkeys(ATTENTION_KINDS, "input.required"),
    "error": "task.error",  # resource.limit when the error is a limit (LIMIT_ERRORS)
    "stuck": "task.error",  # working with no sign of life: the turn has failed, not asked
    "limit_lifted": "input.required",  # the limit is over and the session waits on you again
    "idle": "input.required",  # still waiting for your next prompt
    "done": "task.complete",
    "subagent_done": "task.complete",  # only where a rule has include_subagents = true
    "session_start": "session.start",
    "session_end": "session.end",
    "message": None,  # the agent's own note: no category says "for your information"
    "resolved": None,  # you answered (or it ended): nothing to call you for
}


def error_code(intent: Mapping[str, object]) -> str | None:
    """The API error that ended a turn: the intent's `error` when it carries one, else the
    first word of its summary, which the machine writes as `rate_limit: ...`."""
    code = intent.get("error")
    if isinstance(code, str) and code:
        return code
    summary = intent.get("summary")
    if not isinstance(summary, str):
        return None
    head = summary.partition(":")[0].strip()
    return head if head and all(c.islower() or c == "_" for c in head) else None


def category_for(kind: str, intent: Mapping[str, object] | None = None) -> str | None:
    """The CESP category a notification of `kind` plays; None: no sound (the spec asks for no
    error either)."""
    category = KIND_CATEGORY.get(kind)
    if kind == "error" and error_code(intent or {}) in LIMIT_ERRORS:
        return "resource.limit"
    return category
