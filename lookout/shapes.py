"""The shapes lookout's data takes on disk and between its parts, and the words they use.

Imported only under TYPE_CHECKING (hooks never pay for `typing`): at run time these are plain
dicts and strings. Files that hold a shape carry `"v"`; a reader that meets another version
treats it as absent (a cache miss), never as a KeyError."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

# -- vocabulary ----------------------------------------------------------------------------------

Status = Literal["working", "attention", "idle", "ended"]
ChildStatus = Literal["working", "attention", "idle", "ended", "done"]
# Why a session waits on the user; also the intent kinds that raise attention.
Reason = Literal["permission", "question", "plan", "elicitation", "input", "error"]
# The rest of a turn's life (none asks the user to act).
LifeKind = Literal["done", "idle", "subagent_done", "session_start", "session_end", "message"]
# What a notification intent is about: attention reasons, the rest of a turn's life, and more.
Kind = Literal[Reason, LifeKind, "resolved", "stuck", "limit_lifted"]
Agent = str  # a lookout.agents.registry name: open, since agents get added
ContentLevel = Literal["full", "summary", "none"]
# lookout/words.py defines these words at run time (tests/test_words.py holds the two equal).

# -- the state machine -----------------------------------------------------------------------------


class Episode(TypedDict):
    """One attention episode: opened by the first signal, closed by the answer."""

    key: str
    reason: str
    tool_name: str | None
    tool_key: str | None
    tool_use_id: str | None
    since_ms: int
    summary: str
    # The call by what runs (events.runs_key): every hook of one call names it alike.
    runs_key: NotRequired[str | None]
    by: NotRequired[str]  # who reported it: hook | client | silence (docs/state-model.md)
    # `stuck`: the last sign of life, and what the actor showed before it went quiet.
    quiet_ms: NotRequired[int]
    before: NotRequired[dict[str, Any]]
    # `error` on a usage limit: when it lifts (read from what the client printed), and whether
    # the `limit_lifted` alert went out.
    until_ms: NotRequired[int]
    lifted: NotRequired[bool]


class Actor(TypedDict):
    """The main thread of a session, or one of its subagents."""

    status: str
    reason: str | None
    detail: str | None
    summary: str
    episode: Episode | None
    pending: dict[str, Any]
    status_ms: int
    agent_id: NotRequired[str]
    agent_type: NotRequired[str | None]
    started_ms: NotRequired[int]
    ended_ms: NotRequired[int | None]
    done_tools: NotRequired[list[str]]
    tool_ms: NotRequired[int]  # since when it runs the tool its detail names (a PreToolUse)
    # How its last permission episode ended: {"episode": key, "answer": allowed | denied | None,
    # "by": "in the terminal" | "by <who>" | None}.
    answered: NotRequired[dict[str, str | None]]


class BeforeCompact(TypedDict):
    """What the main thread showed before /compact, restored by PostCompact."""

    status: str
    reason: str | None
    detail: str | None
    summary: str


class Session(TypedDict):
    """sessions/<id>.json: a session's snapshot, written by the store before its record."""

    v: int
    session_id: str
    agent: str
    project: str
    cwd: str
    pid: int | None
    tmux_pane: str | None
    model: str | None
    status: str
    reason: str | None
    detail: str | None
    summary: str
    episode: str | None
    main: Actor
    agents: dict[str, Actor]
    background: list[list[str]]
    turn: dict[str, Any] | None
    last_turn_ms: int | None
    before_compact: BeforeCompact | None
    recent: list[list[Any]]  # [digest, ts_ms, changes]: the deliveries of the last seconds
    changes: NotRequired[int]  # how often the shown status changed (duplicate detection)
    seq: int
    started_ms: int
    updated_ms: int
    status_ms: int
    last_event: str | None
    ended_reason: str | None
    turn_edge_ms: NotRequired[int]
    transcript: NotRequired[str | None]  # the client's transcript_path, for reconcile
    entrypoint: NotRequired[str | None]  # CLAUDE_CODE_ENTRYPOINT: cli, sdk-cli (print mode)
    since_ms: NotRequired[int | None]  # when the shown episode began
    where: NotRequired[dict[str, str] | None]  # terminal location ids (events.where)
    pid_start: NotRequired[int | None]  # the pid's start time (procs.stat): reuse-safe liveness
    hooks: NotRequired[bool]  # False: known only from the client's registry (no hook fired)
    # What proved the status: hook | client | transcript | process | user | silence.
    evidence: NotRequired[str]
    heard_ms: NotRequired[int]  # the last hook's time, whatever it meant: a sign of life
    limit_read: NotRequired[str]  # the failure read for a usage limit that named no time
    name: NotRequired[str | None]  # the client's display name (its registry's `name`)
    name_source: NotRequired[str | None]  # `derived` (from the folder), else user/client-set


class Finding(TypedDict):
    """What a reader proved about a session (lookout.reconcile, lookout.silence), recorded as a
    `Reconciled` event."""

    # transcript/process: approved | answered | rejected | denied | interrupted |
    # process_gone; client: the client's own status, busy | waiting | idle; silence: stuck |
    # alive; a usage limit: limit (read) | limit_lifted (its time passed); steer: interrupted
    # (`lookout interrupt` pressed the key of an agent that reports no stopped turn)
    outcome: str
    source: str  # transcript | process | client | silence | hook | clock | steer
    agent_id: str | None
    episode: str | None
    observed_ms: int
    waiting_for: str | None  # client `waiting`: "permission prompt", "input needed"
    at_ms: NotRequired[int | None]  # stuck: the last sign of life; limit: when it lifts
    summary: NotRequired[str]  # what an alert says of it (stuck's evidence, a lift's time)


class Record(TypedDict):
    """One line of events.jsonl (`ts` is added by the runner)."""

    seq: int
    session_id: str
    agent: str
    event: str
    status: str
    reason: str | None
    detail: str | None
    agent_id: str | None
    agent_type: str | None
    agent_status: str | None
    cwd: str | None
    project: str | None
    tool_name: str | None
    notification_type: str | None
    source: str | None
    error: str | None
    pid: int | None
    tmux_pane: str | None
    duplicate: bool
    late: bool
    duration_ms: int | None
    summary: str
    notify: list[str]
    ts: NotRequired[str]
    outcome: NotRequired[str | None]  # Reconciled: what proved the answer
    remote: NotRequired[dict[str, Any] | None]  # RemoteDecision: who answered what, from where
    rule: NotRequired[str]  # PermissionRequest: the exact permission rule allowing it
    answer: NotRequired[str]  # a permission it ended: "allowed" / "denied in the terminal" ...


class Intent(TypedDict):
    """What the state machine wants said (notify.handle decides whether, where and how)."""

    kind: str
    session_id: str
    agent: str
    agent_id: str | None
    agent_type: str | None
    project: str
    cwd: str
    reason: str | None
    tool_name: str | None
    summary: str
    message: str
    question: str | None
    duration_ms: int | None
    episode: str | None
    ts_ms: int
    tmux_pane: str | None
    pid: int | None
    seq: NotRequired[int]
    ts: NotRequired[str]
    print_mode: NotRequired[bool]  # raised in `claude -p`: nobody can answer it
    outcome: NotRequired[str | None]  # on resolved: how it ended (None: a hook ended it)
    title: NotRequired[str]  # the client's display name for the session, when it has one
    answer: NotRequired[str]  # on a resolved permission: allowed | denied, when known
    by: NotRequired[str]  # ...and who answered, when known ("in the terminal", "the dashboard")
    request: NotRequired[list[str | None]]  # a permission's [agent_id, prompt_id, tool_key]
    url: NotRequired[str]  # [remote]: the request's page, for the alert's link
    error: NotRequired[str]  # on a failed turn: the API's error code (rate_limit, ...)
    until_ms: NotRequired[int]  # ...on a usage limit: when it lifts, once the sender read it


# -- notifications ---------------------------------------------------------------------------------


class Channel(TypedDict):
    """One validated [channels.<name>] table: the keys every type has, and its type's traits
    (stamped in by the config check, so that what reads the cached config knows them without
    loading the type). Each type's own keys: its TypedDict in lookout/channels/<type>.py."""

    type: str  # a lookout.channels.registry name
    enabled: bool
    timeout_ms: int
    content: str  # a ContentLevel
    remote: bool  # it leaves the machine (channels.base.ChannelType.REMOTE)
    updatable: bool  # an alert it sent is replaced in place on a resolve
    loud: bool  # it makes a sound: a rule's quiet hours mute it for every kind


class Rule(TypedDict):
    """One validated [[rules]] table, every optional key filled with its default."""

    when: list[str]
    channels: list[str]
    projects: list[str] | None
    agents: list[str] | None
    min_duration_s: float | None
    include_subagents: bool
    cooldown_s: float
    quiet_hours: list[int] | None
    quiet_kinds: list[str]
    escalate_after_s: float | None
    escalate_to: list[str]
    print_mode: bool
    grace_s: float | None  # remote channels hold an attention alert this long (answered: dropped)
    digest_s: float | None  # a channel's attention alerts within this window: one message


class Config(TypedDict):
    """The validated notification config (config.load); config.public drops secret keys."""

    channels: dict[str, Channel]
    rules: list[Rule]
    templates: dict[str, dict[str, Any]]
    # [remote] (config.REMOTE_DEFAULTS: enabled, wait_s, tools, allow_always, url); only ever
    # from the user's own file.
    remote: dict[str, Any]
    # [sessions] (config.sessions.SESSIONS_DEFAULTS: stuck_after_s); the user's own file only.
    sessions: NotRequired[dict[str, Any]]
    # fleet.host when [fleet] is set up (the user's own file): alerts name the host they are from.
    host: NotRequired[str]


class Escalation(TypedDict):
    after_s: float
    channels: list[str]


class Hold(TypedDict):
    """Channels a rule holds back instead of sending at once: `grace_s` (sent after `after_s`
    unless answered) or `digest_s` (merged with the channel's other alerts for `after_s`)."""

    key: str  # "grace_s" or "digest_s"
    rule: int
    after_s: float
    channels: list[str]


class Delivery(TypedDict):
    """One intent routed by rules.decide: where it goes now, what it updates, what follows."""

    intent: Intent
    channels: list[str]
    updates: list[str]
    escalate: list[Escalation]
    hold: NotRequired[list[Hold]]
    texts: NotRequired[dict[str, list[str]]]


class DeliveryLine(TypedDict):
    """One line of deliveries.jsonl."""

    ts: str
    session_id: str
    kind: str
    episode: str | None
    channel: str
    result: str  # sent | failed | skipped | merged (into a digest) | clicked
    detail: str
    rule: NotRequired[int]  # a rule that withheld or merged it: its index ...
    reason: NotRequired[str]  # ... and the key that decided (quiet_hours, grace_s, digest_s...)
