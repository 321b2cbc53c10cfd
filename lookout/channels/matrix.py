"""Matrix (issue 40): a room's messages through the plain client-server API v3 (send
`m.room.message`, edit with `m.replace`), with the reactions that answer a request said in the
message (the matrix answer surface). Reactions and replies come back through
lookout.surfaces.matrix (`/sync` long polling), never through an inbound port; the listener calls
the homeserver through `call` here. Leaves the machine. No end-to-end encryption: a room with an
`m.room.encryption` state event is refused with a clear error.

Runs in the sender, the listener and `lookout test`, never in a hook. The access token comes
from the environment variable the config names and never appears in a detail, the state or a
log."""

from __future__ import annotations

import os

from lookout.channels import base

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from lookout.channels.base import Doctor, Finding, Message, Option, Outcome
    from lookout.config.check import Checker, KeyPath
    from lookout.shapes import Channel

    class Matrix(Channel):
        homeserver: str  # the client-server API's base URL: https://matrix.example.org
        user_id: str | None  # the bot's own id (@lookout:example.org): its events are never read
        access_token_env: str | None  # the variable holding the bot's access token
        room_id: str | None  # the room it writes to (!abc:example.org)
        allowed_user_ids: list[str]  # whose reactions and replies answer (empty: nobody's)


NAME = "matrix"
KEYS = ("homeserver", "user_id", "access_token_env", "room_id", "allowed_user_ids")
SECRETS = ()  # the token is in the environment (access_token_env)
TIMEOUT_MS = 10000
REMOTE = True
UPDATABLE = True
LOUD = False
ANSWERS = "matrix"
STEERS = False  # its listener runs while an alert can be answered or replied to (sender)
FOCUS = False
OPTIONS: tuple[Option, ...] = (
    {"flag": "--url", "key": "homeserver", "help": "the homeserver's URL (homeserver)",
     "required": True},
    {"flag": "--token-env", "key": "access_token_env", "help": "the variable holding the bot"
     " account's access token", "metavar": "VAR", "required": True},
    {"flag": "--user-id", "key": "user_id", "metavar": "@BOT:SERVER",
     "help": "the bot account's Matrix id", "required": True},
    {"flag": "--room-id", "key": "room_id", "metavar": "!ROOM:SERVER",
     "help": "the room the bot writes to (not end-to-end encrypted)", "required": True},
    {"flag": "--allowed-matrix-id", "key": "allowed_user_ids", "dest": "allowed_matrix_ids",
     "help": "a Matrix user whose reactions and replies answer requests (repeat for more;"
     " default: nobody)", "action": "append", "metavar": "@USER:SERVER"},
)  # fmt: skip
EXAMPLE = (
    "lookout channel add room --type matrix --url https://matrix.example.org --token-env"
    " MATRIX_TOKEN --user-id @lookout:example.org --room-id '!abc:example.org'"
    " --allowed-matrix-id @me:example.org"
)
API = "/_matrix/client/v3"

withdraw = base.cannot_withdraw  # an alert is edited to its outcome instead (replace)
inspect = base.nothing_to_inspect
add_buttons = base.cannot_add_buttons  # a reaction needs no button: the surface edits the text

# A Matrix event is at most 65536 bytes as JSON (the homeserver refuses a larger one). An edit
# carries the text twice (its fallback `body` and `m.new_content`), so a message's text takes at
# most this many bytes inside the event's JSON (UTF-8, with its escapes), leaving room for the rest.
EVENT_MAX = 65536
BODY_MAX = 30000
USER_AGENT = "lookout-notify/0.1"
ENCRYPTED = (
    "room {room} is end-to-end encrypted: lookout's Matrix channel sends and reads only"
    " unencrypted rooms (use a room without encryption, for the bot and you alone)"
)


class MatrixError(Exception):
    """A client-server call that failed: its HTTP status (0: no answer), errcode and a message
    without the token."""

    def __init__(self, status: int, errcode: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.errcode = errcode


def token(ch: Mapping[str, Any]) -> str:
    var = ch.get("access_token_env")
    value = os.environ.get(var) if isinstance(var, str) and var else None
    if not value:
        raise MatrixError(0, "", f"environment variable {var} is not set")
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise MatrixError(0, "", f"environment variable {var} does not hold an access token")
    return value


def call(
    ch: Mapping[str, Any],
    method: str,
    path: str,
    body: dict[str, Any] | None,
    timeout_s: float,
    query: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One client-server call: `method` {homeserver}/_matrix/client/v3{path} with a JSON body
    and the token in the Authorization header; the JSON answer, or MatrixError from
    {"errcode", "error"}."""
    import json
    import urllib.error
    import urllib.parse
    import urllib.request

    from lookout.channels import post

    secret = token(ch)
    url = f"{ch['homeserver']}{API}{path}"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    what = f"{method} {path.split('?')[0]}"
    req = urllib.request.Request(  # noqa: S310 - homeserver is http(s), checked by the config
        url,
        data=json.dumps(body, ensure_ascii=False).encode("utf-8", "replace")
        if body is not None
        else None,
        method=method,
        headers={
            "Authorization": f"Bearer {secret}",
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
        },
    )
    status = 200
    try:
        with post.OPENER.open(req, timeout=timeout_s) as resp:  # the token is in a header
            text = resp.read(8 << 20).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        status = exc.code
        text = exc.read(65536).decode("utf-8", "replace") if exc.fp else ""
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        said = "timed out" if "timed out" in str(reason) else f"cannot connect: {reason}"
        raise MatrixError(0, "", f"{what}: {said}".replace(secret, "…")) from None
    try:
        doc = json.loads(text) if text else {}
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise MatrixError(status, "", f"{what}: HTTP {status}, not a Matrix answer")
    if status != 200:
        from lookout.boundary import visible

        code = str(doc.get("errcode") or "")[:60]
        error = str(doc.get("error") or "no description")[:200].replace(secret, "…")
        raise MatrixError(status, code, f"{what}: HTTP {status} {visible(code)} {visible(error)}")
    return doc


def quote(value: str) -> str:
    import urllib.parse

    return urllib.parse.quote(value, safe="")


def txn() -> str:
    """A fresh transaction id: the homeserver takes a retried send with it once."""
    import secrets

    return "lk" + secrets.token_hex(12)


# Rooms seen unencrypted by this process: a room never loses its encryption once on, so each
# (homeserver, room) is looked at once per process; an encrypted one is looked at every time.
_CLEAR: set[tuple[str, str]] = set()


def refuse_encrypted(ch: Mapping[str, Any], timeout_s: float) -> None:
    """MatrixError unless the room has no `m.room.encryption` state event (404 M_NOT_FOUND)."""
    key = (str(ch["homeserver"]), str(ch["room_id"]))
    if key in _CLEAR:
        return
    path = f"/rooms/{quote(key[1])}/state/m.room.encryption/"
    try:
        call(ch, "GET", path, None, timeout_s)
    except MatrixError as exc:
        if exc.status == 404 and exc.errcode == "M_NOT_FOUND":
            _CLEAR.add(key)
            return
        raise
    raise MatrixError(0, "M_ENCRYPTED", ENCRYPTED.format(room=key[1]))


def send_event(
    ch: Mapping[str, Any], content: dict[str, Any], timeout_s: float, kind: str = "m.room.message"
) -> str:
    """PUT one event into the room (not an encrypted one): its event_id."""
    refuse_encrypted(ch, timeout_s)
    path = f"/rooms/{quote(str(ch['room_id']))}/send/{kind}/{txn()}"
    result = call(ch, "PUT", path, content, timeout_s)
    event_id = result.get("event_id")
    if not isinstance(event_id, str):
        raise MatrixError(200, "", f"PUT /send/{kind}: no event_id in the answer")
    return event_id


def size(text: str) -> int:
    """The bytes the text takes in an event: UTF-8, as a JSON string (`"` and `\\` escaped)."""
    import json

    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass")) - 2


def head(text: str, limit: int) -> str:
    """The longest start of `text` that takes at most `limit` bytes in an event."""
    if size(text) <= limit:
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if size(text[:mid]) <= limit else (low, mid - 1)
    return text[:low]


def text_of(title: str, body: str, outcome: str | None = None) -> str:
    """The message: title, body (and the outcome once the request ended), as plain text (no
    formatted_body, so nothing in it is markup) with control characters made visible."""
    return base.plain_text(title, body, outcome, BODY_MAX, size, head)


def message(text: str) -> dict[str, Any]:
    return {"msgtype": "m.text", "body": text}


def edit(ch: Mapping[str, Any], event_id: str, text: str, timeout_s: float) -> str:
    """Event `event_id` edited to `text` (`m.replace`): the edit's event_id."""
    content = {
        **message(f"* {text}"),
        "m.new_content": message(text),
        "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
    }
    return send_event(ch, content, timeout_s)


def send(ch: Matrix, msg: Message, timeout_s: float) -> Outcome:
    """An alert (m.room.message; the body says which reactions answer, when it has buttons)
    or, for an update, the alert edited in place (m.replace; its ref is the event_id)."""
    if msg.get("update") and msg.get("ref"):
        return replace(ch, str(msg["ref"]), msg["title"], msg["body"], timeout_s)
    try:
        event_id = send_event(ch, message(text_of(msg["title"], msg["body"])), timeout_s)
    except MatrixError as exc:
        return "failed", str(exc), None
    what = ", with answer reactions" if msg.get("buttons") else ""
    return "sent", f"m.room.message {event_id}{what}", event_id


def replace(ch: Matrix, ref: str, title: str, body: str, timeout_s: float) -> Outcome:
    """The alert `ref` edited to `title` and `body` (m.replace), its answer text gone."""
    try:
        edit(ch, ref, text_of(title, body), timeout_s)
    except MatrixError as exc:
        return "failed", str(exc), None
    return "sent", f"m.replace {ref}", ref


# -- the config ----------------------------------------------------------------------------------


def _matrix_id(value: object, sigil: str) -> bool:
    """A user id is `@name:server`; a room id `!opaque:server`, or from room version 12 on
    `!opaque` alone (no server part)."""
    return (
        isinstance(value, str)
        and value.startswith(sigil)
        and len(value) > 1
        and (sigil == "!" or ":" in value[2:])
        and len(value) <= 255
        and not any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in value)
    )


def check(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Matrix) -> None:
    # The access token is a secret: only the name of the variable that holds it is in the file.
    for key, what in (
        ("homeserver", "the homeserver's URL, e.g. https://matrix.example.org"),
        ("access_token_env", "the environment variable holding the bot's access token"),
        ("user_id", "the bot account's Matrix id, e.g. @lookout:example.org"),
        ("room_id", "the room the bot writes to, e.g. !abc:example.org"),
    ):
        if key not in raw:
            c.error(path, f"missing key {key!r} ({what})")
    server = c.get(path, raw, "homeserver", str, "a string")
    base.check_http_url(c, (*path, "homeserver"), server)
    ch["homeserver"] = (server or "").rstrip("/")
    ch["access_token_env"] = c.get(path, raw, "access_token_env", str, "a string")
    for key, sigil, example in (("user_id", "@", "@lookout:example.org"),
                                ("room_id", "!", "!abc:example.org")):  # fmt: skip
        value = c.get(path, raw, key, str, "a string")
        if value is not None and not _matrix_id(value, sigil):
            c.error((*path, key), f"expected a Matrix id like {example!r}, got {value!r}")
            value = None
        ch[key] = value  # type: ignore[literal-required]
    users: list[str] = []
    if "allowed_user_ids" in raw:
        value = raw["allowed_user_ids"]
        if not isinstance(value, list) or not all(_matrix_id(u, "@") for u in value):
            c.error(
                (*path, "allowed_user_ids"),
                f"expected a list of Matrix user ids like '@me:example.org', got {value!r}",
            )
        else:
            users = value
    ch["allowed_user_ids"] = users


def env_warnings(name: str, ch: Matrix) -> list[str]:
    var = ch.get("access_token_env")
    if isinstance(var, str) and var and not os.environ.get(var):
        return [f"channels.{name}.access_token_env: environment variable {var} is not set"]
    return []


def warnings(name: str, ch: Matrix, answers: bool) -> list[str]:
    return env_warnings(name, ch) + risks(name, ch, answers)


def risks(name: str, ch: Mapping[str, Any], answers: bool) -> list[str]:
    """The access token travels in every call's header: plain http to a host off this machine
    hands it (and with [remote] on, the power to answer) to the network. With [remote] on and no
    allowed_user_ids, nobody's reaction answers (a room's members are not approvers)."""
    server = str(ch.get("homeserver") or "")
    out = base.cleartext_risk(name, "homeserver", server, "the access token")
    if answers and not ch.get("allowed_user_ids"):
        out.append(
            f"channels.{name}.allowed_user_ids is empty: no reaction or reply answers a request"
            " or steers a session (set it to your own Matrix id)"
        )
    if ch.get("user_id") and ch.get("user_id") in (ch.get("allowed_user_ids") or []):
        out.append(
            f"channels.{name}.allowed_user_ids holds the bot's own id {ch['user_id']}: its events"
            " never answer (list your own id)"
        )
    return out


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    """Each channel's variable and risks, and whether the room is encrypted (one quick call
    per channel whose token is set: doctor says what the sender would meet)."""
    out: list[Finding] = []
    for name, ch in used.items():
        found = env_warnings(name, ch) + risks(name, ch, ctx["answers"])
        out += [(name, base.WARN, f.removeprefix(f"channels.{name}."), None) for f in found]
        if env_warnings(name, ch):
            continue
        try:
            refuse_encrypted(ch, 5)
        except MatrixError as exc:
            secret = os.environ.get(str(ch.get("access_token_env")), "")
            said = base.redact(str(exc), [secret] if secret else [])
            out.append((name, base.WARN, f"{NAME}: {said}", f"lookout test {name}"))
            continue
        if not found:
            out.append(
                (name, base.OK, f"{NAME}: room {ch['room_id']} reachable, unencrypted", None)
            )
    return out
