"""The state directory: events.jsonl (append-only, whole lines under an flock), one snapshot per
session, rotation, the error log. The only module that writes lookout's state files.

Hot-path code: stdlib only and no `json`/`typing` import (see _jsonfast), not even `os` (see
paths): the interpreter's built-in `posix` and `_stat` do the same calls. The lock is a plain
fcntl.flock on `events.lock`, the same lock filelock.FileLock takes on Unix, so the CLI's
filelock-based readers and writers interoperate with the hooks."""

from __future__ import annotations

import _stat
import fcntl
import posix
import time

from lookout import _jsonfast, paths, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from os import stat_result
    from types import TracebackType

    from lookout.events import Event
    from lookout.shapes import Intent, Record, Session

    # machine.apply, passed in by the writers (the store does not import the machine).
    Fold = Callable[[Session | None, Event], tuple[Session, Record, list[Intent]]]
    # One event recorded: the status before it, the snapshot after it, its intents, the event.
    Recorded = tuple[object, Session, list[Intent], Event]

# The state directory, every name in it. Each lock guards the files listed beside it; no code
# holds two at once except in the order events -> notify -> deliveries.
EVENTS = "events.jsonl"  # + .1 .. .7 after rotation (DEFAULT_KEEP)
SESSIONS = "sessions"  # sessions/<id>.json: one snapshot per session
LOCK = "events.lock"  # events.jsonl, sessions/: every hook takes it
ERRORS = "errors.log"  # + .1: lookout's own failures (append-only, no lock: one write each)
# + .1: what others sent and lookout refused (a stranger's Telegram message): no failure of
# lookout's, so `lookout doctor` does not warn of it as of errors.log
IGNORED = "ignored.log"
NOTIFY_STATE = "notify-state.json"  # rules' episodes and cooldown marks
NOTIFY_REFS = "notify-refs.json"  # the ids of sent alerts, to update them in place
NOTIFY_LOCK = "notify.lock"  # notify-state.json, notify-refs.json
OUTBOX = "outbox"  # outbox/<ms>-<pid>.json: jobs; outbox/esc-<due_ms>-...json: escalations
SENDER_LOCK = "sender.lock"  # held by the one sender of a state directory while it runs
# A FIFO the running sender waits on between deadlines; a hook that leaves it a job (or a turn
# for its timers) writes a byte into it (ring), so the sender never polls the outbox.
SENDER_BELL = "sender.bell"
DELIVERIES = "deliveries.jsonl"  # + .1 ..: one line per channel per message
DELIVERIES_LOCK = "deliveries.lock"  # deliveries.jsonl: the senders' own, never the hooks'
CONFIG_CACHE = "config-cache.json"  # the validated config without secrets, for hooks
TRUST = "trust.json"  # `lookout trust`: project file path -> sha256 of its exact bytes
MAINTAINED = "maintained.json"  # when the sender last swept the state directory
CLOCK = "clock.json"  # how long the machine had slept, and when it last woke (lookout.silence)
AWAY = "away.json"  # the away switch (lookout.away)
# spool/<ts_ms>-<pid>-<hex>.json: a delivery whose hook could not take events.lock within its
# budget (LockTimeout), kept whole until the next holder of events.lock records it. The directory
# exists only while it holds files: one access() per hook tells none waits.
SPOOL = "spool"

# Retention: how long bookkeeping entries live before they are forgotten.
DAY_MS = 24 * 3600 * 1000
# The Telegram poller (lookout.surfaces.telegram): one per state directory, holding this flock;
# TELEGRAM_WANTED exists while [steer] is on and a Telegram channel is configured, so that a
# hook tells with one stat() whether to look for a running poller (and start one).
TELEGRAM_LOCK = "telegram.lock"
TELEGRAM_WANTED = "telegram.wanted"
# `lookout bridge`: one per state directory (an flock, holding its pid) and what it published.
BRIDGE_LOCK = "bridge.lock"
BRIDGE_CURSOR = "bridge-cursor.json"
# Permission requests waiting for a remote answer (lookout.remote): one JSON file each, changed
# only under their own lock so a slow decision never holds up the hooks' events.lock.
REQUESTS = "requests"
REQUESTS_LOCK = "requests.lock"
DEFAULT_ROTATE_BYTES = 20 * 1024 * 1024
# deliveries.jsonl is rotated at this size (the sender's records and the hooks' skips).
DELIVERIES_ROTATE_BYTES = 1024 * 1024
# Rotated files kept: 7 of 20 MiB and the live one hold a heavy week (200,000 deliveries of
# ~500 bytes are ~100 MB: bench/soak.py), so `report` counts the whole week (issue 35).
DEFAULT_KEEP = 7
ERRORS_MAX_BYTES = 1024 * 1024
ERROR_ENTRY_CHARS = 8192
# A hook ignores SIGTERM (see install.settings.guarded), so it must never wait on a lock forever:
# a holder that hangs costs a late record (the delivery waits in spool/ for the next holder of
# the lock, Locked.record; logged), not a stuck process. The wait is counted in the
# waiter's own tries (the pauses it asked for), not in wall time: on a busy machine the holders are
# slow, not stuck, and every pause runs long (16 hooks next to two CPU hogs lost records at 5 s of
# wall time). LOCK_WAIT_MAX_S still ends it before the client's hook timeout (hookspec.TIMEOUT_S,
# 10 s) would kill it without a word.
LOCK_WAIT_S = 5.0
LOCK_WAIT_MAX_S = 9.0

_NOFOLLOW = getattr(posix, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(posix, "O_CLOEXEC", 0)


class LockTimeout(TimeoutError):
    """A lock held by another process past the waiter's budget."""


class UnsafeStateError(PermissionError):
    """A state directory or file someone else controls: lookout will not write there."""


def ensure_dir(path: str) -> None:
    """Create `path` (and its missing parents) private to the user, or check that it is one: a
    directory owned by the user, reached through no symlink someone else owns (a shared /tmp
    must not let another user choose where a root hook appends prompts, or which directory it
    chmods). Tightens its mode. Raises UnsafeStateError."""
    try:
        st = posix.lstat(path)
    except FileNotFoundError:
        # Every missing component gets 0700 (as XDG asks for ~/.local/state), not just the last.
        parent = _dirname(path.rstrip("/"))
        if parent and parent != path and not paths.isdir(parent):
            ensure_dir(parent)
        try:
            posix.mkdir(path, 0o700)
        except FileExistsError:
            pass
        st = posix.lstat(path)
    st = _checked(path, st)
    if st.st_mode & 0o077:
        posix.chmod(path, 0o700)  # ours (checked above); also undoes mkdir's umask filtering


def unsafe_reason(path: str) -> str | None:
    """Why ensure_dir would refuse an existing `path` (None: it would not, or it is missing)."""
    try:
        _checked(path, posix.lstat(path))
    except UnsafeStateError as exc:
        return str(exc)
    except FileNotFoundError:
        pass
    return None


def _checked(path: str, st: stat_result) -> stat_result:
    uid = posix.geteuid()
    if _stat.S_ISLNK(st.st_mode):
        if st.st_uid not in (uid, 0):
            raise UnsafeStateError(f"{path} is a symlink owned by uid {st.st_uid}")
        st = posix.stat(path)
    if not _stat.S_ISDIR(st.st_mode):
        raise UnsafeStateError(f"{path} is not a directory")
    if st.st_uid != uid:
        raise UnsafeStateError(f"{path} is owned by uid {st.st_uid}, not by uid {uid}")
    return st


def _dirname(path: str) -> str:
    head = path.rpartition("/")[0]
    return head.rstrip("/") or ("/" if path.startswith("/") else "")


def rfc3339(ts_ms: int) -> str:
    seconds, millis = divmod(ts_ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def plain_line(
    ts_ms: int,
    seq: int,
    session_id: str,
    agent: str | None,
    event: str,
    snapshot: Mapping[str, object],
    *,
    source: str | None,
    summary: str,
    outcome: str,
) -> dict[str, object]:
    """A line of events.jsonl that no hook wrote (a Steered or Away record): the keys every line
    has, in their order, the session's from its `snapshot` ({}: none), the hook's empty. The
    caller adds its own last (`steer`, `away`)."""
    return {
        "ts": rfc3339(ts_ms),
        "seq": seq,
        "session_id": session_id,
        "agent": agent,
        "event": event,
        "status": snapshot.get("status"),
        "reason": snapshot.get("reason"),
        "detail": snapshot.get("detail"),
        "agent_id": None,
        "agent_type": None,
        "agent_status": None,
        "cwd": snapshot.get("cwd"),
        "project": snapshot.get("project"),
        "tool_name": None,
        "notification_type": None,
        "source": source,
        "error": None,
        "pid": None,
        "tmux_pane": None,
        "duplicate": False,
        "late": False,
        "duration_ms": None,
        "summary": summary,
        "notify": [],
        "outcome": outcome,
    }


def session_file(state_dir: str, session_id: str) -> str:
    return paths.join(state_dir, SESSIONS, safe_name(session_id) + ".json")


def safe_name(session_id: str) -> str:
    """`session_id` as one file name (and, in fleet/topics, one MQTT topic level)."""
    # The id comes from stdin: never let it name a path outside sessions/. Escaping (not
    # replacing) keeps distinct ids in distinct files.
    safe = "".join(
        c if c.isascii() and (c.isalnum() or c in "-_") else _escape(c) for c in session_id
    )
    if len(safe) > 200:  # cut, plus a digest of the whole id: two long ids never share a file
        import hashlib

        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return f"{safe[:167]}~{digest}"
    return safe or "%"


def _escape(c: str) -> str:
    code = ord(c)
    return f"%{code:02x}" if code < 0x100 else f"%u{code:06x}"


def _flock(fd: int, wait_s: float, name: str) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the common case: nobody holds it
        return
    except BlockingIOError:
        pass
    started = time.monotonic()
    waited = 0.0
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            took = time.monotonic() - started
            if waited >= wait_s or took >= max(wait_s, LOCK_WAIT_MAX_S):
                raise LockTimeout(f"{name} held by another process for {took:.1f} s") from None
            time.sleep(delay)
            waited += delay
            delay = min(delay * 2, 0.02)


def _open_private(path: str, flags: int) -> int:
    fd = posix.open(path, flags | _NOFOLLOW | _CLOEXEC, 0o600)
    owner = posix.fstat(fd).st_uid
    if owner != posix.geteuid():
        posix.close(fd)
        raise UnsafeStateError(f"{path} is owned by uid {owner}")
    return fd


def mark(path: str, present: bool) -> None:
    """Make the empty marker file `path` exist (present) or not; never raises."""
    try:
        if present:
            posix.close(_open_private(path, posix.O_WRONLY | posix.O_CREAT))
        else:
            posix.unlink(path)
    except OSError:
        pass


def try_lock(path: str) -> int | None:
    """An exclusive flock on `path`, taken without waiting: the descriptor that holds it (close
    it to release), or None when another process holds it."""
    fd = _open_private(path, posix.O_RDWR | posix.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        posix.close(fd)
        return None
    return fd


def holder(path: str) -> str | None:
    """What a lock file says while another process holds its flock (bridge.lock holds its
    holder's pid), None when none holds it or there is no file. Takes a shared flock without
    waiting, released at once: the probe never keeps the holder's successor out."""
    try:
        fd = posix.open(path, posix.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return posix.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return None
    finally:
        posix.close(fd)


def ring(state_dir: str) -> None:
    """Wake the running sender (its FIFO, SENDER_BELL): one byte, never waiting, never raising.
    With no sender waiting on it (no reader: ENXIO) or its pipe full (a wake already waits),
    nothing to do."""
    try:
        fd = posix.open(
            paths.join(state_dir, SENDER_BELL),
            posix.O_WRONLY | posix.O_NONBLOCK | _NOFOLLOW | _CLOEXEC,
        )
    except OSError:
        return
    try:
        if _stat.S_ISFIFO(posix.fstat(fd).st_mode):  # a FIFO only: nothing written to a file
            posix.write(fd, b"!")
    except OSError:
        pass
    finally:
        posix.close(fd)


def rotate_bytes() -> int:
    value = paths.environ().get("LOOKOUT_ROTATE_BYTES", "")
    if value.isascii() and value.isdigit() and int(value) > 0:
        return int(value)
    return DEFAULT_ROTATE_BYTES


class Locked:
    """The state directory under an exclusive lock: `with Locked(dir) as st: ...`. `lock` names
    the lock file: events.lock by default; other state (notifications) has locks of its own."""

    def __init__(self, state_dir: str, lock: str = LOCK) -> None:
        self.dir = state_dir
        self._lock_name = lock
        self._lock_fd = -1

    def __enter__(self) -> Locked:
        ensure_dir(self.dir)
        self._lock_fd = _open_private(
            paths.join(self.dir, self._lock_name), posix.O_RDWR | posix.O_CREAT
        )
        try:
            _flock(self._lock_fd, LOCK_WAIT_S, self._lock_name)
        except BaseException:
            posix.close(self._lock_fd)
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Closing the descriptor releases the flock.
        posix.close(self._lock_fd)
        self._lock_fd = -1

    def read_session(self, session_id: str) -> Session | None:
        return read_session(self.dir, session_id)

    def write_session(self, session: Session) -> None:
        ensure_dir(paths.join(self.dir, SESSIONS))
        write_json_atomic(session_file(self.dir, str(session["session_id"])), session)

    def append(self, name: str, record: Mapping[str, object], rotate_at: int | None = None) -> None:
        """Append one whole line. A line torn by a writer killed mid-write stays on its own line."""
        line = (_jsonfast.dumps(record) + "\n").encode("ascii")
        path = paths.join(self.dir, name)
        fd = _open_private(path, posix.O_RDWR | posix.O_APPEND | posix.O_CREAT)
        try:
            size = posix.fstat(fd).st_size
            if size and posix.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            written = 0
            while written < len(line):  # one write() in practice; loop for the pathological case
                written += posix.write(fd, line[written:])
            size += written
        finally:
            posix.close(fd)
        if rotate_at is not None and size >= rotate_at:
            self._rotate(path)

    def record(self, event: Event | None, fold: Fold) -> list[Recorded]:
        """Record `event` (None: only what waits) and every delivery waiting in spool/, in the
        order of their time stamps: read the snapshot, fold the event in, write the snapshot,
        append the line. `fold` is machine.apply."""
        directory = paths.join(self.dir, SPOOL)
        if not posix.access(directory, posix.F_OK):  # the common case: one syscall
            return [] if event is None else [self._record(event, fold)]
        done: list[Recorded] = []
        for path, queued in self._spooled(directory):
            if event is not None and event["ts_ms"] < queued["ts_ms"]:
                done.append(self._record(event, fold))
                event = None
            if not _recorded(self.read_session(queued["session_id"]), queued):
                try:
                    done.append(self._record(queued, fold))
                except OSError:
                    raise  # the disk's, not the file's: it stays for the next holder
                except Exception as exc:
                    # A file this version cannot fold in: said (whole) rather than kept forever,
                    # where it would stop every hook after it.
                    log_error(self.dir, f"{SPOOL}: cannot record {path} ({exc!r}): {queued}")
            # Unlinked once recorded: a drainer killed before this finds it recorded next time
            # (_recorded), so nothing is recorded twice.
            posix.unlink(path)
        if event is not None:
            done.append(self._record(event, fold))
        try:
            posix.rmdir(directory)  # empty now, unless a hook is spooling this moment
        except OSError:
            pass
        return done

    def _record(self, event: Event, fold: Fold) -> Recorded:
        before = self.read_session(event["session_id"])
        was = before.get("status") if before is not None else None  # fold changes `before`
        session, line, intents = fold(before, event)
        if newer(before, words.SNAPSHOT_VERSION):
            # A newer lookout's snapshot: the event is recorded, the snapshot left as it is
            # (and what it means, alerts included, is that lookout's to judge).
            intents = []
        else:
            # Snapshot first: a writer killed in between leaves a gap in seq, never a repeat.
            self.write_session(session)
        self.append(EVENTS, {"ts": rfc3339(event["ts_ms"]), **line}, rotate_bytes())
        return was, session, intents, event

    def _spooled(self, directory: str) -> list[tuple[str, Event]]:
        """The deliveries waiting in spool/, oldest first (the names sort by time stamp)."""
        found: list[tuple[str, Event]] = []
        for name in sorted(posix.listdir(directory)):
            path = paths.join(directory, name)
            if name.startswith("."):
                _forget_tmp(path)
                continue
            value = read_json(path) if name.endswith(".json") else None
            if newer(value, words.FORMATS["spool/*.json"]):
                continue  # a newer lookout's: left to it
            event = value.get("event") if isinstance(value, dict) else None
            if _is_delivery(event):
                found.append((path, event))  # type: ignore[arg-type]
            elif name.endswith(".json"):
                log_error(self.dir, f"{SPOOL}: {name} is not a delivery; removed: {value!r}")
                posix.unlink(path)
        return found

    def _rotate(self, path: str, keep: int = DEFAULT_KEEP) -> None:
        for n in range(keep - 1, 0, -1):
            older = f"{path}.{n}"
            if paths.exists(older):
                posix.replace(older, f"{path}.{n + 1}")
        posix.replace(path, f"{path}.1")


def spool(state_dir: str, event: Event) -> str:
    """Keep a delivery whose hook could not take events.lock in time: one file in spool/, written
    whole (tmp + rename), named to sort by the event's time stamp. The next holder of the lock
    records it (Locked.record). Returns the file's name."""
    directory = paths.join(state_dir, SPOOL)
    name = f"{event['ts_ms']:013d}-{posix.getpid()}-{posix.urandom(4).hex()}.json"
    for attempt in range(3):
        ensure_dir(directory)
        try:
            write_json_atomic(paths.join(directory, name), {"v": 1, "event": event})
            return name
        except FileNotFoundError:
            if attempt == 2:
                raise
            # a drainer removed the directory, empty, between the two: make it again
    return name  # not reached


def spooled(state_dir: str) -> int:
    """How many deliveries wait in spool/ (doctor)."""
    try:
        names = posix.listdir(paths.join(state_dir, SPOOL))
    except OSError:
        return 0
    return sum(1 for n in names if n.endswith(".json") and not n.startswith("."))


def _is_delivery(event: object) -> bool:
    return (
        isinstance(event, dict)
        and isinstance(event.get("session_id"), str)
        and bool(event["session_id"])
        and isinstance(event.get("name"), str)
        and isinstance(event.get("digest"), str)
        and type(event.get("ts_ms")) is int
    )


def _recorded(session: Session | None, event: Event) -> bool:
    """Whether the snapshot holds `event` already (its digest and time stamp among the recent
    deliveries): a drainer killed between recording it and removing its file."""
    recent = session.get("recent") if session is not None else None
    mark = [event["digest"], event["ts_ms"]]
    return isinstance(recent, list) and any(isinstance(r, list) and r[:2] == mark for r in recent)


def _forget_tmp(path: str) -> None:
    """A spool file's tmp a hook killed mid-write left behind (a minute old): never renamed,
    never recorded, so the delivery was not acknowledged as kept; gone, the directory can go."""
    try:
        if time.time() - posix.stat(path).st_mtime > 60:
            posix.unlink(path)
    except OSError:
        pass


def read_session(state_dir: str, session_id: str) -> Session | None:
    """The snapshot as written (its version is the state machine's to check), None if absent."""
    value = read_json(session_file(state_dir, session_id))
    return value if isinstance(value, dict) else None  # type: ignore[return-value]


def read_json(path: str) -> object | None:
    """The parsed file, or None when it is missing or unreadable (a snapshot is a cache)."""
    try:
        # Bytes, decoded at once: a text-mode file sets up a decoder per open (a status line
        # reads every snapshot).
        return _jsonfast.loads(read_bytes(path).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def read_bytes(path: str) -> bytes:
    """The whole file, through posix: a third of what io's open/read/close costs (a status line
    reads every snapshot)."""
    fd = posix.open(path, posix.O_RDONLY | _CLOEXEC)
    try:
        chunks = []
        while chunk := posix.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        posix.close(fd)


class NewerFormatError(OSError):
    """A file of a format newer than this lookout writes (a newer lookout's): left as it is."""

    hint = "a newer lookout wrote it: run install.py from a checkout of that version again"


def version_of(value: object) -> int:
    """A parsed file's (or record's) format: its "v" ("version" in bridge-cursor.json), and 1
    without one (format 1 of most files carries none; words.FORMATS)."""
    if isinstance(value, dict):
        for key in ("v", "version"):
            found = value.get(key)
            if type(found) is int:
                return found
    return 1


def newer(value: object, known: int) -> bool:
    """Whether a parsed file is of a later format than `known`: a newer lookout's, never misread,
    rewritten or removed by this one."""
    return version_of(value) > known


def known_format(path: str) -> int | None:
    """The format this lookout writes at `path` (words.FORMATS), None for a file not its own."""
    head, _, name = path.rpartition("/")
    parent = head.rpartition("/")[2]
    if parent in (SESSIONS, OUTBOX, REQUESTS, SPOOL) and name.endswith(".json"):
        name = f"{parent}/*.json"
    return words.FORMATS.get(name)


def file_version(path: str) -> int | None:
    """The format a file says it has in its first bytes (a later format starts with its version,
    `{"v":N`), None when it says none or cannot be read. No parse: cheap enough for every write."""
    try:
        fd = posix.open(path, posix.O_RDONLY | _CLOEXEC)
    except OSError:
        return None
    try:
        head = posix.read(fd, 64)
    except OSError:
        return None
    finally:
        posix.close(fd)
    head = head.translate(None, b" \t\r\n")
    for key in (b'{"v":', b'{"version":'):
        if head.startswith(key):
            digits = head[len(key) :]
            end = 0
            while end < len(digits) and 48 <= digits[end] <= 57:
                end += 1
            return int(digits[:end]) if end else None
    return None


def file_newer(path: str, known: int | None = None) -> bool:
    """Whether the file at `path` is of a later format than this lookout writes there."""
    known = known_format(path) if known is None else known
    found = file_version(path) if known is not None else None
    return found is not None and known is not None and found > known


def _refuse_newer(path: str) -> None:
    known = known_format(path)
    found = file_version(path) if known is not None else None
    if found is not None and known is not None and found > known:
        raise NewerFormatError(
            f"{path}: written by a newer lookout (format {found}; this one writes {known}):"
            " left as it is"
        )


def write_json_atomic(path: str, value: object) -> None:
    """Replace `path` atomically with `value` as JSON, 0600. Readers see the old or the new file.
    A file of a later format than this lookout writes there is never replaced
    (NewerFormatError)."""
    _refuse_newer(path)
    head, slash, name = path.rpartition("/")
    tmp = f"{head}{slash}.{name}.{posix.getpid()}.tmp"
    data = _jsonfast.dumps(value).encode("ascii")
    fd = _open_private(tmp, posix.O_WRONLY | posix.O_CREAT | posix.O_TRUNC)
    try:
        try:
            # A full disk gives a short write, then an error: the whole file or none of it, so
            # a truncated snapshot never replaces a good one (and seq never restarts).
            written = 0
            while written < len(data):
                written += posix.write(fd, data[written:])
        finally:
            posix.close(fd)
        posix.replace(tmp, path)
    except BaseException:
        try:
            posix.unlink(tmp)
        except OSError:
            pass
        raise


def remove_session(state_dir: str, session_id: str) -> None:
    path = session_file(state_dir, session_id)
    _refuse_newer(path)  # a newer lookout's snapshot stays
    try:
        posix.unlink(path)
    except FileNotFoundError:
        pass


def log_error(state_dir: str, text: str, log: str = ERRORS) -> None:
    """Our own failure, for `lookout doctor` and bug reports (`log`: IGNORED for what others
    sent and lookout refused). Never raises."""
    try:
        ensure_dir(state_dir)
        path = paths.join(state_dir, log)
        try:
            if posix.stat(path).st_size > ERRORS_MAX_BYTES:
                posix.replace(path, path + ".1")
        except OSError:
            pass
        stamp = rfc3339(words.now_ms())
        text = text.rstrip()
        if len(text) > ERROR_ENTRY_CHARS:  # a RecursionError traceback is ~190 KB: keep both ends
            half = ERROR_ENTRY_CHARS // 2
            text = f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"
        entry = f"{stamp} pid={posix.getpid()} {text}\n".encode("utf-8", "replace")
        fd = _open_private(path, posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT)
        try:
            posix.write(fd, entry)
        finally:
            posix.close(fd)
    except Exception:  # noqa: S110 - the error log is the last resort; nothing is left to tell
        pass


# -- following a log ------------------------------------------------------------------------------

TAIL_BLOCK = 1 << 16


class Tail:
    """A follower of one of the store's logs (events.jsonl, deliveries.jsonl): the whole lines
    appended after its mark, oldest first, across rotation. Reads only.

    `ino` and `offset` are the mark: the file it reads (its inode; 0 when there was none) and the
    end of the last whole line read in it (a durable cursor keeps both). The line a writer is still
    appending (or one killed mid-append left) is read once its newline comes. On rotation, the
    file it read is found among the rotated ones (.1 .. .DEFAULT_KEEP) and read to its end, then
    every younger one. With `drain` (reconcile.drain_quietly, for events.jsonl): a poll that finds
    deliveries waiting in spool/ has them recorded first, so it returns them without waiting for
    the next hook."""

    def __init__(
        self,
        path: str,
        ino: int = 0,
        offset: int = 0,
        drain: Callable[[], None] | None = None,
        keep: int = DEFAULT_KEEP,
    ) -> None:
        self.path = path
        self.ino = ino
        self.offset = offset
        self.keep = keep
        self._drain = drain
        self._spool = paths.join(_dirname(path), SPOOL)
        # The start of the last line before the mark: an inode freed by rotation and given to a
        # new file is not taken for the marked file (unknown for a mark from a cursor: the inode
        # alone).
        self._tip = b""

    def to_end(self) -> None:
        """Mark the end of the live file's last whole line: what comes after it is new."""
        try:
            fd = posix.open(self.path, posix.O_RDONLY | _CLOEXEC)
        except FileNotFoundError:
            self.ino, self.offset = 0, 0
            return
        try:
            st = posix.fstat(fd)
            self.ino, self.offset = st.st_ino, _line_start(fd, st.st_size)
            self._tip = _tip(fd, self.offset)
        finally:
            posix.close(fd)

    def poll(self) -> list[bytes] | None:
        """The whole lines appended since the mark, oldest first (empty ones left out), and the
        mark moved past them. None when lines were lost: the file was truncated, or rotated
        further than the kept files reach; the mark is then at the end (to_end)."""
        if self._drain is not None and posix.access(self._spool, posix.F_OK):
            self._drain()
        try:
            st = posix.stat(self.path)
            if st.st_ino == self.ino and st.st_size == self.offset:
                return []  # the common case: nothing new, one stat
        except FileNotFoundError:
            pass
        for _ in range(3):
            files = self._files()
            if files is None:
                self.to_end()
                return None
            if len({ino for _, ino in files}) == len(files):
                break
            for fd, _ in files:  # a rotation between two opens: one file seen twice
                posix.close(fd)
        else:
            return []
        lines: list[bytes] = []
        try:
            for n, (fd, ino) in enumerate(reversed(files)):
                start = self.offset if ino == self.ino else 0
                live = n == len(files) - 1
                found, end = _read_lines(fd, start, whole=live)
                if found is None:  # truncated below the mark
                    self.to_end()
                    return None
                lines += found
                if end != start or ino != self.ino:
                    self._tip = _tip(fd, end)
                self.ino, self.offset = ino, end
        finally:
            for fd, _ in files:
                posix.close(fd)
        return lines

    def _files(self) -> list[tuple[int, int]] | None:
        """(descriptor, inode) of the live file, then each rotated one back to the marked one;
        [] when there is no live file yet; None when the marked file is gone from the kept
        ones."""
        files: list[tuple[int, int]] = []
        for n in range(self.keep + 1):
            name = self.path if n == 0 else f"{self.path}.{n}"
            try:
                fd = posix.open(name, posix.O_RDONLY | _CLOEXEC)
            except FileNotFoundError:
                if n == 0:
                    return []
                break
            ino = posix.fstat(fd).st_ino
            files.append((fd, ino))
            if self.ino == 0 or (ino == self.ino and self._marked(fd)):
                return files
        for fd, _ in files:
            posix.close(fd)
        return None

    def _marked(self, fd: int) -> bool:
        """Whether the file's line before the mark starts as the one read last."""
        return not self._tip or _tip(fd, self.offset) == self._tip

    def before(self, older: bool = True) -> Iterator[bytes]:
        """The whole lines before the mark, newest first (empty ones left out): the marked
        file's, then (`older`) each older rotated file's. `lookout tail -n`'s last lines and the
        dashboard's pages of a session read back this way."""
        names = [self.path] + [f"{self.path}.{n}" for n in range(1, self.keep + 1)]
        started = False
        for name in names:
            try:
                fd = posix.open(name, posix.O_RDONLY | _CLOEXEC)
            except FileNotFoundError:
                continue
            try:
                st = posix.fstat(fd)
                marked = not started and st.st_ino == self.ino
                if not started and not marked and self.ino:
                    continue  # younger than the mark (none: the live file was rotated away)
                end = self.offset if marked else _line_start(fd, st.st_size)
                started = True
                yield from _lines_backwards(fd, end)
                if not older:
                    return
            finally:
                posix.close(fd)


def _tip(fd: int, end: int) -> bytes:
    """The first bytes of the line that ends at `end` (a record's time stamp, seq and session: no
    other line starts alike), b"" at the file's start."""
    if end <= 0:
        return b""
    pos = end - 1  # the newline that ends it
    while pos > 0:
        step = min(4096, pos)
        cut = posix.pread(fd, step, pos - step).rfind(b"\n")
        if cut >= 0:
            pos = pos - step + cut + 1
            break
        pos -= step
    return posix.pread(fd, min(128, end - pos), pos)


def _line_start(fd: int, size: int) -> int:
    """The end of the last whole line at or before `size` (the start of a line not ended)."""
    pos = size
    while pos > 0:
        step = min(TAIL_BLOCK, pos)
        block = posix.pread(fd, step, pos - step)
        cut = block.rfind(b"\n")
        if cut >= 0:
            return pos - step + cut + 1
        pos -= step
    return 0


def _read_lines(fd: int, start: int, whole: bool) -> tuple[list[bytes] | None, int]:
    """The lines from `start` to the end of the file and where they end: with `whole`, only the
    ones ended by a newline (the live file: a writer may be mid-append). None: the file is
    shorter than `start` (truncated)."""
    size = posix.fstat(fd).st_size
    if size < start:
        return None, start
    chunks = []
    pos = start
    while pos < size:
        chunk = posix.pread(fd, min(size - pos, 1 << 20), pos)
        if not chunk:
            break
        chunks.append(chunk)
        pos += len(chunk)
    data = b"".join(chunks)
    end = data.rfind(b"\n") + 1 if whole else len(data)
    return [line for line in data[:end].split(b"\n") if line], start + end


def _lines_backwards(fd: int, end: int) -> Iterator[bytes]:
    """The non-empty lines of the file before `end` (a line boundary), newest first. A line cut
    by a block boundary is kept as pieces and joined once its start is found, so one huge line
    costs linear time."""
    pos = end
    pieces: list[bytes] = []  # the end of a line whose start is in an earlier block
    while pos > 0:
        step = min(TAIL_BLOCK, pos)
        pos -= step
        lines = posix.pread(fd, step, pos).split(b"\n")
        if len(lines) == 1:
            pieces.append(lines[0])
            continue
        lines[-1] += b"".join(reversed(pieces))
        pieces = [lines.pop(0)]
        for line in reversed(lines):
            if line:
                yield line
    first = b"".join(reversed(pieces))
    if first:
        yield first
