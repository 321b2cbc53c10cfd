"""Steering from a chat (issues 33, 40): the one core the Telegram, Slack and Matrix listeners
share. The owner's text, checked by the surface (its own chat, its own users, at most
`[steer] max_age_s` old), becomes an action: a reply to a session's alert says the text to that
session; `stop SESSION` interrupts one (or, as a reply to its alert, that one); `new PROJECT
TEXT` starts one (`new --agent NAME PROJECT TEXT` with that agent, `new` alone lists the
projects); `sessions` lists them; `away [DURATION]` and `back` turn the away switch. Each
command is written with the surface's prefix (`/stop` on Telegram, `!stop` on Slack and
Matrix), and each action goes through lookout.steer.core as the surface (every check is the
core's: [steer] enabled, the rate, the text, the session's state, the way); at the fleet's hub,
an action for another host goes there (lookout.surfaces.listener). The actions run one after
another on a thread of their own, so presses are answered meanwhile; the surface replies with
what was delivered, to which session, and the outcome, or the refusal and its hint."""

from __future__ import annotations

import queue
import re
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from lookout import paths, reconcile, store
from lookout.boundary import visible
from lookout.errors import LookoutError
from lookout.jump.locate import name as session_name
from lookout.sessions import load_sessions
from lookout.surfaces import listener

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from lookout.config.steer import SteerConfig
    from lookout.remote.ignored import Ignored

MAX_WAITING = 4  # actions queued behind the one running; more are refused at once
SESSIONS_MAX = 40  # sessions `sessions` lists, projects `new` alone lists
_USAGE = (
    "Reply to a session's alert to send it your text as its next message.\n"
    "{p}sessions: the sessions and their statuses\n"
    "{p}stop SESSION: interrupt its turn (or reply {p}stop to its alert)\n"
    "{p}new PROJECT TEXT: start a session in PROJECT (its name, ~/... or its path) with TEXT as"
    " its first message; {p}new --agent NAME PROJECT TEXT: with that agent; {p}new alone: the"
    " projects\n"
    "{p}away [DURATION]: you are away from the screen (for 1h, say): Codex waits for your answer"
    " here before its own prompt; {p}back: you are at the screen again"
)


def usage(prefix: str) -> str:
    return _USAGE.format(p=prefix)


@dataclass(frozen=True)
class Job:
    """One action to run: `action` (say, stop, stop_alert, new, projects, sessions, usage, note,
    away, back, remote) and its arguments; `channel` and `message_id` say where the reply goes."""

    channel: Mapping[str, Any]
    message_id: Any
    action: str
    args: tuple[str, ...] = ()


def parse(text: str, replied: str | None, prefix: str = "/") -> tuple[str, ...]:
    """What the owner's text asks: (action, args...); `replied` is the session whose alert it
    replies to (its exact id: say and stop_alert take it whole). A command starts with `prefix`
    (Telegram's `/cmd@bot` form is taken too)."""
    found = re.match(re.escape(prefix) + r"([A-Za-z_]+)(?:@\w+)?(?:\s+(.*))?\Z", text, re.S)
    if found is None:
        return ("say", replied or "", text)
    command, rest = found.group(1).lower(), (found.group(2) or "").strip()
    if command == "sessions":
        return ("sessions",)
    if command == "stop":
        if rest:
            return ("stop", rest)
        if not replied:
            return ("usage", f"{prefix}stop needs a SESSION (or reply {prefix}stop to its alert)")
        return ("stop_alert", replied)  # the alert's session, by its exact id (T4)
    if command == "new":
        return _new(rest, prefix)
    if command == "away":
        return ("away", rest)
    if command == "back":
        return ("back",) if not rest else ("usage", f"{prefix}back takes nothing after it")
    if command in ("help", "start"):
        return ("usage", "")
    return ("usage", f"unknown command {prefix}{visible(command[:40])}")


def _new(rest: str, prefix: str) -> tuple[str, ...]:
    """`new [--agent NAME] PROJECT [TEXT]`: ("new", project, text, agent); `new` alone lists
    the projects."""
    agent = ""
    parts = rest.split(None, 2)
    if parts and (parts[0] == "--agent" or parts[0].startswith("--agent=")):
        if parts[0] == "--agent":
            if len(parts) < 2:
                return ("usage", f"{prefix}new --agent needs the agent's name")
            agent, rest = parts[1], parts[2] if len(parts) > 2 else ""
        else:
            agent, rest = parts[0].split("=", 1)[1], " ".join(parts[1:])
    if not rest:
        return ("usage", f"{prefix}new --agent NAME needs a PROJECT") if agent else ("projects",)
    project, *prompt = re.split(r"\s", rest.strip(), maxsplit=1)
    return ("new", project, prompt[0].strip() if prompt else "", agent)


def too_old(age_s: int, max_age_s: int) -> str | None:
    """What the surface says of a message `age_s` old when that is over `[steer] max_age_s`
    (T3: sent while no listener ran): not acted on; None when it may be."""
    if age_s <= max_age_s:
        return None
    return f"not sent: this message is {_age(age_s)} old; send it again"


def _age(seconds: int) -> str:
    """`45 seconds`, `1 minute`, `60 minutes`: how old a message is, in seconds under a minute."""
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = seconds // 60
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


class Worker:
    """The owner's actions of one listener, run one at a time on a thread of its own; each
    answer goes back through `reply(job, text)`."""

    def __init__(
        self, state_dir: str, source: str, prefix: str, reply: Callable[[Job, str], None]
    ) -> None:
        self.state_dir = state_dir
        self.source = source  # the core's surface (lookout.steer.shapes.SURFACES)
        self.prefix = prefix
        self.reply = reply
        self.jobs: queue.Queue[Job] = queue.Queue(maxsize=MAX_WAITING)
        # One worker for the listener's life: it waits for the next job (one that ended when
        # idle could miss a job put as it ended, which would wait for the next message).
        self._thread = threading.Thread(target=self._work, daemon=True, name=f"{source}-steer")
        self._thread.start()

    def busy(self) -> bool:
        """An action runs or waits (the listener stays for it)."""
        return self.jobs.unfinished_tasks > 0

    def put(self, job: Job) -> None:
        try:
            self.jobs.put_nowait(job)
        except queue.Full:
            self.reply(job, f"busy: {MAX_WAITING} steering actions wait already; try again")

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                self.reply(job, self.run(job))
            except Exception:
                store.log_error(self.state_dir, f"{self.source} steering: {traceback.format_exc()}")
                self.reply(job, "failed: lookout's errors.log says why (lookout doctor)")
            finally:
                self.jobs.task_done()

    def run(self, job: Job) -> str:
        from lookout.steer import core
        from lookout.steer.shapes import SteerError
        from lookout.steer.show import lines

        state, source = self.state_dir, self.source
        actions: dict[str, Callable[[], Any]] = {
            # A reply names its alert's session by its exact id (T4), never loosely.
            "say": lambda: core.say(
                job.args[0], job.args[1], source=source, state_dir=state, whole_id=True
            ),
            "stop": lambda: core.interrupt(job.args[0], source=source, state_dir=state),
            "stop_alert": lambda: core.interrupt(
                job.args[0], source=source, state_dir=state, whole_id=True
            ),
            "new": lambda: core.start(
                job.args[0],
                agent=(job.args[2] if len(job.args) > 2 else "") or None,
                prompt=job.args[1] or None,
                source=source,
                state_dir=state,
                names=True,
            ),
        }
        try:
            if job.action == "note":
                return job.args[0]
            if job.action == "remote":
                return remote(job.args, source)
            if job.action == "usage":
                said = job.args[0] if job.args else ""
                return "\n".join(x for x in (said, usage(self.prefix)) if x)
            if job.action == "sessions":
                core.enabled()
                return sessions_text(state)
            if job.action == "projects":
                return projects_text(core.enabled(), self.prefix)
            if job.action in ("away", "back"):
                said = job.args[0] if job.args else ""
                return away_text(state, job.action == "away", said, source, self.prefix)
            outcome = actions[job.action]()
        except SteerError as exc:
            return refusal(exc)
        except LookoutError as exc:  # a config error: said as the CLI says it
            return refusal(exc)
        return "\n".join(lines(outcome))


class Chat:
    """A surface's side of the owner's messages (Slack's, Telegram's): which count is the
    surface's to say; each is run on one Worker as the core's surface SOURCE and answered
    through `_reply`."""

    SOURCE = ""  # the core's surface (lookout.steer.shapes.SURFACES): its own rate limit
    PREFIX = "/"  # the commands' prefix

    def __init__(self, state_dir: str, ignored: Ignored) -> None:
        self.state_dir = state_dir
        self.ignored = ignored  # what was refused, at a bounded rate
        self.worker = Worker(state_dir, self.SOURCE, self.PREFIX, self._reply)

    def busy(self) -> bool:
        """An action runs or waits (the listener stays for it)."""
        return self.worker.busy()

    def _reply(self, job: Job, text: str) -> None:
        """The answer to `job`, where its message was."""
        raise NotImplementedError


def remote(args: tuple[str, ...], source: str) -> str:
    """Another host's action, run there by its bridge through its own steer/core (issue 42):
    the two lines a local action shows. `args`: (host, action, by, target, text[, agent])."""
    host, action, by, target, *more = args
    text = more[0] if more else ""
    if action == "say":
        what = {"reply_to": target, "text": text}
        return listener.forward_steer(host, "say", source=source, by=by, **what)
    if action == "stop_alert":
        return listener.forward_steer(host, "interrupt", source=source, by=by, reply_to=target)
    if action == "stop":
        return listener.forward_steer(host, "interrupt", source=source, by=by, session=target)
    agent = more[1] if len(more) > 1 else ""
    what = {"project": target, "text": text, "agent": agent}
    return listener.forward_steer(host, "start", source=source, by=by, **what)


def away_text(state_dir: str, on: bool, duration: str, source: str, prefix: str = "/") -> str:
    """`away [DURATION]` and `back`: the away switch, with `stop`'s checks ([steer] on, this
    surface's rate), recorded with this surface as its source; the reply says what it is now."""
    from lookout import away, words
    from lookout.steer import core, journal

    cfg = core.enabled()
    journal.allow(state_dir, source, cfg.per_minute)
    for_s = words.parse_duration(duration) if duration else None
    if for_s == 0:
        hint = f"{prefix}away 1h, or {prefix}away alone"
        raise LookoutError(f"{prefix}away needs a duration above zero", hint=hint)
    state, changed = away.turn(state_dir, on, source=source, for_s=for_s)
    if state["away"]:
        return (
            f"away: {away.said(state)}. Codex's permission requests now wait for your answer"
            f" (here, the dashboard, lookout answer) before its own prompt; {prefix}back when you"
            " are at the screen"
        )
    if not changed:
        return f"away: {away.said(state)} already: Codex asks at its own prompt"
    return f"away: {away.said(state)}. Codex asks at its own prompt again"


def projects_text(cfg: SteerConfig, prefix: str = "/") -> str:
    """What `new` alone answers: the projects [steer] allows, each by the name `new` takes."""
    from lookout.steer.launch import project_names

    named = project_names(cfg)
    if not named:
        return (
            f"no project directory matches [steer] projects ({', '.join(cfg.projects) or 'none'})"
        )
    out = [f"{prefix}new PROJECT TEXT starts a session ({', '.join(cfg.agents)}) in one of:"]
    out += [f"{visible(n)}: {visible(paths.tilde(d))}" for n, d in named[:SESSIONS_MAX]]
    if len(named) > SESSIONS_MAX:
        out.append(f"and {len(named) - SESSIONS_MAX} more (lookout check-config)")
    return "\n".join(out)


def refusal(exc: LookoutError) -> str:
    hint = f"\nhint: {visible(exc.hint)}" if exc.hint else ""
    return f"error: {visible(str(exc))}{hint}"


def sessions_text(state_dir: str) -> str:
    """The live sessions, as the read model shows them: title (short id), status, agent."""
    reconcile.quietly(state_dir)
    rows = [r for r in load_sessions(state_dir) if r["status"] != "ended"]
    if not rows:
        return "no live sessions"
    out = [f"{len(rows)} session{'s' if len(rows) != 1 else ''}:"]
    for r in rows[:SESSIONS_MAX]:
        reason = f" ({r['reason']})" if r["status"] == "attention" and r["reason"] else ""
        summary = f": {visible(r['summary'])[:80]}" if r["summary"] else ""
        out.append(f"{session_name(r)}: {r['status']}{reason}, {visible(r['agent'])}{summary}")
    if len(rows) > SESSIONS_MAX:
        out.append(f"and {len(rows) - SESSIONS_MAX} more (lookout status)")
    return "\n".join(out)
