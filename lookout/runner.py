"""What every hook script runs: stdin -> event -> state machine -> store -> (maybe) dispatch.

The single fail-open boundary: whatever happens, nothing reaches stdout or stderr (SessionStart
and UserPromptSubmit stdout would enter the model's context), the exit code is 0, and our own
failures go to errors.log. Imports here are the hook's latency budget: keep them stdlib-light
(no `os` either: see paths)."""

from __future__ import annotations

import posix
import sys

from lookout import _jsonfast, events, machine, paths, procs, store, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, NoReturn

    from lookout.agents.base import Agent
    from lookout.shapes import Intent, Session
    from lookout.store import Recorded

# Payloads are at most a few hundred KB; past this we record the event without parsing it.
MAX_PARSE_BYTES = 32 * 1024 * 1024
# An agent's stamp (agents/<name>.STAMPED) further than this from the hook's own clock is not
# believed (a stamp from the future would make every later event look late).
STAMP_SKEW_MS = 10 * 60 * 1000


def run(event_name: str | None = None) -> int:
    """Entry point of hooks/<event>.py. `event_name` is what the script is for; the payload's
    own hook_event_name wins (hooks/event.py passes None)."""
    # When the client fired the hook: records are ordered by it (on a busy machine the
    # interpreter can come up seconds later, after the client's next move).
    ts_ms = procs.started_ms(words.now_ms())
    try:
        raw = sys.stdin.buffer.read()  # to EOF first, so the client never sees EPIPE
    except Exception:
        raw = b""
    payload, answer = _parse_for_answer(raw)

    def work(state_dir: str) -> None:
        if payload is None:
            record(raw, event_name, ts_ms, state_dir, paths.environ())  # logs why it is not one
        else:
            record_parsed(payload, raw, event_name, ts_ms, state_dir, paths.environ(), True)

    return _fail_open(f"hook {event_name}", work, answer)


def exit_now(code: int) -> NoReturn:
    """End a hook process without the interpreter's teardown, which frees every module and
    object one by one (~2 ms, more than the hook's own work) for the OS to free anyway. Safe:
    the hook writes only through raw descriptors (nothing is left in a buffer) and registers no
    atexit handler; a detached sender runs on in its own session."""
    posix._exit(code)


def _parse_for_answer(raw: bytes) -> tuple[dict[str, object] | None, bytes]:
    """The payload (parsed once) and what stdout must say. Cursor runs Claude Code's hooks too
    (third-party configs) and reads their stdout as a JSON verdict: nothing at all is invalid JSON
    to it, which can block the tool call, and `{}` decides nothing. Decided by the parsed
    top-level keys only (N11): a Cursor key inside a Claude payload's tool output changes
    nothing. Never raises: this runs before the fail-open boundary."""
    try:
        payload = _parse(raw)
    except Exception:
        return None, b""
    if payload is None:
        # Too big to parse (or not JSON): only a Cursor payload's own first keys tell.
        head = raw[:4096]
        cursor = b'"cursor_version"' in head or (
            b'"conversation_id"' in head and b'"workspace_roots"' in head
        )
        return None, b"{}\n" if cursor and len(raw) > MAX_PARSE_BYTES else b""
    return payload, b"{}\n" if events.is_cursor(payload) else b""


def run_notify(agent: str, argv: list[str]) -> int:
    """Entry point of a notify program (hooks/codex_notify.py: Codex's legacy `notify`): the JSON
    comes as the last argument. Arguments after a leading `--` are the notify program the user
    had before; it still runs (detached), with the same JSON."""
    ts_ms = procs.started_ms(words.now_ms())
    chain = argv[1:-1] if len(argv) >= 2 and argv[0] == "--" else []
    raw = argv[-1] if argv and argv[-1] != "--" else ""

    def work(state_dir: str) -> None:
        try:
            record_notify(agent, raw, ts_ms, state_dir, paths.environ())
        finally:
            if chain:
                from lookout import spawn

                spawn.spawn_detached([*chain, raw])

    return _fail_open(f"{agent} notify", work)


def run_remote() -> int:
    """Entry point of hooks/remote_answer.py, the deciding PermissionRequest hook: the decision
    (lookout.remote.decide) is printed first, then recorded, each inside the boundary. Its
    stdout carries exactly one decision object or nothing at all."""
    # When the client fired the hook, as the recording hooks' records (the request's turn-edge
    # check compares with them): a busy machine may start the interpreter seconds later.
    ts_ms = procs.started_ms(words.now_ms())
    try:
        raw = sys.stdin.buffer.read()  # to EOF first, so the client never sees EPIPE
    except Exception:
        raw = b""
    out = _keep_stdout()  # the answer's only way out; fds 1 and 2 go to /dev/null below
    if out < 0:
        return 0
    done: list[tuple[bytes, dict[str, Any] | None]] = []

    def work(state_dir: str) -> None:
        from lookout.remote import decide

        decide.listen()  # before the wait: the client's SIGTERM says the dialog was answered
        done.append(decide.decide(_parse(raw), ts_ms, state_dir, paths.environ()))

    _fail_open("remote answer", work)
    answer, event = done[0] if done else (b"", None)
    try:
        if answer:
            posix.write(out, answer)
        posix.close(out)  # the answer is out before anything else can fail or take time
    except OSError:
        pass
    if event is not None:
        raw_event = _jsonfast.dumps(event).encode("ascii")
        _fail_open(
            "remote answer (record)",
            lambda state_dir: record(
                raw_event, "RemoteDecision", words.now_ms(), state_dir, paths.environ()
            ),
        )
    return 0


def _agent(name: str) -> Agent:
    """lookout/agents/<name>.py, and only that one: a hook never loads the registry."""
    __import__(f"lookout.agents.{name}")
    module: Agent = sys.modules[f"lookout.agents.{name}"]
    return module


def run_agent(agent: str, argv: list[str]) -> int:
    """Entry point of hooks/<agent>.py (an agent with a script of its own): the agent's JSON on
    stdin (or after `--json`), translated by its module in lookout.agents. The first argument,
    if any, names the event (Copilot's camelCase payloads do not)."""
    ts_ms = procs.started_ms(words.now_ms())
    try:
        raw = sys.stdin.buffer.read()
    except Exception:
        raw = b""
    if argv[:1] == ["--json"] and len(argv) == 2:
        # OpenCode's plugin at exit: a pipe written then may never be flushed, argv always is.
        raw, argv = argv[1].encode("utf-8", "replace"), []
    name = argv[0] if argv else None
    try:
        answer = _agent(agent).answer(raw)
    except Exception:
        answer = b""  # recorded below, where the same import fails inside the boundary
    return _fail_open(
        f"{agent} hook {name or ''}".rstrip(),
        lambda state_dir: record_agent(agent, raw, name, ts_ms, state_dir, paths.environ(), True),
        answer,
    )


def record_agent(
    agent: str,
    raw: bytes,
    name: str | None,
    ts_ms: int,
    state_dir: str,
    env: Mapping[str, str],
    find_process: bool = False,
) -> None:
    data = _logged_parse(raw, state_dir, f"{agent} hook {name}: stdin")
    if data is None:
        return
    module = _agent(agent)
    payload = module.translate(data, name)
    if payload is None:
        return  # an event lookout does not track
    ts = data.get("ts")
    if module.STAMPED and isinstance(ts, int) and abs(ts - ts_ms) < STAMP_SKEW_MS:
        # The agent stamps each event (strictly increasing) and starts one process per event
        # without waiting: records are ordered by that stamp, not by when a hook ran.
        ts_ms = ts
    agent_env = {**env, "LOOKOUT_AGENT": agent}
    agent_env.pop("CLAUDE_PID", None)  # the hook's parent is that agent, not Claude Code
    agent_env.pop("CLAUDE_CODE_ENTRYPOINT", None)  # nor is its entry point Claude Code's
    # LOOKOUT_AGENT names the agent: not taken for Cursor running Claude Code's hooks.
    record_parsed(payload, raw, name, ts_ms, state_dir, agent_env, find_process)


def _fail_open(label: str, work: Callable[[str], None], answer: bytes = b"") -> int:
    """The boundary every entry point goes through: silent, exit 0, our failures to errors.log.
    `answer` (for a client that requires one) is written to stdout whatever happened."""
    out = _keep_stdout() if answer else -1
    _silence()
    state_dir = ""
    try:
        state_dir = paths.state_dir()
        work(state_dir)
    except KeyboardInterrupt:
        raise
    except store.UnsafeStateError as exc:
        # Nothing may be written there, errors.log included: say why where the user's own
        # state would be (doctor reads it too).
        fallback = paths.default_state_dir()
        if fallback != state_dir:
            store.log_error(fallback, f"{label}: refused state directory: {exc}")
    except BaseException:
        import traceback

        store.log_error(state_dir or paths.state_dir(), f"{label}: {traceback.format_exc()}")
    finally:
        if out >= 0:
            try:
                posix.write(out, answer)
                posix.close(out)
            except OSError:
                pass
    return 0


def _keep_stdout() -> int:
    try:
        return posix.dup(1)
    except OSError:
        return -1


def record_notify(agent: str, raw: str, ts_ms: int, state_dir: str, env: Mapping[str, str]) -> None:
    """A notify program's argument, translated by the agent's module, recorded as a Claude-shaped
    payload of that agent."""
    data = _logged_parse(raw.encode("utf-8", "replace"), state_dir, f"{agent} notify: argument")
    if data is None:
        return
    payload = _agent(agent).translate(data, None)
    if payload is None:
        return
    agent_env = {**env, "LOOKOUT_AGENT": agent}
    agent_env.pop("CLAUDE_PID", None)  # a notify program's parent is that agent, not Claude
    # Its parent, where that is the agent (procs.of_notify): without a pid, nothing tells that
    # the session's pane still runs the agent (steering then asks tmux what the pane runs).
    raw_payload = _jsonfast.dumps(payload).encode("ascii")
    process = procs.of_notify(agent)
    record_parsed(payload, raw_payload, None, ts_ms, state_dir, agent_env, process=process)


def _silence() -> None:
    """Point fds 1 and 2 at /dev/null: no stray output, even from C code or a child process."""
    try:
        null = posix.open("/dev/null", posix.O_WRONLY)
        posix.dup2(null, 1)
        posix.dup2(null, 2)
        posix.close(null)
    except OSError:
        pass


def record(
    raw: bytes, event_name: str | None, ts_ms: int, state_dir: str, env: Mapping[str, str]
) -> None:
    """Record one delivery. Raises on our own bugs (the caller logs them)."""
    payload = _logged_parse(raw, state_dir, f"hook {event_name}: stdin")
    if payload is None:
        return
    record_parsed(payload, raw, event_name, ts_ms, state_dir, env)


def record_parsed(
    payload: dict[str, object],
    raw: bytes,
    event_name: str | None,
    ts_ms: int,
    state_dir: str,
    env: Mapping[str, str],
    find_process: bool = False,
    process: tuple[int, int | None] | None = None,
) -> None:
    """`find_process`: the caller is a hook its agent started (not a notify program, a test or
    a fixture builder calling in): the agent is the hook's parent process. `process`: the
    agent's (pid, start) as the caller found it (a notify program's parent: procs.of_notify)."""
    if events.is_cursor(payload) and not env.get("LOOKOUT_AGENT"):
        # Cursor running Claude Code's hooks (third-party configs): lookout's own Cursor hooks
        # (install.py --agent cursor) report that session; a Claude session would be a lie.
        return
    # The same bytes from another Claude process (two `claude -p --continue` a second apart) are
    # two events, not one delivered twice.
    key = raw + b"\0" + env.get("CLAUDE_PID", "").encode("utf-8", "replace")
    event = events.parse(payload, env, ts_ms, events.digest(key), event_name)
    if not event["session_id"]:
        store.log_error(state_dir, f"hook {event['name']}: payload has no session_id; ignored")
        return
    if find_process or process is not None:
        # The agent's process, for readers to tell a session that died at a dialog (kill -9, a
        # closed terminal) from one that waits. Not at SessionEnd (the agent may be gone
        # already): the session keeps the one recorded before.
        pid, start = (0, None)
        if event["name"] != "SessionEnd":
            pid, start = process or procs.of_hook(event["agent"], event["pid"])
        event["pid"], event["pid_start"] = (pid, start) if pid else (None, None)
    try:
        with store.Locked(state_dir) as st:
            # What waits in spool/ first (oldest first, this event in its place among them).
            done = st.record(event, machine.apply)
    except store.LockTimeout as exc:
        # Kept whole for the next holder of the lock: a stall costs a late record, never one.
        name = store.spool(state_dir, event)
        store.log_error(
            state_dir,
            f"hook {event['name']}: {exc}: spooled as {store.SPOOL}/{name} (not lost);"
            " the next hook records it",
        )
        return
    _after(done, state_dir)


def _after(done: list[Recorded], state_dir: str) -> None:
    """What the recorded events ask for once the lock is let go: their notifications, and the
    timers of the sessions they start a turn in."""
    _notify([intent for _, _, intents, _ in done for intent in intents], state_dir)
    timed = {s["session_id"]: s for was, s, _, e in done if _timed(was, s, e["name"])}
    for session in timed.values():
        _start_timers(state_dir, session)
    _poller(state_dir)


def _poller(state_dir: str) -> None:
    """Make sure the Telegram poller runs while it is wanted ([steer] on and a Telegram channel:
    store.TELEGRAM_WANTED, kept by whoever reads the config): one stat() when it is not, a free
    flock when it runs; when it is wanted and none runs (a reboot, a quiet day), the same
    detached start as the sender's. The hook never waits for it."""
    try:
        posix.stat(paths.join(state_dir, store.TELEGRAM_WANTED))
    except OSError:
        return
    fd = store.try_lock(paths.join(state_dir, store.TELEGRAM_LOCK))
    if fd is None:
        return  # it runs
    posix.close(fd)
    from lookout import spawn

    spawn.start_poller(state_dir)


def _timed(was: object, session: Session, name: str) -> bool:
    """The event starts what only time passing can end (lookout.sender.timers): a turn of a
    session whose process lookout knows (it may go stuck), or a turn failed on a limit (it may
    lift). Costs a few comparisons; most events are neither. A session first heard of mid-turn
    is armed by its next turn (its first hook then pays nothing more than any other)."""
    if name == "StopFailure":
        return session["status"] == words.ATTENTION
    started = name in _TURN_STARTS or was not in (None, words.WORKING)
    return started and session["status"] == words.WORKING and isinstance(session.get("pid"), int)


_TURN_STARTS = frozenset({"UserPromptSubmit", "UserPromptExpansion"})


def _start_timers(state_dir: str, session: Session) -> None:
    """Make sure a sender runs its timers, when some rule sends what they may find: its lock
    free (none runs), the cached config asked, then the same detached start as for a job. The
    hook never waits for it."""
    fd = store.try_lock(paths.join(state_dir, store.SENDER_LOCK))
    if fd is None:
        store.ring(state_dir)  # a sender runs: it looks at every session itself, woken now
        return
    posix.close(fd)
    from lookout.config import cache
    from lookout.config.sessions import timed_kinds

    cwd = session.get("cwd")
    if not timed_kinds(cache.load_cached(state_dir, cwd if isinstance(cwd, str) else None)):
        return
    from lookout import spawn

    spawn.spawn(state_dir, paths.join(state_dir, store.OUTBOX), [cwd] if cwd else [])


def _notify(intents: list[Intent], state_dir: str) -> None:
    """The notification machinery, for the transitions that ask for a notification: an event
    that asks for none (most tool calls) never loads it."""
    if not intents:
        return
    for intent in intents:
        intent["ts"] = store.rfc3339(intent["ts_ms"])
    from lookout import hookpack

    hookpack.load("notify")  # precompiled too, when current
    from lookout.notify.handle import handle  # only turns that end or block pay for it

    handle(intents, state_dir)


def _logged_parse(raw: bytes, state_dir: str, what: str) -> dict[str, object] | None:
    """`raw` parsed, or None once errors.log says that `what` is not a payload."""
    payload = _parse(raw)
    if payload is None:
        store.log_error(state_dir, f"{what} is not a JSON object ({len(raw)} bytes); ignored")
    return payload


def _parse(raw: bytes) -> dict[str, object] | None:
    if not raw.strip() or len(raw) > MAX_PARSE_BYTES:
        return None
    try:
        value = _jsonfast.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # nested past the parser's depth: not a payload
        return None
    return value if isinstance(value, dict) else None
