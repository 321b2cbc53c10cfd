"""Steering from Telegram (issue 33): the messages the poller (lookout.surfaces.telegram) takes
besides button presses. A reply to a session's alert says its text to that session; `/stop
SESSION` interrupts one (or, as a reply to its alert, that one); `/new PROJECT TEXT` starts one
(PROJECT by its name, `~/...` or its path; `/new` alone lists them); `/sessions` lists them;
`/away [DURATION]` and `/back` turn the away switch (lookout.away).
Each goes through lookout.steer.core as the surface `telegram` (every check is the core's:
[steer] enabled, the rate, the text, the session's state, the way), and the bot replies with
what was delivered, to which session, and the outcome, or the refusal and its hint.

Only a new text message in the configured chat from a user in the channel's `allowed_user_ids`
counts (an empty list: nobody, unlike presses, since this types for you). Edited, forwarded and
bots' messages, other chats and users, and replies to a message that is no alert of a session
change nothing: they are said in ignored.log (not errors.log: no failure of lookout's). A
message older than `[steer] max_age_s` when the poller reads it (T3: sent while no poller ran)
is not acted on: the bot says so. A reply names its alert's session by its exact id (T4), never
as a name is resolved. The actions run one after another on a thread of their own, so presses
are answered meanwhile."""

from __future__ import annotations

import queue
import re
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from lookout import paths, store
from lookout.boundary import visible
from lookout.channels import telegram
from lookout.errors import LookoutError
from lookout.remote.ignored import Ignored
from lookout.surfaces import chat_steer, listener

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from lookout.config.steer import SteerConfig

SOURCE = "telegram"  # the core's surface (lookout.steer.shapes.SURFACES): its own rate limit
MAX_WAITING = 4  # actions queued behind the one running; more are refused at once
SESSIONS_MAX = 40  # sessions /sessions lists
USAGE = (
    "Reply to a session's alert to send it your text as its next message.\n"
    "/sessions: the sessions and their statuses\n"
    "/stop SESSION: interrupt its turn (or reply /stop to its alert)\n"
    "/new PROJECT TEXT: start a session in PROJECT (its name, ~/... or its path) with TEXT as"
    " its first message; /new --agent NAME PROJECT TEXT: with that agent; /new alone: the"
    " projects\n"
    "/away [DURATION]: you are away from the screen (for 1h, say): Codex waits for your answer"
    " here before its own prompt; /back: you are at the screen again"
)
_COMMAND = re.compile(r"/([A-Za-z_]+)(?:@\w+)?(?:\s+(.*))?\Z", re.S)


@dataclass(frozen=True)
class Job:
    """One action to run: `action` (say, stop, stop_alert, new, projects, sessions, usage, note)
    and its arguments."""

    channel: Mapping[str, Any]
    message_id: int
    action: str
    args: tuple[str, ...] = ()


def foreign(ch: Mapping[str, Any], message: Mapping[str, Any]) -> tuple[str, str] | None:
    """(reason, what) when the message is not the owner's own, typed in the configured chat."""
    sender = message.get("from")
    user = sender.get("id") if isinstance(sender, dict) else None
    chat = message.get("chat")
    chat_id = chat.get("id") if isinstance(chat, dict) else None
    who = f"user {visible(str(user)[:40])} in chat {visible(str(chat_id)[:40])}"
    if isinstance(sender, dict) and sender.get("is_bot") is not False:
        return "bot", f"a message by {who}, a bot"
    allowed = ch.get("allowed_user_ids") or []
    if chat_id is None or chat_id != ch["chat_id"] or isinstance(user, bool) or user not in allowed:
        return "foreign", f"a message by {who}, not the owner (allowed_user_ids)"
    if any(k in message for k in ("sender_chat", "forward_origin", "forward_from", "via_bot")):
        return "foreign", f"a message by {who} sent on behalf of another or forwarded"
    return None


def parse(text: str, replied: str | None) -> tuple[str, ...]:
    """What the owner's text asks: (action, args...); `replied` is the session whose alert it
    replies to (its exact id: say and stop_alert take it whole)."""
    found = _COMMAND.match(text)
    if found is None:
        return ("say", replied or "", text)
    command, rest = found.group(1).lower(), (found.group(2) or "").strip()
    if command == "sessions":
        return ("sessions",)
    if command == "stop":
        if rest:
            return ("stop", rest)
        if not replied:
            return ("usage", "/stop needs a SESSION (or reply /stop to its alert)")
        return ("stop_alert", replied)
    if command == "new":
        return _new(rest)
    if command == "away":
        return ("away", rest)
    if command == "back":
        return ("back",) if not rest else ("usage", "/back takes nothing after it")
    if command in ("help", "start"):
        return ("usage", "")
    return ("usage", f"unknown command /{visible(command[:40])}")


def _new(rest: str) -> tuple[str, ...]:
    """`/new [--agent NAME] PROJECT [TEXT]`: ("new", project, text, agent); `/new` alone lists
    the projects."""
    agent = ""
    parts = rest.split(None, 2)
    if parts and (parts[0] == "--agent" or parts[0].startswith("--agent=")):
        if parts[0] == "--agent":
            if len(parts) < 2:
                return ("usage", "/new --agent needs the agent's name")
            agent, rest = parts[1], parts[2] if len(parts) > 2 else ""
        else:
            agent, rest = parts[0].split("=", 1)[1], " ".join(parts[1:])
    if not rest:
        return ("usage", "/new --agent NAME needs a PROJECT") if agent else ("projects",)
    project, *prompt = re.split(r"\s", rest.strip(), maxsplit=1)
    return ("new", project, prompt[0].strip() if prompt else "", agent)


class Chat:
    """The owner's messages of one poller: checked at once, run one at a time on a worker.
    Slack's listener runs its owner's messages through the same (lookout.surfaces.slack)."""

    SOURCE = SOURCE  # the surface the core sees
    USAGE = USAGE

    def __init__(
        self, state_dir: str, ignored: Ignored, alert: Callable[[str, object], str | None]
    ) -> None:
        """`alert(channel, message_id)`: the session whose alert that message is, or None."""
        self.state_dir = state_dir
        self.ignored = ignored
        self.alert = alert
        # This host and the fleet's hub (issue 42): at the hub, a reply to another host's alert
        # and `/new HOST:PROJECT`, `/stop HOST:SESSION` go to that host (lookout.fleet.hub).
        self.fleet = listener.Fleet("", "")
        self.jobs: queue.Queue[Job] = queue.Queue(maxsize=MAX_WAITING)
        # One worker for the poller's life: it waits for the next job (one that ended when
        # idle could miss a job put as it ended, which would wait for the next message).
        self._worker = threading.Thread(target=self._work, daemon=True, name="tg-steer")
        self._worker.start()

    def busy(self) -> bool:
        """An action runs or waits (the poller stays for it)."""
        return self.jobs.unfinished_tasks > 0

    def take(
        self,
        name: str,
        ch: Mapping[str, Any],
        message: Mapping[str, Any],
        now_s: float,
        max_age_s: int,
    ) -> None:
        """One message of the chat, read at `now_s` (the poller's clock): acted on only when it
        is the owner's, and at most `max_age_s` old."""
        why = foreign(ch, message)
        text = message.get("text")
        mid = message.get("message_id")
        date = message.get("date")
        if why is None and (not isinstance(text, str) or not isinstance(mid, int)):
            why = ("payload", "a message without text")
        if why is None and (not isinstance(date, int) or isinstance(date, bool)):
            why = ("payload", "a message without its date")
        if why is not None:
            self.ignored(why[0], f"channel {name}: {why[1]}: ignored", "message")
            return
        assert isinstance(text, str) and isinstance(mid, int) and isinstance(date, int)
        age = int(now_s - date)
        if age > max_age_s:
            self.ignored(
                "old",
                f"channel {name}: a message {age} s old (over [steer] max_age_s, {max_age_s} s):"
                " not acted on",
                "message",
            )
            self._put(
                Job(ch, mid, "note", (f"not sent: this message is {_age(age)} old; send it again",))
            )
            return
        job = self._elsewhere(name, ch, message, text, mid)
        if job is not None:
            self._put(job)
            return
        replied, why_not = self._replied(name, message)
        asked = parse(text, replied)
        if asked[0] == "say" and not replied:
            self.ignored("unknown", f"channel {name}: a message {why_not}: ignored", "message")
            return
        self._put(Job(ch, mid, str(asked[0]), tuple(str(a) for a in asked[1:])))

    def _elsewhere(
        self, name: str, ch: Mapping[str, Any], message: Mapping[str, Any], text: str, mid: int
    ) -> Job | None:
        """At the fleet's hub, what goes to another host: a reply to its alert (whose buttons or
        title name it), `/stop HOST:SESSION`, `/new HOST:PROJECT TEXT`; None for this host's
        own. A reply to a bot's message that names no host, at a hub, is refused clearly."""
        if not self.fleet.named or not self.fleet.listens:
            return None
        sender = message.get("from")
        by = f"Telegram user {sender.get('id') if isinstance(sender, dict) else '?'}"
        to = message.get("reply_to_message")
        if isinstance(to, dict):
            host = listener.host_of_telegram(to)
            asked = parse(text, "-")  # the session is the owning host's to find
            if listener.elsewhere(self.fleet, host) and asked[0] in ("say", "stop_alert"):
                said = asked[2] if asked[0] == "say" else ""
                # The alert by its channel (named alike on every host) and id: B finds the session.
                alert = f"{name}:{to.get('message_id')}"
                return Job(ch, mid, "remote", (host, asked[0], by, alert, said))
            if not host and asked[0] in ("say", "stop_alert") and self._foreign_alert(name, to):
                return Job(ch, mid, "note", (listener.unknown_host("the message you replied to"),))
        asked = parse(text, None)
        if asked[0] in ("stop", "new"):
            host, rest = listener.split_hosted(asked[1])
            if listener.elsewhere(self.fleet, host):
                return Job(ch, mid, "remote", (host, asked[0], by, rest, *asked[2:]))
        return None

    def _foreign_alert(self, name: str, to: Mapping[str, Any]) -> bool:
        """A message of a bot that is no alert of this host's."""
        sender = to.get("from")
        is_bot = isinstance(sender, dict) and sender.get("is_bot") is True
        return is_bot and self.alert(name, to.get("message_id")) is None

    def _put(self, job: Job) -> None:
        try:
            self.jobs.put_nowait(job)
        except queue.Full:
            self._reply(job, f"busy: {MAX_WAITING} steering actions wait already; try again")

    def _replied(self, name: str, message: Mapping[str, Any]) -> tuple[str | None, str]:
        """(the session whose alert the message replies to, or None and why)."""
        to = message.get("reply_to_message")
        if not isinstance(to, dict):
            return None, "that is neither a reply to an alert nor a command"
        sid = self.alert(name, to.get("message_id"))
        if sid is None:
            return None, "in reply to a message that is no session's alert (or older than a day)"
        return sid, ""

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                self._reply(job, self._run(job))
            except Exception:
                store.log_error(self.state_dir, f"telegram steering: {traceback.format_exc()}")
                self._reply(job, "failed: lookout's errors.log says why (lookout doctor)")
            finally:
                self.jobs.task_done()

    def _run(self, job: Job) -> str:
        from lookout.steer import core
        from lookout.steer.shapes import SteerError
        from lookout.steer.show import lines

        state = self.state_dir
        actions: dict[str, Callable[[], Any]] = {
            # A reply names its alert's session by its exact id (T4), never loosely.
            "say": lambda: core.say(
                job.args[0], job.args[1], source=self.SOURCE, state_dir=state, whole_id=True
            ),
            "stop": lambda: core.interrupt(job.args[0], source=self.SOURCE, state_dir=state),
            "stop_alert": lambda: core.interrupt(
                job.args[0], source=self.SOURCE, state_dir=state, whole_id=True
            ),
            "new": lambda: core.start(
                job.args[0],
                agent=job.args[2] or None,
                prompt=job.args[1] or None,
                source=self.SOURCE,
                state_dir=state,
                names=True,
            ),
        }
        try:
            if job.action == "note":
                return job.args[0]
            if job.action == "remote":
                return remote(job.args, self.SOURCE)
            if job.action == "usage":
                return "\n".join(x for x in (job.args[0] if job.args else "", self.USAGE) if x)
            if job.action == "sessions":
                core.enabled()
                return chat_steer.sessions_text(state)
            if job.action == "projects":
                return projects_text(core.enabled())
            if job.action in ("away", "back"):
                return away_text(state, job.action == "away", job.args[0] if job.args else "")
            outcome = actions[job.action]()
        except SteerError as exc:
            return refusal(exc)
        except LookoutError as exc:  # a config error: said as the CLI says it
            return refusal(exc)
        return "\n".join(lines(outcome))

    def _reply(self, job: Job, text: str) -> None:
        """The answer, as a reply to the owner's message, in pieces of Telegram's size."""
        for piece in chunks(text or "(nothing)"):
            params = {
                "chat_id": job.channel["chat_id"],
                "text": piece,
                "reply_parameters": {
                    "message_id": job.message_id,
                    "allow_sending_without_reply": True,
                },
            }
            try:
                telegram.call(job.channel, "sendMessage", params, 10)
            except telegram.TelegramError as exc:
                store.log_error(self.state_dir, f"telegram steering: {exc}")
                return


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


def away_text(state_dir: str, on: bool, duration: str) -> str:
    """/away [DURATION] and /back: the away switch, with /stop's checks ([steer] on, this
    surface's rate), recorded with this surface as its source; the reply says what it is now."""
    from lookout import away, words
    from lookout.steer import core, journal

    cfg = core.enabled()
    journal.allow(state_dir, SOURCE, cfg.per_minute)
    for_s = words.parse_duration(duration) if duration else None
    if for_s == 0:
        raise LookoutError("/away needs a duration above zero", hint="/away 1h, or /away alone")
    state, changed = away.turn(state_dir, on, source=SOURCE, for_s=for_s)
    if state["away"]:
        return (
            f"away: {away.said(state)}. Codex's permission requests now wait for your answer"
            " (here, the dashboard, lookout answer) before its own prompt; /back when you are at"
            " the screen"
        )
    if not changed:
        return f"away: {away.said(state)} already: Codex asks at its own prompt"
    return f"away: {away.said(state)}. Codex asks at its own prompt again"


def _age(seconds: int) -> str:
    """`45 seconds`, `1 minute`, `60 minutes`: how old a message is, in seconds under a minute."""
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = seconds // 60
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def projects_text(cfg: SteerConfig) -> str:
    """What /new alone answers: the projects [steer] allows, each by the name /new takes."""
    from lookout.steer.launch import project_names

    named = project_names(cfg)
    if not named:
        return (
            f"no project directory matches [steer] projects ({', '.join(cfg.projects) or 'none'})"
        )
    out = [f"/new PROJECT TEXT starts a session ({', '.join(cfg.agents)}) in one of:"]
    out += [f"{visible(n)}: {visible(paths.tilde(d))}" for n, d in named[:SESSIONS_MAX]]
    if len(named) > SESSIONS_MAX:
        out.append(f"and {len(named) - SESSIONS_MAX} more (lookout check-config)")
    return "\n".join(out)


def refusal(exc: LookoutError) -> str:
    hint = f"\nhint: {visible(exc.hint)}" if exc.hint else ""
    return f"error: {visible(str(exc))}{hint}"


def chunks(text: str) -> list[str]:
    """The text in messages of Telegram's size (UTF-16 code units, as it counts)."""
    out = []
    while text:
        piece = telegram.head(text, telegram.TEXT_MAX)
        out.append(piece)
        text = text[len(piece) :]
    return out
