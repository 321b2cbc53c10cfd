"""Telegram (issue 25): the Bot API's sendMessage / editMessageText for alerts and their updates,
with an inline keyboard for a request [remote] may answer (the telegram answer surface). Presses
come back through lookout.surfaces.telegram (getUpdates long polling), never through an inbound
port; the poller calls the Bot API through `call` here. Leaves the machine.

Runs in the sender, the poller and `lookout test`, never in a hook. The bot token comes from the
environment variable the config names and never appears in a detail, the state or a log."""

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

    class Telegram(Channel):
        token_env: str | None  # the variable holding the bot token: the token is never in a file
        chat_id: int | None  # the chat the bot writes to
        allowed_user_ids: list[int]  # whose presses answer (empty: anyone in the chat)
        api_url: str  # the Bot API server


NAME = "telegram"
KEYS = ("token_env", "chat_id", "allowed_user_ids", "api_url")
SECRETS = ()  # the token is in the environment (token_env)
TIMEOUT_MS = 10000
REMOTE = True
UPDATABLE = True
LOUD = False
ANSWERS = "telegram"
STEERS = True  # replies in its chat steer: its poller runs whenever [steer] is on
FOCUS = False
OPTIONS: tuple[Option, ...] = (
    {"flag": "--url", "key": "api_url", "help": "the Bot API server (api_url, default the public"
     " one)"},
    {"flag": "--token-env", "key": "token_env", "help": "the variable holding the bot token",
     "metavar": "VAR", "required": True},
    {"flag": "--chat-id", "key": "chat_id", "type": int, "metavar": "ID",
     "help": "the chat the bot writes to (docs/remote.md says how to find it)", "required": True},
    {"flag": "--allowed-user-id", "key": "allowed_user_ids", "dest": "allowed_user_ids",
     "help": "a user whose presses answer requests (repeat for more; default: anyone in the"
     " chat)", "type": int, "action": "append", "metavar": "ID"},
)  # fmt: skip
EXAMPLE = (
    "lookout channel add bot --type telegram --token-env TELEGRAM_BOT_TOKEN --chat-id 123456789"
)
API = "https://api.telegram.org"

withdraw = base.cannot_withdraw  # an alert is edited to its outcome instead (replace)
inspect = base.nothing_to_inspect

TEXT_MAX = 4096  # sendMessage's limit, in UTF-16 code units as Telegram counts
CALLBACK_PREFIX = "lk1:"  # callback_data: this prefix and an opaque token (answers.mint), <= 64 B
# With a [fleet] hub (issue 42) the data names the host that minted the token: `lk:<host>:<token>`
HOSTED_PREFIX = "lk:"
USER_AGENT = "lookout-notify/0.1"


class TelegramError(Exception):
    """A Bot API call that failed: its error_code (0: no answer) and a message without the token."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def token(ch: Mapping[str, Any]) -> str:
    var = ch.get("token_env")
    value = os.environ.get(var) if isinstance(var, str) and var else None
    if not value:
        raise TelegramError(0, f"environment variable {var} is not set")
    if any(c.isspace() or ord(c) < 0x20 or c == "/" for c in value):
        raise TelegramError(0, f"environment variable {var} does not hold a bot token")
    return value


def call(ch: Mapping[str, Any], method: str, params: dict[str, Any], timeout_s: float) -> Any:
    """One Bot API method: POST {api_url}/bot<token>/<method> with a JSON body; its `result`, or
    TelegramError from the {"ok": false, "error_code", "description"} envelope."""
    import json
    import urllib.error
    import urllib.request

    from lookout.channels import post

    secret = token(ch)
    url = f"{ch['api_url']}/bot{secret}/{method}"
    req = urllib.request.Request(  # noqa: S310 - api_url is http(s), checked by the config
        url,
        data=json.dumps(params).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
    )
    try:
        with post.OPENER.open(req, timeout=timeout_s) as resp:  # the token is in the path
            text = resp.read(1 << 20).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        text = exc.read(65536).decode("utf-8", "replace") if exc.fp else ""
        if not text:
            raise TelegramError(exc.code, f"{method}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        what = "timed out" if "timed out" in str(reason) else f"cannot connect: {reason}"
        raise TelegramError(0, f"{method}: {what}".replace(secret, "…")) from None
    try:
        doc = json.loads(text)
    except ValueError:
        raise TelegramError(0, f"{method}: not a Bot API answer") from None
    if not isinstance(doc, dict) or doc.get("ok") is not True:
        doc = doc if isinstance(doc, dict) else {}
        code = doc["error_code"] if isinstance(doc.get("error_code"), int) else 0
        desc = str(doc.get("description") or "no description")[:200].replace(secret, "…")
        from lookout.boundary import visible

        raise TelegramError(code, f"{method}: {code} {visible(desc)}")
    return doc.get("result")


def text_of(title: str, body: str, outcome: str | None = None) -> str:
    """The message: title, body (and the outcome once the request ended), as plain text (no
    parse_mode, so nothing in it is markup) with control characters made visible."""
    return base.plain_text(title, body, outcome, TEXT_MAX, units, head)


def units(text: str) -> int:
    """The text's length as Telegram counts it (UTF-16 code units: an emoji is two)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def head(text: str, limit: int) -> str:
    """The longest start of `text` that is at most `limit` UTF-16 code units."""
    if units(text) <= limit:
        return text
    taken = 0
    for n, c in enumerate(text):
        taken += 2 if ord(c) > 0xFFFF else 1
        if taken > limit:
            return text[:n]
    return text


def keyboard(buttons: list[tuple[str, str]]) -> dict[str, Any]:
    """An inline keyboard, one row per button (labels visible-escaped, data = prefix + token,
    or the data itself when it names its host already: HOSTED_PREFIX)."""
    from lookout.boundary import visible

    return {
        "inline_keyboard": [
            [{"text": visible(label)[:64], "callback_data": _data(tok)}] for label, tok in buttons
        ]
    }


def _data(tok: str) -> str:
    return tok if tok.startswith(HOSTED_PREFIX) else CALLBACK_PREFIX + tok


def add_buttons(
    ch: Telegram, message_id: str, buttons: list[tuple[str, str]], timeout_s: float
) -> tuple[str, str]:
    """Put the request's buttons under a message sent before its request was recorded
    (editMessageReplyMarkup): (sent | failed, detail)."""
    params = {
        "chat_id": ch["chat_id"],
        "message_id": int(message_id),
        "reply_markup": keyboard(buttons),
    }
    try:
        call(ch, "editMessageReplyMarkup", params, timeout_s)
    except TelegramError as exc:
        return "failed", str(exc)
    return "sent", f"editMessageReplyMarkup {message_id}"


def send(ch: Telegram, msg: Message, timeout_s: float) -> Outcome:
    """An alert (sendMessage, with the request's buttons if msg["buttons"]) or, for an update,
    the alert edited in place (editMessageText; its ref is the message_id)."""
    if msg.get("update") and msg.get("ref"):
        return replace(ch, str(msg["ref"]), msg["title"], msg["body"], timeout_s)
    params: dict[str, Any] = {"chat_id": ch["chat_id"], "text": text_of(msg["title"], msg["body"])}
    try:
        if msg.get("buttons"):
            params["reply_markup"] = keyboard(msg["buttons"])
        result = call(ch, "sendMessage", params, timeout_s)
    except TelegramError as exc:
        return "failed", str(exc), None
    mid = result.get("message_id") if isinstance(result, dict) else None
    ref = str(mid) if isinstance(mid, int) else None
    what = ", with answer buttons" if msg.get("buttons") else ""
    return "sent", f"sendMessage message_id {ref}{what}", ref


def replace(ch: Telegram, ref: str, title: str, body: str, timeout_s: float) -> Outcome:
    """The alert `ref` edited to `title` and `body`, its buttons gone (editMessageText without a
    keyboard)."""
    params = {"chat_id": ch["chat_id"], "message_id": int(ref), "text": text_of(title, body)}
    try:
        call(ch, "editMessageText", params, timeout_s)
    except TelegramError as exc:
        return "failed", str(exc), None
    return "sent", f"editMessageText {ref}", ref


# -- the config ----------------------------------------------------------------------------------


def check(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Telegram) -> None:
    # The bot token is a secret: only the name of the variable that holds it is in the file.
    if "token_env" not in raw:
        c.error(path, "missing key 'token_env' (the environment variable holding the bot token)")
    ch["token_env"] = c.get(path, raw, "token_env", str, "a string")
    chat = raw.get("chat_id")
    if "chat_id" not in raw:
        c.error(path, "missing key 'chat_id' (the chat the bot writes to, e.g. 123456789)")
    elif not c.expect((*path, "chat_id"), chat, int, "an integer"):
        chat = None
    ch["chat_id"] = chat
    users: list[int] = []
    if "allowed_user_ids" in raw:
        value = raw["allowed_user_ids"]
        if not isinstance(value, list) or any(
            isinstance(u, bool) or not isinstance(u, int) for u in value
        ):
            c.error((*path, "allowed_user_ids"), f"expected a list of integers, got {value!r}")
        else:
            users = value
    ch["allowed_user_ids"] = users
    api = c.get(path, raw, "api_url", str, "a string")
    base.check_http_url(c, (*path, "api_url"), api)
    ch["api_url"] = (api or API).rstrip("/")


def warnings(name: str, ch: Telegram, answers: bool) -> list[str]:
    return base.env_warnings(name, ch, answers) + risks(name, ch, answers)


def risks(name: str, ch: Telegram, answers: bool) -> list[str]:
    """S6: the bot token is part of every Bot API call's URL, so plain http to a host off this
    machine hands it (and with [remote] on, the power to press Allow) to the network; and with
    [remote] on and no allowed_user_ids, any member of the chat answers requests."""
    api = str(ch.get("api_url") or "")
    out = base.cleartext_risk(name, "api_url", api, "the bot token (part of every call's URL)")
    if answers and not ch.get("allowed_user_ids"):
        out.append(
            f"channels.{name}.allowed_user_ids is empty: a press from anyone in chat "
            f"{ch.get('chat_id')} answers a permission request (set it to your Telegram user id)"
        )
    return out


# Two pollers of one bot knock each other off with a 409 every couple of seconds; a poller
# handing over to its successor (an upgrade, a config change) makes one or two.
CONFLICTS = 3
CONFLICT_WINDOW_MS = 3600_000


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    out = base.network_findings(NAME, used, lambda name, ch: risks(name, ch, ctx["answers"]))
    return out + _conflicts(used, ctx["errors"]())


def _conflicts(used: dict[str, Any], errors: list[tuple[int, str]]) -> list[Finding]:
    """Repeated getUpdates conflicts (409) the poller logged: another poller uses this bot (a
    second machine or state directory); presses then land on whichever polls at the moment."""
    from lookout import words

    if not errors:
        return []
    since = words.now_ms() - CONFLICT_WINDOW_MS
    out: list[Finding] = []
    for name in used:
        mark = f"telegram poller: channel {name}: getUpdates: 409"
        hits = [ms for ms, text in errors if ms >= since and text.startswith(mark)]
        if len(hits) < CONFLICTS:
            continue
        out.append(
            (
                name,
                base.WARN,
                f"another poller uses this bot: {len(hits)} getUpdates conflicts (409) up to"
                f" {words.clock(hits[-1])}; a press may reach the other one and answer nothing",
                "a second machine or state directory polls the same bot: give each its own bot"
                " (docs/remote.md), or stop the other poller",
            )
        )
    return out
