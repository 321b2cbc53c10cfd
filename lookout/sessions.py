"""The read model: every session as the store wrote it, with the two computed properties (stale,
alive), most urgent first; and events.jsonl's lines. Never writes, never re-derives a status from
events: the snapshot the hooks wrote is the truth. `status`, the dashboard, the fleet and jump
all read through here."""

from __future__ import annotations

import os

from lookout import _jsonfast, store, words
from lookout.errors import LookoutError
from lookout.platform import current as platform

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any, NotRequired, TypedDict
else:
    # The shapes are for the type checker: at run time a row is a dict, and `typing` (~2 ms to
    # import) stays out of `lookout status --line`, which a status bar runs every few seconds.
    TypedDict = dict

STALE_AFTER_S = 8 * 3600
# `unknown` is the fleet's (a host that is not online): after what is known, before the ended.
ORDER = {"attention": 0, "working": 1, "idle": 2, "unknown": 3, "ended": 4}
SHORT_ID = 8  # the fewest characters of an id shown; more where two shown ids share them
# The fewest characters of an id that name a session by its start (T4: `lookout say 7 hi` typed
# into whichever session's id began with 7).
MIN_PREFIX = 4


class Child(TypedDict):
    """A subagent as a row shows it."""

    agent_id: str
    agent_type: str
    status: str | None
    reason: str | None
    detail: str | None


class Row(TypedDict):
    """One session as shown: `lookout status --json`, `/api/sessions` and the MQTT payload are
    this without `updated_ms` and `waiting_ms` (see `public`)."""

    session_id: str
    agent: str
    status: str
    reason: str | None
    detail: str | None
    summary: str
    cwd: str | None
    project: str
    # The client's display name (its registry's `name`) when it has one, else the project.
    title: str
    # What proved `status`: hook | client (Claude Code's registry) | transcript | process | user
    evidence: str
    # False: no lookout hook ever reported this session (known from the client's registry).
    hooks: bool
    last_event: str | None
    updated_at: str
    updated_ms: int
    since: str
    stale: bool
    alive: bool | None
    pid: int | None
    tmux_pane: str | None
    model: str | None
    last_turn_ms: int | None
    episode: dict[str, Any] | None
    waiting_since: str | None
    waiting_ms: int | None
    print_mode: bool
    agents: list[Child]
    # A failed turn's usage limit: when it lifts (epoch ms), read from what the client printed.
    until_ms: int | None
    # The tool it runs now, as its hooks saw it start: {"name", "since", "running_s"}.
    tool: dict[str, Any] | None
    # The shortest start of its id, SHORT_ID at least, that no other session's id shares.
    short_id: NotRequired[str]
    # Where its tmux pane is now, resolved live by jump.tmux_json (status --json, /api/sessions).
    tmux: NotRequired[dict[str, Any] | None]
    # jump and pick attach the raw snapshot (where the session runs); never in public output.
    snapshot: NotRequired[Mapping[str, Any]]


def load_sessions(
    state_dir: str,
    now_ms: int | None = None,
    stale_after_s: int = STALE_AFTER_S,
    read: Mapping[str, object] | None = None,
    alive: Mapping[str, bool | None] | None = None,
) -> list[Row]:
    """Every recorded session as shown to the user, most urgent first. `read`: snapshot files
    read already (reconcile's, by file name), not read again; `alive`: process liveness seen
    already (reconcile's, by session id), not asked again."""
    now_ms = words.now_ms() if now_ms is None else now_ms
    directory = os.path.join(state_dir, store.SESSIONS)
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        names = []
    sessions = []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        if read is not None and name in read:
            snapshot = read[name]
        else:
            snapshot = store.read_json(os.path.join(directory, name))
        if (
            isinstance(snapshot, dict)
            and isinstance(snapshot.get("session_id"), str)
            and not store.newer(snapshot, words.SNAPSHOT_VERSION)  # a newer lookout's: doctor
        ):
            sessions.append(present(snapshot, now_ms, stale_after_s, alive))
    sessions.sort(key=order)
    shorts = short_ids(s["session_id"] for s in sessions)
    for s in sessions:
        s["short_id"] = shorts[s["session_id"]]
    return sessions


def order(s: Mapping[str, Any]) -> tuple[int, int]:
    """Attention first, the one waiting longest on top; then by status, the most recently
    active first. Every list of sessions (status, dashboard, fleet, pick, jump) sorts by this."""
    if s["status"] == "attention":
        return 0, int(s.get("waiting_ms") or s["updated_ms"])
    return ORDER.get(s["status"], 9), -int(s["updated_ms"])


def short_ids(ids: Iterable[str], least: int = SHORT_ID) -> dict[str, str]:
    """Each id's shortest start (`least` characters at least) that no other of `ids` starts
    with: OpenCode's ids share a time prefix (`ses_de99...`), and two equal IDs in a table
    name nothing. An id that is the start of another is shown whole."""
    ordered = sorted(set(ids))
    out = {}
    for i, sid in enumerate(ordered):
        need = least
        for other in ordered[max(0, i - 1) : i] + ordered[i + 1 : i + 2]:
            common = next(
                (n for n, (a, b) in enumerate(zip(sid, other, strict=False)) if a != b),
                min(len(sid), len(other)),
            )
            need = max(need, common + 1)
        out[sid] = sid[:need]
    return out


def matching(rows: Sequence[Row], key: str) -> list[Row]:
    """The sessions `key` names, in `rows`' order: the one whose id it is; else every session
    whose id starts with it (MIN_PREFIX characters at least), or whose project or title it is.
    Ended sessions count only when no other one matches (a project keeps the sessions of its
    earlier runs). An empty key names none."""
    if not key:
        return []
    whole = [s for s in rows if s["session_id"] == key]
    if whole:
        return whole
    prefix = len(key) >= MIN_PREFIX
    found = [
        s
        for s in rows
        if (prefix and s["session_id"].startswith(key))
        or s["project"] == key
        or s.get("title") == key
    ]
    live = [s for s in found if s["status"] != "ended"]
    return live or found


NAME_HINT = (
    "give the start of a session id (the ID column of `lookout status --all`), a project or a title"
)


def exact(rows: Sequence[Row], session_id: str) -> Row | None:
    """The session whose id is exactly `session_id` (a reply to an alert names its session so:
    never an id's start, a project or a title, T4)."""
    return next((s for s in rows if s["session_id"] == session_id), None) if session_id else None


def resolve(rows: Sequence[Row], key: str, command: str = "lookout status") -> Row:
    """The one session `key` names (a session id, its start, a project or a title), for every
    command that takes a SESSION. None or several: an error that lists them, each by its title
    with why it matched, never a guess."""
    if not key:
        raise LookoutError("the session name is empty", hint=NAME_HINT)
    found = matching(rows, key)
    if len(found) == 1:
        return found[0]
    if not found:
        if any(s["session_id"].startswith(key) for s in rows):
            raise LookoutError(
                f"{key!r} is too short to name a session by the start of its id ({MIN_PREFIX}"
                " characters at least)",
                hint=NAME_HINT,
            )
        raise LookoutError(f"no session {key!r} is recorded", hint=NAME_HINT)
    # Each one by the ID it shows (unique among all the rows), which names it here again.
    shorts = short_ids(s["session_id"] for s in rows)
    shown = [
        f"{label(s)} ({matched_by(s, key)}) — {shorts[s['session_id']]}, {s['status']}"
        for s in found[:6]
    ]
    more = f" and {len(found) - 6} more" if len(found) > 6 else ""
    hint = f"name one by its id: {command} {shorts[found[0]['session_id']]}"
    raise LookoutError(f"{key!r} names {len(found)} sessions: {'; '.join(shown)}{more}", hint=hint)


def matched_by(session: Mapping[str, Any], key: str) -> str:
    """Why `key` names the session (see `matching`): `title`, `project` (with the project when
    the title is another name) or `id`."""
    title, project = label(session), session.get("project") or ""
    if title == key:
        return "project" if title == project else "title"
    if project == key:
        return f"project {project}"  # the title shown is another name
    return "id"


def handle(session: Mapping[str, Any], rows: Sequence[Row]) -> str:
    """The shortest name a command's SESSION takes for `session`: its title when that names it
    alone among `rows` (see `matching`), else its short id."""
    title = label(session)
    found = matching(rows, title) if title != "?" else []
    if len(found) == 1 and found[0]["session_id"] == session["session_id"]:
        return title
    return str(session.get("short_id") or session["session_id"][:SHORT_ID])


def waiting_since(snapshot: dict[str, Any]) -> int | None:
    """When the oldest open attention episode (the session's or a subagent's) began."""
    actors = [snapshot.get("main"), *(snapshot.get("agents") or {}).values()]
    starts = [
        int(a["episode"]["since_ms"])
        for a in actors
        if isinstance(a, dict)
        and isinstance(a.get("episode"), dict)
        and isinstance(a["episode"].get("since_ms"), int)
    ]
    return min(starts) if starts else None


def present(
    snapshot: dict[str, Any],
    now_ms: int,
    stale_after_s: int,
    seen: Mapping[str, bool | None] | None = None,
) -> Row:
    """One session in the shape of `lookout status --json`. `seen`: process liveness by session
    id, looked at moments ago (by reconcile)."""
    updated_ms = int(snapshot.get("updated_ms") or 0)
    alive = _alive(snapshot, seen)
    hooks = snapshot.get("hooks") is not False
    status, reason, detail, evidence = _status_and_proof(snapshot, alive, hooks)
    waiting = _wait_began(snapshot) if status == "attention" else None
    row: Row = {
        "session_id": snapshot["session_id"],
        "agent": snapshot.get("agent") or "claude",
        "status": status,
        "reason": reason,
        "detail": detail,
        "summary": snapshot.get("summary") or "",
        "cwd": snapshot.get("cwd"),
        "project": snapshot.get("project") or "",
        "title": title_of(snapshot),
        "evidence": evidence,
        "hooks": hooks,
        "last_event": snapshot.get("last_event"),
        "updated_at": store.rfc3339(updated_ms),
        "updated_ms": updated_ms,
        "since": store.rfc3339(
            waiting if waiting is not None else shown_since(snapshot, status, updated_ms)
        ),
        "stale": now_ms - updated_ms > stale_after_s * 1000,
        "alive": alive,
        "pid": snapshot.get("pid"),
        "tmux_pane": snapshot.get("tmux_pane"),
        "model": snapshot.get("model"),
        "last_turn_ms": snapshot.get("last_turn_ms"),
        "episode": snapshot.get("episode"),
        "waiting_since": store.rfc3339(waiting) if waiting is not None else None,
        "waiting_ms": waiting,
        "print_mode": words.print_mode(snapshot.get("entrypoint")),
        "agents": _children(snapshot),
        "until_ms": until_of(snapshot) if status == "attention" else None,
        "tool": tool_of(snapshot, now_ms) if status == "working" else None,
    }
    return row


def until_of(snapshot: Mapping[str, Any]) -> int | None:
    """When the usage limit that failed the session's turn lifts, once a reader read it."""
    main = snapshot.get("main")
    episode = main.get("episode") if isinstance(main, dict) else None
    until = episode.get("until_ms") if isinstance(episode, dict) else None
    return until if isinstance(until, int) and until > 0 else None


def tool_of(snapshot: Mapping[str, Any], now_ms: int) -> dict[str, Any] | None:
    """The tool the session runs, and for how long: what its hooks saw start and not end (the
    main thread's, else a subagent's)."""
    actors = [snapshot.get("main"), *(snapshot.get("agents") or {}).values()]
    for actor in actors:
        if not isinstance(actor, dict) or actor.get("status") != "working":
            continue
        since, name = actor.get("tool_ms"), actor.get("detail")
        if isinstance(since, int) and isinstance(name, str):
            running = max(0, now_ms - since) // 1000
            return {"name": name, "since": store.rfc3339(since), "running_s": running}
    return None


def label(session: Mapping[str, Any]) -> str:
    """How every output names a session (status, jump, ack, explain, tail, alerts' digests): its
    title, the name the client set (derived or by the user), else the project, else the folder;
    "?" when there is none. Takes a row (its `title`), a snapshot or an intent alike."""
    title = session.get("title")
    if isinstance(title, str) and title:
        return title
    return title_of(session) or "?"


def _alive(snapshot: dict[str, Any], seen: Mapping[str, bool | None] | None) -> bool | None:
    """Whether the session's process runs: True/False when it can be known, None when no pid
    was recorded (platform layer: /proc, or ps on macOS); `seen` when reconcile just looked."""
    sid = snapshot.get("session_id")
    if seen is not None and isinstance(sid, str) and sid in seen:
        return seen[sid]
    return platform.get().alive(
        snapshot.get("pid"), snapshot.get("pid_start"), snapshot.get("started_ms")
    )


def _status_and_proof(
    snapshot: dict[str, Any], alive: bool | None, hooks: bool
) -> tuple[str, Any, Any, str]:
    """(status, reason, detail, evidence): the recorded ones, unless the process is gone and
    no SessionEnd came (kill -9, crash, closed terminal): then the process is the truth."""
    status = snapshot.get("status") or "idle"
    if alive is False and status != "ended":
        return "ended", "process_gone", None, "process"
    evidence = snapshot.get("evidence") or ("hook" if hooks else "client")
    return status, snapshot.get("reason"), snapshot.get("detail"), evidence


def _wait_began(snapshot: dict[str, Any]) -> int | None:
    """How long it has waited on you: the episode's start (kept by the machine; for an older
    snapshot, the oldest open episode's), not its latest event."""
    since = snapshot.get("since_ms")
    return since if isinstance(since, int) else waiting_since(snapshot)


def _children(snapshot: dict[str, Any]) -> list[Child]:
    return [
        {
            "agent_id": agent_id,
            "agent_type": child.get("agent_type") or "",
            "status": child.get("status"),
            "reason": child.get("reason"),
            "detail": child.get("detail"),
        }
        for agent_id, child in (snapshot.get("agents") or {}).items()
        if isinstance(child, dict)
    ]


def title_of(snapshot: Mapping[str, Any]) -> str:
    """The client's display name when it has one, else the project (else the folder)."""
    name = snapshot.get("name")
    if isinstance(name, str) and name:
        return name
    cwd = snapshot.get("cwd") or ""
    return str(snapshot.get("project") or os.path.basename(str(cwd).rstrip("/")) or "")


def shown_since(snapshot: dict[str, Any], status: str, updated_ms: int) -> int:
    """When a status other than attention began (attention's start is `waiting_since`): the
    turn's start while working, else the last event."""
    if status == "working":
        turn = snapshot.get("turn")
        if isinstance(turn, dict) and isinstance(turn.get("started_ms"), int):
            return int(turn["started_ms"])
    return updated_ms


def public(session: Mapping[str, Any]) -> dict[str, Any]:
    """The row as it goes out (`status --json`, the dashboard, the bus): without the two
    millisecond keys that are only for ordering."""
    return {k: v for k, v in session.items() if k not in ("updated_ms", "waiting_ms")}


# -- events.jsonl ------------------------------------------------------------------------------


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """One record, or None for a torn or foreign line (a writer killed mid-append)."""
    try:
        value = _jsonfast.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
