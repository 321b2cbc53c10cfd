"""`lookout bridge`: follows this host's state directory and keeps the broker's retained state
equal to it. The store stays the only writer of the state directory (the bridge writes only its
lock and its cursor); the hooks never connect anywhere.

On every (re)connect it publishes `online = true` and the current state of every session (a
restarted broker may have lost its retained messages), clears what was pruned, then follows
events.jsonl from a durable cursor and publishes only what changed: never a replay of events."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any, TextIO

from lookout import paths, store, words
from lookout.boundary import visible
from lookout.config.fleet import FleetConfig
from lookout.errors import LookoutError
from lookout.fleet import answers, mqtt, payload, steering, topics
from lookout.jump import locate
from lookout.remote.ignored import Ignored
from lookout.sessions import STALE_AFTER_S, Row, parse_line, present

if TYPE_CHECKING:
    from paho.mqtt.client import Client

LOCK = store.BRIDGE_LOCK
CURSOR = store.BRIDGE_CURSOR
TICK_S = 0.05  # how often events.jsonl is looked at: the hook → bus delay is at most this
LISTING_S = 0.5  # how often sessions/ is listed (a prune writes no event)
# How often the bridge reconciles (lookout.reconcile: the client's registry, transcripts,
# processes), as the dashboard does: what it proves is written to events.jsonl, then published.
RECONCILE_S = 0.5
REEVAL_S = 5.0  # how often every session is re-presented (a process gone, stale after 8 h)
SAVE_S = 1.0  # cursor writes at most this often
BACKOFF_MIN_S = 0.5
BACKOFF_MAX_S = 30.0
STOP_FLUSH_S = 3.0
CLOCK_JUMP_S = 1.0
STOP_WAIT_S = 10.0


class Lock:
    """One bridge per state directory: an flock on bridge.lock, which also holds its pid."""

    def __init__(self, state_dir: str) -> None:
        self.path = os.path.join(state_dir, LOCK)
        self.fd = -1

    def acquire(self) -> None:
        store.ensure_dir(os.path.dirname(self.path))
        fd = store.try_lock(self.path)
        if fd is None:
            pid = running_pid(os.path.dirname(self.path))
            raise LookoutError(
                f"a bridge already runs for {paths.tilde(os.path.dirname(self.path))}"
                + (f" (pid {pid})" if pid else ""),
                hint="one bridge per state directory; stop that one first "
                "(or give this one its own LOOKOUT_STATE_DIR)",
            )
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def running_pid(state_dir: str) -> int | None:
    """The pid of the bridge that holds this state directory's lock, None when none runs."""
    text = store.holder(os.path.join(state_dir, LOCK))
    if text is None:
        return None
    return int(text) if text.isdigit() else 0


def stop_running(state_dir: str, timeout: float = STOP_WAIT_S) -> int | None:
    """Stop the bridge that holds this state directory's lock (SIGTERM: it publishes
    `online = false` and leaves). Its pid, None when none runs; LookoutError when it does not
    stop (or its pid is unknown)."""
    pid = running_pid(state_dir)
    if pid is None:
        return None
    where = paths.tilde(state_dir)
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        except PermissionError:
            pid = 0
    deadline = time.monotonic() + timeout
    while pid and running_pid(state_dir) is not None:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    else:
        if pid:
            return pid
    raise LookoutError(
        f"a bridge runs for {where}" + (f" (pid {pid}) and did not stop" if pid else ""),
        hint=f"stop it (kill {pid})" if pid else f"stop the `lookout bridge` that runs for {where}",
    )


@dataclass
class Cursor:
    """What survives a restart: where in events.jsonl we are, and what the bus holds from us."""

    target: str = ""
    ino: int = 0
    offset: int = 0
    published: dict[str, str] = field(default_factory=dict)  # session id → digest of its message
    summary: str = ""
    home_assistant: bool = False
    # Home Assistant buttons on the bus (issue 25): token -> request id, cleared when it ends.
    requests: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, state_dir: str) -> Cursor:
        path = os.path.join(state_dir, CURSOR)
        raw = store.read_json(path)
        if store.newer(raw, 1):  # a newer lookout's bridge: publishing afresh would repeat it all
            raise store.NewerFormatError(f"{path}: written by a newer lookout: left as it is")
        if not isinstance(raw, dict) or raw.get("version") != 1:
            return cls()
        published = raw.get("published")
        held = raw.get("requests")
        return cls(
            target=str(raw.get("target") or ""),
            ino=_count(raw.get("ino")),
            offset=_count(raw.get("offset")),
            published={str(k): str(v) for k, v in published.items()}
            if isinstance(published, dict)
            else {},
            summary=str(raw.get("summary") or ""),
            home_assistant=bool(raw.get("home_assistant")),
            requests={str(k): str(v) for k, v in held.items()} if isinstance(held, dict) else {},
        )

    def save(self, state_dir: str) -> None:
        store.write_json_atomic(
            os.path.join(state_dir, CURSOR),
            {
                "version": 1,
                "target": self.target,
                "ino": self.ino,
                "offset": self.offset,
                "published": self.published,
                "summary": self.summary,
                "home_assistant": self.home_assistant,
                "requests": self.requests,
            },
        )


def _count(value: object) -> int:
    # A damaged cursor is a fresh start, never a crash.
    return value if type(value) is int and value >= 0 else 0


def session_ids(lines: list[bytes]) -> set[str]:
    """The session ids of events.jsonl's lines (a line that is no record is passed over)."""
    ids = set()
    for raw in lines:
        record = parse_line(raw)
        if record is not None and isinstance(record.get("session_id"), str):
            ids.add(record["session_id"])
    return ids


class Bridge:
    def __init__(self, cfg: FleetConfig, state_dir: str, out: TextIO | None = None) -> None:
        self.cfg = cfg
        self.state_dir = state_dir
        self.out = out
        self.stop_event = threading.Event()
        self.lost = threading.Event()
        self.client: Client | None = None
        self.acks: mqtt.Acks | None = None
        self._clock = 0.0  # wall clock minus monotonic when `online` last carried our clock
        self.cursor = Cursor()
        # events.jsonl from the cursor, across rotation (store.Tail: the one follower of a log).
        self.tail = store.Tail(os.path.join(state_dir, store.EVENTS))
        self.target = f"{cfg.url} {cfg.topic_prefix}/{cfg.host}"
        self.current: dict[str, Row] = {}  # session id → as presented, for the summary
        self._last_error = ""
        self._dirty = False
        self._saved_pos = (0, 0)
        self._saved_at = 0.0
        # Home Assistant answers: only while a connection listens for presses (never --once).
        self.listening = False
        self.known: dict[str, str] = {}  # token -> request id of the buttons up now
        self._requests_stamp: tuple[int, int] | None = None
        self._requests_at = 0.0
        # A flood of bogus presses is a few lines, not one per press.
        self.ignored = Ignored(lambda text: self._say(f"bridge: {text}"))
        # The fleet's hub (issue 42): presses and steer messages from it, only while this
        # connection proved that no other host may write them (access.hub_proof).
        self.hub_ok = False
        self.hub_parts: dict[str, dict[str, Any]] = {}  # request token -> what the hub gets
        self.inbox = steering.Inbox(
            state_dir, cfg, self._publish_outcome, self._said, self._hub_tokens, words.now_ms()
        )

    # -- lifecycle --------------------------------------------------------------------------

    def run(self, once: bool = False) -> int:
        lock = Lock(self.state_dir)
        lock.acquire()
        try:
            self.cursor = Cursor.load(self.state_dir)
            self.tail.ino, self.tail.offset = self.cursor.ino, self.cursor.offset
            if once:
                return self._once()
            self._forever()
            return 0
        finally:
            lock.release()

    def install_signals(self) -> dict[int, Any]:
        """SIGTERM and SIGINT stop it cleanly (online = false); returns the previous handlers."""

        def stop(_signum: int, _frame: FrameType | None) -> None:
            self.stop_event.set()

        return {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}

    def _sleep(self, seconds: float) -> None:
        # time.sleep in short steps (not Event.wait): a signal or Ctrl-C is seen within 0.1 s.
        deadline = time.monotonic() + seconds
        while not self.stop_event.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                time.sleep(min(0.1, left))
            except KeyboardInterrupt:
                self.stop_event.set()

    def _once(self) -> int:
        client = mqtt.new_client(self.cfg, "bridge", will=True)
        self.acks = mqtt.Acks(client)
        mqtt.connect(client, self.cfg)  # errors go to the caller: --once says what failed
        self.client = client
        try:
            infos = self._publish_all()
            deadline = time.monotonic() + 10
            for info in infos:
                info.wait_for_publish(max(0.1, deadline - time.monotonic()))
            if not all(info.is_published() for info in infos):
                raise LookoutError(
                    f"the broker at {self.cfg.url} did not acknowledge every message",
                    hint="run it again; the bridge republishes everything on each connect",
                )
            denied = self.acks.take_denied()
            if denied:
                # Nothing of ours may be on the bus: never "published" (and forget the cursor's
                # claims, so the next run sends everything again).
                self.cursor.published, self.cursor.summary = {}, ""
                self._save(force=True)
                raise LookoutError(*mqtt.denied_text(denied, self.cfg))
            self._save(force=True)
            self._say(
                f"published {len(self.cursor.published)} session"
                f"{'' if len(self.cursor.published) == 1 else 's'} of host {self.cfg.host} "
                f"to {self.cfg.url} ({self.cfg.topic_prefix}/{self.cfg.host}/...)"
            )
            return 0
        finally:
            client.disconnect()
            client.loop_stop()

    def _forever(self) -> None:
        backoff = BACKOFF_MIN_S
        self._say(
            f"bridge: publishing {paths.tilde(self.state_dir)} as host {self.cfg.host} "
            f"to {self.cfg.url} ({self.cfg.topic_prefix}/{self.cfg.host}/...); Ctrl-C stops"
        )
        first = True
        while not self.stop_event.is_set():
            try:
                self._session()
                backoff = BACKOFF_MIN_S
            except mqtt.ConnectError as exc:
                if first and not exc.transient:
                    raise  # a wrong password or an untrusted certificate: say so and exit 1
                self._error(str(exc), exc.hint)
            first = False
            if self.stop_event.is_set():
                break
            # Exponential backoff with jitter: a fleet of bridges does not reconnect in step.
            self._sleep(backoff * random.uniform(0.8, 1.2))  # noqa: S311
            backoff = min(BACKOFF_MAX_S, backoff * 2)
        self._save(force=True)

    def _session(self) -> None:
        """One connection: publish everything, then follow until it drops or we stop."""
        client = mqtt.new_client(self.cfg, "bridge", will=True)
        self.lost.clear()
        client.on_disconnect = lambda *_a: self.lost.set()
        self.acks = mqtt.Acks(client)
        mqtt.connect(client, self.cfg)
        self.client = client
        if self._last_error:
            self._say(f"bridge: connected to {self.cfg.url} again")
            self._last_error = ""
        else:
            self._say(f"bridge: connected to {self.cfg.url}")
        try:
            self.listening = self.cfg.answers and self._tokens_private(client)
            self.hub_ok = self._hub_allowed(client)
            self._subscribe(client)
            self._publish_all()
            listed_at = reeval_at = reconciled_at = time.monotonic()
            said_denied = False
            while not self.stop_event.is_set() and not self.lost.is_set():
                now = time.monotonic()
                if now - reconciled_at >= RECONCILE_S:
                    from lookout import reconcile

                    reconcile.quietly(self.state_dir)
                    reconciled_at = now
                ids = self._follow()
                if ids is None or now - reeval_at >= REEVAL_S:
                    ids = self._on_disk() | set(self.cursor.published)
                    reeval_at = listed_at = now
                elif now - listed_at >= LISTING_S:
                    ids |= self._gone()
                    listed_at = now
                if ids:
                    self._publish_sessions(ids)
                self._publish_requests()
                if abs(time.time() - time.monotonic() - self._clock) > CLOCK_JUMP_S:
                    self._publish_online()  # the clock was set: viewers re-measure its skew
                denied = self.acks.take_denied()
                if denied and not said_denied:
                    # Once per connection: the ACL does not change between two publishes.
                    said_denied = True
                    self._error(*mqtt.denied_text(denied, self.cfg))
                self.ignored.flush()
                self._save()
                self._sleep(TICK_S)
            if self.lost.is_set() and not self.stop_event.is_set():
                self._error(f"lost the connection to {self.cfg.url}; reconnecting", None)
                return
            # A clean stop: say so (the Last Will is only for a crash), then leave.
            info = self._publish(topics.online(self.cfg.topic_prefix, self.cfg.host), b"false")
            info.wait_for_publish(STOP_FLUSH_S)
            self._say("bridge: stopped (host shown offline)")
        finally:
            self.ignored.flush(force=True)
            self.inbox.stop()
            self.listening = self.hub_ok = False
            self.known = {}
            client.disconnect()
            client.loop_stop()
            self.client = None

    def _follow(self) -> set[str] | None:
        """The sessions events.jsonl named since the cursor; None: it lost track (rotated past
        the kept files, truncated): rescan everything."""
        lines = self.tail.poll()
        self.cursor.ino, self.cursor.offset = self.tail.ino, self.tail.offset
        return None if lines is None else session_ids(lines)

    def _subscribe(self, client: Client) -> None:
        """Before any button or request is published (a press is never missed): this host's
        own press topics, for Home Assistant's buttons or the hub, and its steer topics for
        the hub."""
        client.on_message = self._on_message
        wanted = []
        if self.listening or self.hub_ok:
            wanted.append((answers.press_filter(self.cfg), 1))
        if self.hub_ok:
            p, h = self.cfg.topic_prefix, self.cfg.host
            wanted.append((f"{p}/{h}/{topics.STEER}/+", 1))
            self.inbox.start()
        if wanted:
            client.subscribe(wanted)

    def _hub_allowed(self, client: Client) -> bool:
        """Presses and steer messages from the hub only when this host's own config names a
        hub (another host) and the broker proves that nobody else may read its requests or
        write its press and steer topics. Fails closed, said once per connection."""
        from lookout.fleet import access

        if not self.cfg.hub or self.cfg.hub == self.cfg.host:
            return False
        assert self.acks is not None
        found = access.hub_proof(client, self.acks, self.cfg, access.PRIVATE_WAIT_S)
        if not found.safe:
            self._error(*access.hub_text(found, self.cfg))
        else:
            self._say(f"bridge: takes presses and steering from the hub {self.cfg.hub}")
        return found.safe

    def _hub_tokens(self) -> set[str]:
        return {t for part in list(self.hub_parts.values()) for t in part["tokens"].values()}

    def _publish_outcome(self, topic: str, body: bytes) -> None:
        if self.client is not None:
            self._publish(topic, body, retain=False)

    def _said(self, reason: str, text: str) -> None:
        if reason:
            self.ignored(reason, text)
        else:
            self._say(f"bridge: {text}")

    def _tokens_private(self, client: Client) -> bool:
        """Home Assistant answers only when no other host can read this host's press tokens
        (issue 31): with an ACL that lets every host read `lookout/#`, any of them could learn
        a token and lure Home Assistant into pressing it. Fails closed: what it cannot tell
        turns answers off too, said once per connection (and any buttons left are withdrawn)."""
        from lookout.fleet import access

        assert self.acks is not None
        found = access.private_reads(client, self.acks, self.cfg, access.PRIVATE_WAIT_S)
        found = access.others_reads(found, self.cfg)
        if not found.safe:
            self._error(*access.exposure_text(found, self.cfg))
        return found.safe

    # -- publishing -------------------------------------------------------------------------

    def _names(self) -> set[str]:
        try:
            return set(os.listdir(os.path.join(self.state_dir, store.SESSIONS)))
        except FileNotFoundError:
            return set()

    def _gone(self) -> set[str]:
        """Published sessions whose snapshot is gone (pruned): a listing, no file read."""
        names = self._names()
        return {
            sid
            for sid in self.cursor.published
            if os.path.basename(store.session_file(self.state_dir, sid)) not in names
        }

    def _on_disk(self) -> set[str]:
        directory = os.path.join(self.state_dir, store.SESSIONS)
        ids = set()
        for name in self._names():
            if name.endswith(".json") and not name.startswith("."):
                snap = store.read_json(os.path.join(directory, name))
                if isinstance(snap, dict) and isinstance(snap.get("session_id"), str):
                    ids.add(snap["session_id"])
        return ids

    def _publish_all(self) -> list[Any]:
        """Everything, as after a broker restart: online, discovery, every session, the summary,
        and an empty retained message for every session we published that is gone."""
        assert self.client is not None
        c, cfg = self.cursor, self.cfg
        if c.target != self.target:
            c.published, c.summary, c.target = {}, "", self.target
        self.tail.to_end()  # before reading snapshots: later events are followed
        c.ino, c.offset = self.tail.ino, self.tail.offset
        infos = [self._publish_online()]
        if cfg.home_assistant or c.home_assistant:
            for topic, config in payload.ha_discovery(cfg):
                # Switched off: an empty retained config removes the entities from HA.
                infos.append(
                    self._publish(topic, payload.encode(config) if cfg.home_assistant else b"")
                )
        c.home_assistant = cfg.home_assistant
        ids = self._on_disk() | set(c.published)
        c.published = {}  # republish every one of them: the broker may have lost them
        self.current = {}
        infos += self._publish_sessions(ids, clear_missing=True)
        infos += self._publish_summary(force=True)
        infos += self._publish_requests(force=True)
        self._dirty = True
        return infos

    def _publish(self, topic: str, body: bytes, props: Any = None, retain: bool = True) -> Any:
        assert self.client is not None and self.acks is not None
        return self.acks.publish(self.client, topic, body, retain=retain, props=props)

    def _publish_online(self) -> Any:
        self._clock = time.time() - time.monotonic()
        props = mqtt.clock_properties(words.now_ms())
        return self._publish(topics.online(self.cfg.topic_prefix, self.cfg.host), b"true", props)

    def _publish_sessions(self, ids: set[str], clear_missing: bool = False) -> list[Any]:
        cfg, c = self.cfg, self.cursor
        now = words.now_ms()
        infos = []
        panes: dict[str, Any] = {}  # one tmux call per server for the whole batch
        held: dict[str, Any] = {}  # which process each session records, read once
        for sid in sorted(ids):
            snapshot = store.read_session(self.state_dir, sid)
            topic = topics.session(cfg.topic_prefix, cfg.host, sid)
            if snapshot is None or snapshot.get("session_id") != sid:
                if sid in c.published or clear_missing:
                    infos.append(self._publish(topic, b""))
                    c.published.pop(sid, None)
                    self.current.pop(sid, None)
                    self._dirty = True
                continue
            shown = present(dict(snapshot), now, STALE_AFTER_S)
            # Where its pane is now, as `status --json` says: only this host can ask its tmux.
            pane = locate.own_pane(self.state_dir, snapshot, panes, held)
            shown["tmux"] = pane.as_json() if pane else None
            body = payload.encode(payload.session_message(shown, cfg.host, cfg.content))
            d = payload.digest(body)
            self.current[sid] = shown
            if c.published.get(sid) != d:
                infos.append(self._publish(topic, body))
                c.published[sid] = d
                self._dirty = True
        if infos:
            infos += self._publish_summary()
        return infos

    def _publish_summary(self, force: bool = False) -> list[Any]:
        messages = [
            payload.session_message(s, self.cfg.host, self.cfg.content)
            for s in self.current.values()
        ]
        body = payload.encode(payload.host_summary(messages, self.cfg.host))
        d = payload.digest(body)
        if d == self.cursor.summary and not force:
            return []
        self.cursor.summary = d
        return [self._publish(topics.summary(self.cfg.topic_prefix, self.cfg.host), body)]

    def _publish_requests(self, force: bool = False) -> list[Any]:
        """Each open request as two Home Assistant buttons, withdrawn (empty retained configs)
        once it ends anywhere. The requests directory is looked at on every tick (a record that
        changes is replaced atomically, which changes the directory) and read whole every
        LISTING_S (a request also ends when its deadline passes or its hook is gone)."""
        c = self.cursor
        serving = self.listening or self.hub_ok
        if not (serving or c.requests):
            return []
        now = time.monotonic()
        try:
            st = os.stat(os.path.join(self.state_dir, store.REQUESTS))
            stamp: tuple[int, int] | None = (st.st_ino, st.st_mtime_ns)
        except OSError:
            stamp = None
        if not force and stamp == self._requests_stamp and now - self._requests_at < LISTING_S:
            return []
        self._requests_stamp, self._requests_at = stamp, now
        now_ms = words.now_ms()
        current = answers.open_requests(self.state_dir, now_ms) if serving else {}
        self.known = {tok: str(rec["id"]) for tok, rec in current.items()} if self.listening else {}
        infos = []
        cfg = self.cfg
        for tok in [t for t in c.requests if t not in current]:
            if cfg.home_assistant or c.home_assistant:
                for decision in answers.BUTTONS:
                    oid = answers.object_id(tok, decision)
                    topic = topics.ha_config(cfg.home_assistant_prefix, "button", cfg.host, oid)
                    infos.append(self._publish(topic, b""))
            infos.append(self._publish(answers.request_topic(cfg, tok), b""))
            del c.requests[tok]
            self.hub_parts.pop(tok, None)
            self._dirty = True
        for tok, rec in current.items():
            if tok in c.requests and not force:
                continue
            infos += self._publish_request(tok, rec)
            c.requests[tok] = str(rec["id"])
            self._dirty = True
        return infos

    def _publish_request(self, tok: str, rec: dict[str, Any]) -> list[Any]:
        """One open request: its message (with what the hub needs, when it may answer) and,
        for Home Assistant's answers, its buttons; the attributes first: an entity that appears
        has its request's details."""
        cfg = self.cfg
        message = answers.request_message(cfg, tok, rec)
        if self.hub_ok:
            if tok not in self.hub_parts:  # minted once: a republish keeps its tokens
                self.hub_parts[tok] = steering.hub_part(self.state_dir, cfg, rec)
            message["hub"] = self.hub_parts[tok]
        infos = [self._publish(answers.request_topic(cfg, tok), payload.encode(message))]
        if self.listening:
            for topic, config in answers.discovery(cfg, tok, rec):
                infos.append(self._publish(topic, payload.encode(config)))
        return infos

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        """A message on this host's press or steer topics (paho's network thread): a hub's
        (JSON) to the inbox, Home Assistant's (allow, deny) answered here. Never raises."""
        try:
            p, h = self.cfg.topic_prefix, self.cfg.host
            kind, _, name = msg.topic[len(p) + len(h) + 2 :].partition("/")
            hub = msg.topic.startswith(f"{p}/{h}/") and bytes(msg.payload[:1]) == b"{"
            if hub and self.hub_ok and kind in (topics.PRESS, topics.STEER) and "/" not in name:
                self.inbox.put(kind, topics.unsegment(name), bytes(msg.payload), msg.retain)
                if msg.retain and self.client is not None:
                    self.client.publish(msg.topic, b"", qos=1, retain=True)
            elif self.listening and kind == topics.PRESS:
                self._on_press(client, userdata, msg)
            else:
                self.ignored("foreign", f"a message on {visible(msg.topic)[:80]}: ignored")
        except Exception as exc:  # a message must never stop the bridge
            store.log_error(self.state_dir, f"bridge: a message failed: {exc!r}")

    def _on_press(self, _client: Any, _userdata: Any, msg: Any) -> None:
        """A message on this host's press topics (paho's network thread): never raises."""
        try:
            outcome = answers.take_press(
                self.state_dir, self.cfg, self.known, msg.topic, bytes(msg.payload), msg.retain
            )
            if msg.retain and self.client is not None:
                # A retained press would be delivered again on every connect: clear it.
                self.client.publish(msg.topic, b"", qos=1, retain=True)
            if outcome.answered:
                self._say(f"bridge: {outcome.text}")
                self._requests_at = 0.0  # withdraw the buttons on the next tick
            else:
                self.ignored(outcome.reason, outcome.text)
        except Exception as exc:  # a press must never stop the bridge
            store.log_error(self.state_dir, f"bridge: a Home Assistant press failed: {exc!r}")

    # -- bookkeeping ------------------------------------------------------------------------

    def _save(self, force: bool = False) -> None:
        """The cursor, at most once a second (and at stop): a crash re-sends at most that much."""
        now = time.monotonic()
        pos = (self.cursor.ino, self.cursor.offset)
        if not (self._dirty or pos != self._saved_pos):
            return
        if not force and now - self._saved_at < SAVE_S:
            return
        try:
            self.cursor.save(self.state_dir)
        except OSError as exc:
            self._error(f"cannot write {CURSOR}: {exc.strerror}", None)
            return
        self._dirty, self._saved_pos, self._saved_at = False, pos, now

    def _say(self, text: str) -> None:
        if self.out is not None:
            print(text, file=self.out, flush=True)

    def _error(self, text: str, hint: str | None) -> None:
        # Once per distinct failure: a broker down for an hour is one line, not 120.
        if text == self._last_error:
            return
        self._last_error = text
        store.log_error(self.state_dir, f"bridge: {text}")
        self._say(f"bridge: {text}" + (f" (hint: {hint})" if hint else ""))
