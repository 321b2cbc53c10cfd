"""A loopback double of Slack's Web API and Socket Mode (https://api.slack.com/apis/socket-mode),
for tests: the Web API methods lookout uses (auth.test, apps.connections.open with the app token,
chat.postMessage, chat.update), their `{"ok": true, ...}` / `{"ok": false, "error"}` answers and
Slack's error codes, and a WebSocket server on 127.0.0.1 (the `websockets` package) that sends
`hello` on connect, then the envelopes a test makes: `press()` is a user clicking a Block Kit
button (an `interactive` block_actions envelope), `reply()` a user writing a message (in a
thread), both as `events_api` / `interactive` envelopes with an envelope_id that the client must
acknowledge; `acks` records when each came back. The client side is the real slack-sdk."""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from websockets.sync.server import ServerConnection, serve


class SlackApi:
    """`with SlackApi(bot, app) as api:` serves the Web API at api.url (ends with /)."""

    def __init__(self, bot_token: str, app_token: str, channel: str = "C0LOOKOUT") -> None:
        self.bot_token, self.app_token, self.channel = bot_token, app_token, channel
        self.calls: list[tuple[float, str, dict[str, Any]]] = []
        self.messages: dict[str, dict[str, Any]] = {}  # ts -> the message as it is now
        self.sent_at: dict[str, float] = {}  # envelope_id -> when it went out (monotonic)
        self.acks: dict[str, float] = {}  # envelope_id -> when its ack came back
        self.opened = 0  # apps.connections.open calls that answered a URL
        self.sockets: list[ServerConnection] = []
        self.connections = 0  # WebSocket connections that got their hello
        self._ts = itertools.count(1)
        self._lock = threading.Condition()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/"
        self.ws = serve(self._socket, "127.0.0.1", 0)
        self.ws_url = f"ws://127.0.0.1:{self.ws.socket.getsockname()[1]}/link"

    def __enter__(self) -> SlackApi:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        threading.Thread(target=self.ws.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.ws.shutdown()
        self.server.shutdown()
        self.server.server_close()

    # -- what a test does and reads ------------------------------------------------------------

    def connected(self) -> bool:
        with self._lock:
            return bool(self.sockets)

    def envelope(self, kind: str, payload: dict[str, Any]) -> str:
        """Send one envelope to the connected client; its envelope_id."""
        eid = str(uuid.uuid4())
        doc = {
            "envelope_id": eid,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": kind == "interactive",
            "retry_attempt": 0,
        }
        with self._lock:
            sock = self.sockets[-1]
            self.sent_at[eid] = time.monotonic()
        sock.send(json.dumps(doc))
        return eid

    def press(
        self, ts: str, value: str, user: str, channel: str | None = None, action_id: str = "lk1-0"
    ) -> str:
        """A user clicks the button carrying `value` on message `ts`: its envelope_id."""
        cid = channel or self.channel
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower()},
            "channel": {"id": cid, "name": "alerts"},
            "container": {"type": "message", "message_ts": ts, "channel_id": cid},
            "message": self.messages.get(ts, {"ts": ts}),
            "actions": [
                {
                    "action_id": action_id,
                    "block_id": "b",
                    "type": "button",
                    "value": value,
                    "action_ts": str(time.time()),
                }
            ],
        }
        return self.envelope("interactive", payload)

    def reply(
        self,
        text: str,
        user: str,
        thread_ts: str | None = None,
        channel: str | None = None,
        **extra: Any,
    ) -> str:
        """A user writes `text` in the channel (in `thread_ts`'s thread): the message's ts."""
        event = {
            "type": "message",
            "channel": channel or self.channel,
            "user": user,
            "text": text,
            "ts": f"{time.time():.6f}",
            **extra,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        self.envelope("events_api", {"type": "event_callback", "event": event})
        return str(event["ts"])

    def buttons(self, ts: str) -> list[tuple[str, str]]:
        """The (label, value) of message `ts`'s buttons as they are now."""
        out = []
        for block in self.messages[ts].get("blocks") or []:
            for el in block.get("elements", []) if block.get("type") == "actions" else []:
                out.append((el["text"]["text"], el["value"]))
        return out

    def text(self, ts: str) -> str:
        return "\n".join(
            b["text"]["text"] for b in self.messages[ts].get("blocks") or [] if "text" in b
        )

    def thread(self, ts: str) -> list[str]:
        """The bot's replies in message `ts`'s thread, their text."""
        return [str(m["text"]) for m in self.messages.values() if m.get("thread_ts") == ts]

    def unacked(self) -> list[str]:
        """The envelopes sent whose ack has not come back."""
        with self._lock:
            return [e for e in self.sent_at if e not in self.acks]

    def posted(self) -> list[dict[str, Any]]:
        """The messages the bot posted, oldest first (as they are now)."""
        return list(self.messages.values())

    def sent(self, method: str) -> list[dict[str, Any]]:
        return [p for _, m, p in self.calls if m == method]

    # -- the Web API ---------------------------------------------------------------------------

    def call(self, method: str, auth: str, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((time.monotonic(), method, params))
        want = self.app_token if method == "apps.connections.open" else self.bot_token
        if not auth:
            return {"ok": False, "error": "not_authed"}
        if auth != f"Bearer {want}":
            return {"ok": False, "error": "invalid_auth"}
        if method == "auth.test":
            return {"ok": True, "user_id": "UBOT", "team": "lookout", "bot_id": "BBOT"}
        if method == "apps.connections.open":
            self.opened += 1
            return {"ok": True, "url": self.ws_url}
        if method == "chat.postMessage":
            return self._post(params)
        if method == "chat.update":
            return self._update(params)
        if method == "conversations.replies":
            return self._replies(params)
        return {"ok": False, "error": "unknown_method"}

    def _post(self, p: dict[str, Any]) -> dict[str, Any]:
        if p.get("channel") != self.channel:
            return {"ok": False, "error": "channel_not_found"}
        if not p.get("text") and not p.get("blocks"):
            return {"ok": False, "error": "no_text"}
        problem = _blocks_problem(p.get("blocks"))
        if problem:
            return {"ok": False, "error": "invalid_blocks", "errors": [problem]}
        ts = f"{1700000000 + next(self._ts)}.000100"
        msg = {
            "type": "message",
            "bot_id": "BBOT",
            "ts": ts,
            "channel": self.channel,
            "text": p.get("text"),
            "blocks": p.get("blocks") or [],
            "thread_ts": p.get("thread_ts"),
        }
        self.messages[ts] = msg
        return {"ok": True, "channel": self.channel, "ts": ts, "message": msg}

    def _replies(self, p: dict[str, Any]) -> dict[str, Any]:
        """conversations.replies: the thread's parent message first, then its replies (at most
        `limit`), as Slack's Web API answers it."""
        if p.get("channel") != self.channel:
            return {"ok": False, "error": "channel_not_found"}
        parent = self.messages.get(str(p.get("ts")))
        if parent is None:
            return {"ok": False, "error": "thread_not_found"}
        replies = [m for m in self.messages.values() if m.get("thread_ts") == parent["ts"]]
        limit = int(p.get("limit") or 1000)
        msgs = [parent, *replies][:limit]
        return {"ok": True, "messages": msgs, "has_more": len(replies) + 1 > limit}

    def _update(self, p: dict[str, Any]) -> dict[str, Any]:
        if p.get("channel") != self.channel:
            return {"ok": False, "error": "channel_not_found"}
        msg = self.messages.get(str(p.get("ts")))
        if msg is None:
            return {"ok": False, "error": "message_not_found"}
        problem = _blocks_problem(p.get("blocks"))
        if problem:
            return {"ok": False, "error": "invalid_blocks", "errors": [problem]}
        msg.update(text=p.get("text"), blocks=p.get("blocks") or [])
        return {"ok": True, "channel": self.channel, "ts": msg["ts"]}

    def _socket(self, sock: ServerConnection) -> None:
        with self._lock:
            self.sockets.append(sock)
            self.connections += 1
        sock.send(
            json.dumps(
                {"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0LOOKOUT"}}
            )
        )
        try:
            for raw in sock:
                doc = json.loads(raw)
                eid = doc.get("envelope_id") if isinstance(doc, dict) else None
                if isinstance(eid, str):
                    with self._lock:
                        self.acks.setdefault(eid, time.monotonic())
        except Exception:  # the client went away
            pass
        finally:
            with self._lock:
                self.sockets.remove(sock)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                method = self.path.rsplit("/", 1)[-1].split("?", 1)[0]
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size).decode()
                if "json" in (self.headers.get("Content-Type") or ""):
                    params = json.loads(raw or "{}")
                else:
                    params = dict(urllib.parse.parse_qsl(raw))
                    query = self.path.split("?", 1)[1] if "?" in self.path else ""
                    params.update(urllib.parse.parse_qsl(query))
                    for key in ("blocks",):
                        if isinstance(params.get(key), str):
                            params[key] = json.loads(params[key])
                doc = api.call(method, self.headers.get("Authorization") or "", params)
                body = json.dumps(doc).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST

        return Handler


def _blocks_problem(blocks: object) -> str | None:
    """Slack's own block limits, as chat.postMessage refuses them (invalid_blocks)."""
    for block in blocks if isinstance(blocks, list) else []:
        text = block.get("text", {}).get("text", "") if block.get("type") == "section" else ""
        if len(text) > 3000:
            return "must be less than 3001 characters [json-pointer:/blocks/0/text/text]"
        for el in block.get("elements", []) if block.get("type") == "actions" else []:
            if len(el.get("text", {}).get("text", "")) > 75:
                return "must be less than 76 characters"
            if len(el.get("value", "")) > 2000:
                return "must be less than 2001 characters"
    return None
