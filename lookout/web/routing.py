"""What a dashboard route is: the Request it gets, the Response it returns, and a table of them
(`Routes`), which each route module fills with its `@route` decorator and the server reads. No
route registers itself by being imported: the server lists the modules whose routes it serves."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lookout.web.server import Dashboard, RequestHandler


@dataclass
class Request:
    method: str
    path: str
    params: dict[str, str]  # from the route's pattern
    query: dict[str, str]
    headers: Any  # http.client.HTTPMessage
    app: Dashboard
    conn: RequestHandler  # the connection, for a route that streams
    body: Any = None  # the parsed JSON body of a POST


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def json_response(value: object, status: int = 200) -> Response:
    return Response(status, json.dumps(value).encode("utf-8"))


def error(status: int, message: str, hint: str | None = None, **more: str) -> Response:
    body: dict[str, str] = {"error": message}
    if hint:
        body["hint"] = hint
    body.update(more)
    return json_response(body, status)


Handler = Callable[[Request], Response | None]


@dataclass
class Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler
    auth: bool


class Routes(list[Route]):
    """One module's routes, in the order they are tried."""

    def route(self, method: str, path: str, *, auth: bool = True) -> Callable[[Handler], Handler]:
        """Add a handler for METHOD and a path pattern (`{name}` matches one path segment).
        Handlers get a Request and return a Response; POST handlers get the parsed JSON body and
        run only for same-origin (or Bearer-authenticated) requests (the server checks both)."""

        def register(handler: Handler) -> Handler:
            regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", path)
            self.append(Route(method, re.compile(f"^{regex}$"), handler, auth))
            return handler

        return register
