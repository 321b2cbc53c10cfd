"""The dashboard's remote-answer routes (issue 15): the permission requests waiting for an answer
and the one way to answer them. Both need the dashboard's token or a signed-in page's session
secret (server.route checks it).

An answer is accepted once, only with the request's nonce, only while the request is pending
(lookout.remote.requests.answer); wrong nonces and unknown ids count as failures per source
address, and too many of them get 429 for a while."""

from __future__ import annotations

import threading
import time

from lookout import words
from lookout.remote import requests, shown
from lookout.web.routing import Request, Response, Routes, error, json_response

ROUTES = Routes()
route = ROUTES.route
FAIL_LIMIT = 10
FAIL_WINDOW_S = 300.0


class _Failures:
    """Failed answers per source address in a sliding window (in memory: a restart forgets)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_source: dict[str, list[float]] = {}

    def _recent(self, source: str, now: float) -> list[float]:
        times = [t for t in self._by_source.get(source, []) if now - t < FAIL_WINDOW_S]
        if times:
            self._by_source[source] = times
        else:
            self._by_source.pop(source, None)
        return times

    def limited(self, source: str) -> bool:
        with self._lock:
            return len(self._recent(source, time.monotonic())) >= FAIL_LIMIT

    def add(self, source: str) -> None:
        with self._lock:
            now = time.monotonic()
            self._by_source[source] = [*self._recent(source, now), now]


FAILURES = _Failures()


def _now_ms() -> int:
    return words.now_ms()


@route("GET", "/api/requests")
def list_requests(request: Request) -> Response:
    """The requests waiting for an answer (?all=1: also those of the last day that ended)."""
    now = _now_ms()
    everything = request.query.get("all") in ("1", "true", "yes")
    listed = [
        _public(rec, now)
        for rec in requests.load_all(request.app.state_dir)
        if everything or requests.is_open(rec, now)
    ]
    return json_response({"requests": listed})


def _public(rec: requests.Record, now_ms: int) -> dict[str, object]:
    """A request as the API lists it, with the one rule's verdict for this page (issue 31):
    `offers_allow`, and `why_no_allow` when not. The page follows it; it never decides."""
    why = shown.whole(rec)  # the page shows all of it: only this keeps Allow off
    return {**requests.public(rec, now_ms), "offers_allow": not why, "why_no_allow": why or None}


@route("POST", "/api/requests/{request_id}")
def answer(request: Request) -> Response:
    source = str(request.conn.client_address[0])
    if FAILURES.limited(source):
        response = error(
            429, "too many failed answers from this address", "wait a few minutes, then reload"
        )
        response.headers["Retry-After"] = str(int(FAIL_WINDOW_S))
        return response
    body = request.body
    if not isinstance(body, dict):
        return error(400, 'expected {"decision": "allow" or "deny", "nonce": "..."}')
    decision = body.get("decision")
    rec = requests.load(request.app.state_dir, request.params["request_id"])
    if rec is not None and str(decision).startswith("allow") and shown.whole(rec):
        return error(409, shown.whole(rec))
    try:
        rec = requests.answer(
            request.app.state_dir,
            request.params["request_id"],
            decision,
            body.get("nonce"),
            by=f"the dashboard ({source})",
            source=source,
            user_agent=str(request.headers.get("User-Agent") or "")[:200],
            now_ms=_now_ms(),
            answers=body.get("answers"),
            message=body.get("message"),
        )
    except requests.Refused as exc:
        if exc.status in (403, 404):
            FAILURES.add(source)
        return error(exc.status, str(exc))
    return json_response({"request": _public(rec, _now_ms())})
