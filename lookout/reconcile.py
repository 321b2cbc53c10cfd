"""Truthful attention: end an open episode when what the client left behind proves the user
answered, though no hook said so (Esc, "No", a rejected plan, an approved command still running,
the process gone). See docs/signals.md for each signal, measured with Claude Code 2.1.332.

Called where it costs nothing on the hook path: when a reader looks (`lookout status`), before
an escalation is sent, and in the sender's wait. Never imported by a hook. What it proves goes
through the state machine as a `Reconciled` event and the store, like any other transition, so
`tail`, the snapshot and the notifications agree.

Signals (2.1.332):
- transcript (`transcript_path`, or the subagent's `<session>/subagents/agent-<id>.jsonl`): a
  `tool_result` for the episode's tool_use_id; `toolDenialKind: "user-rejected"` plus the user
  line `[Request interrupted by user for tool use]` when the user said No or pressed Esc.
  Read backwards from the end, whole lines, stopping at the call's own `tool_use` line and
  after at most TAIL_MAX_BYTES: a 50 MB transcript costs what its last lines cost.
- process: an approved Bash command runs as a child of CLAUDE_PID,
  `bash -c "source …/shell-snapshots/snapshot-….sh … eval '<command>' < /dev/null …"`.
- the process is gone: no process with the recorded pid and start time (platform layer).
- client: Claude Code's own registry, `~/.claude/sessions/<pid>.json` (lookout.client_sessions):
  `busy` / `waiting` / `idle` as of `statusUpdatedAt`. It raises a dialog no hook announced (the
  plan-mode fallback), ends one answered in the terminal whatever the tool, and lists sessions
  whose hooks never fire (`"hooks": false`).
"""

from __future__ import annotations

import os

from lookout import client_sessions, silence, store, transcript, words
from lookout.platform import current as platform

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from lookout.client_sessions import Entry
    from lookout.shapes import Actor, Finding, Intent, Record, Session
    from lookout.silence import Watch


CHUNK = transcript.CHUNK
TAIL_MAX_BYTES = transcript.TAIL_MAX_BYTES
INTERRUPT_MARK = "[Request interrupted by user"
# Who may report attention that pages someone (docs/state-model.md): never a reader's inference.
REPORTED = frozenset({"hook", "client"})
# The transcript's readers, by their old names here (the tests read them so).
_ts_ms = transcript.ts_ms
_lines_backwards = transcript.lines_backwards


# -- what the client left behind -----------------------------------------------------------------


def transcript_of(session: Session, agent_id: str | None) -> str | None:
    """The transcript an actor writes: the session's, or its subagent's own file."""
    return transcript.path_of(session, agent_id)


def _user_texts(entry: dict[str, Any]) -> list[str]:
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    return []


def _tool_result(entry: dict[str, Any], tool_use_id: str) -> dict[str, Any] | None:
    content = (entry.get("message") or {}).get("content")
    if entry.get("type") != "user" or not isinstance(content, list):
        return None
    for block in content:
        if (
            isinstance(block, dict)
            and block.get("type") == "tool_result"
            and block.get("tool_use_id") == tool_use_id
        ):
            return block
    return None


def scan_transcript(
    path: str, tool_use_id: str | None, max_bytes: int = TAIL_MAX_BYTES
) -> dict[str, Any]:
    """What the transcript says happened to one tool call, read backwards from the end:
    `result` ({"error": bool, "rejected": bool, "ts_ms"} or None), `interrupt_ms` (the newest
    interrupt marker, after the call's tool_use line when there is one), `conversation` (the
    newest conversational line's type)."""
    found: dict[str, Any] = {"result": None, "interrupt_ms": None, "conversation": None}
    fd = transcript.open_regular(path)
    if fd is None:
        return found
    call_needle = f'"id":"{tool_use_id}"'.encode() if tool_use_id else None
    try:
        for raw, entry in transcript.conversation_backwards(fd, max_bytes):
            if found["conversation"] is None:
                found["conversation"] = entry["type"]
            if entry["type"] == "user":
                _seen_user_line(found, raw, entry, tool_use_id)
            elif call_needle and call_needle in raw:
                break  # the call itself: everything that answered it is behind us
            if tool_use_id is None:
                break  # no call to look for: only the newest conversational line matters
    finally:
        os.close(fd)
    return found


def _seen_user_line(
    found: dict[str, Any], raw: bytes, entry: dict[str, Any], tool_use_id: str | None
) -> None:
    """A user line, read backwards: the newest interrupt marker, and the call's result."""
    if found["interrupt_ms"] is None and any(
        t.startswith(INTERRUPT_MARK) for t in _user_texts(entry)
    ):
        found["interrupt_ms"] = transcript.ts_ms(entry)
    needle = f'"tool_use_id":"{tool_use_id}"'.encode() if tool_use_id else None
    if needle is None or found["result"] is not None or needle not in raw:
        return
    block = _tool_result(entry, str(tool_use_id))
    if block is not None:
        found["result"] = {
            "error": bool(block.get("is_error")),
            "rejected": entry.get("toolDenialKind") == "user-rejected",
            "ts_ms": transcript.ts_ms(entry),
        }


def running_commands(pid: int) -> list[str]:
    """The commands the client's Bash tool runs right now (children of CLAUDE_PID; the platform
    layer reads them: /proc, or ps on macOS; unknown proves nothing)."""
    return [command for _child, command in silence.bash_tools(pid)]


def codex_commands(pid: int, since_ms: int) -> list[str]:
    """The commands Codex runs right now, as children of its process started since `since_ms`
    (0.169.0 runs an approved `sleep 20` as the child `sleep 20`; a shell line as `bash -lc
    LINE`): the command as it ran it. Started before the dialog: not the call it asks about."""
    layer = platform.get()
    found = []
    for child, argv in layer.children(pid):
        started = layer.started_ms(child)
        if not argv or started is None or started < since_ms - 1000:  # to the second
            continue
        shell = len(argv) >= 3 and argv[-2] in ("-c", "-lc")
        found.append(argv[-1] if shell else " ".join(argv))
    return found


def pid_alive(session: Session) -> bool | None:
    """Whether the session's agent process runs: True/False when it can be known, None when no
    pid was recorded. Pid-reuse safe (the platform layer: the recorded start time must match)."""
    return platform.get().alive(
        session.get("pid"), session.get("pid_start"), session.get("started_ms")
    )


# -- what it proves ------------------------------------------------------------------------------


def _actors(session: Session) -> list[tuple[str | None, Actor]]:
    # Snapshots are read leniently (a hand-made or damaged one may lack the main actor).
    main = session.get("main")
    actors: list[tuple[str | None, Actor]] = [(None, main)] if isinstance(main, dict) else []
    agents = session.get("agents") or {}
    actors += [(k, v) for k, v in agents.items() if isinstance(v, dict)]
    return actors


def observe(
    session: Session,
    now_ms: int,
    client: Entry | None,
    alive: bool | None,
    watch: Watch | None = None,
) -> list[Finding]:
    """Every proof that an open episode (or a working turn) of `session` is over, and what the
    client's registry entry (`client`) says when nothing else proves anything; with `watch`,
    what time passing proves (lookout.silence: stuck, back to life, a usage limit). `alive`:
    the process's liveness (pid_alive) as the caller just saw it, required so that no caller
    can leave out the process's proof. Reads only."""
    if session.get("status") == words.ENDED:
        return []
    if alive is False:
        return [_finding("process_gone", "process", None, None, now_ms)]
    findings = _answers(session, now_ms) or _interrupt(session)
    if not findings and client is not None:
        said = _client_finding(session, client)
        if said is not None and _changes(session, said):
            findings.append(said)
    if not findings and watch is not None:
        findings = silence.judge(session, now_ms, client, alive, watch)
    return findings


def _answers(session: Session, now_ms: int) -> list[Finding]:
    """Each open dialog's answer: its call's result in the transcript, else (a Bash command)
    its process running, approved."""
    findings: list[Finding] = []
    commands: dict[str, list[str]] = {}  # the running commands, asked once
    for agent_id, actor in _actors(session):
        episode = actor.get("episode")
        if actor.get("status") != words.ATTENTION or not isinstance(episode, dict):
            continue
        found = _transcript_answer(session, agent_id, actor, now_ms) or _approved(
            session, agent_id, episode, commands, now_ms
        )
        if found is not None:
            findings.append(found)
    return findings


def _transcript_answer(
    session: Session, agent_id: str | None, actor: Actor, now_ms: int
) -> Finding | None:
    """The dialog's call answered in the transcript: answered, rejected (No, Esc) or denied."""
    episode: Any = actor.get("episode") or {}
    runs = episode.get("runs_key") or episode.get("tool_key")
    use_id = episode.get("tool_use_id") or _pending_id(actor, runs)
    path = transcript_of(session, agent_id)
    if not (use_id and path):
        return None
    seen = scan_transcript(path, use_id)
    result = seen["result"]
    if result is None:
        return None
    at = result["ts_ms"] or now_ms
    if not result["error"]:
        outcome = "answered"
    elif agent_id is None and seen["interrupt_ms"] is not None:
        outcome, at = "rejected", max(at, seen["interrupt_ms"])
    else:
        outcome = "denied"  # refused, and the agent goes on
    return _finding(outcome, "transcript", agent_id, episode.get("key"), at)


def _approved(
    session: Session,
    agent_id: str | None,
    episode: Any,
    commands: dict[str, list[str]],
    now_ms: int,
) -> Finding | None:
    """A Bash dialog whose very command runs as a child of the agent: approved."""
    pid = session.get("pid")
    summary = episode.get("summary") or ""
    if episode.get("tool_name") != "Bash" or not isinstance(pid, int) or not summary:
        return None
    if "running" not in commands:
        commands["running"] = running_commands(pid)
        if session.get("agent") == "codex":
            commands["running"] += codex_commands(pid, int(episode.get("since_ms") or 0))
    from lookout.events import first_line

    if any(first_line(c) == summary for c in commands["running"]):
        return _finding("approved", "process", agent_id, episode.get("key"), now_ms)
    return None


def _interrupt(session: Session) -> list[Finding]:
    """Esc while Claude worked (no dialog): the transcript's interrupt marker, newer than the
    status, with nothing after it."""
    main = session.get("main") or {}
    if main.get("status") != words.WORKING:
        return []
    path = transcript_of(session, None)
    status_ms = int(session.get("status_ms") or 0)
    if not path or not _written_since(path, status_ms):
        return []
    seen = scan_transcript(path, None, CHUNK * 4)
    at = seen["interrupt_ms"]
    if seen["conversation"] == "user" and at and at > status_ms:
        return [_finding("interrupted", "transcript", None, None, at)]
    return []


def _client_finding(session: Session, client: Entry) -> Finding | None:
    """The client's status as a finding, if the entry is this session's process."""
    pid = session.get("pid")
    if client["status"] is None or client["status_ms"] is None:
        return None  # a fresh file, or a status this lookout does not know: no signal
    if isinstance(pid, int) and pid != client["pid"]:
        return None  # another process of the same session id (a resume elsewhere)
    found = _finding(client["status"], "client", None, None, client["status_ms"])
    found["waiting_for"] = client["waiting_for"]
    return found


def _event(session_id: str, f: Finding) -> dict[str, Any]:
    from lookout import events  # only when there is something to record

    event = events.observed(
        "Reconciled",
        session_id,
        f["observed_ms"],
        source=f["source"],
        outcome=f["outcome"],
        agent_id=f["agent_id"],
        episode=f["episode"],
        observed_ms=f["observed_ms"],
        at_ms=f.get("at_ms"),
        summary=f.get("summary") or "",
    )
    event["notification_type"] = f.get("waiting_for")
    return dict(event)


def _changes(session: Session, f: Finding) -> bool:
    """Whether the finding would change what the session shows (a pure trial on a copy)."""
    import copy

    from lookout import machine

    event: Any = _event(session["session_id"], f)
    after, _, _ = machine.apply(copy.deepcopy(session), event)
    return _shape(after) != _shape(session)


def _pending_id(actor: Actor, tool_key: object) -> str | None:
    """The call an episode is about, when only its tool_key was known as it opened."""
    pending = actor.get("pending") or {}
    if not tool_key or not isinstance(pending, dict):
        return None
    ids = [use_id for use_id, key in pending.items() if key == tool_key]
    return ids[-1] if ids else None


def _written_since(path: str, ms: int) -> bool:
    try:
        return os.stat(path).st_mtime * 1000 > ms
    except OSError:
        return False


def _finding(
    outcome: str, source: str, agent_id: str | None, episode: str | None, at: int
) -> Finding:
    return silence.finding(outcome, source, agent_id, episode, at)


# -- through the store ---------------------------------------------------------------------------


def quietly(
    state_dir: str,
    read: dict[str, object] | None = None,
    alive: dict[str, bool | None] | None = None,
) -> None:
    """reconcile() for a reader: one that cannot (a hook holds the lock too long, an unreadable
    file) still shows the snapshots as the hooks left them."""
    from lookout.errors import LookoutError

    try:
        reconcile(state_dir, read=read, alive=alive)
    except (OSError, TimeoutError, LookoutError):
        pass


def reconcile(
    state_dir: str,
    session_ids: Iterable[str] | None = None,
    now_ms: int | None = None,
    read: dict[str, object] | None = None,
    alive: dict[str, bool | None] | None = None,
) -> list[Record]:
    """Look at every session that claims attention or work (or only `session_ids`), and record a
    `Reconciled` event for each proof that it is over. Returns the records written. Sends the
    episodes' `resolved` notifications like a hook would. `read`, when given, receives every
    snapshot file read (by file name) that reconcile did not change, and `alive` the process
    liveness it saw for those sessions (by id): a reader that shows them next need not read
    the files or ask /proc again."""
    now_ms = words.now_ms() if now_ms is None else now_ms
    drain(state_dir)
    registry = client_sessions.read()
    everything = session_ids is None
    # Each snapshot is read once here (and again under the lock only when there is a proof).
    open_ones = _open_sessions(state_dir, read) if session_ids is None else None
    written: list[Record] = []
    intents: list[Intent] = []
    timed: list[Watch] = []  # what time passing proves needs the config: read once, if at all
    for session_id in open_ones or session_ids or ():
        if open_ones is not None:
            snapshot: Session | None = open_ones[session_id]
        else:
            snapshot = store.read_session(state_dir, session_id)
        if snapshot is None:
            continue
        entry = registry.get(session_id)
        live = pid_alive(snapshot) if snapshot.get("status") != words.ENDED else None
        if not timed and snapshot.get("status") in (words.WORKING, words.ATTENTION):
            timed.append(watch(state_dir, now_ms))
        findings = observe(snapshot, now_ms, entry, live, timed[0] if timed else None)
        meta = _meta(snapshot, entry) if entry is not None else {}
        findings = _noted(findings, meta)
        if findings or meta:
            changed = _apply(state_dir, session_id, findings, intents, meta)
            if read is not None:  # the file may have changed (a record, or only the name)
                read.pop(os.path.basename(store.session_file(state_dir, session_id)), None)
            written += changed
        elif alive is not None:
            alive[session_id] = live
    if everything:
        # Sessions lookout's hooks never reported (started before install, hooks disabled,
        # `--settings` of their own): known from the client alone.
        for session_id, entry in sorted(registry.items()):
            if not os.path.exists(store.session_file(state_dir, session_id)):
                written += _adopt(state_dir, entry, now_ms, intents)
    _notify(state_dir, intents)
    return written


def watch(state_dir: str, now_ms: int) -> Watch:
    """What judging silence needs: `[sessions] stuck_after_s` from the config the hooks cache
    (the default when it cannot be read), and when the machine last woke from sleep."""
    # Through notify.handle, which reads the hooks' cached config already (one arrow up).
    from lookout.notify.handle import stuck_after_s

    return silence.watch(state_dir, now_ms, stuck_after_s(state_dir))


def _noted(findings: list[Finding], meta: dict[str, Any]) -> list[Finding]:
    """A failure read for a usage limit that names no time is kept as read (`limit_read`,
    written with the snapshot like the client's name: no event, nothing to show)."""
    for f in findings:
        if f["outcome"] == "limit" and not f.get("at_ms"):
            meta["limit_read"] = f["episode"]
    return [f for f in findings if f["outcome"] != "limit" or f.get("at_ms")]


def _meta(session: Session, entry: Entry) -> dict[str, Any]:
    """What the registry tells about the session besides its status: the display name (a name
    the user or the client set wins over one derived from the folder) and, for a session no
    hook reports, its pane."""
    meta: dict[str, Any] = {}
    name, source = entry["name"], entry["name_source"]
    if name and (name, source) != (session.get("name"), session.get("name_source")):
        kept = session.get("name_source")
        if not (kept and kept != "derived" and source == "derived" and session.get("name")):
            meta["name"], meta["name_source"] = name, source
    if session.get("hooks") is False and entry["tmux_pane"] != session.get("tmux_pane"):
        meta["tmux_pane"] = entry["tmux_pane"]
    return meta


def _adopt(state_dir: str, entry: Entry, now_ms: int, intents: list[Intent]) -> list[Record]:
    """Record a session seen only in the client's registry, with its status."""
    cwd = entry["cwd"] or ""
    event: Any = _event(
        entry["session_id"],
        _finding(entry["status"] or "seen", "client", None, None, entry["status_ms"] or now_ms),
    )
    event["notification_type"] = entry["waiting_for"]
    event.update(
        cwd=cwd,
        project=os.path.basename(cwd.rstrip("/")) or cwd,
        pid=entry["pid"],
        tmux_pane=entry["tmux_pane"],
        entrypoint=entry["entrypoint"],
    )
    from lookout import machine

    with store.Locked(state_dir) as st:
        if st.read_session(entry["session_id"]) is not None:
            return []  # its first hook got there first
        session, line, new = machine.apply(None, event)
        session["name"], session["name_source"] = entry["name"], entry["name_source"]
        st.write_session(session)
        line = {"ts": store.rfc3339(event["ts_ms"]), **line}
        st.append(store.EVENTS, line, store.rotate_bytes())
    intents += hookless_texts(new, session, entry["waiting_for"])
    return [line]


# What an alert of a session without lookout's hooks cannot show: the registry names no tool.
_UNSHOWN = {"permission": "the command", "question": "the question"}


def hookless_texts(
    intents: list[Intent], session: Session, waiting_for: str | None
) -> list[Intent]:
    """The alerts of a session lookout's hooks do not report (`"hooks": false`) say what Claude
    Code's registry says it waits for (`waitingFor`), and that lookout cannot show more: its
    body would be empty. Named by the client's title, as `lookout status` names it."""
    if session.get("hooks") is not False:
        return intents
    for intent in intents:
        kind = intent["kind"]
        if kind not in words.ATTENTION_KINDS or intent["summary"] or intent["message"]:
            continue
        said = " ".join("".join(c if c.isprintable() else " " for c in waiting_for or "").split())
        what = f"waits for: {said[:80]}" if said else "waits for you"
        text = (
            f"Claude Code {what}. This session runs without lookout's hooks, so lookout cannot"
            f" show {_UNSHOWN.get(kind, 'what it asks')}: see its terminal."
        )
        intent["summary"] = intent["message"] = text
        if not intent.get("title") and session.get("name"):
            intent["title"] = str(session.get("name"))
    return intents


def _notify(state_dir: str, intents: list[Intent]) -> None:
    """Send what the transitions ask for, as a hook would. The transition is recorded already:
    a notification that fails is logged, never the reader's failure."""
    if not intents:
        return
    for intent in intents:
        intent["ts"] = store.rfc3339(intent["ts_ms"])
    try:
        from lookout.notify.handle import handle

        handle(intents, state_dir)
    except Exception:
        import traceback

        store.log_error(state_dir, f"reconcile: notify: {traceback.format_exc()}")


def _open_sessions(state_dir: str, read: dict[str, object] | None = None) -> dict[str, Session]:
    """The snapshots that claim attention, work or idleness, by session id, in file order; every
    file read goes into `read` too."""
    directory = os.path.join(state_dir, store.SESSIONS)
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return {}
    found: dict[str, Session] = {}
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        snapshot = store.read_json(os.path.join(directory, name))
        if read is not None:
            read[name] = snapshot
        if (
            isinstance(snapshot, dict)
            and isinstance(snapshot.get("session_id"), str)
            and snapshot.get("status") in (words.ATTENTION, words.WORKING, words.IDLE)
        ):
            found[snapshot["session_id"]] = snapshot  # type: ignore[assignment]
    return found


def _apply(
    state_dir: str,
    session_id: str,
    findings: list[Finding],
    intents: list[Intent],
    meta: dict[str, Any] | None = None,
) -> list[Record]:
    """Apply the findings under the lock, to the snapshot as it is then: a finding that no longer
    changes anything (a hook or another reader got there first) writes nothing. `meta` (the
    client's display name) is written with the snapshot, as no event."""
    from lookout import machine

    written = []
    with store.Locked(state_dir) as st:
        session = st.read_session(session_id)
        if session is not None and meta:
            session.update(meta)  # type: ignore[typeddict-item]
            st.write_session(session)
        for f in findings:
            if session is None:
                break
            event: Any = _event(session_id, f)
            before = _shape(session)
            import copy

            after, line, new = machine.apply(copy.deepcopy(session), event)
            if _shape(after) == before:
                continue
            session = after
            st.write_session(session)
            line = {"ts": store.rfc3339(f["observed_ms"]), **line}
            st.append(store.EVENTS, line, store.rotate_bytes())
            written.append(line)
            intents += hookless_texts(new, session, f["waiting_for"])
    return written


def _episode_key(actor: Actor) -> str | None:
    episode = actor.get("episode")
    return episode["key"] if episode else None


def _shape(session: Session) -> object:
    """What a Reconciled event may change: statuses, open episodes, and what is known of a
    usage limit (its time, whether it lifted)."""
    return [
        session.get("status"),
        session.get("ended_reason"),
        [(a["status"], _episode_key(a), _limit_of(a)) for _, a in _actors(session)],
    ]


def _limit_of(actor: Actor) -> tuple[object, object]:
    episode: Any = actor.get("episode") or {}
    return episode.get("until_ms"), episode.get("lifted")


def drain(state_dir: str) -> None:
    """Record the deliveries waiting in spool/ (hooks that could not take events.lock in time),
    as the next hook would, and send what they ask for: a reader shows them recorded."""
    if not os.path.isdir(os.path.join(state_dir, store.SPOOL)):
        return
    from lookout import machine

    with store.Locked(state_dir) as st:
        done = st.record(None, machine.apply)
    _notify(state_dir, [intent for _, _, intents, _ in done for intent in intents])


def drain_quietly(state_dir: str) -> None:
    """drain() for a reader of the log (tail, report): one that cannot still shows the log."""
    try:
        drain(state_dir)
    except (OSError, TimeoutError):
        pass


def ack(state_dir: str, session_id: str, now_ms: int | None = None) -> Record | None:
    """`lookout ack`: record the user's word that nothing waits on them in this session."""
    from lookout import events, machine

    now_ms = words.now_ms() if now_ms is None else now_ms
    intents: list[Intent] = []
    with store.Locked(state_dir) as st:
        session = st.read_session(session_id)
        if session is None:
            return None
        event = events.observed("Ack", session_id, now_ms, source="user", outcome="ack")
        session, line, intents = machine.apply(session, event)
        st.write_session(session)
        line = {"ts": store.rfc3339(now_ms), **line}
        st.append(store.EVENTS, line, store.rotate_bytes())
    _notify(state_dir, intents)
    return line


def interrupted(state_dir: str, session_id: str, at_ms: int) -> list[Record]:
    """`lookout interrupt` pressed the agent's own interrupt key at `at_ms`, for an agent that
    fires no hook for a stopped turn (Gemini CLI, Codex): the turn it showed is over, as that
    key ends it (its Keys, checked with the real client). Shown idle with evidence `steer`
    (a `Reconciled` event from source `steer`), never left working to be called stuck; its
    next hook says what it does next."""
    intents: list[Intent] = []
    found = _finding("interrupted", "steer", None, None, at_ms)
    written = _apply(state_dir, session_id, [found], intents)
    _notify(state_dir, intents)
    return written


# -- the escalation's question -------------------------------------------------------------------


def still_waiting(state_dir: str, session_id: str, episode: str) -> bool:
    """Whether `episode` still waits on the user, after reconciling the session: the one check
    before an escalation pages anyone (and the way to learn a dialog was answered in the
    terminal). False when it was answered, the session ended or its process is gone."""
    reconcile(state_dir, [session_id])
    session = store.read_session(state_dir, session_id)
    if session is None or session.get("status") != words.ATTENTION:
        return False
    if pid_alive(session) is False:
        return False
    for _, actor in _actors(session):
        open_episode = actor.get("episode")
        open_now = actor.get("status") == words.ATTENTION and open_episode is not None
        if open_now and open_episode is not None and open_episode["key"] == episode:
            # Pages go out only for attention a hook or the client itself reported.
            return open_episode.get("by", "hook") in REPORTED
    return session.get("episode") == episode


def episode_open(session: Session, episode: str) -> bool:
    """Whether the snapshot shows `episode` open (the session's, or one of its actors')."""
    return session.get("episode") == episode or any(
        actor.get("status") == words.ATTENTION and _episode_key(actor) == episode
        for _, actor in _actors(session)
    )
