"""A loopback double of an ntfy server (issue 40), from its published API (see
docs/remote.md "ntfy"): stdlib http.server, threaded, on 127.0.0.1.

- `POST /` with a JSON body publishes `{"topic", "message", "title", "priority", "tags",
  "click", "actions", "sequence_id"}`; `POST /<topic>` publishes its body as the message (with
  `Title` etc. headers), as the phone's app does for an `http` action.
- A message over 4,096 bytes (title and body, UTF-8) becomes an attachment (`attachment`), as
  the real server turns a long body into a file the app shows as a file, not as text.
- `GET /<topic>/json?since=<id>|<unix time>|all` streams newline-delimited JSON: `open`, the
  cached messages after `since`, then each new one, with a `keepalive` every `keepalive_s`.
- With `token` set, every call needs `Authorization: Bearer <token>` (or answers 403 with
  `{"code": 40301, "http": 403}`), except an anonymous publish to a topic in `open_topics`.
- A publish with a `sequence_id` replaces the message of that id on its topic (`shown`), as
  ntfy 2.16+ does; `in_place=False` is an older server: every publish is a new notification.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

LIMIT = 4096


class NtfyServer:
    def __init__(
        self,
        token: str | None = None,
        open_topics: tuple[str, ...] = (),
        in_place: bool = True,
        keepalive_s: float = 1.0,
    ) -> None:
        self.token = token
        self.open_topics = set(open_topics)
        self.in_place = in_place
        self.keepalive_s = keepalive_s
        self.messages: list[dict[str, Any]] = []  # every publish, in order
        self.calls: list[tuple[str, str, dict[str, str]]] = []  # (method, path, headers)
        self.refused: list[tuple[str, str]] = []  # (method, path) answered 403
        self.streams = 0  # subscriptions opened
        self.cond = threading.Condition()
        self.closing = threading.Event()
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                double.post(self)

            def do_PUT(self) -> None:
                double.post(self)

            def do_GET(self) -> None:
                double.get(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> NtfyServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        with self.cond:
            self.cond.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- what tests look at ----------------------------------------------------------------

    def on(self, topic: str) -> list[dict[str, Any]]:
        with self.cond:
            return [m for m in self.messages if m["topic"] == topic]

    def shown(self, topic: str) -> list[dict[str, Any]]:
        """The notifications the phone shows on `topic`: one per sequence id (the newest
        publish under it) where the server updates in place, else one per publish."""
        out: dict[str, dict[str, Any]] = {}
        for m in self.on(topic):
            key = m.get("sequence_id") if self.in_place and m.get("sequence_id") else m["id"]
            out.pop(key, None)
            out[key] = m
        return list(out.values())

    def press(self, action: dict[str, Any], token: str | None = None) -> int:
        """What the phone's app does for an `http` action: its request, sent as it says (with
        `token` as Bearer where the app was given one)."""
        headers = dict(action.get("headers") or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(
            action["url"],
            data=str(action.get("body") or "").encode(),
            method=action.get("method") or "POST",
            headers=headers,
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return int(resp.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    def publish(self, topic: str, body: str, token: str | None = None) -> int:
        """A plain post to `topic` (a stranger's, or a replay)."""
        return self.press({"url": f"{self.url}/{topic}", "body": body}, token)

    # -- the server ------------------------------------------------------------------------

    def _allowed(self, h: BaseHTTPRequestHandler, write_topic: str | None) -> bool:
        if self.token is None:
            return True
        if h.headers.get("Authorization") == f"Bearer {self.token}":
            return True
        return write_topic is not None and write_topic in self.open_topics

    def _answer(self, h: BaseHTTPRequestHandler, status: int, doc: dict[str, Any]) -> None:
        data = json.dumps(doc).encode() + b"\n"
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _forbidden(self, h: BaseHTTPRequestHandler, method: str, path: str) -> None:
        self.refused.append((method, path))
        self._answer(h, 403, {"code": 40301, "http": 403, "error": "forbidden"})

    def post(self, h: BaseHTTPRequestHandler) -> None:
        path = urlsplit(h.path).path
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        self.calls.append(("POST", path, dict(h.headers)))
        if path == "/":
            try:
                doc = json.loads(raw)
            except ValueError:
                self._answer(h, 400, {"code": 40001, "http": 400, "error": "invalid JSON"})
                return
            topic = str(doc.get("topic") or "")
        else:
            topic = path.strip("/")
            doc = {"message": raw.decode("utf-8", "replace"), "title": h.headers.get("Title")}
        if not topic or "/" in topic:
            self._answer(h, 404, {"code": 40401, "http": 404, "error": "page not found"})
            return
        if not self._allowed(h, topic):
            self._forbidden(h, "POST", path)
            return
        if len(doc.get("actions") or []) > 3:
            self._answer(h, 400, {"code": 40018, "http": 400, "error": "too many actions"})
            return
        message = {
            "id": secrets.token_hex(6),
            "time": int(time.time()),
            "event": "message",
            "topic": topic,
            "message": str(doc.get("message") or ""),
            **{k: doc[k] for k in ("title", "priority", "tags", "click", "actions") if doc.get(k)},
        }
        if doc.get("sequence_id"):
            message["sequence_id"] = doc["sequence_id"]
        size = len(message["message"].encode()) + len(str(message.get("title") or "").encode())
        if size > LIMIT:
            message["attachment"] = {"name": "attachment.txt", "size": size}
            message["message"] = "You received a file: attachment.txt"
        with self.cond:
            self.messages.append(message)
            self.cond.notify_all()
        self._answer(h, 200, message)

    def get(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        self.calls.append(("GET", parts.path, dict(h.headers)))
        topic, _, kind = parts.path.strip("/").partition("/")
        if kind != "json" or not topic:
            self._answer(h, 404, {"code": 40401, "http": 404, "error": "page not found"})
            return
        if not self._allowed(h, None):
            self._forbidden(h, "GET", parts.path)
            return
        since = (parse_qs(parts.query).get("since") or [""])[0]
        self.streams += 1
        h.send_response(200)
        h.send_header("Content-Type", "application/x-ndjson; charset=utf-8")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        try:
            self._line(h, {"id": secrets.token_hex(6), "event": "open", "topic": topic})
            with self.cond:
                cached = [m for m in self.messages if m["topic"] == topic]
            sent = self._after(cached, since)
            for m in sent:
                self._line(h, m)
            seen = len(cached)
            while not self.closing.is_set():
                with self.cond:
                    self.cond.wait(self.keepalive_s)
                    new = [m for m in self.messages if m["topic"] == topic][seen:]
                seen += len(new)
                for m in new:
                    self._line(h, m)
                if not new:
                    self._line(h, {"event": "keepalive", "topic": topic, "time": int(time.time())})
        except OSError:
            return  # the subscriber went away

    @staticmethod
    def _after(cached: list[dict[str, Any]], since: str) -> list[dict[str, Any]]:
        if since == "all":
            return cached
        if since.isdigit():
            return [m for m in cached if m["time"] >= int(since)]
        ids = [m["id"] for m in cached]
        if since in ids:
            return cached[ids.index(since) + 1 :]
        return cached if since else []

    @staticmethod
    def _line(h: BaseHTTPRequestHandler, doc: dict[str, Any]) -> None:
        data = json.dumps(doc).encode() + b"\n"
        h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        h.wfile.flush()
