"""The hub's dashboard routes (issue 42): on the host that `[fleet] hub` names, served with
`--fleet`, the page answers the other hosts' permission requests and steers their sessions.
Nothing is decided here: a press is the owning host's opaque token, published with
lookout.fleet.hub.press for that host's bridge to answer (it verifies the token, as it does Home
Assistant's, and says what came of it); a steer message goes with lookout.fleet.hub.steer, and
the owning host runs it through its own `[steer]` and every check. Off the hub (no fleet, no
hub, another host named) every route here refuses and the page keeps the other hosts' cards
read-only.

Each route needs what every dashboard POST needs (the token or a signed page request, same
origin: server.RequestHandler). Allow follows the one rule (lookout.remote.shown): it is
offered, and taken, only when the page shows the whole input, as the owning host judged it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lookout.errors import LookoutError
from lookout.web import remote, steer
from lookout.web.routing import Request, Response, Routes, error, json_response

if TYPE_CHECKING:
    from lookout.config.fleet import FleetConfig
    from lookout.fleet.hub import FleetRequest
    from lookout.web.fleet import Waiting

ROUTES = Routes()
route = ROUTES.route

SURFACE = "dashboard"
NOT_HUB = "this dashboard is not the fleet's hub: other hosts' cards are read-only here"
NOT_HUB_HINT = (
    'set [fleet] hub = "<this host>" in every host\'s config and run `lookout serve --fleet`'
    " on the hub (docs/dashboard.md)"
)
DECISIONS = ("allow", "deny")


def _hub(request: Request) -> tuple[FleetConfig, Waiting] | None:
    """This server's fleet config and its live requests, when it serves the fleet's hub."""
    waiting = getattr(request.app.hub.source, "waiting", None)
    if waiting is None:
        return None
    return waiting.cfg, waiting


def _not_hub(request: Request, **more: str) -> Response:
    """403, naming the hub when this host's [fleet] names another one."""
    watched = getattr(request.app.hub.source, "fleet", None)
    cfg = getattr(watched, "cfg", None)
    hint = NOT_HUB_HINT
    if cfg is not None and cfg.hub:
        hint = f"the fleet's hub is {cfg.hub}: its `lookout serve --fleet` answers and steers"
    return error(403, NOT_HUB, hint, **more)


def _by(request: Request) -> str:
    return f"the dashboard ({request.conn.client_address[0]})"


def public(r: FleetRequest) -> dict[str, Any]:
    """A fleet request as the page gets it: where it waits, what runs (all of it, as its host
    escaped it) and whether Allow may be offered (its host's verdict by the one rule)."""
    return {
        "host": r["host"],
        "token": r["token"],
        "id": r["id"],
        "session_id": r["session_id"],
        "project": r["project"],
        "tool_name": r["tool_name"],
        "agent": r["agent"],
        "detail": r["text"],
        "expires_ms": r["expires_ms"],
        "offers_allow": r["allow"],
        "why_no_allow": None if r["allow"] else (r["why"] or "its host does not offer Allow here"),
    }


@route("GET", "/api/fleet/requests")
def waiting(request: Request) -> Response:
    """`{"hub": true, "host": ..., "requests": [...]}` on the hub; `{"hub": false}` elsewhere."""
    found = _hub(request)
    if found is None:
        return json_response({"hub": False, "requests": []})
    cfg, live = found
    body: dict[str, Any] = {
        "hub": True,
        "host": cfg.host,
        "requests": [public(r) for r in live.requests() if r["host"] != cfg.host],
    }
    if live.lost.is_set():
        body["problem"] = live.problem or f"lost the connection to the broker at {cfg.url}"
    return json_response(body)


@route("POST", "/api/fleet/requests/{host}/{token}")
def press(request: Request) -> Response:
    """`{"decision": "allow" | "deny"}` for the request the path names by its host and its
    token on the bus (a re-asked request has a new one): published to that host, then the
    outcome: `answered` (its host took the answer), `refused` (and why), or `no_answer`."""
    found = _hub(request)
    if found is None:
        return _not_hub(request, outcome="refused")
    cfg, live = found
    source = str(request.conn.client_address[0])
    if remote.FAILURES.limited(source):
        response = error(429, "too many failed answers from this address", "wait a few minutes")
        response.headers["Retry-After"] = str(int(remote.FAIL_WINDOW_S))
        return response
    body = request.body
    shaped = isinstance(body, dict) and set(body) == {"decision"}
    decision = body["decision"] if shaped else None
    if decision not in DECISIONS:
        return error(400, 'expected {"decision": "allow" or "deny"}')
    host, token = unquote(request.params["host"]), unquote(request.params["token"])
    r = live.get(host, token)
    if r is None or host == cfg.host:
        remote.FAILURES.add(source)
        return error(
            404,
            f"no request {token[:12]} of host {host!r} is waiting"
            " (answered, expired, or its host is away)",
            "reload the page",
            outcome="refused",
        )
    if decision == "allow" and not r["allow"]:
        return error(409, r["why"] or "Allow is not offered for this request", outcome="refused")
    if decision not in r["tokens"]:
        return error(409, f"{host} offers no {decision} for this request", outcome="refused")
    try:
        sent = _press(cfg, host, r["tokens"][str(decision)], _by(request))
    except LookoutError as exc:  # the broker's password is not in this server's environment
        return error(502, str(exc), exc.hint, outcome="refused")
    if sent.ok:
        return json_response(
            {"outcome": "answered", "decision": decision, "host": host, "text": sent.text}
        )
    if sent.text.startswith("no answer from"):  # hub.press's words for a silent host
        return error(504, sent.text, outcome="no_answer")
    return error(409, sent.text or f"{host} refused the answer", outcome="refused")


def _press(cfg: FleetConfig, host: str, token: str, by: str) -> Any:
    from lookout.fleet import hub

    return hub.press(cfg, host, token, surface=SURFACE, by=by)


def _session(request: Request) -> tuple[FleetConfig, str, str] | Response:
    """This hub's config, and the host and whole session id the path names: a session of
    another host that the fleet shows now."""
    found = _hub(request)
    if found is None:
        return _not_hub(request, reason="not_hub")
    cfg = found[0]
    host = unquote(request.params["host"])
    session_id = unquote(request.params["session_id"])
    if host == cfg.host:
        return error(
            400,
            "a session of this host is steered at /api/sessions/<id>/say",
            reason="local",
        )
    shown = request.app.hub.snapshot()["sessions"]
    if not any(s.get("host") == host and s["session_id"] == session_id for s in shown):
        return error(
            404, f"no session {session_id!r} of host {host!r} is in the fleet", reason="no_session"
        )
    return cfg, host, session_id



def _steer(request: Request, action: str, text: str = "") -> Response:
    found = _session(request)
    if isinstance(found, Response):
        return found
    cfg, host, session_id = found
    by = _by(request)

    def run() -> Response:
        from lookout.fleet import hub

        try:
            done = hub.steer(
                cfg, host, action, session=session_id, text=text, source=SURFACE, by=by
            )
        except LookoutError as exc:
            return error(502, str(exc), exc.hint, reason="error")
        body = {"ok": done.ok, "host": host, "lines": list(done.lines)}
        if done.ok:
            return json_response(body)
        return json_response({**body, "error": done.lines[0] if done.lines else "refused"}, 409)

    with steer.RUNNING.slot(f"{host}/{session_id}") as busy:
        return busy if busy is not None else run()


@route("POST", "/api/fleet/sessions/{host}/{session_id}/say")
def say(request: Request) -> Response:
    """`{"text": "..."}`: the message box on another host's card, sent as it came."""
    body = request.body
    if not isinstance(body, dict) or set(body) != {"text"} or not isinstance(body["text"], str):
        return error(400, 'expected {"text": "..."}')
    if not body["text"].strip():
        return error(400, "the message is empty", reason="text")
    return _steer(request, "say", body["text"])


@route("POST", "/api/fleet/sessions/{host}/{session_id}/interrupt")
def interrupt(request: Request) -> Response:
    """Interrupt on another host's card (the body: `{}`)."""
    if request.body not in (None, {}):
        return error(400, "expected {}")
    return _steer(request, "interrupt")
