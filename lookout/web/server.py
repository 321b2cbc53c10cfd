"""The dashboard's HTTP server: routes, authentication, security headers, the event stream.

Every route but the page itself, its static files and the sign-in exchanges needs `Authorization:
Bearer` with the token (scripts) or `Authorization: Lookout ...`, a request signed with a page
session's key (see lookout.web.auth). No cookie is ever read: a browser attaches cookies by
itself, also for other ports' pages, a header only our own page's script sends. Payload text
only ever leaves here as JSON."""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import sys
import threading
import time
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from lookout import store, words
from lookout.web import auth, away, fleethub, remote, report, routes, steer
from lookout.web.hub import Hub
from lookout.web.routing import Request, Response, Route, error

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
# Connections served at once (one thread each; an open stream holds one): more are closed at
# once, so a flood of idle connections can neither take the user's process quota nor keep the
# page down once it stops.
MAX_CONNECTIONS = 96
MAX_STREAMS = 64
# A request (its line, headers and body; on TLS the handshake too) must arrive within this, in
# total: a client that sends a header line every few seconds is cut, not waited for.
REQUEST_DEADLINE_S = 10.0
MAX_BODY = 64 * 1024


# Every route the dashboard serves: the page and its API, the remote answers (issue 15), the
# week's report, steering (issue 33: say, interrupt, start), and on the fleet's hub the other
# hosts' requests and sessions (issue 42).
ROUTES: list[Route] = [
    *routes.ROUTES,
    *remote.ROUTES,
    *report.ROUTES,
    *steer.ROUTES,
    *away.ROUTES,
    *fleethub.ROUTES,
]


class Dashboard(ThreadingHTTPServer):
    """The server: one thread per connection, at most MAX_CONNECTIONS (an open stream holds
    one), all sharing the hub; one watchdog thread cuts requests past their deadline."""

    daemon_threads = True  # open streams never keep the process from exiting
    request_queue_size = 64

    def __init__(
        self,
        bind: str,
        port: int,
        hub: Hub,
        token: str,
        state_dir: str,
        tls: ssl.SSLContext | None = None,
        host_name: str | None = None,
    ) -> None:
        self.address_family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        self.hub = hub
        self.state_dir = state_dir
        self.keys = auth.Keys(state_dir, token)
        self.tls = tls
        self.host_name = host_name or socket.gethostname()
        self.loopback_only = is_loopback(bind)
        # The names a browser may call this server by (DNS rebinding: any other name is a page
        # of someone else's that resolves to this address).
        self.names = {
            n.lower().rstrip(".") for n in (self.host_name, socket.gethostname(), bind) if n
        }
        self.streams = threading.BoundedSemaphore(MAX_STREAMS)
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._deadlines: dict[int, tuple[float, Any]] = {}  # thread id -> (deadline, socket)
        self._deadlines_lock = threading.Lock()
        self._closing = threading.Event()
        super().__init__((bind, port), RequestHandler)
        threading.Thread(target=self._watchdog, name="lookout-deadlines", daemon=True).start()

    @property
    def token(self) -> str:
        return self.keys.token

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    # -- bounded connections, bounded time ------------------------------------------------------

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)  # full: closed at once, never queued on a thread
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            self.arm(request)
            super().process_request_thread(request, client_address)
        finally:
            self.disarm()
            self.slots.release()

    def arm(self, sock: Any) -> None:
        """This thread's request must be read by REQUEST_DEADLINE_S from now."""
        with self._deadlines_lock:
            self._deadlines[threading.get_ident()] = (time.monotonic() + REQUEST_DEADLINE_S, sock)

    def disarm(self) -> None:
        with self._deadlines_lock:
            self._deadlines.pop(threading.get_ident(), None)

    def _watchdog(self) -> None:
        while not self._closing.wait(0.2):
            now = time.monotonic()
            with self._deadlines_lock:
                late = [k for k, (due, _) in self._deadlines.items() if due <= now]
                socks = [self._deadlines.pop(k)[1] for k in late]
            for sock in socks:
                try:
                    sock.shutdown(socket.SHUT_RDWR)  # the blocked read returns at once
                except OSError:
                    pass

    def server_close(self) -> None:
        self._closing.set()
        super().server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return  # a client that went away (reset, broken pipe, cut at its deadline)
        store.log_error(self.state_dir, f"lookout serve: {traceback.format_exc()}")

    def finish_request(self, request: Any, client_address: Any) -> None:
        # The TLS handshake runs here, in the connection's own thread, so a slow or silent
        # client never holds up accept().
        if self.tls is not None:
            request.settimeout(10)
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                return
        super().finish_request(request, client_address)


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address literal: never a name that merely starts with "127."."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class RequestHandler(BaseHTTPRequestHandler):
    server: Dashboard
    protocol_version = "HTTP/1.1"
    server_version = "lookout"
    sys_version = ""
    timeout = 30  # a request must arrive within this; an idle stream's writes too

    def log_message(self, format: str, *args: Any) -> None:
        pass  # request lines are nobody's business: never log them

    def handle_one_request(self) -> None:
        # Each request on a kept-alive connection gets its own deadline, waiting included.
        self.server.arm(self.connection)
        super().handle_one_request()

    def do_GET(self) -> None:
        self.server.disarm()  # the request is read: a stream may now stay open
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_HEAD(self) -> None:
        self._send(error(HTTPStatus.METHOD_NOT_ALLOWED, "HEAD is not supported"), body=False)

    def _dispatch(self, method: str) -> None:
        self._body_read = False
        try:
            response = self._handle(method)
        except Exception as exc:  # one bad request must not stop the dashboard
            store.log_error(self.server.state_dir, f"lookout serve: {traceback.format_exc()}")
            response = error(500, f"internal error: {type(exc).__name__}", "see errors.log")
        if method != "GET" and not self._body_read:
            # A body left unread (refused before it was read) must not be taken for the next
            # request on this connection.
            self.close_connection = True
        if response is not None:
            self._send(response)

    def _handle(self, method: str) -> Response | None:
        url = urlsplit(self.path)
        if not self._host_allowed():
            return error(421, "unexpected Host header", "open the address `lookout serve` printed")
        allowed: list[str] = []
        for candidate in ROUTES:
            match = candidate.pattern.match(url.path)
            if match is None:
                continue
            if candidate.method != method:
                allowed.append(candidate.method)
                continue
            query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            request = Request(
                method, url.path, match.groupdict(), query, self.headers, self.server, self
            )
            return self._run(candidate, request)
        if allowed:
            return error(405, f"{method} is not allowed here")
        return error(404, "not found")

    def _host_allowed(self) -> bool:
        """Only the names this server answers to: `localhost` and loopback addresses, and on
        another bind also its own address, host name and any address literal (a rebinding page
        always has a name of its own). A DNS-rebinding page at another name gets nothing."""
        host = self.headers.get("Host", "")
        if host.startswith("["):
            name = host[1:].split("]", 1)[0] if "]" in host else ""
        else:
            name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        if not name:
            return False
        if is_loopback(name):
            return True
        if self.server.loopback_only:
            return False
        return _is_address(name) or name.lower().rstrip(".") in self.server.names

    def _run(self, route: Route, request: Request) -> Response | None:
        header = self.headers.get("Authorization", "")
        if route.auth and not header.startswith(("Bearer ", f"{auth.SCHEME} ")):
            return _unauthorized("this request carries no token")
        raw = b""
        if request.method == "POST":
            read = self._read_body()
            if isinstance(read, Response):
                return read
            raw = read
        if route.auth:
            denied = self._authenticate(header, request.method, raw)
            if denied is not None:
                return denied
        if request.method == "POST":
            try:
                request.body = json.loads(raw or b"null")
            except (ValueError, UnicodeDecodeError):
                return error(400, "the body is not JSON")
        return route.handler(request)

    def _authenticate(self, header: str, method: str, body: bytes) -> Response | None:
        """The token (scripts), or a page's request signed with its session key."""
        now_ms = words.now_ms()
        if header.startswith("Bearer "):
            if auth.matches(self.server.token, header[len("Bearer ") :].strip()):
                return None
            return _unauthorized("the token or sign-in is not (any more) valid")
        refused = self.server.keys.verify(header, method, self.path, body, now_ms)
        if refused is None:
            return None
        return _unauthorized(refused, refused)

    def _read_body(self) -> bytes | Response:
        if self.headers.get_content_type() != "application/json":
            return error(415, "expected Content-Type: application/json")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return error(411, "Content-Length required")
        if not 0 <= length <= MAX_BODY:
            return error(413, f"the body is over {MAX_BODY} bytes")
        raw: bytes = self.rfile.read(length)
        self._body_read = True
        self.server.disarm()
        return raw

    # -- output --------------------------------------------------------------------------------

    def security_headers(self) -> None:
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        if self.server.tls is not None:
            self.send_header("Strict-Transport-Security", "max-age=31536000")

    def _send(self, response: Response, body: bool = True) -> None:
        self.send_response(response.status)
        self.security_headers()
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in response.headers.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if body:
            self.wfile.write(response.body)


def _unauthorized(message: str, reason: str | None = None) -> Response:
    if reason in auth.SIGNED_OUT:
        response = error(401, auth.SIGNED_OUT[reason], auth.SIGN_IN_HINT, reason=reason)
    else:
        response = error(401, message, auth.SIGN_IN_HINT)
    response.headers["WWW-Authenticate"] = 'Bearer realm="lookout"'
    return response
