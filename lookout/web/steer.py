"""The dashboard's steering routes (issue 33): a signed-in page (or a script with the token) says
something to a session, interrupts it, or starts one, through lookout.steer.core as the surface
`dashboard`. Every check is the core's ([steer] enabled, the rate per surface, the text, the
session's state, the way); here only what HTTP adds: the body's shape, that the path names one
recorded session by its whole id, and how many actions run at once.

The core blocks (keys into tmux, up to a few seconds for the prompt hook; `start` up to 30 s for
the first hook). Each request has its own thread (server.Dashboard), so the stream and the other
requests go on meanwhile; MAX_ACTIONS bounds how many threads steering may hold, and one session
takes one action at a time (two messages typed into one pane at once would interleave)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import unquote

from lookout import paths, store
from lookout.config import steer as steer_config
from lookout.errors import LookoutError
from lookout.steer import agents, core, launch
from lookout.steer.shapes import Outcome, SteerError
from lookout.web.routing import Request, Response, Routes, error, json_response
from lookout.words import STEER_AGENTS

ROUTES = Routes()
route = ROUTES.route

SOURCE = "dashboard"  # the core's surface (lookout.steer.shapes.SURFACES): its own rate limit
MAX_ACTIONS = 4  # steering actions running at once, over all sessions
# A refusal's HTTP status by the core's reason; any other reason is the session's state (409).
STATUS = {
    "disabled": 403,
    "surface": 403,
    "project": 403,
    "agent": 403,  # not in [steer] agents, or one lookout cannot steer
    "text": 400,
    "too_long": 400,
    "rate": 429,
    "no_session": 404,
    "failed": 502,
    "no_hook": 504,
}


class _Running:
    """The actions running now: at most MAX_ACTIONS, one per session. Never waits: a request
    over the bound is refused at once (its thread is not held)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._sessions: set[str] = set()

    @contextmanager
    def slot(self, session_id: str | None) -> Iterator[Response | None]:
        with self._lock:
            refused = self._refuse(session_id)
            if refused is None:
                self._count += 1
                if session_id is not None:
                    self._sessions.add(session_id)
        try:
            yield refused
        finally:
            if refused is None:
                with self._lock:
                    self._count -= 1
                    self._sessions.discard(session_id or "")

    def _refuse(self, session_id: str | None) -> Response | None:
        if session_id is not None and session_id in self._sessions:
            return error(
                409,
                "another steering action on this session is still running",
                "wait for its outcome, then try again",
                reason="busy",
            )
        if self._count >= MAX_ACTIONS:
            return error(
                429,
                f"{MAX_ACTIONS} steering actions are running already",
                "wait for their outcomes, then try again",
                reason="busy",
            )
        return None


RUNNING = _Running()


def _run(session_id: str | None, action: Callable[[], Outcome]) -> Response:
    """The core's outcome as JSON (what `lookout say --json` prints), or its refusal: `error`,
    `hint` and `reason` (the core's), with an HTTP status that fits."""
    with RUNNING.slot(session_id) as busy:
        if busy is not None:
            return busy
        try:
            outcome = action()
        except SteerError as exc:
            response = error(STATUS.get(exc.reason, 409), str(exc), exc.hint, reason=exc.reason)
            if exc.reason == "rate":
                response.headers["Retry-After"] = "60"
            return response
        except LookoutError as exc:  # the config cannot be read, say: said, never a traceback
            return error(409, str(exc), exc.hint, reason="error")
    return json_response(outcome)


def _session(request: Request) -> str | Response:
    """The whole id of a recorded session the path names (never a prefix, project or title:
    the page addresses the card it shows), or 404."""
    session_id = unquote(request.params["session_id"])
    if store.read_session(request.app.state_dir, session_id) is None:
        return error(404, f"no session {session_id!r} is recorded", reason="no_session")
    return session_id


def _body(request: Request, allowed: dict[str, str]) -> dict[str, object] | Response:
    """The JSON object of the request, with only `allowed` keys, each a string (or absent)."""
    body = request.body if request.body is not None else {}
    shape = "{" + ", ".join(f'"{k}": {v}' for k, v in allowed.items()) + "}"
    if not isinstance(body, dict) or not set(body) <= set(allowed):
        return error(400, f"expected {shape}")
    if any(not isinstance(v, str) for v in body.values() if v is not None):
        return error(400, f"expected {shape}: each a string")
    return body


@route("GET", "/api/steer")
def settings(request: Request) -> Response:
    """What the page may offer: whether steering is on and, when it is, the projects and agents
    `start` takes (and which of those agents' programs are not on PATH) and the longest
    message. Off: how to turn it on, and nothing else."""
    try:
        cfg = steer_config.load()
    except LookoutError as exc:
        return json_response({"enabled": False, "error": str(exc), "hint": exc.hint})
    if not cfg.enabled:
        return json_response(
            {"enabled": False, "source": cfg.source, "hint": steer_config.HOW_TO_ENABLE}
        )
    # Only the directories `start` takes: one another user could write is left out.
    projects = [d for d in cfg.project_dirs() if launch.unsafe_dir(d) is None]
    return json_response(
        {
            "enabled": True,
            "source": cfg.source,
            "projects": [{"path": d, "name": paths.tilde(d)} for d in projects],
            "agents": list(cfg.agents),
            # Those `start` would refuse as not on PATH (this server's own, which start uses).
            "not_on_path": [a for a in cfg.agents if not _on_path(a)],
            "steerable": list(STEER_AGENTS),  # the agents say and interrupt know
            "max_chars": cfg.max_chars,
            "per_minute": cfg.per_minute,
        }
    )


def _on_path(agent: str) -> bool:
    keys = agents.keys(agent)
    return keys is not None and agents.program(keys) is not None


@route("POST", "/api/sessions/{session_id}/say")
def say(request: Request) -> Response:
    """`{"text": "...", "via": "pane" | "socket" (optional)}`: `lookout say`, for the card's
    message box. The text goes to the core exactly as it came."""
    session_id = _session(request)
    if isinstance(session_id, Response):
        return session_id
    body = _body(request, {"text": '"..."', "via": '"pane" or "socket" (optional)'})
    if isinstance(body, Response):
        return body
    text, via = body.get("text"), body.get("via")
    if not isinstance(text, str):
        return error(400, 'expected {"text": "..."}')
    if via is not None and via not in ("pane", "socket"):
        return error(400, 'via must be "pane" or "socket"')
    way = str(via) if via else None
    state = request.app.state_dir
    return _run(
        session_id, lambda: core.say(session_id, text, via=way, source=SOURCE, state_dir=state)
    )


@route("POST", "/api/sessions/{session_id}/interrupt")
def interrupt(request: Request) -> Response:
    """`lookout interrupt`, for the card's Interrupt button (the body: `{}`)."""
    session_id = _session(request)
    if isinstance(session_id, Response):
        return session_id
    body = _body(request, {})
    if isinstance(body, Response):
        return body
    state = request.app.state_dir
    return _run(session_id, lambda: core.interrupt(session_id, source=SOURCE, state_dir=state))


@route("POST", "/api/start")
def start(request: Request) -> Response:
    """`{"project": "/path", "agent": "claude" (optional), "prompt": "..." (optional)}`:
    `lookout start`, for the "New session" form; answers once the new session's first hook
    arrived (up to 30 s)."""
    body = _body(
        request,
        {"project": '"/path"', "agent": '"claude" (optional)', "prompt": '"..." (optional)'},
    )
    if isinstance(body, Response):
        return body
    project = body.get("project")
    if not isinstance(project, str) or not project:
        return error(400, 'expected {"project": "/path"}: one of GET /api/steer\'s projects')
    agent = str(body["agent"]) if body.get("agent") else None
    prompt = str(body["prompt"]) if body.get("prompt") else None  # an empty box: no prompt
    state = request.app.state_dir
    return _run(None, lambda: core.start(project, agent, prompt, source=SOURCE, state_dir=state))
