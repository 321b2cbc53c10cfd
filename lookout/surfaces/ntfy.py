"""ntfy's buttons (issue 40): an `ntfy` channel with `answers = true` puts Allow (where the one
rule lets it), Deny and Show all on a request's alert. Allow and Deny are `http` actions that the
phone's app POSTs itself to a reply topic on the same server, each with a single-use press token
in its body (answers.mint), never the request's nonce. So no inbound port: the subscriber here
reads the reply topic (ntfy's JSON stream, `GET /<topic>/json`, resumed with `since`), answers
the request a token was minted for (lookout.remote.answers) and replaces the alert with its
outcome, without actions (its sequence id: ntfy 2.16+ in place, an older server after it).

Anyone who can read the alert topic sees the actions' URL and body, so can press them: the
reply topic only says where presses go; what answers is a token from the alert. A press for
another request, replayed, forged or garbage changes nothing and is logged at a bounded rate.

One subscriber per state directory (ntfy.lock), alive while a sent alert still has buttons for
a pending request; started by the sender (lookout.spawn), never by a hook."""

from __future__ import annotations

import sys
import time

from lookout import store
from lookout.channels import ntfy, registry
from lookout.channels.base import ChannelError
from lookout.remote import answers
from lookout.surfaces import base, listener

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from lookout.shapes import Channel
    from lookout.surfaces.base import Alert

SURFACE = "ntfy"  # the answer surface (remote.answers.SURFACES), RemoteDecision's source


class Message:
    """What an ntfy alert can show (lookout.remote.shown's rule asks): the server takes at most
    4,096 bytes of UTF-8 a message (a longer one becomes an attachment the app does not show
    as text), title and body counted together; the body is plain text (no markdown: lookout
    sends none), so every character shows as it is."""

    WHAT = "message"
    ONE_LINE = 0
    TAIL_ROOM = True

    def fits(self, title: str, lines: list[str]) -> bool:
        return ntfy.size(title, "\n".join(lines)) <= ntfy.MESSAGE_MAX

    def render(self, lines: list[str]) -> str:
        return "\n".join(lines)


LIMITS = Message()
TABLE = "ntfy-messages.json"  # the sent alerts with buttons
LOCK = "ntfy.lock"
POLL_S = 0.25  # how often the alerts of ended requests are looked for
READ_TIMEOUT_S = 90.0  # the server sends a keepalive every 45 s by default
RETRY_MIN_S, RETRY_MAX_S = 0.5, 30.0  # a stream that failed or ended: reconnect, backing off
SINCE_SLACK_S = 2  # a stream first asks for what came this long before the oldest alert


# -- the table (written by the sender, read and pruned by the subscriber) -----------------------

_TABLE = listener.Table(TABLE, lists=("messages",))
known = _TABLE.known  # is this alert one with buttons (waiting, or replaced by its outcome)?


def ensure_subscriber(state_dir: str) -> None:
    """One runs (one that runs reads the table on its next turn): started detached."""
    from lookout import spawn

    spawn.start_listener(state_dir, LOCK, "lookout.surfaces.ntfy")


# -- the subscriber -----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """`ntfy STATE_DIR`: read the reply topics while alerts with buttons wait; exit 0 always."""
    return listener.run(argv, lambda state_dir: Subscriber(state_dir).serve(), "ntfy subscriber")


def press_token(event: Mapping[str, Any]) -> str | None:
    """The token of a press (a `message` event whose body is PRESS_PREFIX + token), else None."""
    body = event.get("message")
    if not isinstance(body, str) or not body.startswith(ntfy.PRESS_PREFIX):
        return None
    token = body[len(ntfy.PRESS_PREFIX) :].strip()
    return token if 0 < len(token) <= 64 else None


class Subscriber(listener.Polling):
    """Only the alerts with buttons that wait keep it (ntfy takes no replies: no steering); an
    alert registered after its last look starts it again."""

    SURFACE, LOCK, WHAT, TABLE, TAG = SURFACE, LOCK, "ntfy subscriber", _TABLE, "ntfy"
    STEERS = False

    def __init__(self, state_dir: str, poll_s: float = POLL_S) -> None:
        super().__init__(state_dir, poll_s)

    def _serves(self, ch: Channel) -> bool:
        return super()._serves(ch) and bool(ch.get("answers"))

    def _resume(self, name: str, table: dict[str, Any]) -> str:
        """A little before the oldest waiting alert was sent."""
        since_s = min(int(m.get("sent_s") or 0) for m in listener.waiting(table["messages"]))
        return str(max(since_s - SINCE_SLACK_S, 0))

    def _long_poll(self, name: str, ch: Mapping[str, Any], since: str) -> None:
        """`GET /<reply topic>/json?since=…` in a loop, resumed after the last message seen;
        each message is queued for the main loop."""
        delay = 0.0
        reply = ntfy.reply_topic(self.state_dir, name, ch)
        while not self.stop.is_set() and self.channels.get(name) == ch:
            try:
                for event in self._read(ch, reply, since):
                    delay = 0.0
                    if isinstance(event.get("id"), str) and event["id"]:
                        since = event["id"]
                    self.inbox.put((name, event))
            except (OSError, ValueError, ChannelError) as exc:
                store.log_error(self.state_dir, f"ntfy subscriber: channel {name}: {_said(exc)}")
            delay = min(max(delay * 2, RETRY_MIN_S), RETRY_MAX_S)
            self.stop.wait(delay)

    def _read(self, ch: Mapping[str, Any], reply: str, since: str) -> Any:
        import json
        import urllib.error
        import urllib.parse
        import urllib.request

        server = ntfy.split(ch)[0]
        url = f"{server}/{reply}/json?since={urllib.parse.quote(since)}"
        headers = {"User-Agent": "lookout-notify/0.1", **ntfy.auth(ch)}
        req = urllib.request.Request(url, headers=headers)  # noqa: S310 - http(s), checked
        try:
            resp = _OPENER.open(req, timeout=READ_TIMEOUT_S)
        except urllib.error.HTTPError as exc:
            raise ChannelError(f"subscribing: HTTP {exc.code}") from None
        with resp:
            for raw in resp:
                if len(raw) > 65536:
                    continue
                event = json.loads(raw)
                if isinstance(event, dict) and event.get("event") == "message":
                    yield event

    def _handle(self, name: str, event: dict[str, Any]) -> None:
        """One message on the reply topic: a press answers once; anything else changes nothing."""
        if name not in self.channels:
            self.ignored("foreign", f"channel {name}: a message for a channel no longer answering")
            return
        if event.get("message") == ntfy.PROBE:
            return  # doctor's own probe
        token = press_token(event)
        if token is None:
            self.ignored("payload", f"channel {name}: a message that is no press: ignored")
            return
        self._answer(name, token, f"ntfy channel {name}")

    def _edit(self, ch: Mapping[str, Any], m: dict[str, Any], outcome: str) -> None:
        body = str(m.get("body") or "")
        result, detail, _ = ntfy.replace(
            ch, str(m["ref"]), str(m.get("title") or ""), f"{body}\n\n{outcome}", 10
        )
        if result != "sent":
            store.log_error(self.state_dir, f"ntfy subscriber: outcome: {detail}")


def _said(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc
    return f"{type(exc).__name__}: {reason}"[:300]


def _opener() -> Any:
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # the token is in a header: never follow it elsewhere

    return urllib.request.build_opener(NoRedirect)


_OPENER = _opener()


# -- the answer surface (lookout.surfaces.base): the sender's side -------------------------------


class Buttons(listener.Answering):
    """ntfy's Allow / Deny: `http` actions with a single-use token for this channel in their
    body; the subscriber (above) takes the presses and replaces the alert by the outcome.
    Added late by publishing the alert again under its sequence id, with its actions."""

    NAME, LABEL, TABLE = SURFACE, "ntfy", _TABLE
    REPLIES = False  # ntfy takes presses only

    def bind(self, a: Alert) -> None:
        if not a.ch.get("answers"):
            return
        rec = answers.request_for(a.state_dir, a.intent, a.remote)
        if rec is None:
            return
        picks = base.choices(rec, LIMITS, a.msg, a.ch["content"])
        tokens = answers.mint(
            a.state_dir, rec, SURFACE, [(d, x) for _, d, x in picks], scope=a.name
        )
        a.msg["buttons"] = [(label, t) for (label, _, _), t in zip(picks, tokens, strict=True)]
        a.msg["bound"] = rec["id"]
        server = ntfy.split(a.ch)[0]
        a.msg["reply_url"] = f"{server}/{ntfy.reply_topic(a.state_dir, a.name, a.ch)}"

    def ensure(self, state_dir: str) -> None:
        ensure_subscriber(state_dir)

    def entry(self, a: Alert, ref: str) -> dict[str, Any]:
        """When it was sent: a new stream asks for the presses since."""
        return {**super().entry(a, ref), "sent_s": int(time.time())}

    def add(self, a: Alert, ref: str) -> tuple[str, str]:
        # ntfy edits no actions alone: the alert is published again under its sequence id, at
        # an update's low priority (the phone buzzed for it already).
        again = {**a.msg, "ref": ref, "update": True}
        timeout_s = a.ch["timeout_ms"] / 1000
        result, detail, _ = registry.send(a.ch, again, timeout_s)
        return result, detail


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
