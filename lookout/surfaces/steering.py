"""Steering from a chat (issue 33, issue 40): what Telegram's and Slack's listeners share. The
owner's text is parsed (`parse`: a reply to an alert says it to that session; STOP, NEW and
SESSIONS commands with the chat's own prefix, `/` on Telegram, `!` on Slack), run through
lookout.steer.core as the chat's surface (every check is the core's: [steer] enabled, the rate,
the text, the session's state, the way) one at a time on a worker of its own (`Runner`), and
answered with what was delivered, or the refusal and its hint.

Each chat keeps what is its own: who counts as the owner, how an alert is found from a reply,
how the answer is sent."""

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
    from typing import Any

MAX_WAITING = 4  # actions queued behind the one running; more are refused at once
SESSIONS_MAX = 40  # sessions SESSIONS lists


def usage(prefix: str) -> str:
    return (
        "Reply to a session's alert to send it your text as its next message.\n"
        f"{prefix}sessions: the sessions and their statuses\n"
        f"{prefix}stop SESSION: interrupt its turn (or reply {prefix}stop to its alert)\n"
        f"{prefix}new PROJECT TEXT: start a session in PROJECT with TEXT as its first message"
    )


@dataclass(frozen=True)
class Job:
    """One action to run: `action` (say, stop, new, sessions, usage), its arguments, and where
    its answer goes (`to`: the chat's own reference, e.g. a message id and a channel)."""

    to: Any
    action: str
    args: tuple[str, ...] = ()


def parse(text: str, replied: str | None, prefix: str = "/") -> tuple[str, ...]:
    """What the owner's text asks: (action, args...); `replied` is the session whose alert it
    replies to; `prefix` starts a command."""
    found = re.match(re.escape(prefix) + r"([A-Za-z_]+)(?:@\w+)?(?:\s+(.*))?\Z", text, re.S)
    if found is None:
        return ("say", replied or "", text)
    command, rest = found.group(1).lower(), (found.group(2) or "").strip()
    if command == "sessions":
        return ("sessions",)
    if command == "stop":
        key = rest or replied
        if not key:
            return ("usage", f"{prefix}stop needs a SESSION (or reply {prefix}stop to its alert)")
        return ("stop", key)
    if command == "new":
        project, *prompt = re.split(r"\s", rest, maxsplit=1)
        if not project:
            return ("usage", f"{prefix}new needs a PROJECT")
        return ("new", project, prompt[0].strip() if prompt else "")
    if command in ("help", "start"):
        return ("usage", "")
    return ("usage", f"unknown command {prefix}{visible(command[:40])}")


def run(state_dir: str, source: str, job: Job, prefix: str = "/") -> str:
    """Run one action through lookout.steer.core as surface `source`: what to answer."""
    from lookout.steer import core
    from lookout.steer.shapes import SteerError
    from lookout.steer.show import lines

    actions: dict[str, Callable[[], Any]] = {
        "say": lambda: core.say(job.args[0], job.args[1], source=source, state_dir=state_dir),
        "stop": lambda: core.interrupt(job.args[0], source=source, state_dir=state_dir),
        "new": lambda: core.start(
            job.args[0], prompt=job.args[1] or None, source=source, state_dir=state_dir
        ),
    }
    try:
        if job.action == "usage":
            return "\n".join(x for x in (job.args[0] if job.args else "", usage(prefix)) if x)
        if job.action == "sessions":
            core.enabled()
            return sessions_text(state_dir)
        outcome = actions[job.action]()
    except SteerError as exc:
        return refusal(exc)
    except LookoutError as exc:  # a config error: said as the CLI says it
        return refusal(exc)
    return "\n".join(lines(outcome))


class Runner:
    """The owner's actions of one listener, run one at a time on a worker thread; `reply(job,
    text)` sends each one's answer."""

    def __init__(
        self,
        state_dir: str,
        source: str,
        reply: Callable[[Job, str], None],
        prefix: str = "/",
    ) -> None:
        self.state_dir, self.source, self.reply, self.prefix = state_dir, source, reply, prefix
        self.jobs: queue.Queue[Job] = queue.Queue(maxsize=MAX_WAITING)
        # One worker for the listener's life: it waits for the next job (one that ended when
        # idle could miss a job put as it ended, which would wait for the next message).
        self._worker = threading.Thread(target=self._work, daemon=True, name=f"{source}-steer")
        self._worker.start()

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
                self.reply(job, run(self.state_dir, self.source, job, self.prefix))
            except Exception:
                store.log_error(self.state_dir, f"{self.source} steering: {traceback.format_exc()}")
                self.reply(job, "failed: lookout's errors.log says why (lookout doctor)")
            finally:
                self.jobs.task_done()


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
