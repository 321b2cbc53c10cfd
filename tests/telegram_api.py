"""A loopback double of the Telegram Bot API (https://core.telegram.org/bots/api), for tests: the
documented methods lookout uses (getMe, sendMessage, editMessageText, editMessageReplyMarkup,
answerCallbackQuery, getUpdates), their parameters as JSON, form or query string, the
`{"ok": true, "result": ...}` / `{"ok": false, "error_code", "description"}` envelope with the
Bot API's own error texts, update_id offsets (an update is dropped once getUpdates is called with
a higher offset), long polling (`timeout`) and the 409 a second concurrent getUpdates causes.
`press()` is a user tapping an inline button, `message()` one sending a message (or a reply)."""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are "
    "exactly the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
CONFLICT = (
    "Conflict: terminated by other getUpdates request; make sure that only one bot instance "
    "is running"
)


def channel_table(api_url: str, chat_id: int, owner: int, content: str = "full") -> str:
    """A lookout config's `[channels.chat]` table sending to this double at `api_url` (the token
    from $LOOKOUT_TG_TOKEN), answering `owner` alone in `chat_id`."""
    return (
        '[channels.chat]\ntype = "telegram"\ntoken_env = "LOOKOUT_TG_TOKEN"\n'
        f'chat_id = {chat_id}\nallowed_user_ids = [{owner}]\napi_url = "{api_url}"\n'
        f'content = "{content}"\n'
    )


class ApiError(Exception):
    def __init__(self, code: int, description: str) -> None:
        super().__init__(description)
        self.code = code
        self.description = description


class BotApi:
    """`with BotApi(token, chats) as api:` serves http://127.0.0.1:PORT (api.url)."""

    def __init__(self, token: str, chats: tuple[int, ...] = (1001,), bot_id: int = 777) -> None:
        self.token = token
        self.chats = set(chats)
        self.bot = {"id": bot_id, "is_bot": True, "first_name": "lookout", "username": "lkbot"}
        self.calls: list[tuple[float, str, dict[str, Any]]] = []
        # Each getUpdates as it ended: (started, ended, how many updates it handed out; None when
        # it ended in an error, such as the 409 of a second poll), time.monotonic() stamps.
        self.polls: list[tuple[float, float, int | None]] = []
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}
        self.updates: list[dict[str, Any]] = []
        self.queries: dict[str, str | None] = {}  # callback_query id -> the answer's text
        self.down = False  # True: every call fails with 502, as a proxy in front of a dead server
        self._ids = itertools.count(1)
        self._update_ids = itertools.count(500)
        self._cond = threading.Condition()
        self._poll_generation = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> BotApi:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._poll_generation += 1
            self._cond.notify_all()
        self.server.shutdown()
        self.server.server_close()

    # -- what a test does and reads ------------------------------------------------------------

    def press(self, message_id: int, data: str, user_id: int, chat_id: int | None = None) -> str:
        """A user taps the button carrying `data` under message `message_id`: a callback_query
        update; returns its id. (`chat_id`: the chat the message is in, as Telegram reports.)"""
        chat = chat_id if chat_id is not None else next(iter(self.chats))
        message = self.messages.get((chat, message_id)) or {
            "message_id": message_id,
            "chat": {"id": chat, "type": "private"},
            "date": int(time.time()),
            "text": "?",
        }
        qid = str(next(self._ids) * 7919)
        with self._cond:
            self.queries[qid] = None
            self.updates.append(
                {
                    "update_id": next(self._update_ids),
                    "callback_query": {
                        "id": qid,
                        "from": {"id": user_id, "is_bot": False, "first_name": "U"},
                        "message": message,
                        "chat_instance": "-42",
                        "data": data,
                    },
                }
            )
            self._cond.notify_all()
        return qid

    def message(
        self,
        text: str,
        user_id: int,
        chat_id: int | None = None,
        reply_to: int | None = None,
        kind: str = "message",
        **extra: Any,
    ) -> int:
        """A user sends `text` in the chat (`reply_to`: as a reply to that message of the chat;
        `kind`: edited_message for an edit): a message update; returns the message's id."""
        chat = chat_id if chat_id is not None else next(iter(self.chats))
        message: dict[str, Any] = {
            "message_id": next(self._ids),
            "from": {"id": user_id, "is_bot": False, "first_name": "U"},
            "chat": {"id": chat, "type": "private"},
            "date": int(time.time()),
            "text": text,
            **extra,
        }
        if reply_to is not None:
            message["reply_to_message"] = self.messages.get((chat, reply_to)) or {
                "message_id": reply_to,
                "chat": {"id": chat, "type": "private"},
                "date": int(time.time()),
                "text": "?",
            }
        with self._cond:
            self.updates.append({"update_id": next(self._update_ids), kind: message})
            self._cond.notify_all()
        return int(message["message_id"])

    def replies(self, message_id: int) -> list[str]:
        """The texts the bot sent as replies to message `message_id`."""
        return [
            p["text"]
            for p in self.sent("sendMessage")
            if (p.get("reply_parameters") or {}).get("message_id") == message_id
        ]

    def sent(self, method: str) -> list[dict[str, Any]]:
        return [params for _, method_, params in self.calls if method_ == method]

    def buttons(self, chat_id: int, message_id: int) -> list[tuple[str, str]]:
        markup = self.messages[(chat_id, message_id)].get("reply_markup") or {}
        return [
            (b["text"], b["callback_data"])
            for row in markup.get("inline_keyboard", [])
            for b in row
        ]

    # -- the methods ---------------------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self.calls.append((time.monotonic(), method, params))
        if self.down:
            raise ApiError(502, "Bad Gateway")
        fn = getattr(self, "m_" + method, None)
        if fn is None:
            raise ApiError(404, "Not Found")
        return fn(params)

    def m_getMe(self, p: dict[str, Any]) -> Any:
        return self.bot

    def _chat(self, p: dict[str, Any]) -> int:
        chat = p.get("chat_id")
        if chat in (None, ""):
            raise ApiError(400, "Bad Request: chat_id is empty")
        try:
            chat_id = int(chat)
        except (TypeError, ValueError):
            raise ApiError(400, "Bad Request: chat not found") from None
        if chat_id not in self.chats:
            raise ApiError(400, "Bad Request: chat not found")
        return chat_id

    def _text(self, p: dict[str, Any]) -> str:
        text = p.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if len(text) > 4096:
            raise ApiError(400, "Bad Request: message is too long")
        return text

    def _markup(self, p: dict[str, Any]) -> dict[str, Any] | None:
        markup = p.get("reply_markup")
        if isinstance(markup, str):
            markup = json.loads(markup)
        if markup is None:
            return None
        rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
        if not isinstance(rows, list):
            raise ApiError(400, "Bad Request: can't parse reply keyboard markup JSON object")
        for row in rows:
            for button in row:
                data = button.get("callback_data")
                if not isinstance(button.get("text"), str) or not button["text"]:
                    raise ApiError(
                        400,
                        "Bad Request: can't parse inline keyboard button: Text must be non-empty",
                    )
                if not isinstance(data, str) or not 1 <= len(data.encode()) <= 64:
                    raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
        return markup

    def m_sendMessage(self, p: dict[str, Any]) -> Any:
        chat_id = self._chat(p)
        text = self._text(p)
        markup = self._markup(p)
        if p.get("parse_mode"):
            raise ApiError(400, "Bad Request: lookout's double only speaks plain text")
        message = {
            "message_id": next(self._ids),
            "from": self.bot,
            "chat": {"id": chat_id, "type": "private"},
            "date": int(time.time()),
            "text": text,
        }
        if markup is not None:
            message["reply_markup"] = markup
        self.messages[(chat_id, message["message_id"])] = message
        return message

    def m_editMessageText(self, p: dict[str, Any]) -> Any:
        chat_id = self._chat(p)
        text = self._text(p)
        markup = self._markup(p)
        try:
            key = (chat_id, int(p.get("message_id")))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ApiError(400, "Bad Request: message identifier is not specified") from None
        message = self.messages.get(key)
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        if message["text"] == text and message.get("reply_markup") == markup:
            raise ApiError(400, NOT_MODIFIED)
        message = {**message, "text": text, "edit_date": int(time.time())}
        message.pop("reply_markup", None)
        if markup is not None:
            message["reply_markup"] = markup
        self.messages[key] = message
        return message

    def m_editMessageReplyMarkup(self, p: dict[str, Any]) -> Any:
        chat_id = self._chat(p)
        markup = self._markup(p)
        try:
            key = (chat_id, int(p.get("message_id")))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ApiError(400, "Bad Request: message identifier is not specified") from None
        message = self.messages.get(key)
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        if message.get("reply_markup") == markup:
            raise ApiError(400, NOT_MODIFIED)
        message = {**message, "edit_date": int(time.time())}
        message.pop("reply_markup", None)
        if markup is not None:
            message["reply_markup"] = markup
        self.messages[key] = message
        return message

    def m_answerCallbackQuery(self, p: dict[str, Any]) -> Any:
        qid = p.get("callback_query_id")
        if not isinstance(qid, str) or qid not in self.queries or self.queries[qid] is not None:
            raise ApiError(400, QUERY_TOO_OLD)
        text = p.get("text") or ""
        if len(text) > 200:
            raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        self.queries[qid] = text
        return True

    def m_getUpdates(self, p: dict[str, Any]) -> Any:
        offset = int(p.get("offset") or 0)
        limit = int(p.get("limit") or 100)
        timeout = float(p.get("timeout") or 0)
        allowed = p.get("allowed_updates")
        if isinstance(allowed, str):
            allowed = json.loads(allowed)
        started = time.monotonic()
        deadline = started + timeout
        with self._cond:
            self._poll_generation += 1
            mine = self._poll_generation
            self._cond.notify_all()
            while True:
                if offset:
                    # Calling with an offset confirms every update before it: they are gone.
                    self.updates = [u for u in self.updates if u["update_id"] >= offset]
                ready = [
                    u for u in self.updates if not allowed or any(kind in u for kind in allowed)
                ][:limit]
                if ready:
                    self.polls.append((started, time.monotonic(), len(ready)))
                    return ready
                if self._poll_generation != mine:
                    self.polls.append((started, time.monotonic(), None))
                    raise ApiError(409, CONFLICT)
                left = deadline - time.monotonic()
                if left <= 0:
                    self.polls.append((started, time.monotonic(), 0))
                    return []
                self._cond.wait(left)

    # -- HTTP ------------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def _serve(self) -> None:
                parts = urllib.parse.urlsplit(self.path)
                params: dict[str, Any] = dict(urllib.parse.parse_qsl(parts.query))
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                kind = (self.headers.get("Content-Type") or "").split(";")[0].strip()
                if body and kind == "application/json":
                    params.update(json.loads(body))
                elif body:
                    params.update(urllib.parse.parse_qsl(body.decode()))
                segments = parts.path.strip("/").split("/")
                status, doc = 200, {}
                if len(segments) != 2 or segments[0] != f"bot{api.token}":
                    status, doc = (
                        401,
                        {"ok": False, "error_code": 401, "description": "Unauthorized"},
                    )
                else:
                    try:
                        doc = {"ok": True, "result": api.call(segments[1], params)}
                    except ApiError as exc:
                        status = exc.code
                        doc = {"ok": False, "error_code": exc.code, "description": exc.description}
                data = json.dumps(doc).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

        return Handler
