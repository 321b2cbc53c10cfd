"""A Telegram channel (issue 25): the Bot API's sendMessage / editMessageText for alerts and their
updates, with an inline keyboard for a request [remote] may answer. Presses come back through
lookout.remote.telegram (getUpdates long polling), never through an inbound port.

Runs in the sender, the poller and `lookout test`, never in a hook. The bot token comes from the
environment variable the config names and never appears in a detail, the state or a log."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

from lookout import boundary

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Outcome = tuple[str, str, str | None]

TEXT_MAX = 4096  # sendMessage's limit, in characters
CALLBACK_PREFIX = "lk1:"  # callback_data: this prefix and an opaque token (answers.mint), <= 64 B
USER_AGENT = "lookout-notify/0.1"


class TelegramError(Exception):
    """A Bot API call that failed: its error_code (0: no answer) and a message without the token."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def token(ch: dict[str, Any]) -> str:
    var = ch.get("token_env")
    value = os.environ.get(var) if isinstance(var, str) and var else None
    if not value:
        raise TelegramError(0, f"environment variable {var} is not set")
    if any(c.isspace() or ord(c) < 0x20 or c == "/" for c in value):
        raise TelegramError(0, f"environment variable {var} does not hold a bot token")
    return value


def call(ch: dict[str, Any], method: str, params: dict[str, Any], timeout_s: float) -> Any:
    """One Bot API method: POST {api_url}/bot<token>/<method> with a JSON body; its `result`, or
    TelegramError from the {"ok": false, "error_code", "description"} envelope."""
    secret = token(ch)
    url = f"{ch['api_url']}/bot{secret}/{method}"
    req = urllib.request.Request(  # noqa: S310 - api_url is http(s), checked by the config
        url,
        data=json.dumps(params).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
    )
    try:
        with urllib.request.build_opener(_NoRedirect).open(req, timeout=timeout_s) as resp:
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
        raise TelegramError(code, f"{method}: {code} {boundary.visible(desc)}")
    return doc.get("result")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the token is in the path: never follow it elsewhere


def text_of(title: str, body: str, outcome: str | None = None) -> str:
    """The message: title, body (and the outcome once the request ended), as plain text (no
    parse_mode, so nothing in it is markup) with control characters made visible."""
    parts = [boundary.visible(title)]
    if body:
        parts.append(boundary.visible(body, keep_newlines=True))
    tail = f"\n\n{boundary.visible(outcome)}" if outcome else ""
    text = "\n".join(parts)
    if len(text) + len(tail) > TEXT_MAX:
        text = text[: TEXT_MAX - len(tail) - 1] + "…"
    return text + tail


def keyboard(buttons: list[tuple[str, str]]) -> dict[str, Any]:
    """An inline keyboard, one row per button (labels visible-escaped, data = prefix + token)."""
    return {
        "inline_keyboard": [
            [{"text": boundary.visible(label)[:64], "callback_data": CALLBACK_PREFIX + tok}]
            for label, tok in buttons
        ]
    }


def add_keyboard(
    ch: dict[str, Any], message_id: str, buttons: list[tuple[str, str]], timeout_s: float
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


def send(ch: dict[str, Any], msg: dict[str, Any], timeout_s: float) -> Outcome:
    """An alert (sendMessage, with the request's buttons if msg["buttons"]) or, for an update,
    the alert edited in place (editMessageText; its ref is the message_id)."""
    text = text_of(msg["title"], msg["body"])
    try:
        if msg.get("update") and msg.get("ref"):
            params = {"chat_id": ch["chat_id"], "message_id": int(msg["ref"]), "text": text}
            call(ch, "editMessageText", params, timeout_s)
            return "sent", f"editMessageText {msg['ref']}", str(msg["ref"])
        params = {"chat_id": ch["chat_id"], "text": text}
        if msg.get("buttons"):
            params["reply_markup"] = keyboard(msg["buttons"])
        result = call(ch, "sendMessage", params, timeout_s)
    except TelegramError as exc:
        return "failed", str(exc), None
    mid = result.get("message_id") if isinstance(result, dict) else None
    ref = str(mid) if isinstance(mid, int) else None
    what = ", with answer buttons" if msg.get("buttons") else ""
    return "sent", f"sendMessage message_id {ref}{what}", ref
