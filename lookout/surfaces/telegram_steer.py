"""Steering from Telegram (issue 33): the messages the poller (lookout.surfaces.telegram) takes
besides button presses. A reply to a session's alert says its text to that session; `/stop
SESSION` interrupts one (or, as a reply to its alert, that one); `/new PROJECT TEXT` starts one
(PROJECT by its name, `~/...` or its path; `/new` alone lists them); `/sessions` lists them;
`/away [DURATION]` and `/back` turn the away switch (lookout.away).
Each goes through lookout.surfaces.chat_steer (the core every chat shares: the parse, the
actions through lookout.steer.core as the surface `telegram`, the replies' words); this module
is Telegram's side: which messages count, and the bot's replies.

Only a new text message in the configured chat from a user in the channel's `allowed_user_ids`
counts (an empty list: nobody, unlike presses, since this types for you). Edited, forwarded and
bots' messages, other chats and users, and replies to a message that is no alert of a session
change nothing: they are said in ignored.log (not errors.log: no failure of lookout's). A
message older than `[steer] max_age_s` when the poller reads it (T3: sent while no poller ran)
is not acted on: the bot says so. A reply names its alert's session by its exact id (T4), never
as a name is resolved. The actions run one after another on a thread of their own, so presses
are answered meanwhile."""

from __future__ import annotations

from collections.abc import Callable

from lookout import store
from lookout.boundary import visible
from lookout.channels import telegram
from lookout.remote.ignored import Ignored
from lookout.surfaces import chat_steer, listener
from lookout.surfaces.chat_steer import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
    import queue
    from collections.abc import Mapping
    from typing import Any

SOURCE = "telegram"  # the core's surface (lookout.steer.shapes.SURFACES): its own rate limit
PREFIX = "/"
USAGE = chat_steer.usage(PREFIX)


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


class Chat(chat_steer.Chat):
    """The owner's messages of one poller: checked at once, run one at a time on a worker
    (lookout.surfaces.chat_steer.Worker) as the surface `telegram`."""

    SOURCE, PREFIX = SOURCE, PREFIX

    def __init__(
        self, state_dir: str, ignored: Ignored, alert: Callable[[str, object], str | None]
    ) -> None:
        """`alert(channel, message_id)`: the session whose alert that message is, or None."""
        super().__init__(state_dir, ignored)
        self.alert = alert
        # This host and the fleet's hub (issue 42): at the hub, a reply to another host's alert
        # and `/new HOST:PROJECT`, `/stop HOST:SESSION` go to that host (lookout.fleet.hub).
        self.fleet = listener.Fleet("", "")

    @property
    def jobs(self) -> queue.Queue[Job]:
        return self.worker.jobs

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
            self._put(Job(ch, mid, "note", (str(chat_steer.too_old(age, max_age_s)),)))
            return
        job = self._elsewhere(name, ch, message, text, mid)
        if job is not None:
            self._put(job)
            return
        replied, why_not = self._replied(name, message)
        asked = chat_steer.parse(text, replied)
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
            asked = chat_steer.parse(text, "-")  # the session is the owning host's to find
            if listener.elsewhere(self.fleet, host) and asked[0] in ("say", "stop_alert"):
                said = asked[2] if asked[0] == "say" else ""
                # The alert by its id: the host finds its session among its Telegram channels.
                alert = str(to.get("message_id"))
                return Job(ch, mid, "remote", (host, asked[0], by, alert, said))
            if not host and asked[0] in ("say", "stop_alert") and self._foreign_alert(name, to):
                return Job(ch, mid, "note", (listener.unknown_host("the message you replied to"),))
        asked = chat_steer.parse(text, None)
        if asked[0] in ("stop", "new"):
            host, rest = listener.split_hosted(asked[1])
            if listener.elsewhere(self.fleet, host):
                return Job(ch, mid, "remote", (host, asked[0], by, rest, *asked[2:]))
            if host and host == self.fleet.host:  # the hub's own, named as the others are
                return Job(ch, mid, asked[0], (rest, *asked[2:]))
        return None

    def _foreign_alert(self, name: str, to: Mapping[str, Any]) -> bool:
        """A message of a bot that is no alert of this host's."""
        sender = to.get("from")
        is_bot = isinstance(sender, dict) and sender.get("is_bot") is True
        return is_bot and self.alert(name, to.get("message_id")) is None

    def _put(self, job: Job) -> None:
        self.worker.put(job)

    def _replied(self, name: str, message: Mapping[str, Any]) -> tuple[str | None, str]:
        """(the session whose alert the message replies to, or None and why)."""
        to = message.get("reply_to_message")
        if not isinstance(to, dict):
            return None, "that is neither a reply to an alert nor a command"
        sid = self.alert(name, to.get("message_id"))
        if sid is None:
            return None, "in reply to a message that is no session's alert (or older than a day)"
        return sid, ""

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


def chunks(text: str) -> list[str]:
    """The text in messages of Telegram's size (UTF-16 code units, as it counts)."""
    out = []
    while text:
        piece = telegram.head(text, telegram.TEXT_MAX)
        out.append(piece)
        text = text[len(piece) :]
    return out
