"""The Telegram poller (issue 25): receives button presses by getUpdates long polling (no inbound
port, no webhook), checks chat and user, answers the request the button was minted for
(lookout.remote.answers), acknowledges the press (answerCallbackQuery) and edits the message to
the outcome (editMessageText), also when the dialog closed elsewhere.

One poller per state directory (telegram.lock, like the sender's lock), alive while a sent
message still has buttons for a pending request, and (issue 33) whenever [steer] is on and a
Telegram channel is configured: it then also takes the chat's messages
(lookout.remote.steer_telegram: a reply to an alert says it to that session; /new, /stop,
/sessions), so a reply is answered at once after a quiet day, a reboot or an upgrade (issue 38).
Started by the sender, or by the first hook or `lookout` command that finds it wanted
(store.TELEGRAM_WANTED) and not running (spawn.start_poller: a hook pays one stat()). After an
upgrade switched the installed runtime, it hands over to the new runtime's poller within
RUNTIME_CHECK_S or so: it stops taking updates, handles those it took (their offset is saved),
and starts the new one, which goes on from that offset. A press or a message from another chat
or user, for an ended request, or replayed changes nothing; an error never answers."""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
import time
import traceback

from lookout import paths, spawn, store
from lookout.boundary import visible
from lookout.channels import registry, telegram
from lookout.deliveries import record
from lookout.remote import answers, requests
from lookout.remote.ignored import Ignored
from lookout.surfaces import base, listener
from lookout.surfaces import telegram_steer as steer_telegram

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from lookout.shapes import Intent
    from lookout.surfaces.base import Alert, Watch

SURFACE = "telegram"  # the answer surface it serves (remote.answers.SURFACES)


class Message:
    """What a Telegram alert can show (lookout.remote.shown's rule asks): sendMessage's text is
    1-4096 characters, counted in UTF-16 code units as the Bot API counts them, the title
    included. lookout sends no parse_mode, so no entity takes room or changes a character; the
    limit and the count are the channel's (lookout.channels.telegram), written once."""

    WHAT = "message"
    ONE_LINE = 0
    TAIL_ROOM = True

    def fits(self, title: str, lines: list[str]) -> bool:
        used = telegram.units(visible(title)) + 1 + telegram.units("\n".join(lines))
        return used <= telegram.TEXT_MAX

    def render(self, lines: list[str]) -> str:
        return "\n".join(lines)


LIMITS = Message()
# The sent messages with buttons, each bot's update offset, and every alert's session (issue 33)
TABLE = "telegram-messages.json"
LOCK = store.TELEGRAM_LOCK
POLL_S = 0.25  # how often the messages of ended requests are looked for (withdrawn within 2 s)
LONG_POLL_S = 25  # getUpdates' `timeout`: the Bot API answers at once when a press arrives
RETRY_S = 2.0
BACKOFF_MIN_S, BACKOFF_MAX_S = 0.5, 30.0  # getUpdates that brought no new press, at once
EDIT_TRIES = 3
# The alerts a reply can steer: each one's session, for a day, the newest ALERTS_MAX of them.
ALERT_KEEP_MS, ALERTS_MAX = listener.ALERT_KEEP_MS, listener.ALERTS_MAX
# Updates that never steer, said as ignored when an API sends them unasked.
IGNORED_KINDS = ("edited_message", "channel_post", "edited_channel_post")
STEER_CHECK_S = 2.0  # how often the poller reads [steer] enabled again (it leaves when off)
RUNTIME_CHECK_S = 2.0  # how often it looks whether an upgrade made another runtime current
HANDOVER_WAIT_S = 10.0  # the new runtime's starter (a short process) is waited for this long
# What a poller handing over runs with the new runtime's interpreter: that runtime's own start.
_HANDOVER = (
    "import os, sys; os.chdir('/'); sys.path.insert(0, sys.argv[1]); "
    "from lookout import spawn; spawn.start_poller(sys.argv[2])"
)


# -- the table (written by the sender, read and pruned by the poller) ------------------------

_TABLE = listener.Table(TABLE, maps=("offsets",), key="message_id")
_load, _change = _TABLE.load, _TABLE.change
_int, _stamp, _forget = listener.whole, listener.stamp, listener.forget


def _waiting(table: dict[str, Any]) -> list[dict[str, Any]]:
    return listener.waiting(table["messages"])


def _mark_done(table: dict[str, Any], ended: list[tuple[object, object]], now_ms: int) -> None:
    table["messages"] = listener.mark_done(table["messages"], ended, now_ms, "message_id")


def watch(state_dir: str, channel: str, message_id: str, rid: str, title: str, body: str) -> None:
    """A message with buttons was sent for request `rid`: keep it until the request ends, and
    make sure a poller runs (after the entry is written: a poller about to exit sees it)."""
    entry: dict[str, Any] = {
        "channel": channel,
        "message_id": message_id,
        "rid": rid,
        "title": title,
        "body": body,
    }
    _TABLE.keep(state_dir, entry)
    ensure_poller(state_dir)


def remember_alert(state_dir: str, channel: str, message_id: str, session_id: str) -> None:
    """An alert about `session_id` was sent as `message_id`: a reply to it steers that session
    (issue 33). Kept ALERT_KEEP_MS, the newest ALERTS_MAX; with [steer] on, a poller runs."""
    _TABLE.remember_alert(state_dir, channel, message_id, session_id)
    if listener.steering_on():
        ensure_poller(state_dir)


def alert_session(state_dir: str, channel: str, message_id: object) -> str | None:
    """The session whose alert `message_id` is (sent through `channel`, within ALERT_KEEP_MS)."""
    return _TABLE.alert_session(state_dir, channel, str(message_id))


def known(state_dir: str, channel: str, message_id: str) -> bool:
    """Is this message one with buttons (waiting, or edited to its request's outcome)? Its
    "handled" update is then left out: the outcome says more."""
    return _TABLE.known(state_dir, channel, message_id)


def ensure_poller(state_dir: str) -> None:
    """A poller runs (one that runs reads the table on its next turn)."""
    spawn.start_poller(state_dir)


def successor(root: str | None = None) -> str | None:
    """The runtime an upgrade made current, when it is not the one this code runs from
    (`root`); None outside an installed runtime (a checkout) or when it still is current."""
    root = os.path.realpath(root or spawn.runtime_root())
    runtimes = os.path.dirname(root)
    if os.path.basename(runtimes) != "runtimes":
        return None
    try:
        now = os.path.realpath(os.path.join(os.path.dirname(runtimes), "current"))
    except OSError:
        return None
    return now if now != root and os.path.isdir(os.path.join(now, "lookout")) else None


def hand_over(state_dir: str, root: str) -> None:
    """Start the poller of runtime `root` (telegram.lock is free now) with its own interpreter
    (runtime.json says which) and its own start; waits for that short starter only."""
    import subprocess

    manifest = store.read_json(os.path.join(root, "runtime.json"))
    python = manifest.get("python") if isinstance(manifest, dict) else None
    if not (isinstance(python, str) and os.path.isabs(python) and os.access(python, os.X_OK)):
        python = sys.executable
    try:
        subprocess.run(
            [python, "-I", "-c", _HANDOVER, root, state_dir],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd="/",
            timeout=HANDOVER_WAIT_S,
            check=True,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        err = getattr(exc, "stderr", b"") or b""
        why = err.decode("utf-8", "replace").strip()[-400:] or str(exc)
        store.log_error(state_dir, f"telegram poller: handing over to {root} failed: {why}")


# -- the poller ---------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """`telegram STATE_DIR [LOCK_FD]`: poll while messages with buttons wait, or steering is on
    and a Telegram channel is configured; exit 0 always. LOCK_FD holds telegram.lock already
    (taken by whoever started us)."""
    # A hook ignores SIGTERM (install.settings.guarded); the poller must not inherit that.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    args = list(argv or [])
    if len(args) not in (1, 2) or (len(args) == 2 and not args[1].isdigit()):
        return 2
    state_dir = os.path.abspath(args[0])
    held = int(args[1]) if len(args) == 2 else None
    try:
        if held is not None:  # passed on inheritable: a sender we start would keep the lock
            os.set_inheritable(held, False)
        Poller(state_dir).serve(held)
    except Exception:
        store.log_error(state_dir, f"telegram poller: {traceback.format_exc()}")
    return 0


def backoff(delay: float, fresh: bool, result: object, took_s: float) -> float:
    """How long to wait before the next getUpdates (S6). A press resets it; so does a long poll
    that ran out with nothing ([] after about LONG_POLL_S, as the Bot API does). An answer with
    no new press at once (the same update again, garbage, [] early) doubles it up to
    BACKOFF_MAX_S: a hostile or broken API is asked a few times a minute, not hundreds a second."""
    if fresh or (result == [] and took_s >= LONG_POLL_S / 2):
        return 0.0
    return min(max(delay * 2, BACKOFF_MIN_S), BACKOFF_MAX_S)


class Poller:
    def __init__(self, state_dir: str, poll_s: float = POLL_S) -> None:
        self.state_dir = state_dir
        self.poll_s = poll_s
        self.updates: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self.threads: dict[str, threading.Thread] = {}
        self.stop = threading.Event()
        self.channels: dict[str, Mapping[str, Any]] = {}
        # Refused presses and messages go to ignored.log (others' doing, not lookout's failures:
        # doctor does not warn of them), a flood of them as a few lines with counts.
        self.ignored = Ignored(
            lambda text: store.log_error(state_dir, f"telegram poller: {text}", store.IGNORED)
        )
        self.steering = False  # [steer] enabled
        # Only the fleet's hub takes updates (issue 42): elsewhere the poller edits its own
        # messages to their outcome and never calls getUpdates on the shared bot.
        self.fleet = listener.Fleet("", "")
        self.max_age_s = 0  # [steer] max_age_s: older messages are not acted on
        # Under this lock the listeners take updates (queue them, save the offset) only while
        # `stop` is clear: once set, what they took is in the queue, and nothing more comes.
        self._taking = threading.Lock()
        self._runtime_looked = time.monotonic()
        self.moved_to: str | None = None  # the runtime an upgrade made current
        # The channels and [steer] are read again when the config file changed, looked at
        # every STEER_CHECK_S (a stat; the TOML is parsed only after a change).
        self._config_stamp: object = ()
        self._config_looked = 0.0
        self.chat: steer_telegram.Chat | None = None  # the owner's messages, once one came
        self.forwarder = listener.Forwarder(state_dir, "telegram forwarder")

    @property
    def wanted(self) -> bool:
        """A Telegram channel configured keeps a poller with [steer] on, or on the fleet's hub
        (any host's buttons may wait); never on a host that is not the hub."""
        serves = self.steering or self.fleet.is_hub
        return serves and bool(self.channels) and self.fleet.listens

    def serve(self, held: int | None = None) -> None:
        """Only while holding telegram.lock (`held`: a descriptor that holds it already)."""
        try:
            while True:
                fd = (
                    held if held is not None else store.try_lock(os.path.join(self.state_dir, LOCK))
                )
                held = None
                if fd is None:
                    return  # another poller serves this state directory
                try:
                    with self._taking:
                        self.stop.clear()
                    self._serve_locked()
                    self._stop_taking()
                finally:
                    os.close(fd)
                if self.moved_to is not None:
                    hand_over(self.state_dir, self.moved_to)
                    if self.chat is not None:
                        self.chat.jobs.join()  # what we took is ours to finish
                    return
                # No lost wake-up: a message registered after our last look starts us again.
                if not _waiting(_load(self.state_dir)) and not self._stays():
                    return
        finally:
            self.stop.set()
            self.ignored.flush(force=True)

    def _stop_taking(self) -> None:
        """No more updates: the listeners stop (a getUpdates still out is dropped, its offset
        not saved, so the next poller gets it again), and what they took is handled."""
        with self._taking:
            self.stop.set()
        while True:
            try:
                channel, update = self.updates.get_nowait()
            except queue.Empty:
                return
            self._handle(channel, update)

    def _reload(self) -> bool:
        """The channels whose buttons and messages this poller takes (those of its answer
        surface), from the user's own file as it is now: a user taken out of allowed_user_ids,
        a chat changed or a channel disabled counts from the next update on. A config that no
        longer loads takes none (fails closed): False."""
        from lookout.config import check, files

        self._config_looked = time.monotonic()
        self._config_stamp = _stamp(paths.config_path())
        self.steering, self.max_age_s = listener.steer_settings()
        self.fleet = listener.fleet()
        try:
            cfg = files.load(None)  # the user's own file: a project never names a bot
        except check.ConfigError as exc:
            store.log_error(self.state_dir, f"telegram poller: config error: {exc.errors[0]}")
            self.channels = {}
            store.mark(os.path.join(self.state_dir, store.TELEGRAM_WANTED), False)
            return False
        self.channels = {
            name: ch
            for name, ch in cfg["channels"].items()
            if registry.of(ch).ANSWERS == SURFACE and ch["enabled"]
        }
        store.mark(os.path.join(self.state_dir, store.TELEGRAM_WANTED), self.wanted)
        if self.fleet.is_hub and any(
            registry.of(c).ANSWERS == "slack" for c in cfg["channels"].values()
        ):
            from lookout.surfaces import slack  # the hub's Slack listener stays up as well

            slack.ensure_listener(self.state_dir)
        return True

    def _serve_locked(self) -> None:
        if not self._reload():
            self._drop_all()
            return
        while True:
            self._refresh()
            if self.moved_to is not None:
                return
            table = _load(self.state_dir)
            names = {m.get("channel") for m in _waiting(table)}
            if self._stays():
                names |= set(self.channels) if self.wanted else set()
            elif not names:
                return
            for name in names:
                if isinstance(name, str) and self.fleet.listens:
                    self._listen(name)
            try:
                channel, update = self.updates.get(timeout=self.poll_s)
            except queue.Empty:
                pass
            else:
                self._handle(channel, update)
            self.ignored.flush()
            self._withdraw()

    def _refresh(self) -> None:
        """Read the channels and [steer] again when the config file changed; look whether an
        upgrade made another runtime current."""
        if time.monotonic() - self._runtime_looked >= RUNTIME_CHECK_S:
            self._runtime_looked = time.monotonic()
            self.moved_to = successor()
        if time.monotonic() - self._config_looked < STEER_CHECK_S:
            return
        self._config_looked = time.monotonic()
        if _stamp(paths.config_path()) != self._config_stamp:
            self._reload()

    def _stays(self) -> bool:
        """Steering keeps the poller (wanted), or an action of the owner's still running (it
        finishes; the reply is sent)."""
        self._refresh()
        if (self.chat is not None and self.chat.busy()) or self.forwarder.busy():
            return True
        return self.wanted

    def _drop_all(self) -> None:
        _change(self.state_dir, lambda t: t.update(messages=[]))

    def _listen(self, name: str) -> None:
        if name in self.threads and self.threads[name].is_alive():
            return
        ch = self.channels.get(name)
        if ch is None:  # gone from the config: its buttons and alerts can answer nothing
            _change(self.state_dir, lambda t: _forget(t, name))
            return
        offset = _load(self.state_dir)["offsets"].get(name)
        thread = threading.Thread(
            target=self._long_poll, args=(name, ch, offset), daemon=True, name=f"tg-{name}"
        )
        self.threads[name] = thread
        thread.start()

    def _long_poll(self, name: str, ch: Mapping[str, Any], offset: object) -> None:
        """getUpdates in a loop: each press is queued for the main loop, in update_id order."""
        delay = 0.0
        # Until the channel changes or goes from the config (a listener of the new one starts),
        # or the fleet names another host its hub.
        while not self.stop.is_set() and self.channels.get(name) == ch and self.fleet.listens:
            # Messages too (issue 33): steering, or a reply saying that steering is off.
            kinds = ["callback_query", "message"]
            params: dict[str, Any] = {"timeout": LONG_POLL_S, "allowed_updates": kinds}
            if isinstance(offset, int):
                params["offset"] = offset
            started = time.monotonic()
            try:
                result = telegram.call(ch, "getUpdates", params, LONG_POLL_S + 10)
            except telegram.TelegramError as exc:
                if not self.stop.is_set():  # a successor's getUpdates ends ours (409)
                    store.log_error(self.state_dir, f"telegram poller: channel {name}: {exc}")
                self.stop.wait(RETRY_S)
                continue
            with self._taking:
                if self.stop.is_set():
                    return  # not taken: the offset stays, the next poller gets them again
                offset, fresh = self._take(name, result, offset, kinds)
            delay = backoff(delay, fresh, result, time.monotonic() - started)
            self.stop.wait(delay)

    def _take(
        self, name: str, result: object, offset: object, kinds: list[str]
    ) -> tuple[object, bool]:
        """Queue the new updates of one getUpdates answer, save the offset past them: (the
        offset, whether one was new)."""
        before, fresh = offset, False
        for update in result if isinstance(result, list) else []:
            uid = update.get("update_id") if isinstance(update, dict) else None
            if not isinstance(uid, int) or (isinstance(offset, int) and uid < offset):
                continue  # garbage, or one already taken (the API ignored the offset)
            offset = uid + 1  # the next call confirms it: it is never delivered again
            if any(isinstance(update.get(k), dict) for k in (*kinds, *IGNORED_KINDS)):
                self.updates.put((name, update))
                fresh = True
        if isinstance(offset, int) and offset != before:
            self._save_offset(name, offset)
        return offset, fresh

    def _save_offset(self, name: str, offset: int) -> None:
        _change(self.state_dir, lambda t: t["offsets"].__setitem__(name, offset))

    def _handle(self, name: str, update: dict[str, Any]) -> None:
        """One update: a press, or (issue 33) a message of the chat; any other kind is ignored.
        Checked against the channel as the config says now."""
        if name not in self.channels:
            self.ignored(
                "foreign", f"channel {name}: an update of a channel no longer configured", "update"
            )
        elif isinstance(update.get("callback_query"), dict):
            self._press(name, update)
        elif isinstance(update.get("message"), dict):
            if self.chat is None:
                state = self.state_dir
                self.chat = steer_telegram.Chat(
                    state, self.ignored, lambda ch, mid: alert_session(state, ch, mid)
                )
            self.chat.fleet = self.fleet
            self.chat.take(
                name, self.channels[name], update["message"], time.time(), self.max_age_s
            )
        else:
            kind = next((k for k in IGNORED_KINDS if k in update), "update")
            said = f"channel {name}: an {kind.replace('_', ' ')}: ignored"
            self.ignored("kind", said, "message" if kind != "update" else "update")

    def _press(self, name: str, update: dict[str, Any]) -> None:
        """One press: from the configured chat and users only, answered once, acknowledged."""
        ch = self.channels[name]
        query = update.get("callback_query")
        if not isinstance(query, dict) or not isinstance(query.get("id"), str):
            return
        sender = query.get("from")
        user = sender.get("id") if isinstance(sender, dict) else None
        message = query.get("message")
        chat = message.get("chat") if isinstance(message, dict) else None
        chat_id = chat.get("id") if isinstance(chat, dict) else None
        allowed = ch.get("allowed_user_ids") or []
        who = f"user {visible(str(user)[:40])} in chat {visible(str(chat_id)[:40])}"
        if chat_id is None or chat_id != ch["chat_id"] or (allowed and user not in allowed):
            self.ignored("foreign", f"channel {name}: a press by {who}, not the owner: ignored")
            self._ack(ch, query["id"], "Not answered: this bot takes answers only from its owner")
            return
        token, host = self._token(query)
        if token is None:
            self.ignored("payload", f"channel {name}: a press not of a lookout button: ignored")
            self._ack(ch, query["id"], "Not answered: not a lookout button")
            return
        if listener.elsewhere(self.fleet, host):  # another host's button: its bridge answers
            by, qid = f"Telegram user {user}", query["id"]

            def forward() -> None:  # up to 5 s: on the forwarder, never on the poller's loop
                ok, said = listener.forward_press(host, token, surface=SURFACE, by=by)
                if not ok:
                    self.ignored("refused", f"channel {name}: a press by {who} for {host}: {said}")
                self._ack(ch, qid, said)  # acknowledged with the host's outcome

            self.forwarder.put(forward)
            return
        try:
            rec = answers.answer_token(
                self.state_dir, token, surface="telegram", by=f"Telegram user {user}", scope=name
            )
        except requests.Refused as exc:
            self.ignored("refused", f"channel {name}: a press by {who} changed nothing: {exc}")
            self._ack(ch, query["id"], f"Not answered: {exc}")
            self._withdraw()
            return
        outcome = answers.outcome_text(rec)
        self._ack(ch, query["id"], outcome)
        self._withdraw()

    def _token(self, query: dict[str, Any]) -> tuple[str | None, str]:
        """(the press's token, the host its button names: "" for this host's own form)."""
        data = query.get("data")
        if not isinstance(data, str):
            return None, ""
        if data.startswith(telegram.CALLBACK_PREFIX):
            return data[len(telegram.CALLBACK_PREFIX) :] or None, ""
        if data.startswith(telegram.HOSTED_PREFIX):
            host, token = listener.split_hosted(data[len(telegram.HOSTED_PREFIX) :])
            return (token, host) if host else (None, "")
        return None, ""

    def _ack(self, ch: Mapping[str, Any], query_id: str, text: str) -> None:
        try:
            params = {"callback_query_id": query_id, "text": text[:200]}
            telegram.call(ch, "answerCallbackQuery", params, 10)
        except telegram.TelegramError as exc:
            store.log_error(self.state_dir, f"telegram poller: {exc}")

    def _withdraw(self) -> None:
        """Edit the message of every request that no longer waits to its outcome (no buttons)."""
        messages = _load(self.state_dir)["messages"]
        ended, now = listener.withdraw(
            self.state_dir, messages, "message_id", self.channels, self._edit
        )
        if ended:
            _change(self.state_dir, lambda t: _mark_done(t, ended, now))

    def _edit(self, ch: Mapping[str, Any], m: dict[str, Any], outcome: str) -> None:
        params = {
            "chat_id": ch["chat_id"],
            "message_id": int(m["message_id"]),
            "text": telegram.text_of(str(m.get("title") or ""), str(m.get("body") or ""), outcome),
        }
        for _ in range(EDIT_TRIES):
            try:
                telegram.call(ch, "editMessageText", params, 10)
                return
            except telegram.TelegramError as exc:
                if exc.code == 400:  # "message is not modified", deleted: nothing more to do
                    return
                store.log_error(self.state_dir, f"telegram poller: {exc}")


# -- the answer surface (lookout.surfaces.base): the sender's side -------------------------------


class Chat:
    """Telegram's buttons: each carries a single-use token for this channel, never the request's
    nonce; the poller (above) takes the presses and edits the message to the
    outcome. Added late under the message as it stands."""

    NAME = SURFACE
    LABEL = "Telegram"

    def bind(self, a: Alert) -> None:
        telegram_buttons(a.state_dir, a.intent, a.remote, a.msg, a.name, a.ch["content"])

    def sent(self, a: Alert, ref: str) -> None:
        # Every alert: a reply to it steers its session (issue 33), with [steer] on.
        remember_alert(a.state_dir, a.name, ref, a.intent["session_id"])
        if a.msg.get("buttons"):
            msg = a.msg
            watch(a.state_dir, a.name, ref, msg["bound"], msg["title"], msg["body"])

    def take(self, a: Alert, ref: str | None, watch: Watch) -> None:
        pass  # the poller takes the presses

    def late(self, a: Alert, ref: str) -> None:
        self.bind(a)
        if not a.msg.get("buttons"):
            return
        timeout_s = a.ch["timeout_ms"] / 1000
        result, detail = registry.of(a.ch).add_buttons(a.ch, ref, a.msg["buttons"], timeout_s)
        record(a.state_dir, a.intent, a.name, result, f"buttons added: {detail}", update=True)
        if result == "sent":
            self.sent(a, ref)

    def shows_outcome(self, state_dir: str, name: str, ref: str, episode: str) -> bool:
        return known(state_dir, name, ref)


def telegram_buttons(
    state_dir: str,
    intent: Intent,
    remote: dict[str, Any],
    msg: dict[str, Any],
    name: str,
    content: str = "summary",
) -> None:
    """Buttons under a Telegram alert whose request may be answered from afar (issue 25): each
    carries an opaque single-use token for this channel, never the request's nonce. The message
    shows the request as lookout.remote.shown renders it (issue 31)."""
    rec = answers.request_for(state_dir, intent, remote)
    if rec is None:
        return
    picks = base.choices(rec, LIMITS, msg, content)
    tokens = answers.mint(state_dir, rec, SURFACE, [(d, a) for _, d, a in picks], scope=name)
    here = listener.fleet()
    if here.named:  # the hub routes a press to the host that minted it (issue 42)
        hosted = [listener.hosted_data(here.host, t) for t in tokens]
        tokens = [h or t for h, t in zip(hosted, tokens, strict=True)]
    msg["buttons"] = [(label, token) for (label, _, _), token in zip(picks, tokens, strict=True)]
    msg["bound"] = rec["id"]


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
