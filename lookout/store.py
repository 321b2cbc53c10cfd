"""The state directory: events.jsonl (append-only, whole lines under an flock), one snapshot per
session, rotation, the error log. The only module that writes lookout's state files.

Hot-path code: stdlib only and no `json`/`typing` import (see _jsonfast). The lock is a plain
fcntl.flock on `events.lock`, the same lock filelock.FileLock takes on Unix, so the CLI's
filelock-based readers and writers interoperate with the hooks."""

from __future__ import annotations

import fcntl
import os
import time

from lookout import _jsonfast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType
    from typing import Any

EVENTS = "events.jsonl"
LOCK = "events.lock"
ERRORS = "errors.log"
SESSIONS = "sessions"
# Permission requests waiting for a remote answer (lookout.remote): one JSON file each, changed
# only under their own lock so a slow decision never holds up the hooks' events.lock.
REQUESTS = "requests"
REQUESTS_LOCK = "requests.lock"
DEFAULT_ROTATE_BYTES = 20 * 1024 * 1024
DEFAULT_KEEP = 3
ERRORS_MAX_BYTES = 1024 * 1024
# A hook ignores SIGTERM (see settings.TERM_GUARD), so it must never wait on a lock forever:
# a holder that hangs costs one record (logged), not a stuck process.
LOCK_WAIT_S = 5.0

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def ensure_dir(path: str) -> None:
    """Create `path` (and its parents) private to the user; tighten it if it already exists."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        # Every missing component gets 0700 (as XDG asks for ~/.local/state), not just the last.
        parent = os.path.dirname(path.rstrip("/"))
        if parent and parent != path and not os.path.isdir(parent):
            ensure_dir(parent)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask
        return
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)


def rfc3339(ts_ms: int) -> str:
    seconds, millis = divmod(ts_ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def session_file(state_dir: str, session_id: str) -> str:
    return os.path.join(state_dir, SESSIONS, _safe_name(session_id) + ".json")


def _safe_name(session_id: str) -> str:
    # The id comes from stdin: never let it name a path outside sessions/. Escaping (not
    # replacing) keeps distinct ids in distinct files.
    safe = "".join(
        c if c.isascii() and (c.isalnum() or c in "-_") else _escape(c) for c in session_id
    )
    return safe[:200] or "%"


def _escape(c: str) -> str:
    code = ord(c)
    return f"%{code:02x}" if code < 0x100 else f"%u{code:06x}"


def _flock(fd: int, wait_s: float, name: str) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the common case: nobody holds it
        return
    except BlockingIOError:
        pass
    deadline = time.monotonic() + wait_s
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{name} held by another process for {wait_s:g} s") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.02)


def _open_private(path: str, flags: int) -> int:
    return os.open(path, flags | _NOFOLLOW | _CLOEXEC, 0o600)


def rotate_bytes() -> int:
    value = os.environ.get("LOOKOUT_ROTATE_BYTES", "")
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
            os.path.join(self.dir, self._lock_name), os.O_RDWR | os.O_CREAT
        )
        try:
            _flock(self._lock_fd, LOCK_WAIT_S, self._lock_name)
        except BaseException:
            os.close(self._lock_fd)
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Closing the descriptor releases the flock.
        os.close(self._lock_fd)
        self._lock_fd = -1

    def read_session(self, session_id: str) -> dict[str, Any] | None:
        return read_session(self.dir, session_id)

    def write_session(self, session: dict[str, Any]) -> None:
        ensure_dir(os.path.join(self.dir, SESSIONS))
        write_json_atomic(session_file(self.dir, str(session["session_id"])), session)

    def append(self, name: str, record: dict[str, Any], rotate_at: int | None = None) -> None:
        """Append one whole line. A line torn by a writer killed mid-write stays on its own line."""
        line = (_jsonfast.dumps(record) + "\n").encode("ascii")
        path = os.path.join(self.dir, name)
        fd = _open_private(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            written = 0
            while written < len(line):  # one write() in practice; loop for the pathological case
                written += os.write(fd, line[written:])
            size += written
        finally:
            os.close(fd)
        if rotate_at is not None and size >= rotate_at:
            self._rotate(path)

    def _rotate(self, path: str, keep: int = DEFAULT_KEEP) -> None:
        for n in range(keep - 1, 0, -1):
            older = f"{path}.{n}"
            if os.path.exists(older):
                os.replace(older, f"{path}.{n + 1}")
        os.replace(path, f"{path}.1")


def read_session(state_dir: str, session_id: str) -> dict[str, Any] | None:
    value = read_json(session_file(state_dir, session_id))
    return value if isinstance(value, dict) else None


def read_json(path: str) -> object | None:
    """The parsed file, or None when it is missing or unreadable (a snapshot is a cache)."""
    try:
        with open(path, encoding="utf-8") as f:
            return _jsonfast.loads(f.read())
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def write_json_atomic(path: str, value: object) -> None:
    """Replace `path` atomically with `value` as JSON, 0600. Readers see the old or the new file."""
    directory = os.path.dirname(path)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    fd = _open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        try:
            os.write(fd, _jsonfast.dumps(value).encode("ascii"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def append_jsonl(state_dir: str, name: str, record: dict[str, Any]) -> None:
    """Append one line to `<state_dir>/<name>` under the state lock (for logs other than events)."""
    with Locked(state_dir) as st:
        st.append(name, record)


def remove_session(state_dir: str, session_id: str) -> None:
    try:
        os.unlink(session_file(state_dir, session_id))
    except FileNotFoundError:
        pass


def log_error(state_dir: str, text: str) -> None:
    """Our own failure, for `lookout doctor` and bug reports. Never raises."""
    try:
        ensure_dir(state_dir)
        path = os.path.join(state_dir, ERRORS)
        try:
            if os.path.getsize(path) > ERRORS_MAX_BYTES:
                os.replace(path, path + ".1")
        except OSError:
            pass
        stamp = rfc3339(int(time.time() * 1000))
        entry = f"{stamp} pid={os.getpid()} {text.rstrip()}\n".encode("utf-8", "replace")
        fd = _open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, entry)
        finally:
            os.close(fd)
    except Exception:  # noqa: S110 - the error log is the last resort; nothing is left to tell
        pass
