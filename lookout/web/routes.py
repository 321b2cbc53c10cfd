"""The dashboard's routes: the page, the login URL, the JSON API and the event stream.

To add one, decorate a function `(Request) -> Response` with `@route(METHOD, PATH)`; see
routing.Routes.route for what a route gets for free (authentication, Origin check, JSON body)."""

from __future__ import annotations

import json
import os
import queue
from urllib.parse import unquote

from lookout import words
from lookout.web import auth
from lookout.web.hub import Message
from lookout.web.routing import Request, Response, Routes, error, json_response

PAGE_LIMIT_MAX = 200
HEARTBEAT_S = 15.0
STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}

ROUTES = Routes()
route = ROUTES.route


@route("GET", "/", auth=False)
def page(request: Request) -> Response:
    return _static("index.html")


@route("GET", "/static/{name}", auth=False)
def static(request: Request) -> Response:
    return _static(request.params["name"])


def _static(name: str) -> Response:
    kind = STATIC_TYPES.get(os.path.splitext(name)[1])
    path = os.path.join(STATIC_DIR, name)
    # A fixed set of file types from one directory; the pattern already excludes "/".
    if kind is None or name.startswith(".") or not os.path.isfile(path):
        return error(404, "not found")
    with open(path, "rb") as f:
        return Response(200, f.read(), kind)


@route("GET", "/login", auth=False)
def login_page(request: Request) -> Response:
    """The sign-in link's page: its script reads the code from the fragment (`#code=`), which no
    request line, log or Referer carries, and exchanges it at /api/login."""
    return _static("index.html")


@route("POST", "/api/login", auth=False)
def login(request: Request) -> Response:
    """A one-time login code for a page session: its id and, this once, its key (the page keeps
    the key where its script can use but not read it, and signs each request with it; see
    lookout.web.auth). Never a cookie."""
    from lookout.web.remote import FAIL_WINDOW_S, FAILURES

    source = str(request.conn.client_address[0])
    if FAILURES.limited(source):
        response = error(429, "too many failed sign-ins from this address", "wait a few minutes")
        response.headers["Retry-After"] = str(int(FAIL_WINDOW_S))
        return response
    code = request.body.get("code") if isinstance(request.body, dict) else None
    now_ms = words.now_ms()
    keys = request.app.keys
    if not auth.redeem(request.app.state_dir, code, now_ms, keys.started_ms):
        FAILURES.add(source)
        return error(
            401,
            "this sign-in link was used already or has expired",
            "run `lookout serve --url` for a new one (it works once, within 5 minutes)",
        )
    session, key, expires_ms = keys.new_session(now_ms)
    return json_response(
        {"session": session, "key": auth.b64(key), "expires_ms": expires_ms, "now_ms": now_ms}
    )


@route("POST", "/api/hello", auth=False)
def hello(request: Request) -> Response:
    """A page proves the server before it sends it anything signed: `{"session", "challenge"}`
    gets `{"proof": MAC of the challenge with the session's key, "now_ms"}`, or 401 with
    `reason` (`restarted`, `expired`, `revoked`). Nothing here is worth replaying."""
    body = request.body if isinstance(request.body, dict) else {}
    session, challenge = body.get("session"), body.get("challenge")
    if not isinstance(challenge, str) or not 16 <= len(challenge) <= 128:
        return error(400, 'expected {"session": "...", "challenge": "..."}')
    now_ms = words.now_ms()
    refused = request.app.keys.session_refused(session, now_ms)
    if refused is not None:
        return error(401, auth.SIGNED_OUT[refused], auth.SIGN_IN_HINT, reason=refused)
    proof = request.app.keys.proof(str(session), challenge)
    return json_response({"proof": proof, "now_ms": now_ms})


@route("GET", "/api/sessions")
def sessions(request: Request) -> Response:
    """The `lookout status --json` object (`?all=1`: ended sessions too)."""
    include_ended = request.query.get("all") in ("1", "true", "yes")
    body = request.app.hub.snapshot(include_ended)
    from lookout.jump import locate

    locate.tmux_json(body["sessions"], request.app.state_dir)  # live, as status --json has it
    body["host"] = request.app.host_name
    return json_response(body)


@route("GET", "/api/sessions/{session_id}/events")
def events(request: Request) -> Response:
    try:
        limit = int(request.query.get("limit", "50"))
        before = int(request.query["before"]) if request.query.get("before") else None
    except ValueError:
        return error(400, "limit and before must be whole numbers")
    if not 1 <= limit <= PAGE_LIMIT_MAX:
        return error(400, f"limit must be between 1 and {PAGE_LIMIT_MAX}")
    records, older = request.app.hub.source.events(
        unquote(request.params["session_id"]), before, limit
    )
    return json_response({"events": records, "next": older})


@route("POST", "/api/sessions/{session_id}/jump")
def jump(request: Request) -> Response:
    """Switch this machine's most recently active tmux client (or kitty/WezTerm window) to the
    session's pane: what `lookout jump SESSION` does, for the page's Jump button."""
    from lookout.errors import LookoutError
    from lookout.jump import locate

    session_id = unquote(request.params["session_id"])
    try:
        landed = locate.jump_to(session_id, state_dir=request.app.state_dir)
    except LookoutError as exc:
        status = 404 if str(exc).startswith("no session ") else 409
        return error(status, str(exc), exc.hint)
    where = f"{landed.via} {landed.target}"
    return json_response(
        {"message": f"switched to {landed.project or '?'} in {where}", "via": landed.via,
         "target": landed.target, "client": landed.client}
    )  # fmt: skip


@route("GET", "/api/stream")
def stream(request: Request) -> Response | None:
    """Server-Sent Events: a snapshot, then one message per change, a heartbeat when quiet."""
    app = request.app
    if not app.streams.acquire(blocking=False):
        return error(503, "too many open streams", "close some dashboard tabs")
    conn = request.conn
    app.hub.refresh()  # what changed before this stream opened belongs in its snapshot only
    sub = app.hub.subscribe()
    try:
        conn.send_response(200)
        conn.security_headers()
        conn.send_header("Content-Type", "text/event-stream; charset=utf-8")
        conn.send_header("Cache-Control", "no-store")
        conn.send_header("Connection", "close")
        conn.send_header("X-Accel-Buffering", "no")
        conn.end_headers()
        conn.close_connection = True
        write = conn.wfile.write
        write(b"retry: 2000\n\n")
        _send(write, ("snapshot", _snapshot(request)))
        while True:
            if sub.resync:
                sub.resync = False
                sub.drain()
                _send(write, ("snapshot", _snapshot(request)))
            try:
                message = sub.queue.get(timeout=HEARTBEAT_S)
            except queue.Empty:
                message = ("heartbeat", {"now_ms": words.now_ms()})
            _send(write, message)
    except OSError:
        return None  # the page went away (closed tab, network): nothing to answer
    finally:
        app.hub.unsubscribe(sub)
        app.streams.release()


def _snapshot(request: Request) -> dict[str, object]:
    body = request.app.hub.snapshot(include_ended=True)
    body["host"] = request.app.host_name
    return body


def _send(write: object, message: Message) -> None:
    name, data = message
    payload = json.dumps(data, separators=(",", ":"))
    write(f"event: {name}\ndata: {payload}\n\n".encode())  # type: ignore[operator]
