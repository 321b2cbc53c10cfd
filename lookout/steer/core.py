"""say, interrupt, start: the one entry of every surface. Each runs every check here, in this
order, so no surface can skip one: [steer] enabled, the surface and its rate, the text, the
session (one, live), its state (never into an open dialog; while working only where the agent
queues it), the way (its pane, else Claude Code's inbox socket), then delivers, records a
`Steered` event and says what came of it (an Outcome), or raises SteerError with a hint."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lookout import client_sessions, paths, reconcile, store, words
from lookout.config import steer as steer_config
from lookout.errors import LookoutError
from lookout.jump.locate import name as session_name
from lookout.jump.tmux import Pane
from lookout.sessions import SHORT_ID, Row, exact, load_sessions, matching, resolve
from lookout.steer import agents, inbox, journal, launch, pane, text
from lookout.steer.shapes import SURFACES, Outcome, SteerError

# How long say/interrupt wait to see the agent take what was sent (its prompt hook, its status).
WAIT_S = 3.0
POLL_S = 0.03
FRAMING = {
    "pane": "typed into its input box: the agent gets it as your own message",
    "socket": "sent to its inbox: Claude Code shows it to the model as a message from another"
    " Claude session, not as typed by you",
}
# Claude Code's registry says `waiting` while a dialog is open.
_DIALOG = "waiting"
# The attention reasons that are a dialog on screen.
DIALOG_REASONS = ("permission", "question", "plan", "elicitation", "input")
# The attention reasons that are no dialog, and the status steering takes them for: a failed
# turn (`error`: an API error, a usage limit) waits for a prompt as an idle session does (the
# limit_lifted alert says to send one); `stuck` is a turn that, for all anyone knows, still runs.
# Any other attention (an unknown reason) counts as a dialog: fail closed.
NOT_DIALOGS = {"error": "idle", "stuck": "working"}
# One action at a time types into a session, whichever surface or process it comes from: a flock
# of the session's own file under LOCK_DIR for the duration of the keys, waited for this long.
LOCK_DIR = "steer-locks"
# What Esc does to an open dialog of an agent whose Keys.esc_denies (checked with Claude Code).
DISMISSED = "Esc answers it as No (denied), and the turn stops"
LOCK_WAIT_S = 5.0
# How long `start` waits for Claude Code's registry to name the new session (its title).
NAME_WAIT_S = 1.0


def enabled() -> steer_config.SteerConfig:
    """The user's [steer], when it is on; SteerError(disabled) saying how to turn it on (also for
    what a surface shows without steering: Telegram's /sessions)."""
    cfg = steer_config.load()
    if not cfg.enabled:
        raise SteerError(
            "disabled",
            f"steering is off ([steer] enabled is not true in {cfg.source})",
            hint=steer_config.HOW_TO_ENABLE,
        )
    return cfg


def _setup(source: str, state_dir: str | None) -> tuple[steer_config.SteerConfig, str]:
    """The config (on), the state directory, and one attempt counted against the surface."""
    surface = source.split(":", 1)[0]
    if surface not in SURFACES:
        steer_config.load()  # a config error says itself first, as before
        raise SteerError("surface", f"{source!r} is not a surface that may steer sessions")
    cfg = enabled()
    state = state_dir or paths.state_dir()
    journal.allow(state, surface, cfg.per_minute)
    return cfg, state


def _resolve(state_dir: str, key: str, command: str, whole_id: bool = False) -> Row:
    """The one live session `key` names (sessions.resolve: an id or its start, a project, a
    title; with `whole_id`, only the session whose id is exactly `key`: a reply to an alert, T4);
    SteerError when none, several or it ended."""
    reconcile.quietly(state_dir)  # what a signal proves (a dialog answered, a process gone) first
    rows = load_sessions(state_dir)
    try:
        found = exact(rows, key) if whole_id else None
        if whole_id and found is None:
            raise LookoutError(
                f"the session {key[:SHORT_ID]} is no longer recorded",
                hint="`lookout status --all` lists the recorded ones",
            )
        row = found or resolve(rows, key, command)
    except LookoutError as exc:
        reason = "ambiguous" if not whole_id and matching(rows, key) else "no_session"
        raise SteerError(reason, str(exc), hint=exc.hint) from None
    if row["status"] == "ended":
        raise SteerError("ended", f"{session_name(row)} has ended", hint="lookout start PROJECT")
    return row


def _registry_status(row: Row) -> str | None:
    """Claude Code's own word on the session now (busy, waiting, idle), when it has one."""
    keys = agents.keys(row["agent"])
    if keys is None or not keys.registry:
        return None
    entry = client_sessions.read().get(row["session_id"])
    return entry["status"] if entry else None


def _refuse_dialog(row: Row, dialog: str, action: str) -> SteerError:
    return SteerError(
        "attention",
        f"{session_name(row)} waits on you ({dialog}): lookout will not {action} into an open"
        " dialog (typed keys would answer it)",
        hint="answer the dialog first (lookout jump, the dashboard, or lookout answer)",
    )


def _fresh(state_dir: str, row: Row) -> Row:
    """The row again from its snapshot as the hooks left it now (for the last check)."""
    snapshot = store.read_session(state_dir, row["session_id"])
    if snapshot is None:
        raise SteerError("no_session", f"{session_name(row)} is no longer recorded")
    status = snapshot.get("status") or "idle"
    return {**row, "status": status, "reason": snapshot.get("reason")}


def _steer_status(row: Row) -> str:
    """The status steering treats the session as having: an attention that is no dialog as
    NOT_DIALOGS says (a failed turn idle, a stuck one working), every other as it is."""
    if row["status"] == "attention":
        return NOT_DIALOGS.get(row.get("reason") or "", "attention")
    return str(row["status"])


def _check_state(row: Row, keys: agents.Keys, action: str) -> None:
    """Never into an open dialog; while working only where the agent queues what is typed."""
    dialog = _open_dialog(row)
    if dialog is not None:
        raise _refuse_dialog(row, dialog, action)
    if _steer_status(row) == "working" and not keys.queues_while_working:
        raise SteerError(
            "working",
            f"{session_name(row)} is working, and what is typed into {keys.title} during a turn"
            f" was not checked to wait for it (checked with {keys.checked})",
            hint="wait until it is idle (lookout status), or interrupt it first",
        )


@contextmanager
def _delivering(state: str, row: Row) -> Iterator[None]:
    """The session's own steering lock, across processes (a terminal `say` and a dashboard one at
    the same moment would interleave their keys in one pane); SteerError(busy) when another
    action holds it for more than LOCK_WAIT_S."""
    directory = os.path.join(state, LOCK_DIR)
    store.ensure_dir(directory)
    path = os.path.join(directory, store.safe_name(row["session_id"]) + ".lock")
    deadline = time.monotonic() + LOCK_WAIT_S
    while (fd := store.try_lock(path)) is None:
        if time.monotonic() > deadline:
            raise SteerError(
                "busy",
                f"{session_name(row)}: another steering action is typing into it (for more than"
                f" {LOCK_WAIT_S:g} s)",
                hint="wait for its outcome, then try again",
            )
        time.sleep(POLL_S)
    try:
        yield
    finally:
        os.close(fd)


# -- say -----------------------------------------------------------------------------------------


def say(
    session: str,
    message: str,
    *,
    via: str | None = None,
    source: str = "terminal",
    state_dir: str | None = None,
    wait_s: float = WAIT_S,
    whole_id: bool = False,
) -> Outcome:
    """Send `message` to `session` as the user's next message: typed into its tmux pane, or
    (Claude Code without a pane, or `via="socket"`) written to its inbox socket. `whole_id`:
    `session` is an exact session id (a reply to its alert), never resolved loosely."""
    cfg, state = _setup(source, state_dir)
    message = text.check(message, cfg.max_chars)
    row = _resolve(state, session, "lookout say", whole_id)
    try:
        return _say(state, row, message, via, source, wait_s)
    except SteerError as exc:
        _record_refusal(state, row, "say", source, via or "", message, exc)
        raise


def _say(
    state: str, row: Row, message: str, via: str | None, source: str, wait_s: float
) -> Outcome:
    keys = _keys(row)
    _check_state(row, keys, "type")
    way, found_pane, entry = _way(state, row, keys, via)
    if way == "pane":
        assert found_pane is not None
        if "\n" in message and not keys.multiline:
            raise SteerError(
                "text",
                f"the message has several lines, and a newline typed into {keys.title} may send"
                " the first line on its own",
                hint="send it as one line",
            )
        prefix = text.command_prefix(message)
        if prefix is not None:
            raise SteerError(
                "text",
                f"the message starts with {prefix!r}, which {keys.title}'s input box runs as a"
                " command instead of sending it",
                hint="start it with another character",
            )
    with _delivering(state, row):
        mark = _events_mark(state)  # after the wait: another action's prompt is not this one's
        now_ms = words.now_ms()
        if way == "pane":
            assert found_pane is not None
            target = found_pane.target
            at_enter = _type(state, row, keys, found_pane, message)
            sent_keys = ["Enter"]
        else:
            assert entry is not None
            fresh = _fresh(state, row)
            _check_state(fresh, keys, "send")
            at_enter = _steer_status(fresh)
            target = inbox.send(entry, row["session_id"], message)
            sent_keys = []
    took = _wait_prompt(state, row["session_id"], mark, wait_s)
    result = _said(took, at_enter, way, keys)
    return _journaled(state, row, "say", source, way, target, message, sent_keys, result, now_ms)


def _said(took: list[str] | None, at_enter: str, way: str, keys: agents.Keys) -> str:
    """What came of a message, from the records since it was sent (`took`: their events up to
    its prompt hook, None when none fired) and the status it was sent in: `queued` when the
    session was working and no turn ended before the hook, for an agent whose hook fires as
    it queues (it takes it at its next step); `delivered` when the hook said the agent took it."""
    if took is None:
        return "queued" if at_enter == "working" else ("typed" if way == "pane" else "sent")
    ended = any(event in ("Stop", "StopFailure") for event in took)
    if way == "pane" and at_enter == "working" and keys.prompt_hook_when_queued and not ended:
        return "queued"
    return "delivered"


def _keys(row: Row) -> agents.Keys:
    keys = agents.keys(row["agent"])
    if keys is None:
        raise SteerError(
            "agent", f"lookout does not know how to steer {row['agent']} sessions", hint=None
        )
    return keys


def _way(state: str, row: Row, keys: agents.Keys, via: str | None) -> tuple[str, Pane | None, Any]:
    """(pane | socket, the pane, the inbox's registry entry): its pane when lookout knows it,
    else Claude Code's inbox; `via` chooses."""
    snapshot: dict[str, Any] = dict(store.read_session(state, row["session_id"]) or {})
    found: Pane | None = None
    why_pane = "lookout knows no tmux pane for it (it was not started inside tmux)"
    pane_hint: str | None = None  # what to do when the pane cannot be used, where it says more
    if via in (None, "pane") and pane.recorded(snapshot):
        unsafe = pane.unsafe(snapshot)
        if unsafe is not None:
            raise SteerError(
                "no_way",
                f"{session_name(row)}: lookout will not type into its tmux server: {unsafe}",
                hint="its hooks recorded that server from $TMUX (a project's settings `env` can set"
                " it): type into the session yourself, and check where TMUX comes from",
            )
        no_pane = pane.shared(state, snapshot)  # its process serves several sessions
        found = pane.find(snapshot) if no_pane is None else None
        if no_pane is not None:
            why_pane, pane_hint = no_pane
        elif found is None:
            why_pane = "its tmux pane (or that tmux server) is gone"
        elif (why_not := pane.not_agent(found, snapshot, keys)) is not None:
            found, why_pane, pane_hint = None, why_not, _NOT_AGENT_HINT
    if found is not None:
        return "pane", found, None
    if via == "pane":
        raise SteerError(
            "no_way",
            f"{session_name(row)}: {why_pane}",
            hint="--via socket (Claude Code only)" if keys.socket else pane_hint,
        )
    if not keys.socket:
        raise SteerError("no_way", f"{session_name(row)}: {why_pane}", hint=pane_hint or _PANE_HINT)
    entry = inbox.entry(row["session_id"])
    why_socket = inbox.usable(entry)
    if why_socket is not None:
        before = "" if via == "socket" else f"{why_pane}, and "
        raise SteerError(
            "no_way",
            f"{session_name(row)}: {before}its inbox socket cannot be used: {why_socket}",
            hint=_PANE_HINT,
        )
    return "socket", None, entry


_PANE_HINT = "start your agents inside tmux for lookout to type into them"
_NOT_AGENT_HINT = "lookout jump shows what its pane runs now; if it is the agent, type there"


def _type(state: str, row: Row, keys: agents.Keys, where: Pane, message: str) -> str:
    """The last checks (snapshot, registry, screen) right before the keys, then the text, then
    (once the pane shows it, and still no dialog) Enter. Returns the status steering took the
    session for as Enter was pressed."""

    def check(screen: str) -> None:
        _check_state(_fresh(state, row), keys, "type")
        if keys.read_input is not None:
            shown = keys.read_input(screen)
            if shown is None:
                raise SteerError(
                    "attention",
                    f"{session_name(row)}: its pane shows no input box (a dialog or a menu is"
                    " open): nothing was typed",
                    hint="answer it first: lookout jump",
                )
            if shown:
                raise SteerError(
                    "draft",
                    f"{session_name(row)}: its input box holds text not sent yet ({shown[:40]!r}):"
                    " lookout will not send it with yours",
                    hint="send or clear it in the pane first (lookout jump)",
                )

    # The box is read with its escapes: dim text there is a placeholder, not a draft.
    check(pane.screen(where, styled=True))
    before = pane.screen(where)
    pane.type_text(where, message)

    seen = [_steer_status(row)]

    def still(screen: str) -> None:
        fresh = _fresh(state, row)
        _check_state(fresh, keys, "type")
        seen[0] = _steer_status(fresh)
        if keys.read_input is not None and keys.read_input(screen) is None:
            raise SteerError(
                "attention",
                f"{session_name(row)}: a dialog opened while typing: Enter was not pressed",
                hint="look at the pane (lookout jump): the dialog is the session's to answer",
            )

    pane.wait_echo(where, message, before, still)
    time.sleep(keys.enter_after_s)
    still(pane.screen(where))
    pane.press(where, "Enter")
    return seen[0]


def _events_mark(state: str) -> store.Tail:
    """A follower of events.jsonl from now (store.Tail): what comes after is new."""
    tail = store.Tail(
        os.path.join(state, store.EVENTS),
        drain=functools.partial(reconcile.drain_quietly, state),  # a prompt's hook spooled
    )
    tail.to_end()
    return tail


def _wait_prompt(state: str, session_id: str, mark: store.Tail, wait_s: float) -> list[str] | None:
    """The session's events since `mark` up to its prompt hook (it took the message, or for an
    agent that fires it on queueing, queued it), or None when none fired within `wait_s`."""
    from lookout.sessions import parse_line

    deadline = time.monotonic() + wait_s
    mine: list[str] = []
    while True:
        for raw in mark.poll() or ():
            r = parse_line(raw)
            if r is not None and r.get("session_id") == session_id:
                mine.append(str(r.get("event")))
        if "UserPromptSubmit" in mine:
            return mine[: mine.index("UserPromptSubmit") + 1]
        if time.monotonic() > deadline:
            return None
        time.sleep(POLL_S)


# -- interrupt -----------------------------------------------------------------------------------


def interrupt(
    session: str,
    *,
    source: str = "terminal",
    state_dir: str | None = None,
    wait_s: float = WAIT_S,
    whole_id: bool = False,
) -> Outcome:
    """Stop the session's current turn, as its interrupt key (Esc) does, in its pane
    (`whole_id`: as say)."""
    _, state = _setup(source, state_dir)
    row = _resolve(state, session, "lookout interrupt", whole_id)
    try:
        return _interrupt(state, row, source, wait_s)
    except SteerError as exc:
        _record_refusal(state, row, "interrupt", source, "pane", "", exc)
        raise


def _interrupt(state: str, row: Row, source: str, wait_s: float) -> Outcome:
    keys = _keys(row)
    if keys.interrupt is None:
        raise SteerError(
            "agent",
            f"the key that interrupts {keys.title} was not checked with its real client",
            hint="interrupt it in its pane: lookout jump",
        )
    dialog = _open_dialog(row)
    if dialog is not None and not keys.esc_denies:
        raise SteerError(
            "attention",
            f"{session_name(row)} waits on you ({dialog}): its interrupt key would answer the"
            f" dialog, and what {keys.title} makes of that was not checked",
            hint="answer the dialog first (Deny stops the turn): lookout jump, the dashboard, or"
            " lookout answer",
        )
    if dialog is None and _steer_status(row) == "idle" and _registry_status(row) != "busy":
        raise SteerError(
            "idle",
            f"{session_name(row)} is idle: there is no turn to interrupt",
            hint="lookout say SESSION TEXT starts one",
        )
    way, found, _ = _way(state, row, keys, "pane")
    assert found is not None
    with _delivering(state, row):
        now_ms = words.now_ms()
        for key in keys.interrupt:
            pane.press(found, key)
    if keys.reports_interrupt:
        status = _wait_stopped(state, row["session_id"], row["status"], wait_s)
    else:
        # No hook will say the turn stopped: lookout says it, as it pressed the key itself.
        reconcile.interrupted(state, row["session_id"], now_ms)
        status = None
    stopped = status in ("idle", "ended") or status not in (None, row["status"], "working")
    result = "interrupted" if stopped else "sent"
    pressed = list(keys.interrupt)
    out = _journaled(
        state, row, "interrupt", source, way, found.target, "", pressed, result, now_ms, dialog
    )
    out["note"] = _interrupt_note(keys, dialog, status, result, wait_s)
    return out


def _open_dialog(row: Row) -> str | None:
    """The dialog the session shows now (its attention reason, or "a dialog" when the reason is
    unknown or only Claude Code's registry says it waits), or None. An attention of NOT_DIALOGS
    (a failed turn, a stuck one) is no dialog."""
    reason = row.get("reason") or ""
    if row["status"] == "attention" and reason not in NOT_DIALOGS:
        return reason if reason in DIALOG_REASONS else "a dialog"
    if _registry_status(row) == _DIALOG:
        return "a dialog"
    return None


def _interrupt_note(
    keys: agents.Keys, dialog: str | None, status: str | None, result: str, wait_s: float
) -> str | None:
    if dialog is not None:
        return f"the open dialog ({dialog}) was dismissed: {DISMISSED}"
    if not keys.reports_interrupt:
        return (
            f"{keys.title} reports no hook for a stopped turn: lookout shows it idle, as"
            " interrupted by lookout (evidence steer), until its next hook"
        )
    if status == "attention":
        return f"{keys.title} reported the stopped turn as waiting on you: lookout ack clears it"
    if result != "interrupted":
        return f"it still shows {status} after {wait_s:g} s"
    return None


def _wait_stopped(state: str, session_id: str, before: str, wait_s: float) -> str | None:
    """The session's status once the turn stopped: idle (or ended), or another status than it
    had (an agent that reports a stopped turn as failed); reconciled from the client's own
    signals, as Claude Code records no hook for Esc. Its status at the deadline otherwise."""
    deadline = time.monotonic() + wait_s
    while True:
        reconcile.quietly(state)
        snapshot: dict[str, Any] = dict(store.read_session(state, session_id) or {})
        status = snapshot.get("status")
        settled = status in ("idle", "ended") or status not in (before, "working")
        if settled or time.monotonic() > deadline:
            return str(status) if status else None
        time.sleep(POLL_S * 3)


# -- start ---------------------------------------------------------------------------------------


def start(
    project: str,
    agent: str | None = None,
    prompt: str | None = None,
    *,
    source: str = "terminal",
    state_dir: str | None = None,
    wait_s: float = launch.WAIT_S,
    names: bool = False,
) -> Outcome:
    """A new session of `agent` (default: the first of [steer] agents) in a new tmux window in
    `project` (one of [steer] projects; `names`: also by its name, launch.project_dir), with
    `prompt` as its first message; returns once its first hook arrived."""
    cfg, state = _setup(source, state_dir)
    name = agent or (cfg.agents or steer_config.DEFAULTS["agents"])[0]
    keys = agents.keys(name)
    if keys is None or name not in cfg.agents:
        raise SteerError(
            "agent",
            f"[steer] agents does not allow starting {name} (allowed: {', '.join(cfg.agents)})",
            hint=f"add {name!r} to agents in [steer], in your own config",
        )
    if prompt is not None:
        text.check(prompt, cfg.max_chars, what="the prompt")
        prefix = text.command_prefix(prompt)
        if prefix is not None:
            raise SteerError(
                "text",
                f"the prompt starts with {prefix!r}, which {keys.title} runs as a command",
                hint="start it with another character",
            )
    directory = launch.project_dir(cfg, project, names)
    program = agents.program(keys)
    if program is None:
        raise SteerError(
            "agent",
            f"{keys.title}'s program ({keys.program}) is not on PATH",
            hint=f"install {keys.title}, or run lookout where {keys.program} is on PATH",
        )
    known = launch.known_sessions(state)
    now_ms = words.now_ms()
    socket, pane_id = launch.open_window(directory, launch.argv(keys, program, prompt))
    target = launch.target(socket, pane_id)
    sid = launch.first_session(state, socket, pane_id, known, wait_s)
    line = journal.record(
        state,
        sid or "",
        action="start",
        source=source,
        via="pane",
        target=target,
        text=prompt or "",
        result="started" if sid else "no_hook",
        ts_ms=now_ms,
        agent=name,
    )
    if sid is None:
        raise SteerError(
            "no_hook",
            f"started {keys.title} in {paths.tilde(directory)} (tmux {target}), but no hook of it"
            f" arrived within {wait_s:g} s, so lookout cannot name its session",
            hint=f"is lookout installed for {keys.title}? lookout doctor (the window still runs)",
        )
    row = _titled(state, sid, keys.registry, wait_s)
    shown = session_name(row) if row else sid[:8]
    return {
        "action": "start",
        "session_id": sid,
        "session": shown,
        "agent": name,
        "via": "pane",
        "target": target,
        "text": prompt or "",
        "keys": [],
        "result": "started",
        "status": row["status"] if row else None,
        "framing": "its first prompt, as if you typed it" if prompt else "",
        "note": None,
        "ts": str(line["ts"]),
    }


def _titled(state: str, sid: str, registry: bool, wait_s: float) -> Row | None:
    """The new session's row named as `lookout status` names it: after a reader's reconcile,
    which takes the title from Claude Code's registry (it names a session as it starts,
    `new1-21`), waited for up to NAME_WAIT_S where the agent keeps one (`registry`)."""
    deadline = time.monotonic() + min(wait_s, NAME_WAIT_S)
    while True:
        entry = client_sessions.read().get(sid) if registry else None
        named = not registry or bool(entry and entry["name"])
        reconcile.quietly(state)
        row = next((r for r in load_sessions(state) if r["session_id"] == sid), None)
        if named or time.monotonic() > deadline:
            return row
        time.sleep(POLL_S * 3)


# -- the outcome and the record --------------------------------------------------------------


def _journaled(
    state: str,
    row: Row,
    action: str,
    source: str,
    way: str,
    target: str,
    sent: str,
    keys: list[str],
    result: str,
    ts_ms: int,
    dismissed: str | None = None,
) -> Outcome:
    """Journal what was sent to the session (a Steered line: journal.record) and say what came
    of it. `dismissed`: the dialog an interrupt's Esc answered."""
    line = journal.record(
        state,
        row["session_id"],
        action=action,
        source=source,
        via=way,
        target=target,
        text=sent,
        result=result,
        ts_ms=ts_ms,
        dismissed=dismissed,
    )
    snapshot: dict[str, Any] = dict(store.read_session(state, row["session_id"]) or {})
    return {
        "action": action,
        "session_id": row["session_id"],
        "session": session_name(row),
        "agent": row["agent"],
        "via": way,
        "target": target,
        "text": sent,
        "keys": keys,
        "result": result,
        "status": snapshot.get("status"),
        "framing": FRAMING[way] if action != "interrupt" else "",
        "note": None,
        "ts": str(line["ts"]),
    }


def _record_refusal(
    state: str, row: Row, action: str, source: str, via: str, sent: str, exc: SteerError
) -> None:
    """A refusal about a session is recorded too (result refused, and why)."""
    journal.record(
        state,
        row["session_id"],
        action=action,
        source=source,
        via=via,
        target="",
        text=sent,
        result="failed" if exc.reason == "failed" else "refused",
        ts_ms=words.now_ms(),
        reason=exc.reason,
    )
