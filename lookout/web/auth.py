"""The dashboard's credentials. Nothing here is ever a cookie: a browser sends cookies to every
port of a host (a repository's dev server on 127.0.0.1:5173 would receive them), so the page's
authority lives in origin-scoped storage and travels as an `Authorization` header.

- The token: 32 random bytes in `<state dir>/serve.token` (0600), for scripts (`Authorization:
  Bearer TOKEN`, `lookout serve --token`). It is never put in a URL.
- Login codes: `lookout serve --url` (and the server's start) print a link with a fresh code that
  works once, within CODE_S; `<state dir>/serve.codes` holds only their sha256 and expiry.
- Session secrets: what the page gets for a code, valid SESSION_S, signed with the token (HMAC),
  so `lookout serve --rotate` (a new token, no codes) revokes every session and link at once."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import stat

from lookout import store
from lookout.errors import LookoutError

TOKEN_FILE = "serve.token"  # noqa: S105 - a file name, not a secret
CODES_FILE = "serve.codes"
CODES_LOCK = "serve.lock"
CODE_S = 300  # a printed sign-in link works once, within 5 minutes
SESSION_S = 12 * 3600  # a signed-in page signs in again after 12 hours
MAX_CODES = 64
_SESSION_PREFIX = "ls1."


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
    """The token a running server checks against: reread when `serve.token` changes on disk
    (`lookout serve --rotate` from another shell), kept when the file is missing."""

    def __init__(self, state_dir: str, token: str) -> None:
        self.path = token_path(state_dir)
        self._token = token
        self._seen = self._stamp()

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


def redeem(state_dir: str, code: object, now_ms: int) -> bool:
    """True once for a code that was issued and has not expired; it is gone afterwards."""
    if not isinstance(code, str) or not 16 <= len(code) <= 128:
        return False
    wanted = _digest(code)
    with store.Locked(state_dir, CODES_LOCK):
        codes = _load_codes(state_dir, now_ms)
        left = [c for c in codes if not hmac.compare_digest(str(c["sha256"]), wanted)]
        if len(left) == len(codes):
            return False
        store.write_json_atomic(os.path.join(state_dir, CODES_FILE), left)
    return True


def _mac(token: str, body: str) -> str:
    raw = hmac.new(token.encode("utf-8"), b"lookout session\0" + body.encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(raw.digest()).decode("ascii").rstrip("=")


def new_session(token: str, now_ms: int) -> tuple[str, int]:
    """A session secret for the page and when it expires (ms)."""
    expires_ms = now_ms + SESSION_S * 1000
    body = f"{expires_ms}.{secrets.token_urlsafe(16)}"
    return f"{_SESSION_PREFIX}{body}.{_mac(token, body)}", expires_ms


def session_valid(token: str, offered: str, now_ms: int) -> bool:
    """Signed with this token (so not from before a rotation) and not expired."""
    if not offered.startswith(_SESSION_PREFIX) or not offered.isascii():
        return False
    body, _, mac = offered[len(_SESSION_PREFIX) :].rpartition(".")
    expires, _, _ = body.partition(".")
    if not expires.isdigit() or not hmac.compare_digest(mac, _mac(token, body)):
        return False
    return now_ms < int(expires) <= now_ms + SESSION_S * 1000
