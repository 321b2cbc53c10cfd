"""What the agents' mock model APIs share (test_codex, test_gemini, test_opencode): a
ThreadingHTTPServer on 127.0.0.1 in a daemon thread, used as a context manager, quiet, 404 to a
GET. Each API answers a POST in its own `post(request, body)`; `reply` sends a whole answer."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackAPI:
    PREFIX = ""  # what the client's base URL adds to the server's address ("/v1")

    def __init__(self) -> None:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self.send_error(404)

            def do_POST(self) -> None:
                api.post(self, self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def post(self, request: BaseHTTPRequestHandler, body: bytes) -> None:
        raise NotImplementedError

    @staticmethod
    def reply(request: BaseHTTPRequestHandler, raw: bytes, kind: str, status: int = 200) -> None:
        request.send_response(status)
        request.send_header("Content-Type", kind)
        request.send_header("Content-Length", str(len(raw)))
        request.end_headers()
        request.wfile.write(raw)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.PREFIX}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
