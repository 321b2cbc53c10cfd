"""Steering from Telegram (issue 33): the messages the poller (lookout.remote.telegram) takes
besides button presses. A reply to a session's alert says its text to that session; `/stop
SESSION` interrupts one (or, as a reply to its alert, that one); `/new PROJECT TEXT` starts one;
`/sessions` lists them. Each goes through lookout.steer.core as the surface `telegram` (every
check is the core's: [steer] enabled, the rate, the text, the session's state, the way), and the
bot replies with what was delivered, to which session, and the outcome, or the refusal and its
hint. The commands, the worker and the core's calls are lookout.surfaces.chat_steer's, shared
with Matrix.

Only a new text message in the configured chat from a user in the channel's `allowed_user_ids`
counts (an empty list: nobody, unlike presses, since this types for you). Edited, forwarded and
bots' messages, other chats and users, and replies to a message that is no alert of a session
change nothing: they are said in errors.log as ignored presses are."""

from __future__ import annotations

from collections.abc import Callable

from lookout import store
from lookout.boundary import visible
from lookout.channels import telegram
from lookout.remote.ignored import Ignored
from lookout.surfaces import chat_steer
from lookout.surfaces.chat_steer import Job

TYPE_CHECKING = False
if TYPE_CHECKING:
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


class Chat:
    """The owner's messages of one poller: checked at once, run one at a time on a worker."""

    def __init__(
        self, state_dir: str, ignored: Ignored, alert: Callable[[str, object], str | None]
    ) -> None:
        """`alert(channel, message_id)`: the session whose alert that message is, or None."""
        self.state_dir = state_dir
        self.ignored = ignored
        self.alert = alert
        self.worker = chat_steer.Worker(state_dir, SOURCE, PREFIX, self._reply)

    def busy(self) -> bool:
        """An action runs or waits (the poller stays for it)."""
        return self.worker.busy()

    def take(self, name: str, ch: Mapping[str, Any], message: Mapping[str, Any]) -> None:
        why = foreign(ch, message)
        text = message.get("text")
        mid = message.get("message_id")
        if why is None and (not isinstance(text, str) or not isinstance(mid, int)):
            why = ("payload", "a message without text")
        if why is not None:
            self.ignored(why[0], f"channel {name}: {why[1]}: ignored")
            return
        assert isinstance(text, str) and isinstance(mid, int)
        replied, why_not = self._replied(name, message)
        asked = chat_steer.parse(text, replied, PREFIX)
        if asked[0] == "say" and not replied:
            self.ignored("unknown", f"channel {name}: a message {why_not}: ignored")
            return
        self.worker.put(Job(ch, mid, str(asked[0]), tuple(str(a) for a in asked[1:])))

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
