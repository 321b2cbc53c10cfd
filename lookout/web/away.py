"""The dashboard's away switch (issue 41): the header's toggle reads it (`GET /api/away`, and the
stream's `away` messages) and turns it (`POST /api/away`), signed as every action of the page is,
recorded as an `Away` event with `dashboard` as its source (lookout.away). A turn counts against
the dashboard's steering rate ([steer] per_minute): a page cannot flip it faster than it may
steer. While away, Codex waits for an answer from afar before its own prompt."""

from __future__ import annotations

from lookout import away, words
from lookout.config import steer as steer_config
from lookout.errors import LookoutError
from lookout.steer import journal
from lookout.steer.shapes import SteerError
from lookout.web.routing import Request, Response, Routes, error, json_response

ROUTES = Routes()
route = ROUTES.route

SOURCE = "dashboard"  # lookout.away.SOURCES, and its own steering rate (journal.allow)
SHAPE = '{"away": true or false, "for": "1h" (optional, with true)}'


@route("GET", "/api/away")
def current(request: Request) -> Response:
    """`lookout away --json`: `{"away", "since_ms", "until_ms", "source"}`."""
    return json_response(away.read(request.app.state_dir))


@route("POST", "/api/away")
def turn(request: Request) -> Response:
    """`{"away": true, "for": "1h"}` (for: optional, a DURATION) or `{"away": false}`: the switch
    afterwards, and whether this changed it."""
    body = request.body
    if not isinstance(body, dict) or not set(body) <= {"away", "for"}:
        return error(400, f"expected {SHAPE}")
    on, duration = body.get("away"), body.get("for")
    if not isinstance(on, bool) or not (duration is None or isinstance(duration, str)):
        return error(400, f"expected {SHAPE}")
    state_dir = request.app.state_dir
    try:
        for_s = words.parse_duration(duration) if duration else None
        if for_s is not None and (not on or for_s <= 0):
            return error(400, '"for" goes with "away": true, and is above zero')
        journal.allow(state_dir, SOURCE, steer_config.load().per_minute)
        state, changed = away.turn(state_dir, on, source=SOURCE, for_s=for_s)
    except SteerError as exc:
        response = error(429, str(exc), exc.hint, reason=exc.reason)
        response.headers["Retry-After"] = "60"
        return response
    except LookoutError as exc:
        return error(400, str(exc), exc.hint)
    except OSError as exc:
        return error(409, f"the switch cannot be written: {exc}", "lookout doctor")
    return json_response({**state, "changed": changed})
