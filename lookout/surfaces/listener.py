"""What the chat listeners (Telegram's poller, Slack's Socket Mode listener, Matrix's sync, ntfy's
reply subscription) share about the fleet's hub (issue 42): whether this host may listen on a
shared bot at all, which host an alert or a button belongs to, and where a press or a steer for
another host goes (lookout.fleet.hub, through the broker).

With `[fleet] hub` set, only the hub listens: every other host still sends its own alerts and
edits its own messages to their outcome, but never polls a shared bot (no 409, one getUpdates
at a time in the whole fleet). With no hub, or no [fleet], every host listens, as before.
A button names its host (`lk:<host>:<token>` on Telegram, `<host>:<token>` as a Slack action's
value) only when a hub is named; an alert's title starts with its host (`B · ...`, written by
lookout.templates), which tells the hub whose alert a reply answers when no button does."""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass

from lookout import paths, store, words
from lookout.channels import registry, telegram
from lookout.deliveries import record
from lookout.remote.ignored import Ignored

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from lookout.shapes import Channel
    from lookout.surfaces.base import Alert, Watch

# Telegram's callback_data: `lk:<host>:<token>` when a hub is named (the token is 22 characters
# of base64url, never a colon), `lk1:<token>` otherwise (lookout.channels.telegram).
HOSTED_PREFIX = telegram.HOSTED_PREFIX
CALLBACK_MAX = 64  # bytes, the Bot API's limit
TITLE_SEP = " · "  # lookout.templates: "{host} · {title}"


@dataclass(frozen=True)
class Fleet:
    """This host's name and the hub's, as the user's own config names them ("" for no hub)."""

    host: str
    hub: str

    @property
    def listens(self) -> bool:
        return not self.hub or self.hub == self.host

    @property
    def named(self) -> bool:
        return bool(self.hub)

    @property
    def is_hub(self) -> bool:
        """This host is the fleet's hub: its listeners stay, since any host's buttons may wait."""
        return bool(self.hub) and self.hub == self.host


def fleet(gpath: str | None = None) -> Fleet:
    """This host and the hub from the user's own config ([fleet] host, hub)."""
    from lookout.config.cache import fleet_hub

    return Fleet(*fleet_hub(gpath))


# -- a listener's table (written by the sender, read and pruned by the listener) ---------------


ALERT_KEEP_MS = store.DAY_MS  # a reply to an alert steers its session for a day
ALERTS_MAX = 500  # the newest alerts kept


class Table:
    """A listener's file in the state directory: its lists of entries (dicts) and its maps,
    read leniently (anything else is empty), changed under requests.lock. `key`: the field that
    names a sent message in its entries (each surface's own, as its files have it)."""

    def __init__(
        self,
        name: str,
        lists: tuple[str, ...] = ("messages", "alerts"),
        maps: tuple[str, ...] = (),
        key: str = "ref",
    ) -> None:
        self.name, self.lists, self.maps, self.key = name, lists, maps, key

    def keep(self, state_dir: str, entry: dict[str, Any]) -> None:
        """A message that answers request entry["rid"] was sent: kept (with the request's
        created_ms: the request shown, not a later one with the same id) until it ends."""
        from lookout.remote import requests

        rec = requests.load(state_dir, str(entry["rid"]))
        if rec is not None:
            entry["created_ms"] = rec.get("created_ms")
        self.change(state_dir, lambda t: t["messages"].append(entry))

    def remember_alert(self, state_dir: str, channel: str, ref: str, session_id: str) -> None:
        """An alert about `session_id` was sent as `ref`: a reply to it steers that session
        (kept ALERT_KEEP_MS, the newest ALERTS_MAX)."""
        now = words.now_ms()
        entry = {"channel": channel, self.key: ref, "session_id": session_id, "ts": now}

        def add(table: dict[str, Any]) -> None:
            fresh = [a for a in table["alerts"] if now - whole(a.get("ts")) < ALERT_KEEP_MS]
            table["alerts"] = [*fresh, entry][-ALERTS_MAX:]

        self.change(state_dir, add)

    def alert_session(self, state_dir: str, channel: str, ref: object) -> str | None:
        """The session whose alert `ref` is (sent through `channel`, within ALERT_KEEP_MS)."""
        now = words.now_ms()
        for a in reversed(self.load(state_dir)["alerts"]):
            if a.get("channel") == channel and a.get(self.key) == ref:
                sid = a.get("session_id")
                fresh = now - whole(a.get("ts")) < ALERT_KEEP_MS
                return sid if fresh and isinstance(sid, str) else None
        return None

    def known(self, state_dir: str, channel: str, ref: object) -> bool:
        """Is this message one that answers (waiting, or edited to its request's outcome)?"""
        return any(
            m.get("channel") == channel and m.get(self.key) == ref
            for m in self.load(state_dir)["messages"]
        )

    def forget(self, state_dir: str, channel: str) -> None:
        """A channel gone from the config: its entries go (once: nothing of it is left to
        listen for)."""

        def drop(table: dict[str, Any]) -> None:
            for key in self.lists:
                table[key] = [e for e in table[key] if e.get("channel") != channel]

        self.change(state_dir, drop)

    def path(self, state_dir: str) -> str:
        return os.path.join(state_dir, self.name)

    def load(self, state_dir: str) -> dict[str, Any]:
        data = store.read_json(self.path(state_dir))
        data = data if isinstance(data, dict) else {}
        out: dict[str, Any] = {}
        for key in self.lists:
            items = data.get(key)
            out[key] = [m for m in items if isinstance(m, dict)] if isinstance(items, list) else []
        for key in self.maps:
            value = data.get(key)
            out[key] = value if isinstance(value, dict) else {}
        return out

    def change(self, state_dir: str, change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
        with store.Locked(state_dir, store.REQUESTS_LOCK):
            table = self.load(state_dir)
            change(table)
            store.write_json_atomic(self.path(state_dir), table)
            return table


class Listener:
    """What every chat listener's process does around its protocol (Slack's Socket Mode,
    Matrix's /sync, ntfy's reply topics; the Telegram poller keeps a loop of its own): it serves
    its state directory while it holds LOCK; it takes the channels of its SURFACE from the user's
    own config and reads them again when the file changed (one that no longer loads takes none:
    fails closed); each turn it handles one item its readers queued (`inbox`) and edits the
    message of every ended request to its outcome. A subclass says how a channel is read
    (`_listen`), what an item means (`_handle`), how a message shows its outcome (`_edit`)."""

    SURFACE = ""  # the answer surface whose channels it serves (remote.answers.SURFACES)
    LOCK = ""  # its lock in the state directory: one listener per state directory
    WHAT = ""  # its name in the logs ("slack listener")
    TABLE: Table
    CONFIG_CHECK_S = 2.0  # how often the config file is looked at (a stat; parsed once changed)
    STEERS = True  # reads [steer] and [fleet] (ntfy's buttons only answer)
    DROPS_ON_BAD_CONFIG = True  # a config that no longer loads: its messages answer nothing
    _handle: Callable[..., None]  # one item of the inbox

    def __init__(self, state_dir: str, poll_s: float, log: str = store.ERRORS) -> None:
        """`log`: where what others sent and it refused is said (errors.log, or ignored.log)."""
        self.state_dir = state_dir
        self.poll_s = poll_s
        self.inbox: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self.channels: dict[str, Mapping[str, Any]] = {}
        self.ignored = Ignored(lambda text: store.log_error(state_dir, f"{self.WHAT}: {text}", log))
        self.steering = False  # [steer] enabled
        self.max_age_s = 0  # [steer] max_age_s: older messages are not acted on
        self.fleet = Fleet("", "")  # with a hub named, only the hub takes a shared bot's updates
        self._config_stamp: object = ()
        self._config_looked = 0.0

    def serve(self) -> None:
        try:
            while True:
                fd = store.try_lock(os.path.join(self.state_dir, self.LOCK))
                if fd is None:
                    return  # another listener serves this state directory
                try:
                    self._serve_locked()
                finally:
                    os.close(fd)
                # No lost wake-up: a message registered after our last look starts us again.
                if not waiting(self.TABLE.load(self.state_dir)["messages"]) and not self._stays():
                    return
        finally:
            self._close()
            self.ignored.flush(force=True)

    def _serve_locked(self) -> None:
        if not self._reload() and self.DROPS_ON_BAD_CONFIG:
            self.TABLE.change(self.state_dir, lambda t: t.update(messages=[]))
            return
        while True:
            self._refresh()
            table = self.TABLE.load(self.state_dir)
            names = {m.get("channel") for m in waiting(table["messages"])}
            if self._stays(table):
                names |= {a.get("channel") for a in table["alerts"]}
                names |= set(self.channels) if self.fleet.is_hub else set()
            elif not names:
                return
            for name in names:
                if isinstance(name, str):
                    self._listen(name, table)
            try:
                item = self.inbox.get(timeout=self.poll_s)
            except queue.Empty:
                pass
            else:
                self._handle(*item)
            self.ignored.flush()
            self._withdraw()

    def _reload(self) -> bool:
        """The channels of its surface from the user's own file as it is now (a project never
        names one); a config that no longer loads takes none (fails closed): False."""
        from lookout.config import check, files

        self._config_looked = time.monotonic()
        self._config_stamp = stamp(paths.config_path())
        if self.STEERS:
            self.steering, self.max_age_s = steer_settings()
            self.fleet = fleet()
        try:
            cfg = files.load(None)
        except check.ConfigError as exc:
            store.log_error(self.state_dir, f"{self.WHAT}: config error: {exc.errors[0]}")
            self.channels = {}
            return False
        self.channels = {name: ch for name, ch in cfg["channels"].items() if self._serves(ch)}
        self._loaded(cfg["channels"])
        return True

    def _loaded(self, channels: Mapping[str, Channel]) -> None:
        """The config loaded (`channels`: all of them): what else follows from it."""

    def _serves(self, ch: Channel) -> bool:
        return registry.of(ch).ANSWERS == self.SURFACE and bool(ch["enabled"])

    def _refresh(self) -> None:
        if time.monotonic() - self._config_looked < self.CONFIG_CHECK_S:
            return
        self._config_looked = time.monotonic()
        if stamp(paths.config_path()) != self._config_stamp:
            self._reload()

    def _stays(self, table: dict[str, Any] | None = None) -> bool:
        """Anything but a waiting message that keeps it (steering, a reply still running)."""
        return False

    def _close(self) -> None:
        """It leaves: its readers stop."""

    def _listen(self, name: str, table: dict[str, Any]) -> None:
        """Channel `name` is read (a reader runs, or starts)."""
        raise NotImplementedError

    def _answer(self, name: str, token: str, by: str, who: str = "") -> None:
        """A press of channel `name` (`who`: " by ..." as the log says it) answers the request
        its token was minted for, once (a refused one changes nothing, said); every message
        of an ended request then shows its outcome."""
        from lookout.remote import answers, requests

        try:
            answers.answer_token(self.state_dir, token, surface=self.SURFACE, by=by, scope=name)
        except requests.Refused as exc:
            self.ignored("refused", f"channel {name}: a press{who} changed nothing: {exc}")
        self._withdraw()

    def _withdraw(self) -> None:
        """Edit the message of every request that no longer waits to its outcome."""
        key = self.TABLE.key
        messages = self.TABLE.load(self.state_dir)["messages"]
        ended, now = withdraw(self.state_dir, messages, key, self.channels, self._edit)
        if ended:
            self.TABLE.change(
                self.state_dir,
                lambda t: t.update(messages=mark_done(t["messages"], ended, now, key, self._done)),
            )

    def _edit(self, ch: Mapping[str, Any], m: dict[str, Any], outcome: str) -> None:
        raise NotImplementedError

    def _done(self, m: dict[str, Any]) -> None:
        """Message `m` was edited to its outcome: what else changes in its entry."""


class Polling(Listener):
    """A listener with a reader thread of its own for each channel (Matrix's /sync, ntfy's
    stream, Telegram's getUpdates), each queueing into the inbox until `stop` is set or its
    channel changes; `_resume` says where a new reader goes on from."""

    TAG = ""  # the readers' thread names: TAG-<channel>

    def __init__(self, state_dir: str, poll_s: float, log: str = store.ERRORS) -> None:
        super().__init__(state_dir, poll_s, log)
        self.threads: dict[str, threading.Thread] = {}
        self.stop = threading.Event()

    def _close(self) -> None:
        self.stop.set()

    def _listen(self, name: str, table: dict[str, Any]) -> None:
        if name in self.threads and self.threads[name].is_alive():
            return
        ch = self.channels.get(name)
        if ch is None:  # gone from the config: its messages (and alerts) can answer nothing
            self.TABLE.forget(self.state_dir, name)
            return
        thread = threading.Thread(
            target=self._long_poll,
            args=(name, ch, self._resume(name, table)),
            daemon=True,
            name=f"{self.TAG}-{name}",
        )
        self.threads[name] = thread
        thread.start()

    def _resume(self, name: str, table: dict[str, Any]) -> Any:
        """Where channel `name`'s new reader goes on from (`table`: as this turn read it)."""
        raise NotImplementedError

    def _long_poll(self, name: str, ch: Mapping[str, Any], resume: Any) -> None:
        """Channel `name`'s reader: queues what it reads while it runs."""
        raise NotImplementedError


class Answering:
    """The sender's side of a surface whose presses its own listener takes (lookout.surfaces.base
    .Surface): the alert's id kept in TABLE once sent (`sent`), nothing started per alert
    (`take`), buttons added late through `add`, the outcome shown by the listener's edit."""

    NAME = ""
    LABEL = ""
    TABLE: Table
    ADDED = "buttons added"  # the delivery record's words for a late `add`
    REPLIES = True  # every alert is remembered: a reply to it steers its session

    def bind(self, a: Alert) -> None:
        raise NotImplementedError

    def ensure(self, state_dir: str) -> None:
        """A listener runs (one that runs reads the table on its next turn): started detached."""
        raise NotImplementedError

    def entry(self, a: Alert, ref: str) -> dict[str, Any]:
        """What the table keeps of alert `ref`, sent with buttons for its request."""
        msg = a.msg
        return {"channel": a.name, self.TABLE.key: ref, "rid": msg["bound"],
                "title": msg["title"], "body": msg["body"]}  # fmt: skip

    def sent(self, a: Alert, ref: str) -> None:
        if self.REPLIES:
            self.remember(a.state_dir, a.name, ref, a.intent["session_id"])
        if a.msg.get("buttons"):
            # Kept until its request ends; the listener starts after the entry is written (one
            # about to exit sees it).
            self.TABLE.keep(a.state_dir, self.entry(a, ref))
            self.ensure(a.state_dir)

    def remember(self, state_dir: str, channel: str, ref: str, session_id: str) -> None:
        """An alert about `session_id` was sent as `ref`: a reply to it steers that session
        (kept ALERT_KEEP_MS, the newest ALERTS_MAX); with [steer] on, a listener runs."""
        self.TABLE.remember_alert(state_dir, channel, ref, session_id)
        if steering_on():
            self.ensure(state_dir)

    def add(self, a: Alert, ref: str) -> tuple[str, str]:
        """Alert `ref` gets the buttons `bind` put on a.msg: (the result, its detail)."""
        raise NotImplementedError

    def take(self, a: Alert, ref: str | None, watch: Watch) -> None:
        pass  # the listener takes the presses

    def late(self, a: Alert, ref: str) -> None:
        self.bind(a)
        if not a.msg.get("buttons"):
            return
        result, detail = self.add(a, ref)
        record(a.state_dir, a.intent, a.name, result, f"{self.ADDED}: {detail}", update=True)
        if result == "sent":
            self.sent(a, ref)

    def shows_outcome(self, state_dir: str, name: str, ref: str, episode: str) -> bool:
        return self.TABLE.known(state_dir, name, ref)


def run(argv: Sequence[str] | None, serve: Callable[[str], object], what: str) -> int:
    """A listener's `python -m` entry, `STATE_DIR`: serve until it leaves; exit 0 always (2 for
    wrong arguments), whatever went wrong in it logged to errors.log as `what`."""
    import traceback

    args = list(argv or [])
    if len(args) != 1:
        return 2
    state_dir = os.path.abspath(args[0])
    try:
        serve(state_dir)
    except Exception:
        store.log_error(state_dir, f"{what}: {traceback.format_exc()}")
    return 0


def whole(value: object) -> int:
    """An int of the table (a bool or anything else: 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def stamp(path: str) -> tuple[int, int, int] | None:
    """What changes when a file is written (a replace makes a new inode), None without one."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def waiting(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages whose buttons may still answer (not yet edited to an outcome)."""
    return [m for m in messages if not m.get("done_ms")]


def replyable(alerts: list[dict[str, Any]], keep_ms: int) -> bool:
    """An alert of the last `keep_ms` that a reply may answer."""
    now = words.now_ms()
    return any(now - whole(a.get("ts")) < keep_ms for a in alerts)


def mark_done(
    messages: list[dict[str, Any]],
    ended: list[tuple[object, object]],
    now_ms: int,
    key: str,
    done: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Edited to their outcome (`ended`: (channel, the message's `key`)): kept a day (so a late
    "handled" update leaves them), then gone; `done` changes one as it ends."""
    kept = []
    for m in messages:
        if (m.get("channel"), m.get(key)) in ended:
            m["done_ms"] = now_ms
            if done is not None:
                done(m)
        if now_ms - int(m.get("done_ms") or now_ms) < store.DAY_MS:
            kept.append(m)
    return kept


def withdraw(
    state_dir: str,
    messages: list[dict[str, Any]],
    key: str,
    channels: Mapping[str, Mapping[str, Any]],
    edit: Callable[[Mapping[str, Any], dict[str, Any], str], None],
) -> tuple[list[tuple[object, object]], int]:
    """Every message with buttons whose request no longer waits (answered, expired, or replaced
    by a later request with the same id): edited to its outcome through `edit(channel, message,
    outcome)` while its channel is configured, its tokens forgotten. (the ended messages'
    (channel, `key`), now in ms) for mark_done."""
    from lookout.remote import answers, requests

    now = words.now_ms()
    ended = []
    for m in waiting(messages):
        rec = requests.load(state_dir, str(m.get("rid")))
        if rec is not None and "created_ms" in m and rec.get("created_ms") != m["created_ms"]:
            rec = None  # replaced by a later request with the same id: this one is over
        if rec is not None and requests.is_open(rec, now):
            continue
        ch = channels.get(str(m.get("channel")))
        if ch is not None:
            edit(ch, m, answers.outcome_text(rec))
        ended.append((m.get("channel"), m.get(key)))
        answers.forget(state_dir, str(m.get("rid")))
    return ended, now


def listens(gpath: str | None = None) -> bool:
    """May this host run the shared chat listeners? (lookout.fleet.hub.listens, by the config.)"""
    return fleet(gpath).listens


def steering_on() -> bool:
    """[steer] enabled in the user's own config (an unreadable config: off)."""
    return steer_settings()[0]


def steer_settings() -> tuple[bool, int]:
    """([steer] enabled, max_age_s) of the user's own config (an unreadable config: off)."""
    from lookout.config import check
    from lookout.config import steer as steer_config

    try:
        cfg = steer_config.load()
    except (check.ConfigError, OSError):
        return False, int(steer_config.DEFAULTS["max_age_s"])
    return cfg.enabled, cfg.max_age_s


def hosted_data(host: str, token: str) -> str | None:
    """Telegram callback_data that names `host`, or None when it would pass the 64 bytes."""
    data = f"{HOSTED_PREFIX}{host}:{token}"
    return data if len(data.encode()) <= CALLBACK_MAX else None


def split_hosted(value: str) -> tuple[str, str]:
    """`<host>:<token>` -> (host, token); ("", value) without a host."""
    host, sep, token = value.partition(":")
    return (host, token) if sep and host and token else ("", value)


def host_of_text(text: object) -> str:
    """The host an alert's text names in its title (`B · ...`), "" when it names none."""
    if not isinstance(text, str):
        return ""
    head, sep, _ = text.partition(TITLE_SEP)
    if not sep or "\n" in head:
        return ""
    from lookout.config.fleet import HOST

    return head if HOST.fullmatch(head) else ""


def host_of_telegram(message: object) -> str:
    """Whose alert a Telegram message of the bot is: its buttons' callback data names the host
    (`lk:<host>:...`), else its title does; "" when neither says."""
    if not isinstance(message, dict):
        return ""
    markup = message.get("reply_markup")
    rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    for row in rows if isinstance(rows, list) else []:
        for button in row if isinstance(row, list) else []:
            data = button.get("callback_data") if isinstance(button, dict) else None
            if isinstance(data, str) and data.startswith(HOSTED_PREFIX):
                host, _ = split_hosted(data[len(HOSTED_PREFIX) :])
                if host:
                    return host
    return host_of_text(message.get("text"))


def host_of_slack(message: object) -> str:
    """Whose alert a Slack message of the app is (conversations.replies' parent message): its
    buttons' values name the host (`<host>:<token>`), else its title does; "" when neither says."""
    if not isinstance(message, dict):
        return ""
    blocks = message.get("blocks")
    texts = [message.get("text")]
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        section = block.get("text")
        texts.append(section.get("text") if isinstance(section, dict) else None)
        elements = block.get("elements") if block.get("type") == "actions" else None
        for el in elements if isinstance(elements, list) else []:
            value = el.get("value") if isinstance(el, dict) else None
            host, _ = split_hosted(value) if isinstance(value, str) else ("", "")
            if host:
                return host
    return next((h for h in map(host_of_text, texts) if h), "")


class Forwarder:
    """One worker thread for a listener's calls that wait on the broker (a press forwarded to
    its host waits up to 5 s for the answer): the listener's loop reads on meanwhile."""

    def __init__(self, state_dir: str, name: str) -> None:
        import queue

        self.state_dir, self.name = state_dir, name
        self.jobs: queue.Queue[Callable[[], object]] = queue.Queue()
        self._started = False

    def put(self, job: Callable[[], object]) -> None:
        if not self._started:
            import threading

            threading.Thread(target=self._work, name=self.name, daemon=True).start()
            self._started = True
        self.jobs.put(job)

    def busy(self) -> bool:
        """A call runs or waits (the listener stays for it)."""
        return self.jobs.unfinished_tasks > 0

    def _work(self) -> None:
        import traceback

        while True:
            job = self.jobs.get()
            try:
                job()
            except Exception:
                store.log_error(self.state_dir, f"{self.name}: {traceback.format_exc()}")
            finally:
                self.jobs.task_done()


def elsewhere(here: Fleet, host: str) -> bool:
    """Is `host` another host of the fleet, whose press or steer goes through the hub?"""
    return here.named and here.listens and bool(host) and host != here.host


def forward_press(host: str, token: str, *, surface: str, by: str) -> tuple[bool, str]:
    """A press at the hub of a button `host` minted: published for host's bridge to answer
    (lookout.fleet.hub.press); (ok, what to acknowledge the press with). No channel is named:
    the hub cannot know host's channel names, and the token is host's alone to verify."""
    try:
        hub = _hub()
        cfg = hub.local()
        if cfg is None:
            return False, "Not answered: this host's [fleet] does not load (lookout check-config)"
        sent = hub.press(cfg, host, token, surface=surface, by=by)
    except Exception as exc:  # no paho, a broken broker connection: never the poller's end
        return False, f"Not answered: {host} is out of reach ({_said(exc)})"
    return bool(sent.ok), _acked(host, bool(sent.ok), str(sent.text))


def _acked(host: str, ok: bool, text: str) -> str:
    """What a press at the hub is acknowledged with: the owning host's outcome, as a local
    press's (`Allowed by ...`), or why it was not answered."""
    if ok:
        return text
    return text if text.startswith("Not answered") else f"Not answered: {host}: {text}"


def forward_steer(host: str, action: str, *, source: str, by: str, **what: str) -> str:
    """A steer for `host` (say, interrupt, start), run by host's bridge through its own
    steer/core (lookout.fleet.hub.steer): the two lines a local action shows."""
    try:
        hub = _hub()
        cfg = hub.local()
        if cfg is None:
            return "error: this host's [fleet] does not load\nhint: lookout check-config"
        done = hub.steer(cfg, host, action, source=source, by=by, **what)
    except Exception as exc:
        return f"error: {host} is out of reach ({_said(exc)})\nhint: lookout doctor on the hub"
    return "\n".join(done.lines)


def unknown_host(what: str, prefix: str = "/") -> str:
    """`prefix`: the surface's command prefix (Telegram's /, Slack's and Matrix's !)."""
    return (
        f"error: cannot tell which host sent {what}\n"
        "hint: reply to an alert that still shows its host (`HOST · ...`), or name it:"
        f" {prefix}new HOST:PROJECT TEXT, {prefix}stop HOST:SESSION"
    )


def _hub() -> Any:
    # The hub's side of the broker (paho only inside its functions): the one arrow from surfaces/
    # up to fleet/ (tests/test_layout.py's UPWARD), imported only when a press or reply is another
    # host's.
    from lookout.fleet import hub

    return hub


def _said(exc: BaseException) -> str:
    from lookout.boundary import visible

    return visible(str(exc) or type(exc).__name__)[:160]
