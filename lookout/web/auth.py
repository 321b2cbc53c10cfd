"""The dashboard's credentials. Nothing here is ever a cookie: a browser sends cookies to every
port of a host (a repository's dev server on 127.0.0.1:5173 would receive them), so the page's
authority lives in origin-scoped storage and is proved in an `Authorization` header.

- The token: 32 random bytes in `<state dir>/serve.token` (0600), for scripts (`Authorization:
  Bearer TOKEN`, `lookout serve --token`). It is never put in a URL.
- Login codes: `lookout serve --url` (and the server's start) print a link with a fresh code that
  works once, within CODE_S, and only on a server that was already running when it was made;
  `<state dir>/serve.codes` holds only their sha256 and expiry.
- Page sessions (issue 31 item 3): for a code the page gets a session id and a key, once. The
  key is derived from the token and a secret this server process made at its start and never
  wrote anywhere, so it dies with the process (a restart signs every page out) and `lookout
  serve --rotate` revokes it too. The key never travels again: the page first has the server
  prove it knows the key (`/api/hello`), then signs each request (method, path, body, a
  timestamp and a fresh nonce) with it. Whoever holds the port after the server stops records
  nothing it can use: not on the restarted server (another process secret), and not twice on
  this one (each nonce is taken once, within SKEW_MS)."""

from __future__ import annotations

import base64
import collections
import hashlib
import hmac
import os
import secrets
import stat
import threading
import time

from lookout import store
from lookout.errors import LookoutError

SHA = hashlib.sha256

TOKEN_FILE = "serve.token"  # noqa: S105 - a file name, not a secret
CODES_FILE = "serve.codes"
CODES_LOCK = "serve.lock"
CODE_S = 300  # a printed sign-in link works once, within 5 minutes
SESSION_S = 12 * 3600  # a signed-in page signs in again after 12 hours (or at a restart)
MAX_CODES = 64
SESSION_PREFIX = "ls2."
SCHEME = "Lookout"  # `Authorization: Lookout SESSION TIMESTAMP NONCE MAC`, the page's header
SKEW_MS = 120_000  # a signed request's timestamp is taken within this of the server's clock
MAX_SEEN = 200_000  # nonces remembered at once (2 * SKEW_MS of them; more is refused)
# Why a page is signed out, as /api/hello and a refused request say it (the page words it).
RESTARTED = "restarted"
EXPIRED = "expired"
REVOKED = "revoked"
SIGNED_OUT = {
    RESTARTED: "the dashboard restarted: sign in again",
    EXPIRED: "the sign-in has expired (it lasts 12 hours): sign in again",
    REVOKED: "the token or sign-in is not (any more) valid",
}
SIGN_IN_HINT = (
    "run `lookout serve --url` on the machine that serves it and open the link"
    " (it works once, within 5 minutes)"
)


def token_path(state_dir: str) -> str:
    return os.path.join(state_dir, TOKEN_FILE)


def load_or_create(state_dir: str) -> str:
    """The token, made on first use. Refuses a file that others could read or replace."""
    path = token_path(state_dir)
    store.ensure_dir(state_dir)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read(path)
    token = secrets.token_urlsafe(32)
    try:
        os.write(fd, (token + "\n").encode("ascii"))
    finally:
        os.close(fd)
    return token


def _read(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise LookoutError(
            f"cannot read the dashboard token {path}: {exc.strerror}",
            hint="remove the file; `lookout serve` makes a new one",
        ) from None
    try:
        st = os.fstat(fd)
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise LookoutError(
            f"the dashboard token {path} is not a private file of yours (mode "
            f"{stat.S_IMODE(st.st_mode):o}, owner uid {st.st_uid})",
            hint=f"remove it (`rm {path}`); `lookout serve` makes a new one",
        )
    token = data.decode("ascii", "replace").strip()
    if len(token) < 32:
        raise LookoutError(
            f"the dashboard token in {path} is too short",
            hint=f"remove it (`rm {path}`); `lookout serve` makes a new one",
        )
    return token


def matches(token: str, offered: str | None) -> bool:
    """Constant-time comparison: the time taken says nothing about how much of it was right."""
    if not offered:
        return False
    return hmac.compare_digest(token.encode("utf-8"), offered.encode("utf-8", "replace"))


def rotate(state_dir: str) -> str:
    """A new token (atomically, 0600) and no login codes: every session secret, printed link and
    script token made before stops working, in a running server too (it rereads the file)."""
    store.ensure_dir(state_dir)
    token = secrets.token_urlsafe(32)
    path = token_path(state_dir)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        try:
            os.write(fd, (token + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        with store.Locked(state_dir, CODES_LOCK):
            os.replace(tmp, path)
            store.write_json_atomic(os.path.join(state_dir, CODES_FILE), [])
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return token


class Keys:
    """What a running server checks credentials against: the token, reread when `serve.token`
    changes on disk (`lookout serve --rotate` from another shell), kept when the file is
    missing; and this process's own secret, made at its start and kept only in memory, from
    which (with the token) every page session's key is derived."""

    def __init__(self, state_dir: str, token: str, now_ms: int | None = None) -> None:
        self.path = token_path(state_dir)
        self._token = token
        self._seen = self._stamp()
        self._process_secret = secrets.token_bytes(32)
        # Public: it names this server start in session ids, so a page can be told "restarted".
        self.start_id = secrets.token_urlsafe(9)
        self.started_ms = int(time.time() * 1000) if now_ms is None else now_ms
        self.nonces = Nonces()

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    @property
    def token(self) -> str:
        stamp = self._stamp()
        if stamp is not None and stamp != self._seen:
            try:
                self._token = _read(self.path)
            except LookoutError:
                self._token = secrets.token_urlsafe(32)  # unreadable now: nothing matches
            self._seen = stamp
        return self._token

    # -- page sessions ------------------------------------------------------------------------

    def _server_key(self) -> bytes:
        return hmac.new(
            self.token.encode(), b"lookout server\0" + self._process_secret, SHA
        ).digest()

    def session_key(self, session: str) -> bytes:
        """A session's key: of this token and this process only."""
        return _hmac(self._server_key(), "lookout session key", session)

    def new_session(self, now_ms: int) -> tuple[str, bytes, int]:
        """A session id, its key (for the page, once) and when it expires (ms). The id is signed
        too, so a server tells a page signed out by `--rotate` from one that never was."""
        expires_ms = now_ms + SESSION_S * 1000
        body = f"{SESSION_PREFIX}{self.start_id}.{expires_ms}.{secrets.token_urlsafe(16)}"
        session = f"{body}.{self._tag(body)}"
        return session, self.session_key(session), expires_ms

    def _tag(self, body: str) -> str:
        return b64(_hmac(self._server_key(), "lookout session id", body)[:16])

    def session_refused(self, session: object, now_ms: int) -> str | None:
        """None for a session id of this server start and token that has not expired, else
        why not (RESTARTED, EXPIRED, REVOKED)."""
        if not isinstance(session, str) or not session.isascii() or len(session) > 160:
            return REVOKED
        body, _, tag = session.rpartition(".")
        fields = body.split(".")
        if len(fields) != 4 or f"{fields[0]}." != SESSION_PREFIX or not fields[2].isdigit():
            return REVOKED
        if not hmac.compare_digest(fields[1], self.start_id):
            return RESTARTED
        if not hmac.compare_digest(tag, self._tag(body)):
            return REVOKED
        if not now_ms < int(fields[2]) <= now_ms + SESSION_S * 1000:
            return EXPIRED
        return None

    def proof(self, session: str, challenge: str) -> str:
        """The server's answer to a page's challenge: shows it knows the session's key (a
        squatter on the port cannot), without the key or anything replayable crossing."""
        return b64(_hmac(self.session_key(session), "lookout proof", challenge))

    def verify(self, header: str, method: str, target: str, body: bytes, now_ms: int) -> str | None:
        """None when `Authorization: Lookout ...` signs this very request, fresh and for the
        first time; else why not (REVOKED, RESTARTED, EXPIRED or a sentence)."""
        parts = header.split(" ")
        if len(parts) != 5 or parts[0] != SCHEME:
            return REVOKED
        _, session, ts, nonce, mac = parts
        refused = self.session_refused(session, now_ms)
        if refused is not None:
            return refused
        if not (ts.isascii() and ts.isdigit() and len(ts) <= 16) or abs(int(ts) - now_ms) > SKEW_MS:
            return "the request's time is too far from the server's (check the clock)"
        if not 16 <= len(nonce) <= 64 or not nonce.isascii():
            return REVOKED
        want = request_mac(self.session_key(session), method, target, ts, nonce, body)
        if not hmac.compare_digest(mac.encode("ascii", "replace"), want.encode("ascii")):
            return REVOKED
        if not self.nonces.take(nonce, now_ms):
            return "this request was sent before (a replay)"
        return None


class Nonces:
    """The request nonces taken in the last 2 * SKEW_MS, each once (in memory: a restart has a
    new key, so older ones mean nothing to it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._until: dict[str, int] = {}
        self._order: collections.deque[tuple[int, str]] = collections.deque()

    def take(self, nonce: str, now_ms: int) -> bool:
        with self._lock:
            while self._order and self._order[0][0] <= now_ms:
                self._until.pop(self._order.popleft()[1], None)
            if nonce in self._until or len(self._until) >= MAX_SEEN:
                return False
            until = now_ms + 2 * SKEW_MS
            self._until[nonce] = until
            self._order.append((until, nonce))
            return True


def request_mac(key: bytes, method: str, target: str, ts: str, nonce: str, body: bytes) -> str:
    """What a page sends as a request's MAC (lookout/web/static/auth.js computes the same)."""
    digest = hashlib.sha256(body).hexdigest()
    return b64(_hmac(key, "lookout request", method, target, ts, nonce, digest))


def _hmac(key: bytes, *fields: str) -> bytes:
    return hmac.new(key, "\0".join(fields).encode("utf-8", "surrogatepass"), SHA).digest()


def b64(raw: bytes) -> str:
    """URL-safe base64 without padding (what the page decodes and sends)."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def _load_codes(state_dir: str, now_ms: int) -> list[dict[str, object]]:
    value = store.read_json(os.path.join(state_dir, CODES_FILE))
    if not isinstance(value, list):
        return []
    return [
        c
        for c in value
        if isinstance(c, dict)
        and isinstance(c.get("sha256"), str)
        and isinstance(c.get("expires_ms"), int)
        and now_ms < c["expires_ms"]
    ]


def new_code(state_dir: str, now_ms: int) -> str:
    """A fresh one-time login code (the file keeps its hash only)."""
    code = secrets.token_urlsafe(24)
    with store.Locked(state_dir, CODES_LOCK):
        codes = _load_codes(state_dir, now_ms)[-(MAX_CODES - 1) :]
        codes.append({"sha256": _digest(code), "expires_ms": now_ms + CODE_S * 1000})
        store.write_json_atomic(os.path.join(state_dir, CODES_FILE), codes)
    return code


def redeem(state_dir: str, code: object, now_ms: int, not_before_ms: int = 0) -> bool:
    """True once for a code that was issued (at `not_before_ms` or later: a server takes only
    codes made while it ran, so a link that reached whoever held the port before it signs no
    one in) and has not expired; it is gone afterwards."""
    if not isinstance(code, str) or not 16 <= len(code) <= 128:
        return False
    wanted = _digest(code)
    with store.Locked(state_dir, CODES_LOCK):
        codes = _load_codes(state_dir, now_ms)
        left = [c for c in codes if not hmac.compare_digest(str(c["sha256"]), wanted)]
        if len(left) == len(codes):
            return False
        store.write_json_atomic(os.path.join(state_dir, CODES_FILE), left)
    used = next(c for c in codes if hmac.compare_digest(str(c["sha256"]), wanted))
    issued_ms = int(str(used["expires_ms"])) - CODE_S * 1000
    return issued_ms >= not_before_ms
