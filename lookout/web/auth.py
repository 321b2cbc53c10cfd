"""The dashboard's token: 32 random bytes in `<state dir>/serve.token` (0600), created once.

It is the only credential; the login URL sets it as an HttpOnly SameSite=Strict cookie."""

from __future__ import annotations

import hmac
import os
import secrets
import stat

from lookout import store
from lookout.errors import LookoutError

TOKEN_FILE = "serve.token"  # noqa: S105 - a file name, not a secret
COOKIE = "lookout_token"


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
