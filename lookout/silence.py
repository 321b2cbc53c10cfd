"""What time passing with no event proves (docs/statuses.md, "Stuck sessions" and "Usage
limits"): a session that says `working` while nothing moves (`stuck`), one back to life, and when
a usage limit lifts. Judged for every reader through lookout.reconcile, and by the sender's
timers (lookout.sender.timers), so that the alert goes out with no reader running. Never imported
by a hook.

A session is stuck when it is shown working, its agent process runs, no tool runs, and nothing
it leaves behind has changed for `[sessions] stuck_after_s`: no hook, no write to its transcript,
no change of Claude Code's registry (`statusUpdatedAt`), no new child process. Every time is the
signal's own (the events' stamps, the files' mtimes, the registry's stamp, a process's start),
never how long a reader waited; and time the machine slept does not count (`woke_ms`)."""

from __future__ import annotations

import os

from lookout import events, store, transcript, words
from lookout.platform import current as platform

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypedDict

    from lookout.client_sessions import Entry
    from lookout.shapes import Finding, Session

    class Watch(TypedDict):
        """What the judgement needs besides the session: the threshold (0: off) and when the
        machine last woke from sleep (0: never seen asleep)."""

        stuck_after_ms: int
        woke_ms: int

    class Tool(TypedDict):
        """A tool the session runs: its name, since when, and what shows it."""

        name: str
        since_ms: int
        by: str  # hook (a call started and not finished) | process (a child of the agent)


# A tool that starts a subagent: the subagent's own hooks show its life (machine._LAUNCHERS).
LAUNCHERS = frozenset({"Agent", "Task"})
# A process start is known to the second: a child started this much before the turn is its own.
START_SLACK_MS = 1000
_SNAPSHOT_MARK = "/shell-snapshots/snapshot-"
_EVAL = "eval '"
_EVAL_END = "' < /dev/null"


def finding(
    outcome: str,
    source: str,
    agent_id: str | None,
    episode: str | None,
    at: int,
    **extra: Any,
) -> Finding:
    found: Finding = {
        "outcome": outcome,
        "source": source,
        "agent_id": agent_id,
        "episode": episode,
        "observed_ms": at,
        "waiting_for": None,
    }
    found.update(extra)  # type: ignore[typeddict-item]
    return found


# -- the agent's processes -----------------------------------------------------------------------


def bash_tools(pid: int) -> list[tuple[int, str]]:
    """(pid, command) of each command Claude Code's Bash tool runs right now: the children of
    CLAUDE_PID shaped `bash -c "source …/shell-snapshots/snapshot-….sh … eval '<command>' …"`
    (2.1.332; the platform layer reads them: /proc, or ps on macOS; unknown proves nothing)."""
    found = []
    for child, argv in platform.get().children(pid):
        if len(argv) < 3 or argv[1] != "-c" or _SNAPSHOT_MARK not in argv[2]:
            continue  # a hook (`/bin/sh -c <hook command>`), an MCP server, anything else
        script = argv[2]
        start = script.find(_EVAL)
        end = script.rfind(_EVAL_END)
        if start == -1 or end <= start:
            continue
        quoted = script[start + len(_EVAL) : end]
        found.append((child, quoted.replace("'\\''", "'").replace("'\"'\"'", "'")))
    return found


def running_tool(session: Mapping[str, Any]) -> Tool | None:
    """The tool the session runs now, if any: a call its hooks saw start and not finish (the
    actor's `tool_ms`), else a tool process of the agent: Claude Code's Bash commands, or for
    another agent a child started since the turn began."""
    actors = [session.get("main"), *(session.get("agents") or {}).values()]
    for actor in actors:
        if not isinstance(actor, dict) or actor.get("status") != words.WORKING:
            continue
        since, name = actor.get("tool_ms"), actor.get("detail")
        if isinstance(since, int) and isinstance(name, str) and name not in LAUNCHERS:
            return {"name": name, "since_ms": since, "by": "hook"}
    return _tool_process(session)


def _tool_process(session: Mapping[str, Any]) -> Tool | None:
    pid = session.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    layer = platform.get()
    if (session.get("agent") or "claude") == "claude":
        for child, _command in bash_tools(pid):
            return {"name": "Bash", "since_ms": layer.started_ms(child) or 0, "by": "process"}
        return None
    turn = session.get("turn")
    began = turn.get("started_ms") if isinstance(turn, dict) else None
    if not isinstance(began, int):
        return None
    for child, argv in layer.children(pid):
        started = layer.started_ms(child)
        if started is not None and started >= began - START_SLACK_MS:
            name = os.path.basename(argv[0]) if argv and argv[0] else "process"
            return {"name": name, "since_ms": started, "by": "process"}
    return None


def _newest_child_ms(session: Mapping[str, Any]) -> int | None:
    """When the agent last started a process (a hook, a tool): a sign of life."""
    pid = session.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    layer = platform.get()
    starts = [layer.started_ms(child) for child, _ in layer.children(pid)]
    known = [s for s in starts if s is not None]
    return max(known) if known else None


# -- signs of life -------------------------------------------------------------------------------


def _client_ms(session: Mapping[str, Any], client: Entry | None) -> int | None:
    """The registry's last status change, when the entry is this session's process."""
    if client is None or client["status_ms"] is None:
        return None
    pid = session.get("pid")
    if isinstance(pid, int) and pid != client["pid"]:
        return None
    return client["status_ms"]


def _written_ms(session: Mapping[str, Any]) -> int | None:
    """The newest write to the session's transcript, or to a working subagent's own."""
    paths = [transcript.path_of(session, None)]
    for agent_id, child in (session.get("agents") or {}).items():
        if isinstance(child, dict) and child.get("status") == words.WORKING:
            paths.append(transcript.path_of(session, agent_id))
    stamps = [transcript.written_ms(p) for p in paths if p]
    known = [s for s in stamps if s is not None]
    return max(known) if known else None


def heard_ms(session: Mapping[str, Any]) -> int:
    """The last thing recorded about the session (a hook, or a reader's proof)."""
    return max(int(session.get("heard_ms") or 0), int(session.get("status_ms") or 0))


def quiet_since(
    session: Mapping[str, Any], client: Entry | None, watch: Watch
) -> tuple[int, list[str]]:
    """(the newest sign of life in ms, the signals looked at): a hook or a reader's proof, the
    registry, the transcript, a new child process, and the machine waking from sleep."""
    said = ["no hook"]
    signs = [heard_ms(session), watch["woke_ms"]]
    client_ms = _client_ms(session, client)
    if client_ms is not None:
        signs.append(client_ms)
        said.append("no registry change")
    if transcript.path_of(session, None):
        signs.append(_written_ms(session) or 0)
        said.append("no transcript write")
    if isinstance(session.get("pid"), int):
        signs.append(_newest_child_ms(session) or 0)
        said.append("no tool running")
    return max(signs), said


# -- what it proves ------------------------------------------------------------------------------


def judge(
    session: Session, now_ms: int, client: Entry | None, alive: bool | None, watch: Watch
) -> list[Finding]:
    """What time passing proves about one session, as findings (lookout.reconcile records
    them): a stuck one's sign of life, a usage limit's time and its lifting, or that a working
    session is stuck."""
    main = session.get("main") or {}
    episode = main.get("episode") if isinstance(main, dict) else None
    if isinstance(episode, dict) and episode.get("reason") == words.STUCK:
        return _alive(session, episode, client, now_ms, watch)
    if isinstance(episode, dict) and episode.get("reason") == "error":
        return limit_findings(session, episode, now_ms)
    return _stuck(session, now_ms, client, alive, watch)


def _stuck(
    session: Session, now_ms: int, client: Entry | None, alive: bool | None, watch: Watch
) -> list[Finding]:
    after = watch["stuck_after_ms"]
    # Only a process known to run is stuck: one that is gone ended, one unknown may have.
    if not after or session.get("status") != words.WORKING or alive is not True:
        return []
    if now_ms - heard_ms(session) < after:
        return []  # the snapshot alone says it is not yet time (no file read)
    quiet, said = quiet_since(session, client, watch)
    if now_ms - quiet < after or running_tool(session) is not None:
        return []
    summary = f"silent since {clock(quiet)} ({_span(after)}): {', '.join(said)}"
    return [
        finding(words.STUCK, "silence", None, None, quiet + after, at_ms=quiet, summary=summary)
    ]


def _alive(
    session: Session,
    episode: Mapping[str, Any],
    client: Entry | None,
    now_ms: int,
    watch: Watch,
) -> list[Finding]:
    """A stuck session's first sign of life no hook reported: the registry, the transcript,
    a process (a hook's record wakes it in the machine itself)."""
    quiet = int(episode.get("quiet_ms") or 0)
    client_ms = _client_ms(session, client)
    if client_ms is not None and client_ms > quiet:
        return [finding("alive", "client", None, None, client_ms)]
    written = _written_ms(session)
    if written is not None and written > quiet:
        return [finding("alive", "transcript", None, None, written)]
    child = _newest_child_ms(session)
    if (child is not None and child > quiet) or running_tool(session) is not None:
        return [finding("alive", "process", None, None, now_ms)]
    return []


def limited(session: Mapping[str, Any], episode: Mapping[str, Any]) -> bool:
    """Whether the open error may name when it lifts: a rate or usage limit, a spend limit, or
    another agent's error lookout has no word for (Claude Code's other errors never do)."""
    main = session.get("main") or {}
    error = main.get("detail") if isinstance(main, dict) else None
    return (
        session.get("status") == words.ATTENTION
        and episode.get("reason") == "error"
        and isinstance(episode.get("key"), str)
        and (error in LIMIT_ERRORS or error not in events.FAILURES)
    )


# Claude Code's StopFailure errors that can come with a reset time.
LIMIT_ERRORS = frozenset({"rate_limit", "billing_error", "unknown"})


def limit_findings(
    session: Mapping[str, Any], episode: Mapping[str, Any], now_ms: int
) -> list[Finding]:
    """An open error's usage limit: when it lifts, read once it is known (`limit`), then,
    once that time has passed with the session still waiting, `limit_lifted`."""
    key = episode.get("key")
    if not limited(session, episode) or not isinstance(key, str):
        return []
    since = int(episode.get("since_ms") or 0)
    if "until_ms" not in episode and session.get("limit_read") != key:
        until, source = read_limit(session, episode, now_ms)
        if not source:
            return []  # its exact time may still come: read at the next look
        # None names no time (never guessed): kept as read (`limit_read`), with no event.
        return [finding("limit", source, None, key, since, at_ms=until or 0)]
    until = episode.get("until_ms")
    if not isinstance(until, int) or until <= 0 or episode.get("lifted") or now_ms < until:
        return []
    said = f"the limit lifted at {clock(until)}: send a prompt to continue"
    return [finding("limit_lifted", "clock", None, key, until, summary=said)]


# Claude Code writes a failed turn's API error line (its exact `resetsAt`) to the transcript
# a moment after the StopFailure hook ran. A reader waits this long after the failure for it
# before it reads the message's words instead (a minute at best: a lift alerted too early or late).
LINE_WAIT_MS = 5000


def read_limit(
    session: Mapping[str, Any], episode: Mapping[str, Any], now_ms: int | None = None
) -> tuple[int | None, str]:
    """(when the limit lifts in epoch ms or None, where it was read): the transcript's API
    error line (its exact `resetsAt`, else its text), else the failure's message as the hook
    recorded it. With `now_ms`, (None, "") while that line may still come: the session has a
    transcript with no line for this failure yet, and the failure is younger than
    LINE_WAIT_MS."""
    from lookout import limits  # only with a failed turn to read

    since = int(episode.get("since_ms") or 0)
    path = transcript.path_of(session, None)
    line = transcript.last_api_error(path) if path else None
    stamp = (transcript.ts_ms(line) or since) if line is not None else 0
    if line is not None and stamp >= since - 600_000:  # this failure's line, not an older one's
        exact = limits.from_entry(line)
        if exact is not None:
            return exact, "transcript"
        said = limits.from_text(_line_text(line), stamp)
        if said is not None:
            return said, "transcript"
    elif path and now_ms is not None and now_ms - since < LINE_WAIT_MS and os.path.isfile(path):
        return None, ""
    return limits.from_text(str(episode.get("summary") or ""), since), "hook"


def _line_text(line: Mapping[str, Any]) -> str:
    content = (line.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(b.get("text")) for b in content if isinstance(b, dict) and b.get("text")
        )
    return ""


def due_ms(session: Mapping[str, Any], watch: Watch) -> int | None:
    """When the session next needs a look with no event (the sender's timers), from its
    snapshot alone: a working session's earliest stuck time, a limit's lift, at once (0) for
    a limit not read yet; None when time passing can prove nothing about it."""
    main = session.get("main") or {}
    episode = main.get("episode") if isinstance(main, dict) else None
    status = session.get("status")
    if isinstance(episode, dict) and limited(session, episode):
        if "until_ms" not in episode:
            return None if session.get("limit_read") == episode.get("key") else 0
        until = episode.get("until_ms")
        return until if isinstance(until, int) and until > 0 and not episode.get("lifted") else None
    if status == words.WORKING and watch["stuck_after_ms"] and isinstance(session.get("pid"), int):
        return max(heard_ms(session), watch["woke_ms"]) + watch["stuck_after_ms"]
    return None


# -- the machine's sleep -------------------------------------------------------------------------


def woke_ms(state_dir: str, now_ms: int) -> int:
    """When the machine last woke from sleep (epoch ms), as first seen by a reader or the
    sender (state/clock.json keeps the time asleep since boot); 0 when it never slept or the
    platform cannot say. A laptop opened after a night does not find every session stuck:
    silence counts from here."""
    slept = platform.get().slept_ms()
    if slept is None:
        return 0
    path = os.path.join(state_dir, store.CLOCK)
    kept = store.read_json(path)
    before = kept.get("slept_ms") if isinstance(kept, dict) else None
    woke = kept.get("woke_ms") if isinstance(kept, dict) else None
    if isinstance(before, int) and isinstance(woke, int):
        if 0 <= slept - before < 1000:
            return woke  # no sleep since it was written (the two clocks jitter by microseconds)
        if slept > before:
            woke = now_ms  # it slept since: silence counts from now
        # else a reboot: nothing from before it still runs, the last wake stands
    else:
        # Nobody looked on this boot yet: if it ever slept, it may have been just now.
        woke = now_ms if slept >= 1000 else 0
    try:
        store.write_json_atomic(path, {"slept_ms": slept, "woke_ms": woke})
    except OSError:
        pass  # read-only or full: asked again next time
    return woke


def watch(state_dir: str, now_ms: int, stuck_after_s: float) -> Watch:
    return {"stuck_after_ms": int(stuck_after_s * 1000), "woke_ms": woke_ms(state_dir, now_ms)}


# -- words ---------------------------------------------------------------------------------------


clock = words.clock  # a time as the user reads it here (the alerts' texts use it too)


def _span(ms: int) -> str:
    seconds = ms // 1000
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
