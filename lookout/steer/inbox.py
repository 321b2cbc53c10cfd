"""Claude Code's per-session inbox socket (`messagingSocketPath` in its registry file): a message
written there reaches the model as a message from another Claude session, not as the user's (the
client frames it so). Checked with 2.1.332 (docs/steer.md has the wire format):

- the registry file must be believable (client_sessions: live pid, same procStart and machine),
  with `peerProtocol` 1;
- the socket must be a socket (no symlink) owned by this user, in a directory no one else can
  write, and the process listening on it (SO_PEERCRED) must be that pid, running as this user;
- frames are newline-delimited JSON: an optional `{"type":"auth","token":...}` line with the
  session's `peerToken` (from `<pid>.<sha256(socket path)>.key` beside the registry file, when
  it is there and ours), then `{"type":"user","session_id":...,"message":{...}}`. The client
  drops a message whose session_id is not its own, so a socket that changed hands drops it.

The client answers nothing on the socket; delivery shows as its prompt hook (UserPromptSubmit).
There is no interrupt frame (the control frames are for peers' receipts): interrupt needs the
pane."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct

from lookout import boundary, client_sessions
from lookout.steer.shapes import SteerError

PROTOCOL = 1
TIMEOUT_S = 5.0
SENDER = "lookout"
MAX_KEY_BYTES = 4096

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.client_sessions import Entry


def entry(session_id: str) -> Entry | None:
    """The session's believable registry entry (a live Claude Code process), or None."""
    return client_sessions.read().get(session_id)


def usable(found: Entry | None) -> str | None:
    """Why the entry's inbox cannot be used (None: it can, as far as the files tell)."""
    if found is None:
        return "Claude Code's registry has no live entry for it"
    path = found.get("socket")
    if not path:
        return "its registry entry names no inbox socket (messagingSocketPath)"
    if found.get("peer_protocol") != PROTOCOL:
        return f"its inbox speaks protocol {found.get('peer_protocol')!r}, not {PROTOCOL}"
    return boundary.unsafe_socket(path, "its inbox socket")


def _token(found: Entry) -> str | None:
    """The session's peerToken from its key file, when the file is there, ours and private."""
    path = found.get("socket") or ""
    digest = hashlib.sha256(path.encode("utf-8")).hexdigest()
    key = os.path.join(os.path.dirname(found["path"]), f"{found['pid']}.{digest}.key")
    raw = client_sessions.read_file(key, MAX_KEY_BYTES, private=True)
    if raw is None:
        return None
    try:
        token = json.loads(raw).get("peerToken")
    except (ValueError, AttributeError, UnicodeDecodeError):
        return None
    return token if isinstance(token, str) and token.isalnum() and len(token) <= 256 else None


def frames(session_id: str, text: str, token: str | None) -> bytes:
    """The bytes written: the auth line when there is a token, then the message."""
    message = {
        "type": "user",
        "session_id": session_id,
        "from": SENDER,
        "message": {"role": "user", "content": text},
    }
    lines = [{"type": "auth", "token": token}] if token else []
    return b"".join(
        json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n" for line in [*lines, message]
    )


def send(found: Entry, session_id: str, text: str) -> str:
    """Write the message to the session's inbox; return the socket's path. SteerError(failed)
    when it cannot be delivered there."""
    why = usable(found)
    if why is not None:
        raise SteerError("no_way", f"cannot use the inbox socket: {why}")
    path = str(found["socket"])
    data = frames(session_id, text, _token(found))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(TIMEOUT_S)
    try:
        sock.connect(path)
        pid, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, _PEERCRED, 12))
        if pid != found["pid"] or uid != os.geteuid():
            raise SteerError(
                "failed",
                f"the process listening on {path} is pid {pid} (uid {uid}), not the session's"
                f" Claude Code (pid {found['pid']}): nothing was sent",
            )
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
    except OSError as exc:
        raise SteerError(
            "failed", f"cannot write to the inbox socket {path}: {exc.strerror or exc}"
        ) from None
    finally:
        sock.close()
    return path


# Linux's SO_PEERCRED (struct ucred: pid, uid, gid); the socket module names it on Linux.
_PEERCRED = getattr(socket, "SO_PEERCRED", 17)
