"""The Matrix listener (issue 40): reactions and replies that answer a request, taken by `/sync`
long polling (no inbound port), resumed from the `next_batch` it keeps. A request's message says
which answer: react ✅ to allow (only where lookout.remote.shown's rule lets this message offer
it), ❌ to deny, and for a question reply with an option's number. Each answer maps the reacted
(or replied-to) event and its key to a single-use press token for this channel
(lookout.remote.answers.mint), never the request's nonce. The outcome edits the message
(`m.replace`), its answer text gone, also when the dialog closed elsewhere.

With [steer] on (as on Telegram, lookout.surfaces.chat_steer): a reply to an alert says its text
to that session; `!stop`, `!new PROJECT TEXT`, `!sessions`. Only an event of the configured room
from a user in `allowed_user_ids` counts (an empty list: nobody); the bot's own events, edits,
other rooms, users, kinds, ended requests, replays and forgeries change nothing (said in
errors.log at a bounded rate). One listener per state directory (matrix.lock), started by the
sender, never by a hook."""

from __future__ import annotations

import sys
import time

from lookout import store
from lookout.boundary import visible
from lookout.channels import matrix
from lookout.remote import answers
from lookout.surfaces import base, chat_steer, listener

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from lookout.surfaces.base import Alert

SURFACE = "matrix"  # the answer surface it serves (remote.answers.SURFACES)
ALLOW, DENY = "✅", "❌"  # the reactions that answer (U+2705, U+274C)
PREFIX = "!"  # the steering commands: !stop, !new, !sessions
ANSWER_ROOM = 4000  # bytes kept for the answer's own lines and the outcome, within BODY_MAX
OPTION_CHARS = 120  # an option as its numbered line repeats it


class Message:
    """What a Matrix alert can show (lookout.remote.shown's rule asks): an event is at most
    65536 bytes of JSON and an edit carries the text twice, so the body takes at most
    matrix.BODY_MAX bytes inside it (UTF-8, with JSON's escapes), the title and the answer's
    own lines (ANSWER_ROOM) included. Plain text (no formatted_body): nothing in it is markup.
    The limit and the count are the channel's (lookout.channels.matrix), written once."""

    WHAT = "message"
    ONE_LINE = 0
    TAIL_ROOM = True

    def fits(self, title: str, lines: list[str]) -> bool:
        used = matrix.size(visible(title)) + 1 + matrix.size("\n".join(lines))
        return used + ANSWER_ROOM <= matrix.BODY_MAX

    def render(self, lines: list[str]) -> str:
        return "\n".join(lines)


LIMITS = Message()
TABLE = "matrix-messages.json"  # messages that answer, each channel's next_batch, the alerts
LOCK = "matrix.lock"
POLL_S = 0.25  # how often the messages of ended requests are looked for
LONG_POLL_S = 25  # /sync's timeout: the homeserver answers at once when an event arrives
RETRY_S = 2.0
BACKOFF_MIN_S, BACKOFF_MAX_S = 0.5, 30.0
EDIT_TRIES = 3
TIMELINE_LIMIT = 50
ALERT_KEEP_MS, ALERTS_MAX = listener.ALERT_KEEP_MS, listener.ALERTS_MAX


# -- the table (written by the sender, read and pruned by the listener) ----------------------

_TABLE = listener.Table(TABLE, maps=("since",), key="event_id")
_load, _change = _TABLE.load, _TABLE.change
_int = listener.whole


alert_session, known = _TABLE.alert_session, _TABLE.known


def ensure_listener(state_dir: str) -> None:
    """One runs (one that runs reads the table on its next turn): started detached."""
    from lookout import spawn

    spawn.start_listener(state_dir, LOCK, "lookout.surfaces.matrix")


# -- what a message says and what an event means ----------------------------------------------


def keys_for(picks: list[tuple[str, str, dict[str, str] | None]]) -> list[str]:
    """The key that answers each choice: ✅ Allow, ❌ Deny, a question's options 1, 2, ..."""
    out, n = [], 0
    for _label, decision, picked in picks:
        if picked is None:
            out.append(ALLOW if decision == "allow" else DENY)
        else:
            n += 1
            out.append(str(n))
    return out


def how_to_answer(picks: list[tuple[str, str, dict[str, str] | None]], keys: list[str]) -> str:
    """The message's lines that say which reactions and replies answer."""
    options = [
        f"{key}: {visible(label)[:OPTION_CHARS]}"
        for (label, _, picked), key in zip(picks, keys, strict=True)
        if picked is not None
    ]
    if options:
        head = "Answer: reply to this message with an option's number:"
        return "\n".join([head, *options, f"or react {DENY} to deny."])
    if ALLOW in keys:
        return f"Answer: react {ALLOW} to allow, {DENY} to deny."
    return f"Answer: react {DENY} to deny."


def reply_text(body: str) -> str:
    """A reply's own text: its body without the quoted fallback (`> <@user> ...` lines, then a
    blank line) that older clients put before it."""
    lines = body.split("\n")
    if lines and lines[0].startswith("> <"):
        while lines and lines[0].startswith(">"):
            lines.pop(0)
        if lines and not lines[0].strip():
            lines.pop(0)
    return "\n".join(lines).strip()


def relation(content: Mapping[str, Any]) -> dict[str, Any]:
    rel = content.get("m.relates_to")
    return rel if isinstance(rel, dict) else {}


def in_reply_to(content: Mapping[str, Any]) -> str | None:
    to = relation(content).get("m.in_reply_to")
    event_id = to.get("event_id") if isinstance(to, dict) else None
    return event_id if isinstance(event_id, str) else None


def backoff(delay: float, fresh: bool, took_s: float) -> float:
    """How long to wait before the next /sync: none after events or a long poll that ran out;
    doubled up to BACKOFF_MAX_S after one that came back early with nothing (a broken or
    hostile homeserver is asked a few times a minute, not hundreds a second)."""
    if fresh or took_s >= LONG_POLL_S / 2:
        return 0.0
    return min(max(delay * 2, BACKOFF_MIN_S), BACKOFF_MAX_S)


def sync_filter(ch: Mapping[str, Any]) -> str:
    """Only the configured room, only the kinds that answer or steer (and encryption turned on)."""
    import json

    nothing: dict[str, list[str]] = {"types": []}
    return json.dumps({
        "presence": nothing,
        "account_data": nothing,
        "room": {
            "rooms": [ch["room_id"]],
            "timeline": {"limit": TIMELINE_LIMIT,
                         "types": ["m.reaction", "m.room.message", "m.room.encryption"]},
            "state": {"types": ["m.room.encryption"]},
            "ephemeral": nothing,
            "account_data": nothing,
        },
    })  # fmt: skip


# -- the listener --------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """`matrix STATE_DIR`: listen while messages that answer wait, or steering is on and an
    alert can be replied to; exit 0 always."""
    return listener.run(argv, lambda state_dir: Listener(state_dir).serve(), "matrix listener")


class Listener(listener.Polling):
    # The inbox: (channel, event, first: from a sync without `since`, where steering is not
    # taken). Every host reads the shared room; with a hub named, `!` commands not in a reply to
    # a host's own alert are the hub's alone, and each host takes only its own alerts'.
    SURFACE, LOCK, WHAT, TABLE, TAG = SURFACE, LOCK, "matrix listener", _TABLE, "mx"

    def __init__(self, state_dir: str, poll_s: float = POLL_S) -> None:
        super().__init__(state_dir, poll_s)
        self.worker: chat_steer.Worker | None = None

    def _stays(self, table: dict[str, Any] | None = None) -> bool:
        self._refresh()
        if self.worker is not None and self.worker.busy():
            return True
        if self.fleet.is_hub and self.steering:  # the fleet's `!` commands are the hub's
            return bool(self.channels)
        alerts = (table or _load(self.state_dir))["alerts"]
        return self.steering and listener.replyable(alerts, ALERT_KEEP_MS)

    def _resume(self, name: str, table: dict[str, Any]) -> object:
        return _load(self.state_dir)["since"].get(name)  # as its last reader left it

    def _long_poll(self, name: str, ch: Mapping[str, Any], since: object) -> None:
        """/sync in a loop: each event of the room is queued for the main loop, in order."""
        delay = 0.0
        flt = sync_filter(ch)
        while not self.stop.is_set() and self.channels.get(name) == ch:
            query = {"filter": flt, "timeout": str(LONG_POLL_S * 1000 if since else 0)}
            if isinstance(since, str):
                query["since"] = since
            started = time.monotonic()
            try:
                result = matrix.call(ch, "GET", "/sync", None, LONG_POLL_S + 10, query)
            except matrix.MatrixError as exc:
                store.log_error(self.state_dir, f"matrix listener: channel {name}: {exc}")
                self.stop.wait(RETRY_S)
                continue
            first = not isinstance(since, str)
            events = self._events(name, ch, result)
            for event in events:
                self.inbox.put((name, event, first))
            batch = result.get("next_batch")
            if isinstance(batch, str) and batch != since:
                since = batch
                self._save_since(name, batch)
            delay = backoff(delay, bool(events), time.monotonic() - started)
            self.stop.wait(delay)

    def _save_since(self, name: str, batch: str) -> None:
        _change(self.state_dir, lambda t: t["since"].__setitem__(name, batch))

    def _events(self, name: str, ch: Mapping[str, Any], result: dict[str, Any]) -> list[Any]:
        """The timeline events of the configured room in a /sync answer (none once the room
        turned encrypted: lookout cannot read it, and says so)."""
        rooms = result.get("rooms")
        joined = rooms.get("join") if isinstance(rooms, dict) else None
        room = joined.get(ch["room_id"]) if isinstance(joined, dict) else None
        if not isinstance(room, dict):
            return []
        timeline = room.get("timeline")
        events = timeline.get("events") if isinstance(timeline, dict) else None
        state = room.get("state")
        states = state.get("events") if isinstance(state, dict) else None
        found = [e for e in (events or []) if isinstance(e, dict)]
        if any(
            isinstance(e, dict) and e.get("type") == "m.room.encryption"
            for e in [*(states or []), *found]
        ):
            store.log_error(
                self.state_dir,
                f"matrix listener: channel {name}: {matrix.ENCRYPTED.format(room=ch['room_id'])}",
            )
            return []
        return found

    def _handle(self, name: str, event: dict[str, Any], first: bool) -> None:
        """One event of the room: a reaction, or a message (a numbered answer, or steering)."""
        ch = self.channels.get(name)
        if ch is None:
            self.ignored("foreign", f"channel {name}: an event of a channel no longer configured")
            return
        sender = event.get("sender")
        kind = event.get("type")
        content = event.get("content")
        if sender == ch["user_id"] or kind == "m.room.encryption":
            return  # the bot's own (its alerts, their edits, its replies)
        who = f"user {visible(str(sender)[:80])}"
        if not isinstance(content, dict) or not isinstance(sender, str):
            self.ignored("payload", f"channel {name}: an event without content: ignored")
        elif sender not in (ch.get("allowed_user_ids") or []):
            self.ignored("foreign", f"channel {name}: a {kind} by {who}, not the owner: ignored")
        elif kind == "m.reaction":
            self._reaction(name, ch, sender, content)
        elif kind == "m.room.message":
            self._message(name, ch, event, content, first)
        else:
            self.ignored("kind", f"channel {name}: a {visible(str(kind)[:60])} event: ignored")

    def _reaction(self, name: str, ch: Mapping[str, Any], sender: str, content: Any) -> None:
        rel = relation(content)
        key = rel.get("key")
        target = rel.get("event_id")
        if rel.get("rel_type") != "m.annotation" or not isinstance(key, str):
            self.ignored("payload", f"channel {name}: a reaction without a key: ignored")
            return
        self._press(name, ch, sender, target, key.replace("\ufe0f", "").strip())

    def _message(
        self, name: str, ch: Mapping[str, Any], event: dict[str, Any], content: Any, first: bool
    ) -> None:
        body = content.get("body")
        rel = relation(content)
        if rel.get("rel_type") == "m.replace" or "m.new_content" in content:
            self.ignored("kind", f"channel {name}: an edited message: ignored")
            return
        if content.get("msgtype") != "m.text" or not isinstance(body, str):
            self.ignored("payload", f"channel {name}: a message without text: ignored")
            return
        target = in_reply_to(content)
        text = reply_text(body) if target else body.strip()
        entry = self._entry(name, target) if target else None
        if entry is not None and text in entry.get("keys", {}) and text.isdigit():
            self._press(name, ch, str(event["sender"]), target, text)
            return
        if first and _int(event.get("origin_server_ts")) < self._last_alert_ms(name):
            # A first sync (no next_batch kept) shows the room's recent past: what was said
            # before this channel's newest alert is never run now.
            self.ignored("old", f"channel {name}: a message from before the listener: ignored")
            return
        self._steer(name, ch, event, text, target)

    def _last_alert_ms(self, name: str) -> int:
        alerts = _load(self.state_dir)["alerts"]
        return max((_int(a.get("ts")) for a in alerts if a.get("channel") == name), default=0)

    def _entry(self, name: str, event_id: object) -> dict[str, Any] | None:
        for m in _load(self.state_dir)["messages"]:
            if m.get("channel") == name and m.get("event_id") == event_id:
                entry: dict[str, Any] = m
                return entry
        return None

    def _press(
        self, name: str, ch: Mapping[str, Any], sender: str, target: object, key: str
    ) -> None:
        """A reaction or numbered reply on a message that answers: the token of that key,
        answered once (any later one of the request finds no token)."""
        entry = self._entry(name, target)
        who = f"user {visible(sender[:80])}"
        keys = entry.get("keys") if entry is not None else None
        token = keys.get(key) if isinstance(keys, dict) else None
        if entry is None:
            self.ignored(
                "unknown", f"channel {name}: a {key[:8]!r} by {who} on no request: ignored"
            )
            return
        if not isinstance(token, str):
            self.ignored("payload", f"channel {name}: {key[:8]!r} by {who} answers nothing here")
            return
        self._answer(name, token, f"Matrix user {sender}", f" by {who}")

    def _steer(
        self, name: str, ch: Mapping[str, Any], event: dict[str, Any], text: str, target: object
    ) -> None:
        replied = alert_session(self.state_dir, name, target) if target else None
        if self.fleet.named and replied is None and (target or not self.fleet.is_hub):
            # Another host's reply is its owner's (it knows its own event ids); a command not
            # in a reply is the hub's alone: each is answered once in the shared room.
            why = "in reply to another host's message" if target else "the hub's to answer"
            self.ignored("elsewhere", f"channel {name}: a message {why}: ignored")
            return
        if self.worker is None:
            self.worker = chat_steer.Worker(self.state_dir, SURFACE, PREFIX, self._reply)
        age = int(time.time() - _int(event.get("origin_server_ts")) / 1000)
        note = chat_steer.too_old(age, self.max_age_s)
        if note is not None:  # sent while no listener ran (T3): not acted on, and said so
            limit = f"over [steer] max_age_s, {self.max_age_s} s"
            self.ignored("old", f"channel {name}: a message {age} s old ({limit}): not acted on")
            self.worker.put(chat_steer.Job(ch, event.get("event_id"), "note", (note,)))
            return
        if self.fleet.named and replied is None:  # the hub: a command, maybe another host's
            job = self._fleet_job(name, ch, event, text)
            if job is not None:
                self.worker.put(job)
            return
        asked = chat_steer.parse(text, replied, PREFIX)
        if asked[0] == "say" and not replied:
            why = "in reply to no session's alert" if target else "neither a reply nor a command"
            self.ignored("unknown", f"channel {name}: a message {why}: ignored")
            return
        job = chat_steer.Job(ch, event.get("event_id"), asked[0], tuple(asked[1:]))
        self.worker.put(job)

    def _fleet_job(
        self, name: str, ch: Mapping[str, Any], event: dict[str, Any], text: str
    ) -> chat_steer.Job | None:
        """At the hub, a message that replies to nothing: a command, answered here once; the
        hub sends `!stop HOST:SESSION`, `!new HOST:PROJECT TEXT` to that host
        (lookout.fleet.hub). None: nothing to act on (logged)."""
        asked = chat_steer.parse(text, None, PREFIX)
        if asked[0] == "say":
            self.ignored("unknown", f"channel {name}: a message neither a reply nor a command")
            return None
        mid = event.get("event_id")
        if asked[0] in ("stop", "new"):
            host, rest = listener.split_hosted(asked[1])
            if listener.elsewhere(self.fleet, host):
                sender = f"Matrix user {event.get('sender')}"
                return chat_steer.Job(ch, mid, "remote", (host, asked[0], sender, rest, *asked[2:]))
            if host and host == self.fleet.host:  # the hub's own, named as the others are
                return chat_steer.Job(ch, mid, asked[0], (rest, *asked[2:]))
        return chat_steer.Job(ch, mid, asked[0], tuple(asked[1:]))

    def _reply(self, job: chat_steer.Job, text: str) -> None:
        """The answer, as a notice replying to the owner's message."""
        title, _, rest = (text or "(nothing)").partition("\n")
        content: dict[str, Any] = {"msgtype": "m.notice", "body": matrix.text_of(title, rest)}
        if isinstance(job.message_id, str):
            content["m.relates_to"] = {"m.in_reply_to": {"event_id": job.message_id}}
        try:
            matrix.send_event(job.channel, content, 10)
        except matrix.MatrixError as exc:
            store.log_error(self.state_dir, f"matrix steering: {exc}")

    def _done(self, m: dict[str, Any]) -> None:
        m["keys"] = {}  # nothing answers any more

    def _edit(self, ch: Mapping[str, Any], m: dict[str, Any], outcome: str) -> None:
        text = matrix.text_of(str(m.get("title") or ""), str(m.get("body") or ""), outcome)
        for _ in range(EDIT_TRIES):
            try:
                matrix.edit(ch, str(m["event_id"]), text, 10)
                return
            except matrix.MatrixError as exc:
                store.log_error(self.state_dir, f"matrix listener: {exc}")
                if 400 <= exc.status < 500 or exc.errcode == "M_ENCRYPTED":
                    return


# -- the answer surface (lookout.surfaces.base): the sender's side -------------------------------


class Room(listener.Answering):
    """Matrix's reactions and numbered replies: each key maps to a single-use token for this
    channel, never the request's nonce; the listener (above) takes them and edits the message
    to the outcome. Added late by editing the message to say them."""

    NAME, LABEL, TABLE = SURFACE, "Matrix", _TABLE
    ADDED = "answers added"

    def bind(self, a: Alert) -> None:
        rec = answers.request_for(a.state_dir, a.intent, a.remote)
        if rec is None:
            return
        picks = base.choices(rec, LIMITS, a.msg, a.ch["content"])
        keys = keys_for(picks)
        tokens = answers.mint(
            a.state_dir, rec, SURFACE, [(d, p) for _, d, p in picks], scope=a.name
        )
        a.msg["shown"] = a.msg["body"]
        a.msg["body"] = f"{a.msg['body']}\n\n{how_to_answer(picks, keys)}".lstrip("\n")
        a.msg["buttons"] = list(zip(keys, tokens, strict=True))
        a.msg["bound"] = rec["id"]

    def ensure(self, state_dir: str) -> None:
        ensure_listener(state_dir)

    def entry(self, a: Alert, ref: str) -> dict[str, Any]:
        """Its keys' tokens, its text without the answer's lines."""
        shown = {"rid": str(a.msg["bound"]), "body": a.msg["shown"]}
        return {**super().entry(a, ref), **shown, "keys": dict(a.msg["buttons"])}

    def add(self, a: Alert, ref: str) -> tuple[str, str]:
        timeout_s = a.ch["timeout_ms"] / 1000
        ch: Any = a.ch
        result, detail, _ = matrix.replace(ch, ref, a.msg["title"], a.msg["body"], timeout_s)
        return result, detail


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
