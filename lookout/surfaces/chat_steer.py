"""Steering from a chat (issues 33, 40): what the Telegram and Matrix listeners share. The
owner's text, checked by the surface (its own chat, its own users), becomes an action: a reply
to a session's alert says the text to that session; `stop SESSION` interrupts one (or, as a
reply to its alert, that one); `new PROJECT TEXT` starts one; `sessions` lists them. Each
command is written with the surface's prefix (`/stop` on Telegram, `!stop` on Matrix), and each
action goes through lookout.steer.core as the surface (every check is the core's: [steer]
enabled, the rate, the text, the session's state, the way). The actions run one after another
on a thread of their own, so presses are answered meanwhile; the surface replies with what was
delivered, to which session, and the outcome, or the refusal and its hint."""

from __future__ import annotations

import queue
import re
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from lookout import reconcile, store
from lookout.boundary import visible
from lookout.errors import LookoutError
from lookout.jump.locate import name as session_name
from lookout.sessions import load_sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MAX_WAITING = 4  # actions queued behind the one running; more are refused at once
SESSIONS_MAX = 40  # sessions `sessions` lists
_USAGE = (
    "Reply to a session's alert to send it your text as its next message.\n"
    "{p}sessions: the sessions and their statuses\n"
    "{p}stop SESSION: interrupt its turn (or reply {p}stop to its alert)\n"
    "{p}new PROJECT TEXT: start a session in PROJECT with TEXT as its first message"
)


def usage(prefix: str) -> str:
    return _USAGE.format(p=prefix)


@dataclass(frozen=True)
class Job:
    """One action to run: `action` (say, stop, new, sessions, usage) and its arguments;
    `channel` and `message_id` say where the reply goes."""

    channel: Mapping[str, Any]
    message_id: Any
    action: str
    args: tuple[str, ...] = ()


def parse(text: str, replied: str | None, prefix: str = "/") -> tuple[str, ...]:
    """What the owner's text asks: (action, args...); `replied` is the session whose alert it
    replies to. A command starts with `prefix` (Telegram's `/cmd@bot` form is taken too)."""
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
        project, *prompt = re.split(r"\s", rest, maxsplit=1)
        if not project:
            return ("usage", f"{prefix}new needs a PROJECT")
        return ("new", project, prompt[0].strip() if prompt else "")
    if command in ("help", "start"):
        return ("usage", "")
    return ("usage", f"unknown command {prefix}{visible(command[:40])}")


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
                job.args[0], prompt=job.args[1] or None, source=source, state_dir=state, names=True
            ),
        }
        try:
            if job.action == "usage":
                said = job.args[0] if job.args else ""
                return "\n".join(x for x in (said, usage(self.prefix)) if x)
            if job.action == "sessions":
                core.enabled()
                return sessions_text(state)
            outcome = actions[job.action]()
        except SteerError as exc:
            return refusal(exc)
        except LookoutError as exc:  # a config error: said as the CLI says it
            return refusal(exc)
        return "\n".join(lines(outcome))


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
