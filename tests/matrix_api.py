"""A tiny loopback double of the Matrix client-server API (v3), for the fast suite: the calls
lookout's channel makes (PUT .../send/{type}/{txnId}, GET .../state/m.room.encryption/, POST
.../join), with the Authorization header checked, the {"errcode", "error"} error envelope, and a
transaction id taken once (a retried PUT answers the first event_id). The real homeserver is
Synapse in the real-part suite (tests/synapse.py)."""

from __future__ import annotations

import itertools
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/_matrix/client/v3"


class MatrixApi:
    """`with MatrixApi(token, room) as api:` serves http://127.0.0.1:PORT (api.url)."""

    def __init__(self, token: str, room: str = "!room:localhost", encrypted: bool = False) -> None:
        self.token = token
        self.room = room
        self.encrypted = encrypted
        self.events: list[dict[str, Any]] = []  # {event_id, type, content, txn}
        self.calls: list[tuple[str, str]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> MatrixApi:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, method: str, path: str, auth: str, body: bytes) -> tuple[int, dict[str, Any]]:
        self.calls.append((method, path))
        if auth != f"Bearer {self.token}":
            return 401, {"errcode": "M_UNKNOWN_TOKEN", "error": "Invalid access token passed."}
        parts = [urllib.parse.unquote(p) for p in path.removeprefix(PREFIX).split("/")[1:]]
        if len(parts) < 2 or parts[0] != "rooms" or parts[1] != self.room:
            return 403, {"errcode": "M_FORBIDDEN", "error": "User not in room"}
        if method == "GET" and parts[2:4] == ["state", "m.room.encryption"]:
            if self.encrypted:
                return 200, {"algorithm": "m.megolm.v1.aes-sha2"}
            return 404, {"errcode": "M_NOT_FOUND", "error": "Event not found."}
        if method == "POST" and parts[2:] == ["join"]:
            return 200, {"room_id": self.room}
        if method == "PUT" and len(parts) == 5 and parts[2] == "send":
            content = json.loads(body)
            with self._lock:
                for e in self.events:
                    if e["txn"] == parts[4]:
                        return 200, {"event_id": e["event_id"]}
                event_id = f"$ev{next(self._ids)}"
                self.events.append(
                    {"event_id": event_id, "type": parts[3], "content": content, "txn": parts[4]}
                )
            return 200, {"event_id": event_id}
        return 404, {"errcode": "M_UNRECOGNIZED", "error": "Unrecognized request"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                path = self.path.split("?", 1)[0]
                status, doc = api.answer(
                    self.command, path, self.headers.get("Authorization") or "", body
                )
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = _serve

            def log_message(self, *args: object) -> None:
                pass

        return Handler
