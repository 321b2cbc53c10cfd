"""The Slack answer surface and its Socket Mode listener (issue 40): receives button presses
(`interactive` envelopes, block_actions) and thread replies (`events_api` message events) over a
WebSocket the listener opens with the app token (apps.connections.open): no public Request URL,
no inbound port. Every envelope is acknowledged at once (Slack retries one not acknowledged
within 3 s), then checked: a press counts only from a user in `allowed_user_ids`, on a message
this channel sent; it answers the request its button was minted for (lookout.remote.answers)
and the message is updated (chat.update) to the outcome without buttons, also when the dialog
closed elsewhere. A reply in an alert's thread says its text to that session; `!stop`, `!new
PROJECT TEXT`, `!sessions` work as Telegram's commands (lookout.surfaces.steering, through
lookout.steer.core as the surface `slack`, by Telegram's own steering: `Steering` below).

One listener per state directory (slack.lock), alive while a sent message still has buttons
for a pending request, or [steer] is on and an alert of the last day can be replied to. Started
by the sender (lookout.spawn's runtime), never by a hook; slack-sdk is imported here only."""

from __future__ import annotations

import sys
import time

from lookout import store
from lookout.boundary import visible
from lookout.channels import slack
from lookout.remote import answers
from lookout.surfaces import base, chat_steer, listener

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from lookout.surfaces.base import Alert

NAME = "slack"  # the answer surface (remote.answers.SURFACES), RemoteDecision's source
SOURCE = "slack"  # the steering core's surface (lookout.steer.shapes.SURFACES)
PREFIX = "!"  # a command in the channel: !stop, !new, !sessions (Slack keeps / for its own)


class Section:
    """What a Slack alert can show (lookout.remote.shown's rule asks): its one section block's
    plain_text, at most 3000 characters, the title included; plain_text, so nothing is markup."""

    WHAT = "message"
    ONE_LINE = 0
    TAIL_ROOM = True

    def fits(self, title: str, lines: list[str]) -> bool:
        return len(visible(title)) + 1 + len("\n".join(lines)) <= slack.SECTION_MAX

    def render(self, lines: list[str]) -> str:
        return "\n".join(lines)


LIMITS = Section()
TABLE = "slack-messages.json"
LOCK = "slack.lock"
POLL_S = 0.25  # how often the messages of ended requests are looked for
RETRY_S = 2.0
ALERT_KEEP_MS, ALERTS_MAX = listener.ALERT_KEEP_MS, listener.ALERTS_MAX
EDIT_TRIES = 3


# -- the table (written by the sender, read and pruned by the listener) ------------------------

_TABLE = listener.Table(TABLE)
_load, _change = _TABLE.load, _TABLE.change


alert_session, known = _TABLE.alert_session, _TABLE.known


def ensure_listener(state_dir: str) -> None:
    """One runs (one that runs reads the table on its next turn): started detached."""
    from lookout import spawn

    spawn.start_listener(state_dir, LOCK, "lookout.surfaces.slack")


# -- the listener ---------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """`slack STATE_DIR`: listen while messages with buttons wait or steering may come; exit 0."""
    return listener.run(argv, lambda state_dir: Listener(state_dir).serve(), "slack listener")


class Listener(listener.Listener):
    SURFACE, LOCK, WHAT, TABLE = NAME, LOCK, "slack listener", _TABLE
    DROPS_ON_BAD_CONFIG = False  # it serves on with no channel: their entries go as each is seen

    def __init__(self, state_dir: str, poll_s: float = POLL_S) -> None:
        super().__init__(state_dir, poll_s)  # only the hub connects (issue 42)
        self.clients: dict[str, Any] = {}  # channel name -> its SocketModeClient
        self.chat: Steering | None = None
        self.forwarder = listener.Forwarder(state_dir, "slack forwarder")

    def _close(self) -> None:
        for c in self.clients.values():
            c.close()

    def _stays(self, table: dict[str, Any] | None = None) -> bool:
        self._refresh()
        if (self.chat is not None and self.chat.busy()) or self.forwarder.busy():
            return True
        if self.fleet.is_hub:  # any host's buttons and alerts may wait for a press or reply
            return bool(self.channels)
        alerts = (table or _load(self.state_dir))["alerts"]
        return self.fleet.listens and self.steering and listener.replyable(alerts, ALERT_KEEP_MS)

    def _listen(self, name: str, table: dict[str, Any]) -> None:
        """A Socket Mode client for channel `name` (slack-sdk's, with its own WebSocket), while
        the channel stays as it was; one of a changed or removed channel is closed."""
        ch = self.channels.get(name)
        old = self.clients.get(name)
        if not self.fleet.listens:  # another host is the hub: Socket Mode is its alone
            if old is not None:
                old.close()
                del self.clients[name]
            return
        if old is not None and ch is not None and old.lookout_channel == ch:
            return
        if old is not None:
            old.close()
            del self.clients[name]
        if ch is None:
            _TABLE.forget(self.state_dir, name)
            return

        def on_envelope(c: Any, req: Any) -> None:
            from slack_sdk.socket_mode.response import SocketModeResponse

            # Acknowledged first, always: Slack retries an envelope not acknowledged in 3 s.
            c.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
            self.inbox.put((name, req.type, req.payload))

        try:  # slack-sdk missing, a bad token, no network: said, and tried again next turn
            from slack_sdk.socket_mode import SocketModeClient

            client = SocketModeClient(
                app_token=slack.token(ch, "app_token_env", "xapp-"),
                web_client=slack.client(ch, 10),
                trace_enabled=False,
            )
            client.lookout_channel = ch  # type: ignore[attr-defined]
            client.socket_mode_request_listeners.append(on_envelope)
            client.connect()
        except Exception as exc:
            store.log_error(self.state_dir, f"slack listener: channel {name}: {visible_exc(exc)}")
            time.sleep(RETRY_S)
            return
        self.clients[name] = client

    def _handle(self, name: str, kind: str, payload: Any) -> None:
        ch = self.channels.get(name)
        if ch is None or not isinstance(payload, dict):
            self.ignored("foreign", f"channel {name}: an envelope of no configured channel")
        elif kind == "interactive" and payload.get("type") == "block_actions":
            self._press(name, ch, payload)
        elif kind == "events_api" and isinstance(payload.get("event"), dict):
            self._message(name, ch, payload["event"])
        else:
            self.ignored("kind", f"channel {name}: a {visible(str(kind))[:40]} envelope: ignored")

    def _press(self, name: str, ch: Mapping[str, Any], payload: dict[str, Any]) -> None:
        """One press: by an allowed user, on a message with buttons this channel sent."""
        user = _id(payload.get("user"))
        cid = _id(payload.get("channel"))
        container = payload.get("container")
        ts = container.get("message_ts") if isinstance(container, dict) else None
        who = f"user {visible(str(user))[:40]} in channel {visible(str(cid))[:40]}"
        if user is None or user not in (ch.get("allowed_user_ids") or []):
            self.ignored("foreign", f"channel {name}: a press by {who}, not the owner: ignored")
            return
        acts = payload.get("actions")
        act = acts[0] if isinstance(acts, list) and acts and isinstance(acts[0], dict) else {}
        value = act.get("value")
        if not isinstance(value, str) or not str(act.get("action_id")).startswith(
            slack.ACTION_PREFIX
        ):
            self.ignored("payload", f"channel {name}: a press not of a lookout button: ignored")
            return
        host, token = listener.split_hosted(value)
        if listener.elsewhere(self.fleet, host):  # another host's button: its bridge answers
            by = f"Slack user {user}"

            def forward() -> None:  # up to 5 s: on the forwarder, never on the listener's loop
                ok, said = listener.forward_press(host, token, surface=NAME, by=by)
                if not ok:
                    self.ignored("refused", f"channel {name}: a press by {who} for {host}: {said}")

            self.forwarder.put(forward)
            return
        if not known(self.state_dir, name, f"{cid}/{ts}"):
            self.ignored("foreign", f"channel {name}: a press by {who} on no alert of it: ignored")
            return
        self._answer(name, token, f"Slack user {user}", f" by {who}")

    def _message(self, name: str, ch: Mapping[str, Any], event: dict[str, Any]) -> None:
        """A message in the channel: the owner's reply in an alert's thread, or a command."""
        user, text, cid = event.get("user"), event.get("text"), event.get("channel")
        who = f"user {visible(str(user))[:40]} in channel {visible(str(cid))[:40]}"
        if event.get("type") != "message" or event.get("subtype") or event.get("bot_id"):
            self.ignored("kind", f"channel {name}: a message event not a user's message: ignored")
            return
        if not isinstance(user, str) or user not in (ch.get("allowed_user_ids") or []):
            self.ignored("foreign", f"channel {name}: a message by {who}, not the owner: ignored")
            return
        if not isinstance(text, str) or not isinstance(cid, str) or not self._ours(name, ch, cid):
            self.ignored("foreign", f"channel {name}: a message by {who} elsewhere: ignored")
            return
        thread = event.get("thread_ts")
        replied = alert_session(self.state_dir, name, f"{cid}/{thread}") if thread else None
        if self.chat is None:
            self.chat = Steering(self.state_dir, self.ignored)
        age = _age_s(event.get("ts"))
        if age is None:
            self.ignored("payload", f"channel {name}: a message without its time: ignored")
            return
        note = chat_steer.too_old(age, self.max_age_s)
        if note is not None:  # sent while no listener ran (T3): not acted on, and said so
            limit = f"over [steer] max_age_s, {self.max_age_s} s"
            self.ignored("old", f"channel {name}: a message {age} s old ({limit}): not acted on")
            to = {"ch": ch, "cid": cid, "thread": thread or event.get("ts")}
            self.chat.worker.put(chat_steer.Job(to, 0, "note", (note,)))
            return
        at = thread or event.get("ts")  # where the answer goes: the thread, or a new one
        if not self._elsewhere(ch, cid, (thread, at), text.strip(), replied, user):
            self.chat.steer(name, ch, cid, at, text.strip(), replied)

    def _elsewhere(
        self,
        ch: Mapping[str, Any],
        cid: str,
        threads: tuple[object, object],
        text: str,
        replied: str | None,
        user: str,
    ) -> bool:
        """At the fleet's hub, what goes to another host (True when taken): a reply in its
        alert's thread (whose buttons or title name it: the parent message is fetched, since the
        event carries only its `thread_ts`), `!stop HOST:SESSION`, `!new HOST:PROJECT TEXT`."""
        if not self.fleet.named or not self.fleet.listens or self.chat is None:
            return False
        chat, by = self.chat, f"Slack user {user}"
        thread, at = threads  # the alert's thread (or None), where the answer goes
        if isinstance(thread, str) and replied is None:
            asked: tuple[str, ...] = ("say", "-", text)
            if text.startswith(PREFIX):
                asked = chat_steer.parse(text, "-", PREFIX)
            if asked[0] in ("say", "stop_alert"):
                to: dict[str, Any] = {"ch": ch, "cid": cid, "thread": thread}
                said = asked[2] if asked[0] == "say" else ""
                action = asked[0]
                self.forwarder.put(lambda: self._reply_elsewhere(ch, to, action, by, said))
                return True
        asked = chat_steer.parse(text, None, PREFIX) if text.startswith(PREFIX) else ("say",)
        if asked[0] in ("stop", "new"):
            host, rest = listener.split_hosted(asked[1])
            to = {"ch": ch, "cid": cid, "thread": at}
            if listener.elsewhere(self.fleet, host):
                chat.worker.put(
                    chat_steer.Job(to, 0, "remote", (host, asked[0], by, rest, *asked[2:]))
                )
                return True
            if host and host == self.fleet.host:  # the hub's own, named as the others are
                chat.worker.put(chat_steer.Job(to, 0, asked[0], (rest, *asked[2:])))
                return True
        return False

    def _reply_elsewhere(
        self, ch: Mapping[str, Any], to: dict[str, Any], action: str, by: str, said: str
    ) -> None:
        """A reply in the thread of an alert that is not this host's: its parent message
        (conversations.replies) names the host it goes to, or the owner is told it cannot."""
        assert self.chat is not None
        cid, thread = to["cid"], to["thread"]
        try:
            got = slack.client(ch, 10).conversations_replies(channel=cid, ts=thread, limit=1)
            msgs = got.data.get("messages") if isinstance(got.data, dict) else None
            parent = msgs[0] if isinstance(msgs, list) and msgs else None
        except Exception as exc:  # slack-sdk's errors, no network: said, never the listener's end
            store.log_error(
                self.state_dir, f"slack listener: conversations.replies: {visible_exc(exc)}"
            )
            parent = None
        host = listener.host_of_slack(parent)
        if (parent is not None and not host and not parent.get("bot_id")) or (
            host and host == self.fleet.host  # the hub's own, but no alert it remembers
        ):
            self.ignored("unknown", "a message in the thread of no (recent) alert: ignored")
            return
        if listener.elsewhere(self.fleet, host):
            # The alert by its ref: the host finds its session among its own Slack channels.
            job = chat_steer.Job(to, 0, "remote", (host, action, by, f"{cid}/{thread}", said))
        else:
            job = chat_steer.Job(
                to, 0, "note", (listener.unknown_host("the thread you replied in", PREFIX),)
            )
        self.chat.worker.put(job)

    def _ours(self, name: str, ch: Mapping[str, Any], cid: str) -> bool:
        """Is `cid` the configured channel (by id, or the id its alerts went to)?"""
        if cid == ch.get("channel"):
            return True
        table = _load(self.state_dir)
        return any(
            e.get("channel") == name and str(e.get("ref", "")).startswith(cid + "/")
            for e in (*table["alerts"], *table["messages"])
        )

    def _edit(self, ch: Mapping[str, Any], m: dict[str, Any], outcome: str) -> None:
        title, body = str(m.get("title") or ""), str(m.get("body") or "")
        text = slack.section_text(title, body, outcome)
        section = [{"type": "section", "text": {"type": "plain_text", "text": text}}]
        for _ in range(EDIT_TRIES):
            try:
                slack.update(ch, str(m["ref"]), section, slack.section_text(title, ""), 10)
                return
            except slack.SlackError as exc:
                store.log_error(self.state_dir, f"slack listener: {exc}")
                if "message_not_found" in str(exc) or "cant_update" in str(exc):
                    return


class Steering(chat_steer.Chat):
    """The owner's messages on Slack, run through the chat core Telegram's run through
    (lookout.surfaces.chat_steer: the same parse, the same actions through lookout.steer.core,
    the same refusals), as the surface `slack`, with `!` for `/` (Slack keeps / for its own
    commands), each answered in its thread."""

    SOURCE, PREFIX = SOURCE, PREFIX

    def steer(
        self,
        name: str,
        ch: Mapping[str, Any],
        cid: str,
        thread: object,
        text: str,
        replied: str | None,
    ) -> None:
        """The owner's `text` in channel `cid` (in `thread`, an alert's of `replied`)."""
        if text.startswith(PREFIX):
            asked = chat_steer.parse(text, replied, PREFIX)
        else:  # a `/` is Slack's own command, never lookout's: text to say as it is
            asked = ("say", replied or "", text)
        if asked[0] == "say" and not replied:
            self.ignored("unknown", f"channel {name}: a message not in an alert's thread: ignored")
            return
        to = {"ch": ch, "cid": cid, "thread": thread}
        self.worker.put(chat_steer.Job(to, 0, str(asked[0]), tuple(str(a) for a in asked[1:])))

    def _reply(self, job: chat_steer.Job, text: str) -> None:
        """The answer in the owner's message's thread, in pieces of a section's size."""
        ch, cid, thread = job.channel["ch"], job.channel["cid"], job.channel["thread"]
        text = text or "(nothing)"
        for n in range(0, len(text), slack.SECTION_MAX):
            params = {"channel": cid, "text": text[n : n + slack.SECTION_MAX], "thread_ts": thread}
            try:
                slack.call(ch, "chat.postMessage", params, 10)
            except slack.SlackError as exc:
                store.log_error(self.state_dir, f"slack steering: {exc}")
                return


def _age_s(ts: object) -> int | None:
    """How old a message is by its `ts` (seconds since the epoch, as a string), on our clock."""
    try:
        return int(time.time() - float(str(ts)))
    except ValueError:
        return None


def _id(value: object) -> str | None:
    got = value.get("id") if isinstance(value, dict) else None
    return got if isinstance(got, str) else None


def visible_exc(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {visible(str(exc))[:200]}"


# -- the answer surface (lookout.surfaces.base): the sender's side -------------------------------


class Buttons(listener.Answering):
    """Slack's Block Kit buttons: each carries a single-use token for this channel, never the
    request's nonce; the listener (above) takes the presses and updates the message."""

    NAME, LABEL, TABLE = NAME, "Slack", _TABLE

    def bind(self, a: Alert) -> None:
        rec = answers.request_for(a.state_dir, a.intent, a.remote)
        if rec is None:
            return
        picks = base.choices(rec, LIMITS, a.msg, a.ch["content"])
        tokens = answers.mint(a.state_dir, rec, NAME, [(d, x) for _, d, x in picks], scope=a.name)
        here = listener.fleet()
        if here.named:  # the hub routes a press to the host that minted it (issue 42)
            tokens = [f"{here.host}:{t}" for t in tokens]
        a.msg["buttons"] = [(label, t) for (label, _, _), t in zip(picks, tokens, strict=True)]
        a.msg["bound"] = rec["id"]

    def ensure(self, state_dir: str) -> None:
        ensure_listener(state_dir)

    def add(self, a: Alert, ref: str) -> tuple[str, str]:
        """The message updated to the request as the rule shows it, with its buttons."""
        msg = a.msg
        try:
            slack.update(
                a.ch,
                ref,
                slack.blocks(msg["title"], msg["body"], msg["buttons"]),
                slack.section_text(msg["title"], ""),
                a.ch["timeout_ms"] / 1000,
            )
        except slack.SlackError as exc:
            return "failed", str(exc)
        return "sent", f"chat.update {slack.split_ref(ref)[1]}"


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
