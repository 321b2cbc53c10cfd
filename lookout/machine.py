"""The session state machine: (session snapshot, event) -> (new snapshot, record, intents).

Pure: no I/O, no clock, no environment. Implements docs/state-model.md: sticky attention,
one episode per prompt, one outcome per turn, duplicates and late deliveries recorded but inert,
subagents as children whose attention is also the parent's."""

from __future__ import annotations

from lookout.words import (
    ATTENTION,
    ATTENTION_KINDS,
    DONE,
    ENDED,
    IDLE,
    SNAPSHOT_VERSION,
    STUCK,
    WORKING,
)
from lookout.words import (
    print_mode as is_print_mode,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from lookout.events import Event
    from lookout.shapes import Actor, Episode, Intent, Record, Session

# The same payload again within this window is one delivery seen twice (the client has fired
# hooks several times per event, and once per settings source that registers the same command).
DUPLICATE_WINDOW_MS = 3000
RECENT_MAX = 16
PENDING_MAX = 32
CHILDREN_MAX = 20

# Hooks registered async may arrive after events that started later; only these can be "late".
# hookspec.EVENTS' async ones but SessionEnd, written out: importing hookspec would cost every hook
# ~0.1 ms (tests/test_machine.py keeps the two equal).
ASYNC_EVENTS = frozenset({"PreToolUse", "PostToolUse", "Notification"})
# Agents whose every event may arrive out of order: OpenCode's plugin starts one process per bus
# event without waiting, and stamps each with the bus order (see runner.record_agent).
STAMPED_AGENTS = frozenset({"opencode"})

# Episodes raised for a tool call end when that call completes (or any call, if unbound).
_TOOL_CLEARED = frozenset({"permission", "question", "plan", "input", "elicitation"})
_ATTENTION_TOOLS = {
    "AskUserQuestion": "question",
    "ExitPlanMode": "plan",
    "EnterPlanMode": "plan",
    "ask_user": "question",  # GitHub Copilot CLI
    "question": "question",  # OpenCode
    "request_user_input": "question",  # OpenAI Codex
}
_NOTIFICATION_ATTENTION = {
    "permission_prompt": "permission",
    "worker_permission_prompt": "permission",
    "elicitation_dialog": "elicitation",
    "elicitation_url_dialog": "elicitation",
    "agent_needs_input": "input",
}


def new_session(event: Event) -> Session:
    return {
        "v": SNAPSHOT_VERSION,
        "session_id": event["session_id"],
        "agent": event["agent"],
        "project": event["project"],
        "cwd": event["cwd"],
        "pid": event["pid"],
        "tmux_pane": event["tmux_pane"],
        "where": event["where"],
        "model": event["model"],
        "status": IDLE,
        "reason": None,
        "detail": None,
        "summary": "",
        "episode": None,
        "main": _actor(IDLE),
        "agents": {},
        "background": [],
        "turn": None,
        "last_turn_ms": None,
        "before_compact": None,
        "recent": [],
        "seq": 0,
        "started_ms": event["ts_ms"],
        "updated_ms": event["ts_ms"],
        "status_ms": 0,
        "last_event": None,
        "ended_reason": None,
        "transcript": None,
        "entrypoint": None,
        "since_ms": None,
        # Whether lookout's hooks report this session (False: known from the client's own
        # registry alone), and what proved its current status (docs/state-model.md).
        "hooks": event["name"] not in _OBSERVED,
        "evidence": _evidence(event),
    }


# Events no hook delivered: a reader's proof (`Reconciled`, with its source) or the user's word.
_OBSERVED = frozenset({"Reconciled", "Ack"})


def _evidence(event: Event) -> str:
    """What an event proves a status with: `hook`, or a reader's source (`client`, `transcript`,
    `process`), or `user` for `lookout ack`."""
    if event["name"] == "Reconciled":
        return event["source"] or "process"
    if event["name"] == "Ack":
        return "user"
    return "hook"


def _actor(status: str, detail: str | None = None) -> Actor:
    return {
        "status": status,
        "reason": None,
        "detail": detail,
        "summary": "",
        "episode": None,
        "pending": {},
        "status_ms": 0,
    }


def apply(session: Session | None, event: Event) -> tuple[Session, Record, list[Intent]]:
    """Fold one event into the session. Returns the new snapshot, the line to append and the
    notification intents (at most a few; usually none)."""
    if session is not None and session.get("v") != SNAPSHOT_VERSION:
        session = None  # another version's snapshot: start afresh rather than misread it
    s = new_session(event) if session is None else session
    s["seq"] = int(s.get("seq", 0)) + 1
    duplicate = _is_duplicate(s, event)
    late = not duplicate and _is_late(s, event)
    intents: list[Intent] = []
    shown = _shown(s)
    if event["name"] not in _OBSERVED:
        _heard(s, event, duplicate)
    if late and event["name"] == "PreToolUse" and event["tool_use_id"]:
        _bookkeep(s, event, _bind_call)  # the status stays as it is
    if not (duplicate or late or (s["status"] == ENDED and event["name"] != "SessionStart")):
        _step(s, event, intents)
        if not s.get("evidence"):
            s["evidence"] = _evidence(event)
    if event["name"] == "PostToolUse" and not duplicate:
        _bookkeep(s, event, _ran_after)  # even when late
    if shown != _shown(s):
        s["changes"] = s.get("changes", 0) + 1
        s["evidence"] = _evidence(event)
    _stamp(s, event, duplicate)
    record = _record(s, event, duplicate, late, intents)
    for intent in intents:
        intent["seq"] = s["seq"]
    return s, record, intents


def _bookkeep(s: Session, event: Event, keep: Callable[[Actor, Event], None]) -> None:
    """`keep` a fact of the event's actor that changes no status."""
    actor = s["agents"].get(event["agent_id"]) if event["agent_id"] else s["main"]
    if actor is not None:
        keep(actor, event)


def _is_late(s: Session, event: Event) -> bool:
    """An async delivery that started before the status it would change (docs/state-model.md)."""
    return (
        (event["name"] in ASYNC_EVENTS or event["agent"] in STAMPED_AGENTS)
        and event["ts_ms"] < int(s.get("status_ms", 0))
        and not _still_open(s, event)
    )


def _shown(s: Session) -> tuple[object, ...]:
    return s["status"], s["reason"], s["detail"], s["episode"]


def _step(s: Session, event: Event, intents: list[Intent]) -> None:
    """What the event means for the session (it is neither a duplicate nor late)."""
    _touch(s, event)
    _dispatch(s, event, intents)
    _derive(s)
    if event["name"] not in _OBSERVED:
        s["hooks"] = True


def _stamp(s: Session, event: Event, duplicate: bool) -> None:
    """When the status last changed (what `late` is judged by), and the last event."""
    if not duplicate and s["recent"] and s["recent"][-1][0] == event["digest"]:
        s["recent"][-1][2:] = [s.get("changes", 0)]
        if event["name"] not in ("CwdChanged",):
            s["status_ms"] = max(int(s.get("status_ms", 0)), event["ts_ms"])
    s["updated_ms"] = max(int(s.get("updated_ms", 0)), event["ts_ms"])
    s["last_event"] = event["name"]


def _heard(s: Session, event: Event, duplicate: bool) -> None:
    """A hook ran: the agent lives, whatever the event means (even late or twice). A session
    shown stuck works again (docs/statuses.md)."""
    s["heard_ms"] = max(int(s.get("heard_ms") or 0), event["ts_ms"])
    if not duplicate and _wake(s):
        _derive(s)


# -- bookkeeping -------------------------------------------------------------------------------


def _is_duplicate(s: Session, event: Event) -> bool:
    """The same delivery twice (lookout's hooks registered in two places) within the window,
    with nothing since that changed the status: the same dialog asked again after an answer is a
    new dialog, however alike its payload (a PermissionRequest carries no call id)."""
    recent = [r for r in s.get("recent", []) if event["ts_ms"] - r[1] <= DUPLICATE_WINDOW_MS]
    # r[2]: how many times the shown status had changed once that delivery was applied.
    changes = s.get("changes", 0)
    seen = any(r[0] == event["digest"] and r[2:3] in ([], [changes]) for r in recent)
    if not seen:
        recent.append([event["digest"], event["ts_ms"]])
    s["recent"] = recent[-RECENT_MAX:]
    return seen


def _still_open(s: Session, event: Event) -> bool:
    """A late PreToolUse of a question or plan still opens its episode, unless that call or its
    turn has ended since: the dialog is on screen whatever came in before its record."""
    if event["name"] != "PreToolUse" or (event["tool_name"] or "") not in _ATTENTION_TOOLS:
        return False
    if event["ts_ms"] < int(s.get("turn_edge_ms", 0)):
        return False
    actor = s["agents"].get(event["agent_id"]) if event["agent_id"] else s["main"]
    return actor is None or event["tool_use_id"] not in actor.get("done_tools", [])


def _touch(s: Session, event: Event) -> None:
    if event["cwd"] and event["name"] != "CwdChanged":
        s["cwd"] = event["cwd"]
    for key in ("pid", "tmux_pane", "model", "transcript", "entrypoint"):
        if event[key] is not None:
            s[key] = event[key]
    if event["pid"] is not None:
        s["pid_start"] = event["pid_start"]  # one process: never one pid with another's start
    if event["where"] is not None:  # a resumed session may live somewhere else now
        s["where"] = event["where"]
    if event["project"] and not s.get("project"):
        s["project"] = event["project"]


def _target(s: Session, event: Event) -> Actor:
    """Events from inside a subagent (they carry agent_id) update that child."""
    agent_id = event["agent_id"]
    if agent_id is None:
        return s["main"]
    children = s["agents"]
    if agent_id not in children:
        children[agent_id] = _child(event)
        _trim_children(s)
    return children[agent_id]


def _child(event: Event) -> Actor:
    child = _actor(WORKING)
    child["agent_type"] = event["agent_type"] or ""
    child["started_ms"] = event["ts_ms"]
    return child


def _trim_children(s: Session) -> None:
    children = s["agents"]
    if len(children) <= CHILDREN_MAX:
        return
    finished = [k for k, c in children.items() if c["status"] in (DONE, IDLE)]
    for key in finished[: len(children) - CHILDREN_MAX]:
        del children[key]


def _runs(event: Event) -> str | None:
    """The call by what runs (its input less the model's commentary), for matching one call's
    hooks: Codex's PermissionRequest carries a justification its PreToolUse and PostToolUse
    do not."""
    return event.get("runs_key") or event["tool_key"]


def _runs_of(episode: Episode) -> str | None:
    return episode.get("runs_key") or episode.get("tool_key")


def _remember_tool(actor: Actor, event: Event) -> None:
    if event["tool_use_id"] and _runs(event):
        pending = actor["pending"]
        pending[event["tool_use_id"]] = _runs(event)
        while len(pending) > PENDING_MAX:
            del pending[next(iter(pending))]


def _forget_tool(actor: Actor, tool_use_id: str | None) -> None:
    if tool_use_id:
        actor["pending"].pop(tool_use_id, None)
        done = actor.setdefault("done_tools", [])
        done.append(tool_use_id)
        del done[:-PENDING_MAX]


def _set(actor: Actor, status: str, detail: str | None = None, summary: str | None = None) -> None:
    """A plain status change; refused while the actor waits on the user (attention is sticky)."""
    if actor["status"] == ATTENTION:
        return
    actor["status"] = status
    actor["reason"] = None
    actor["detail"] = detail
    actor.pop("tool_ms", None)  # a tool that runs says so again (_running_tool)
    if summary is not None:
        actor["summary"] = summary


def _running_tool(actor: Actor, event: Event, at: int | None = None) -> None:
    """The actor runs the tool its detail names, since `at` (the event's time): how long it
    has run is shown, and a session running a tool is not stuck (docs/statuses.md)."""
    if actor["status"] == WORKING and actor["detail"] and actor["detail"] not in _LAUNCHERS:
        actor["tool_ms"] = event["ts_ms"] if at is None else at


# Tools that start a subagent: the subagent's own hooks show its life, not the call.
_LAUNCHERS = frozenset({"Agent", "Task"})


# -- episodes ----------------------------------------------------------------------------------


def _raise(
    s: Session,
    actor: Actor,
    event: Event,
    reason: str,
    intents: list[Intent],
    *,
    tool_key: str | None = None,
    tool_use_id: str | None = None,
    summary: str | None = None,
    tool_name: str | None = None,
    runs: str | None = None,
) -> None:
    """Start an attention episode, or recognise the one already open for the same prompt.
    `tool_key`: the request's own key (its remote request); `runs`: the call by what runs."""
    current = actor.get("episode")
    if runs is None:
        runs = tool_key
    if current is not None and _same_episode(current, reason, runs):
        if tool_use_id and not current.get("tool_use_id"):
            current["tool_use_id"] = tool_use_id
        if tool_key and not current.get("tool_key"):
            current["tool_key"] = tool_key  # the PermissionRequest of a dialog seen first
        return
    if current is not None:
        _resolve(s, actor, event, intents)
    text = summary if summary is not None else event["summary"]
    tool_name = tool_name or event["tool_name"]
    key = ":".join(
        (
            s["session_id"],
            reason,
            tool_key or tool_use_id or "",
            event["agent_id"] or "",
            # The same call asked again (after Esc or No) is another dialog: its key never
            # matches what was proved or sent about the earlier one.
            str(event["ts_ms"]),
        )
    )
    actor["episode"] = {
        "key": key,
        "reason": reason,
        "tool_name": tool_name,
        "tool_key": tool_key,
        "runs_key": runs,
        "tool_use_id": tool_use_id,
        "since_ms": event["ts_ms"],
        "summary": text,
        "by": _evidence(event),  # who reported it: only hook/client attention pages anyone
    }
    actor["status"] = ATTENTION
    actor["reason"] = reason
    actor["detail"] = tool_name
    actor["summary"] = text
    intents.append(_intent(s, event, reason, summary=text, episode=key, tool_name=tool_name))


def _same_episode(current: Episode, reason: str, runs: str | None) -> bool:
    if runs is not None and _runs_of(current) == runs:
        return True  # PermissionRequest for the tool whose PreToolUse opened the episode
    if reason == "permission" and runs is None:
        # Notification(permission_prompt) names no tool: it is the dialog already on screen.
        return current["reason"] in ("permission", "question", "plan")
    return current["reason"] == reason and _runs_of(current) == runs


def _resolve(
    s: Session, actor: Actor, event: Event, intents: list[Intent], outcome: str | None = None
) -> None:
    """End the actor's episode. `outcome` says how, when no hook proved it (a reader's
    `Reconciled`, the user's `Ack`, the process gone): the alert's update says so."""
    episode = actor.get("episode")
    if episode is None:
        return
    actor["episode"] = None
    actor["status"] = WORKING
    actor["reason"] = None
    intent = _intent(
        s,
        event,
        "resolved",
        reason=episode["reason"],
        tool_name=episode.get("tool_name"),
        summary=episode.get("summary", ""),
        episode=episode["key"],
        duration_ms=max(0, event["ts_ms"] - int(episode["since_ms"])),
        outcome=outcome,
    )
    if episode["reason"] == "permission":
        answer, by = _answer(event, outcome)
        if answer is not None:
            intent["answer"] = answer
        if by is not None:
            intent["by"] = by
        # What the deciding hook of that dialog reads once it sees the episode over
        # (lookout.remote.local): every surface then says what the handled update says.
        # Its tool_key too: a deciding hook that never saw the episode open finds it by that;
        # and its call, which a late PostToolUse or the transcript can still say "allowed" of.
        actor["answered"] = {
            "episode": episode["key"],
            "tool_key": episode.get("tool_key"),
            "tool_use_id": episode.get("tool_use_id"),
            "answer": answer,
            "by": by,
        }
    intents.append(intent)


def _answer(event: Event, outcome: str | None) -> tuple[str | None, str | None]:
    """How a permission dialog was answered, and by whom, as far as lookout knows it: a remote
    answer says both; the tool running says allowed (by someone); Esc or No seen in the
    transcript says denied in the terminal."""
    remote = event["remote"]
    if event["name"] == "RemoteDecision" and remote:
        decision = remote.get("decision")
        by = remote.get("by")
        answer = {"allow": "allowed", "allow_always": "allowed", "deny": "denied"}.get(
            str(decision)
        )
        who = "".join(c for c in by if c.isprintable()) if isinstance(by, str) else ""
        return answer, f"by {who}" if who else None
    if event["name"] == "PostToolUse" or outcome in ("approved", "answered"):
        return "allowed", None
    if outcome == "rejected":
        return "denied", "in the terminal"
    if outcome == "denied":
        return "denied", None
    return None, None


def _resolve_all(
    s: Session, event: Event, intents: list[Intent], outcome: str | None = None
) -> None:
    _resolve(s, s["main"], event, intents, outcome)
    for child in s["agents"].values():
        _resolve(s, child, event, intents, outcome)


def _tool_done(
    s: Session, actor: Actor, event: Event, intents: list[Intent], calls: list[list[str | None]]
) -> None:
    """A tool call completed (or was refused): it ends the episode raised for that call."""
    episode = actor.get("episode")
    if episode is not None and episode["reason"] in _TOOL_CLEARED:
        bound = _runs_of(episode) is not None or episode.get("tool_use_id") is not None
        keys = {episode.get("tool_key"), _runs_of(episode)} - {None}
        matches = any(
            (use_id is not None and use_id == episode.get("tool_use_id")) or key in keys
            for use_id, key in calls
        )
        if matches or not bound:
            if not episode.get("tool_use_id"):  # the call that ended it, for a late answer
                episode["tool_use_id"] = next((u for u, key in calls if u and key in keys), None)
            _resolve(s, actor, event, intents)
    for use_id, _ in calls:
        _forget_tool(actor, use_id)


def _remote_decision(s: Session, event: Event, intents: list[Intent]) -> None:
    """Someone answered the permission from afar (lookout.remote): its episode is over."""
    actor = _target(s, event)
    asked: Any = actor.get("episode") or {}
    _tool_done(s, actor, event, intents, [[None, _runs(event)]])
    if actor["status"] != WORKING:
        return
    allowed = (event["remote"] or {}).get("decision") in ("allow", "allow_always")
    tool = event["tool_name"]
    if allowed and tool and tool not in _ATTENTION_TOOLS:  # the allowed tool runs now
        # (the event's own summary says who answered: the command is the dialog's)
        _set(actor, WORKING, tool, asked.get("summary") if asked.get("tool_name") == tool else None)
        _running_tool(actor, event)
    else:  # denied (the agent goes on), or a question's answer: the model takes it
        _set(actor, WORKING, "Thinking")


# -- the event table ---------------------------------------------------------------------------


_TURN_EDGES = frozenset(
    {"UserPromptSubmit", "Stop", "StopFailure", "SessionStart", "SessionEnd", "Interrupt"}
)


def _dispatch(s: Session, event: Event, intents: list[Intent]) -> None:
    name = event["name"]
    if name in _TURN_EDGES:
        s["turn_edge_ms"] = max(int(s.get("turn_edge_ms", 0)), event["ts_ms"])
    handler = _HANDLERS.get(name)
    if handler is not None:
        handler(s, event, intents)


def _session_start(s: Session, event: Event, intents: list[Intent]) -> None:
    source = event["source"]
    if source == "compact":
        return  # auto-compaction happens mid-turn: nothing changes for the user
    was_ended = s["status"] == ENDED
    if source == "clear" or was_ended:
        _resolve_all(s, event, intents)
    if (source != "clear" and source is not None) or was_ended:
        # A new client process: children and background tasks of the old one are gone.
        s["agents"] = {}
        s["background"] = []
    s["ended_reason"] = None
    s["status"] = IDLE
    main = s["main"]
    main.update(_actor(IDLE))
    s["before_compact"] = None
    if source == "clear":
        s["turn"] = None
    intents.append(_intent(s, event, "session_start", reason=source))


def _setup(s: Session, event: Event, intents: list[Intent]) -> None:
    _set(s["main"], WORKING, "Setup")


def _prompt(s: Session, event: Event, intents: list[Intent]) -> None:
    if event["source"] == "task-notification":
        # Injected by the client when one background agent ends: another may still wait on a dialog.
        _resolve(s, s["main"], event, intents)
    else:
        _resolve_all(s, event, intents)
        # The user prompts again: the main thread's calls of the turn before are over, answered
        # or not (Esc at a dialog fires no hook). None of them is the call a dialog asks next.
        s["main"]["pending"] = {}
    turn = s.get("turn")
    prompt_id = event["prompt_id"]
    if turn is not None and prompt_id is not None and turn.get("id") == prompt_id:
        pass  # UserPromptExpansion then UserPromptSubmit of the same prompt: one turn
    elif (
        event["source"] == "task-notification"
        and turn is not None
        and turn.get("outcome") is None
        and turn.get("stopped")
    ):
        # A finished background agent wakes the session: the user's turn goes on.
        turn["id"] = prompt_id
        turn["stopped"] = False
    else:
        s["turn"] = {
            "id": prompt_id,
            "started_ms": event["ts_ms"],
            "summary": event["summary"],
            "outcome": None,
            "stopped": False,
            "idle_sent": False,
        }
        # Agents that finished in an earlier turn are history, not part of this one.
        s["agents"] = {k: c for k, c in s["agents"].items() if c["status"] != DONE}
    _set(s["main"], WORKING, None, event["summary"])


def _pre_tool_use(s: Session, event: Event, intents: list[Intent]) -> None:
    actor = _target(s, event)
    _remember_tool(actor, event)
    _bind_call(actor, event)
    tool = event["tool_name"]
    reason = _ATTENTION_TOOLS.get(tool or "")
    if reason is not None:
        before = len(intents)
        _raise(
            s,
            actor,
            event,
            reason,
            intents,
            tool_key=event["tool_key"],
            tool_use_id=event["tool_use_id"],
            runs=_runs(event),
        )
        if len(intents) > before and intents[-1]["kind"] == reason:
            # Its PermissionRequest (the same call, the same request id) comes next or came
            # first: the alert finds the request to answer whichever hook raised it.
            intents[-1]["request"] = [event["agent_id"], event["prompt_id"], event["tool_key"]]
    else:
        _set(actor, WORKING, tool, event["summary"])
        _running_tool(actor, event)


def _ran_after(actor: Actor, event: Event) -> None:
    """The async PostToolUse of a call whose dialog the sync PostToolBatch already ended, not
    saying how (it started first, but came later): the call ran, so it was allowed. The deciding
    hook waits for this (lookout.remote.local)."""
    said = actor.get("answered")
    if not isinstance(said, dict) or said.get("answer") is not None:
        return
    use_id = said.get("tool_use_id")
    if (use_id and use_id == event["tool_use_id"]) or (
        not use_id and said.get("tool_key") and said.get("tool_key") == event["tool_key"]
    ):
        said["answer"] = "allowed"


def _bind_call(actor: Actor, event: Event) -> None:
    """The async PreToolUse of the call whose PermissionRequest came first (even one recorded as
    late): the open episode learns its tool_use_id, which the transcript's answer is keyed by."""
    episode = actor.get("episode")
    if (
        episode is not None
        and not episode.get("tool_use_id")
        and _runs(event) is not None
        and _runs_of(episode) == _runs(event)
    ):
        episode["tool_use_id"] = event["tool_use_id"]


def _permission_request(s: Session, event: Event, intents: list[Intent]) -> None:
    actor = _target(s, event)
    key = event["tool_key"]
    runs = _runs(event)
    # Claude Code and Codex send no tool_use_id here (OpenCode does): find the pending
    # PreToolUse of the same call by what runs: the newest one (an identical call refused with
    # Esc left no hook).
    pending = actor["pending"]
    use_id = event["tool_use_id"] or next(
        (u for u, k in reversed(pending.items()) if k == runs), None
    )
    # The dialog of AskUserQuestion / ExitPlanMode is the question or the plan, whether or not
    # their (async) PreToolUse has been recorded yet.
    reason = _ATTENTION_TOOLS.get(event["tool_name"] or "", "permission")
    before = len(intents)
    _raise(s, actor, event, reason, intents, tool_key=key, tool_use_id=use_id, runs=runs)
    if len(intents) > before and intents[-1]["kind"] == reason:
        # What names the request a remote answer may be waiting on (lookout.remote.requests):
        # notify links the alert to its page when [remote] is on.
        intents[-1]["request"] = [event["agent_id"], event["prompt_id"], key]


def _tool_finished(s: Session, event: Event, intents: list[Intent]) -> None:
    actor = _target(s, event)
    if event["name"] == "PostToolBatch":
        calls = event["batch"]
    else:
        calls = [[event["tool_use_id"], _runs(event)]]
    _tool_done(s, actor, event, intents, calls)
    if _cancelled(s, actor, event):
        return  # the call of a turn lookout stopped reports it ended: the turn stays over
    _set(actor, WORKING, "Thinking")


def _cancelled(s: Session, actor: Actor, event: Event) -> bool:
    """Whether the main thread is idle in a turn `lookout interrupt` stopped for an agent that
    fires no hook for it: Gemini CLI then fires AfterTool for the cancelled call, and nothing
    after (its next prompt, or a new tool call, shows it working again)."""
    turn = s.get("turn")
    return (
        event["agent_id"] is None
        and actor["status"] == IDLE
        and turn is not None
        and turn.get("cancelled") is True
    )


def _notification(s: Session, event: Event, intents: list[Intent]) -> None:
    kind = event["notification_type"]
    actor = _target(s, event)
    reason = _NOTIFICATION_ATTENTION.get(kind or "")
    if reason is not None:
        if reason == "permission" and _any_attention(s):
            return  # the dialog whose PermissionRequest (main or child) already opened the episode
        _open_dialog(s, actor, event, reason, intents)
    elif kind == "idle_prompt":
        main = s["main"]
        if main["status"] != ATTENTION:
            main["status"] = IDLE
            main["detail"] = None
        turn = s.get("turn")
        if turn is None or not turn.get("idle_sent"):
            if turn is not None:
                turn["idle_sent"] = True
            intents.append(_intent(s, event, "idle"))
    elif kind == "push_notification":
        intents.append(_intent(s, event, "message"))


def _open_dialog(
    s: Session, actor: Actor, event: Event, reason: str, intents: list[Intent]
) -> None:
    """A dialog that no PermissionRequest announced (the auto-mode classifier fallback, seen by
    its Notification or by the client's registry): it asks about the pending call, whose
    PreToolUse said what it does."""
    runs = None
    use_id = None
    tool_name = None
    summary = None
    if reason == "permission" and actor["pending"]:
        use_id, runs = next(reversed(actor["pending"].items()))
        tool_name = runs.rpartition(":")[0] if runs else None
        if tool_name and actor["detail"] == tool_name and actor["summary"]:
            summary = actor["summary"]
    _raise(
        s,
        actor,
        event,
        reason,
        intents,
        tool_use_id=use_id,
        summary=summary,
        tool_name=tool_name,
        runs=runs,
    )


def _any_attention(s: Session) -> bool:
    return s["main"]["status"] == ATTENTION or any(
        c["status"] == ATTENTION for c in s["agents"].values()
    )


def _elicitation(s: Session, event: Event, intents: list[Intent]) -> None:
    _raise(s, _target(s, event), event, "elicitation", intents)


def _elicitation_result(s: Session, event: Event, intents: list[Intent]) -> None:
    actor = _target(s, event)
    episode = actor.get("episode")
    if episode is not None and episode["reason"] == "elicitation":
        _resolve(s, actor, event, intents)
    _set(actor, WORKING, None)


def _stop(s: Session, event: Event, intents: list[Intent]) -> None:
    # The main thread's turn ended; a background agent's dialog stays open (its Stop can come
    # after the agent's PermissionRequest): only an agent this Stop no longer lists is over.
    _resolve(s, s["main"], event, intents)
    if event["background"] is not None:
        listed = {task_id for task_id, _ in event["background"]}
        for agent_id, child in s["agents"].items():
            if agent_id not in listed:
                _resolve(s, child, event, intents)
    main = s["main"]
    main["status"] = IDLE
    main["reason"] = None
    main["detail"] = None
    main["summary"] = event["summary"]
    if event["background"] is not None:
        running = [task_id for task_id, _ in event["background"]]
        s["background"] = event["background"]
        for agent_id, child in s["agents"].items():
            # Not running at Stop means finished, even if its SubagentStop was lost.
            if child["status"] == WORKING and agent_id not in running:
                child["status"] = DONE
    turn = _turn_for(s, event)
    turn["stopped"] = True
    if _running(s):
        return  # the user's request is not done while its background agents run
    _outcome(s, event, turn, intents, "question" if asks_user(event["message"]) else "done")


def _interrupt(s: Session, event: Event, intents: list[Intent]) -> None:
    """Codex's Esc (0.169.0 `Interrupt`; no Stop follows): the turn is over, and a dialog on
    screen was refused with it (Esc at the approval prompt fires it too)."""
    main = s["main"]
    _resolve_all(s, event, intents, "rejected")
    main["pending"] = {}  # no call of the stopped turn is the one a dialog asks next
    _interrupted(s, main)


def _model_request(s: Session, event: Event, intents: list[Intent]) -> None:
    """Codex asks its model again (0.169.0 `PreModelRequest`): a sign of life (the hook ran),
    and a dialog of the actor still shown is over: the model only runs once it was answered (a
    refused call's output goes to it; an approved one's PostToolUse came first)."""
    actor = _target(s, event)
    episode = actor.get("episode")
    if episode is not None and episode["reason"] in _TOOL_CLEARED:
        _resolve(s, actor, event, intents)  # answered, but how is not said: none claimed
        _forget_tool(actor, episode.get("tool_use_id"))
        _set(actor, WORKING, "Thinking")
    elif actor["status"] == WORKING and "tool_ms" in actor:
        _set(actor, WORKING, "Thinking")  # the tool shown ran out: its output goes to the model


def _stop_failure(s: Session, event: Event, intents: list[Intent]) -> None:
    main = s["main"]
    failed_again = main["status"] == ATTENTION and main["reason"] == "error"
    if failed_again:
        # A new failure (a /compact after a 429) while the old one waits: nothing was handled.
        main["episode"] = None
        main["status"] = WORKING
    _resolve(s, main, event, intents)
    turn = _turn_for(s, event)
    turn["stopped"] = True
    _raise(s, main, event, "error", intents, summary=event["summary"])
    main["detail"] = event["error"]  # rate_limit, authentication_failed ... (docs/statuses.md)
    # The error is both the episode and the turn's outcome: notify once, as the outcome.
    opened = intents.pop() if intents and intents[-1]["kind"] == "error" else None
    if opened is not None and event["error"]:
        opened["error"] = event["error"]  # a sound plays resource.limit for a limit
    if failed_again and turn.get("outcome") is not None and opened is not None:
        intents.append(opened)  # the turn's outcome was decided by the first failure
        return
    _outcome(s, event, turn, intents, "error", opened)


def _turn_for(s: Session, event: Event) -> dict[str, Any]:
    turn = s.get("turn")
    if turn is None:
        turn = {
            "id": event["prompt_id"],
            "started_ms": None,
            "summary": "",
            "outcome": None,
            "stopped": False,
            "idle_sent": False,
        }
        s["turn"] = turn
    return turn


def _outcome(
    s: Session,
    event: Event,
    turn: dict[str, Any],
    intents: list[Intent],
    kind: str,
    base: Intent | None = None,
) -> None:
    """A turn ends once: a second Stop (or a duplicate) of the same turn changes nothing."""
    started = turn.get("started_ms")
    duration = event["ts_ms"] - started if isinstance(started, int) else None
    if duration is not None:
        s["last_turn_ms"] = duration
    if turn.get("outcome") is not None:
        return
    turn["outcome"] = kind
    intent = base or _intent(s, event, kind)
    intent["kind"] = kind
    intent["duration_ms"] = duration
    if kind == "question":
        intent["question"] = event["message"]
    intents.append(intent)


def _subagent_start(s: Session, event: Event, intents: list[Intent]) -> None:
    if event["agent_id"] is None:
        return
    child = _target(s, event)
    child.update(_actor(WORKING))
    child["agent_type"] = event["agent_type"] or ""
    child["started_ms"] = event["ts_ms"]
    _set(s["main"], WORKING, "Agent")


def _subagent_stop(s: Session, event: Event, intents: list[Intent]) -> None:
    agent_id = event["agent_id"]
    if agent_id is None:
        return
    if agent_id not in s["agents"] and not event["agent_type"]:
        return  # an internal agent (compaction): not a child the user started
    child = _target(s, event)
    _resolve(s, child, event, intents)
    was_waiting = s["status"] == WORKING and bool(_running(s))
    child["status"] = DONE
    child["detail"] = None
    child["summary"] = event["summary"]
    s["background"] = [t for t in s.get("background", []) if t[0] != agent_id]
    turn = s.get("turn")
    if was_waiting and not _running(s) and turn is not None and turn.get("stopped"):
        # The parent is unchanged: the client wakes it with a task-notification turn next, so
        # it is not idle (and not done) between its agent's end and that turn.
        _set(s["main"], WORKING, "Thinking")
    started = child.get("started_ms")
    intent = _intent(s, event, "subagent_done", agent_id=agent_id)
    intent["duration_ms"] = event["ts_ms"] - started if isinstance(started, int) else None
    intents.append(intent)


def _teammate_idle(s: Session, event: Event, intents: list[Intent]) -> None:
    if event["agent_id"] is not None:
        child = _target(s, event)
        if child["status"] != ATTENTION:
            child["status"] = IDLE
            child["detail"] = None


def _pre_compact(s: Session, event: Event, intents: list[Intent]) -> None:
    main = s["main"]
    if main["status"] == ATTENTION:
        return
    if not (main["status"] == WORKING and main["detail"] == "Compacting"):
        s["before_compact"] = {
            "status": main["status"],
            "reason": main["reason"],
            "detail": main["detail"],
            "summary": main["summary"],
        }
    _set(main, WORKING, "Compacting")


def _post_compact(s: Session, event: Event, intents: list[Intent]) -> None:
    main = s["main"]
    before = s.get("before_compact")
    if main["status"] == WORKING and main["detail"] == "Compacting" and before is not None:
        main["status"] = before["status"]
        main["reason"] = before["reason"]
        main["detail"] = before["detail"]
        main["summary"] = before["summary"]
    s["before_compact"] = None


def _session_end(s: Session, event: Event, intents: list[Intent]) -> None:
    _end(s, event, intents, event["source"] or "other")


def _end(s: Session, event: Event, intents: list[Intent], reason: str) -> None:
    _resolve_all(s, event, intents, "ended")
    s["ended_reason"] = reason
    s["status"] = ENDED
    main = s["main"]
    main.update(_actor(ENDED))
    for child in s["agents"].values():
        if child["status"] in (WORKING, IDLE):
            child["status"] = DONE
    s["background"] = []
    intents.append(_intent(s, event, "session_end", reason=s["ended_reason"]))


def _reconciled(s: Session, event: Event, intents: list[Intent]) -> None:
    """What a reader proved when no hook said it (see lookout.reconcile): it ends the episode
    it names, or the turn; once anything newer happened it changes nothing."""
    outcome = event["outcome"]
    if outcome == "process_gone":
        _end(s, event, intents, "process_gone")
        return
    timed = _TIMED.get(outcome or "")
    if timed is not None:
        timed(s, event, intents)
        return
    if _newer_than_quiet(s, event):
        _wake(s)  # what the client left behind since the session went quiet: it lives
    if outcome == "alive":
        return
    if event["source"] == "client":
        _client_status(s, event, intents)
        return
    agent_id = event["agent_id"]
    actor = s["agents"].get(agent_id) if agent_id else s["main"]
    if actor is None:
        return
    if outcome == "interrupted":
        # Esc while Claude worked: the transcript's interrupt marker, newer than the status.
        observed = event["observed_ms"] or 0
        if agent_id or actor["status"] != WORKING or observed <= int(s.get("status_ms", 0)):
            return
        if event["source"] == "steer":
            # lookout's own key press: no hook will end the turn (_cancelled), known or not.
            _turn_for(s, event)["cancelled"] = True
        _interrupted(s, actor)
        return
    _answered(s, actor, event, intents)


def _answered(s: Session, actor: Actor, event: Event, intents: list[Intent]) -> None:
    """The episode the finding names was answered (transcript, process): how decides what the
    actor does next."""
    outcome = event["outcome"]
    episode = actor.get("episode")
    if episode is None or episode["key"] != event["episode"]:
        return  # answered some other way already, or another dialog is open now
    _resolve(s, actor, event, intents, outcome)
    if outcome != "approved":
        _forget_tool(actor, episode.get("tool_use_id"))  # answered: no later dialog's call
    if outcome == "approved":  # the approved tool runs (its process is there)
        _set(actor, WORKING, episode.get("tool_name"), episode.get("summary") or "")
        _running_tool(actor, event)
    elif outcome == "rejected" and not event["agent_id"]:
        _interrupted(s, actor)  # "No" / Esc ends the turn: the prompt is back
    else:  # answered (the tool already returned), or refused and the agent goes on
        _set(actor, WORKING, "Thinking")


# -- time passing with no event (lookout.silence judges it; readers and the sender record it) --


def _stuck(s: Session, event: Event, intents: list[Intent]) -> None:
    """Working, no tool running, and no sign of life since `at_ms` for the configured time:
    `attention stuck`, one `stuck` alert. A finding older than the session's last hook, or a
    session no longer plainly working, changes nothing."""
    main = s["main"]
    quiet = event["at_ms"]
    # Shown working: nothing waits on the user (an attention anywhere would show instead).
    if quiet is None or int(s.get("heard_ms") or 0) > quiet or s["status"] != WORKING:
        return
    before = {"status": main["status"], "detail": main["detail"], "summary": main["summary"]}
    _raise(s, main, event, STUCK, intents, summary=event["summary"])
    episode = main["episode"]
    if episode is None:  # pragma: no cover - _raise always opens one
        return
    episode["since_ms"] = quiet  # its AGE is how long it has been silent
    episode["quiet_ms"] = quiet
    episode["before"] = before
    main["detail"] = before["detail"]
    if intents and intents[-1]["kind"] == STUCK:
        intents[-1]["reason"] = STUCK
        intents[-1]["message"] = event["summary"]


def _wake(s: Session) -> bool:
    """A stuck session shows a sign of life: it works again, as it did before it went quiet.
    True when it was stuck."""
    main = s["main"]
    episode = main.get("episode")
    if episode is None or episode["reason"] != STUCK:
        return False
    before = episode.get("before") or {}
    main["episode"] = None
    main["status"] = str(before.get("status") or WORKING)
    main["reason"] = None
    main["detail"] = before.get("detail")
    main["summary"] = str(before.get("summary") or "")
    return True


def _newer_than_quiet(s: Session, event: Event) -> bool:
    """A reader's proof of something the client did after the session went quiet."""
    episode = s["main"].get("episode")
    if episode is None or episode["reason"] != STUCK:
        return False
    return int(event["observed_ms"] or 0) > int(episode.get("quiet_ms") or 0)


def _limit(s: Session, event: Event, intents: list[Intent]) -> None:
    """When the usage limit that failed the turn lifts (`at_ms`), read by a reader from what
    the client printed: kept on the error's episode, shown as `until`."""
    episode = _limit_episode(s, event)
    if episode is not None and event["at_ms"] and "until_ms" not in episode:
        episode["until_ms"] = event["at_ms"]


def _limit_lifted(s: Session, event: Event, intents: list[Intent]) -> None:
    """The limit's time passed while the session still waits: one `limit_lifted` alert."""
    episode = _limit_episode(s, event)
    if episode is None or episode.get("lifted"):
        return
    until = episode.get("until_ms")
    if not isinstance(until, int) or int(event["observed_ms"] or 0) < until:
        return
    episode["lifted"] = True
    intent = _intent(s, event, "limit_lifted", reason=s["main"]["detail"] or "error")
    intent["summary"] = intent["message"] = event["summary"]
    intents.append(intent)


def _limit_episode(s: Session, event: Event) -> Episode | None:
    episode = s["main"].get("episode")
    if episode is None or episode["reason"] != "error" or episode["key"] != event["episode"]:
        return None
    return episode


_TIMED = {"stuck": _stuck, "limit": _limit, "limit_lifted": _limit_lifted}


# What the client's `waitingFor` says a dialog is (2.1.332); any other text is still a dialog.
_WAITING_FOR = {"permission prompt": "permission", "input needed": "question"}
# Episodes the client's own status can end: dialogs it draws (an API error is no dialog).
_CLIENT_CLEARED = frozenset({"permission", "question", "plan"})


def _client_status(s: Session, event: Event, intents: list[Intent]) -> None:
    """The client's registry says busy / waiting / idle as of `observed_ms`: only what is newer
    than lookout's own knowledge changes anything (a hook that came later wins)."""
    outcome = event["outcome"]
    observed = event["observed_ms"] or 0
    newer = observed > int(s.get("status_ms", 0))
    if outcome == "waiting":
        if newer and not _any_attention(s):
            reason = _WAITING_FOR.get(event["notification_type"] or "", "input")
            _open_dialog(s, s["main"], event, reason, intents)
        return
    if outcome not in ("busy", "idle"):
        return  # a status this lookout does not know: no signal
    _client_answered(s, event, intents, observed)
    if newer:
        _client_turn(s["main"], outcome)


def _client_answered(s: Session, event: Event, intents: list[Intent], observed: int) -> None:
    """No dialog is open (busy or idle): every dialog that opened before this status was
    answered: Yes when the client is busy again, No or Esc when it is idle."""
    busy = event["outcome"] == "busy"
    for agent_id, actor in [(None, s["main"]), *s["agents"].items()]:
        episode = actor.get("episode")
        if episode is None or episode["reason"] not in _CLIENT_CLEARED:
            continue
        if int(episode["since_ms"]) >= observed:
            continue
        _resolve(s, actor, event, intents, "approved" if busy else "rejected")
        if busy:
            # The approved tool runs (an MCP call, a WebFetch: no hook until it returns).
            _set(actor, WORKING, episode.get("tool_name"), episode.get("summary") or "")
            _running_tool(actor, event, observed)
        elif agent_id is None:
            _interrupted(s, actor)
        else:
            _set(actor, WORKING, "Thinking")


def _client_turn(main: Actor, outcome: str) -> None:
    """A newer busy starts a turn no hook announced; a newer idle ends the one shown."""
    if main["status"] == ATTENTION:
        return
    if outcome == "busy" and main["status"] == IDLE:
        _set(main, WORKING)  # a turn runs (a session without lookout's hooks: no prompt hook)
    elif outcome == "idle" and main["status"] == WORKING:
        # The turn is over; its outcome is still Stop's to decide when a hook reports it.
        main["status"] = IDLE
        main["reason"] = None
        main["detail"] = None


def _interrupted(s: Session, main: Actor) -> None:
    main["status"] = IDLE
    main["reason"] = None
    main["detail"] = None
    turn = s.get("turn")
    if turn is not None:
        turn["stopped"] = True
        if turn.get("outcome") is None:
            turn["outcome"] = "interrupted"  # the user stopped it: not "done"


def _ack(s: Session, event: Event, intents: list[Intent]) -> None:
    """`lookout ack`: the user says nothing waits on them here, whatever the hooks last said."""
    main = s["main"]
    was_waiting = main["status"] == ATTENTION
    _resolve_all(s, event, intents, "ack")
    if was_waiting:
        _interrupted(s, main)


def _cwd_changed(s: Session, event: Event, intents: list[Intent]) -> None:
    if event["new_cwd"]:
        s["cwd"] = event["new_cwd"]


_HANDLERS = {
    "SessionStart": _session_start,
    "Setup": _setup,
    "UserPromptSubmit": _prompt,
    "UserPromptExpansion": _prompt,
    "PreToolUse": _pre_tool_use,
    "PermissionRequest": _permission_request,
    "PermissionDenied": _tool_finished,  # auto mode refused it: Claude goes on
    "PermissionReplied": _tool_finished,  # OpenCode: the user answered the dialog
    "PostToolUse": _tool_finished,
    "PostToolUseFailure": _tool_finished,
    "PostToolBatch": _tool_finished,
    "Notification": _notification,
    "Elicitation": _elicitation,
    "ElicitationResult": _elicitation_result,
    "Stop": _stop,
    "StopFailure": _stop_failure,
    "SubagentStart": _subagent_start,
    "SubagentStop": _subagent_stop,
    "TeammateIdle": _teammate_idle,
    "PreCompact": _pre_compact,
    "PostCompact": _post_compact,
    "SessionEnd": _session_end,
    "Interrupt": _interrupt,
    "PreModelRequest": _model_request,
    "CwdChanged": _cwd_changed,
    "RemoteDecision": _remote_decision,
    "Reconciled": _reconciled,
    "Ack": _ack,
}


# -- derived status ----------------------------------------------------------------------------


def _running(s: Session) -> list[str]:
    """Ids of background work still running: Stop's list plus children not yet finished."""
    ids = [task_id for task_id, _ in s.get("background", [])]
    for agent_id, child in s["agents"].items():
        if child["status"] in (WORKING, ATTENTION) and agent_id not in ids:
            ids.append(agent_id)
    return ids


def _derive(s: Session) -> None:
    """The session's status as the user sees it, from the main thread and its children."""
    if s["status"] == ENDED and s.get("ended_reason") is not None:
        s["reason"] = s["ended_reason"]
        s["detail"] = None
        s["episode"] = None
        return
    main = s["main"]
    shown: Actor = main
    label = None
    if main["status"] != ATTENTION:
        for child in s["agents"].values():
            if child["status"] == ATTENTION:
                shown = child
                label = child.get("agent_type") or "subagent"
                break
    s["status"] = shown["status"]
    s["reason"] = shown["reason"]
    detail = shown["detail"]
    s["detail"] = f"{label}: {detail}" if label and detail else (label or detail)
    s["summary"] = shown["summary"]
    episode = shown.get("episode")
    s["episode"] = episode["key"] if episode else None
    s["since_ms"] = episode["since_ms"] if episode else None  # the AGE of a row that waits
    if s["status"] == IDLE:
        running = _running(s)
        if running:
            kinds = {t[1] for t in s.get("background", [])} - {"subagent", ""}
            noun = "background task" if kinds else "background agent"
            s["status"] = WORKING
            s["detail"] = f"{len(running)} {noun}{'' if len(running) == 1 else 's'}"


# -- output ------------------------------------------------------------------------------------


def make_intent(
    kind: str,
    session_id: str,
    ts_ms: int,
    *,
    agent: str = "claude",
    agent_id: str | None = None,
    agent_type: str | None = None,
    project: str = "",
    cwd: str = "",
    reason: str | None = None,
    tool_name: str | None = None,
    summary: str = "",
    message: str = "",
    question: str | None = None,
    duration_ms: int | None = None,
    episode: str | None = None,
    tmux_pane: str | None = None,
    pid: int | None = None,
    print_mode: bool = False,
    outcome: str | None = None,
    title: str | None = None,
) -> Intent:
    """The one builder of an Intent (the machine's, `lookout test`'s, the tests'): every key."""
    intent: Intent = {
        "kind": kind,
        "session_id": session_id,
        "agent": agent,
        "agent_id": agent_id,
        "agent_type": agent_type,
        "project": project,
        "cwd": cwd,
        # An attention kind is its own reason; `resolved` and session ends name theirs.
        "reason": reason if reason is not None else kind if kind in ATTENTION_KINDS else None,
        "tool_name": tool_name,
        "summary": summary,
        "message": message,
        "question": question,
        "duration_ms": duration_ms,
        "episode": episode,
        "ts_ms": ts_ms,
        "tmux_pane": tmux_pane,
        "pid": pid,
        "print_mode": print_mode,
    }
    if outcome is not None:
        intent["outcome"] = outcome
    if title:  # the client's display name for the session (lookout.client_sessions)
        intent["title"] = title
    return intent


def _intent(s: Session, event: Event, kind: str, **extra: Any) -> Intent:
    asked = kind == "question" and event["tool_name"] == "AskUserQuestion"
    fields: dict[str, Any] = {
        "agent": s.get("agent", "claude"),
        # Attention raised inside a subagent is the session's attention: only subagent-scoped
        # kinds carry the child's id (rules filter those with include_subagents).
        "agent_type": event["agent_type"] if event["agent_id"] else None,
        "project": s.get("project") or "",
        "cwd": s.get("cwd") or "",
        "tool_name": event["tool_name"],
        "summary": event["summary"],
        "message": event["message"],
        "question": event["message"] if asked else None,
        "tmux_pane": s.get("tmux_pane"),
        "pid": s.get("pid"),
        # `claude -p` (and SDK programs): nobody is at a terminal to answer a dialog.
        "print_mode": is_print_mode(s.get("entrypoint")),
        "title": s.get("name"),
    }
    fields.update(extra)
    return make_intent(kind, s["session_id"], event["ts_ms"], **fields)


def _record(s: Session, event: Event, duplicate: bool, late: bool, intents: list[Intent]) -> Record:
    child = s["agents"].get(event["agent_id"]) if event["agent_id"] else None
    duration = None
    if event["name"] in ("Stop", "StopFailure") and not (duplicate or late):
        duration = s.get("last_turn_ms")
    record: Record = {
        "seq": s["seq"],
        "session_id": s["session_id"],
        "agent": s.get("agent", "claude"),
        "event": event["name"],
        "status": s["status"],
        "reason": s["reason"],
        "detail": s["detail"],
        "agent_id": event["agent_id"],
        "agent_type": event["agent_type"] if event["agent_id"] else None,
        "agent_status": child["status"] if child else None,
        "cwd": s.get("cwd"),
        "project": s.get("project"),
        "tool_name": event["tool_name"],
        "notification_type": event["notification_type"],
        "source": event["source"],
        "error": event["error"],
        "pid": event["pid"],
        "tmux_pane": event["tmux_pane"],
        "duplicate": duplicate,
        "late": late,
        "duration_ms": duration,
        "summary": event["summary"],
        "notify": [i["kind"] for i in intents],
    }
    if event.get("remote"):
        record["remote"] = event["remote"]
    rule = event.get("rule")
    if rule:  # PermissionRequest: the exact rule that allows it (lookout suggest)
        record["rule"] = rule
    if event["outcome"] is not None:  # Reconciled / Ack: what proved it (source) and what it was
        record["outcome"] = event["outcome"]
    said = [i for i in intents if i["kind"] == "resolved" and i.get("answer")]
    if said:  # how a permission dialog it ended was answered, as the alerts say it (tail)
        record["answer"] = " ".join(str(x) for x in (said[-1]["answer"], said[-1].get("by")) if x)
    return record


def asks_user(message: str) -> bool:
    """Whether the turn's last message ends by asking the user something."""
    for line in reversed(message.splitlines()):
        text = line.strip().rstrip("*_`'\")] ")
        if text:
            return text.endswith("?")
    return False
