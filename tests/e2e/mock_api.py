"""A mock Anthropic Messages API for driving the real Claude Code client offline.

Standard library only; binds 127.0.0.1 and never opens any other socket. The reply to each
request is scripted by directives in the conversation's first user message, e.g.
``[[bash: touch x]] [[say: all done]]``: tool directives run in order, one tool_use per model
turn, then the ``say`` text (or a default) ends the turn. A test can also queue HTTP errors.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIRECTIVE = re.compile(r"\[\[(\w+):\s*(.*?)\]\]", re.S)
DEFAULT_TEXT = "OK from mock"
_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_mock_{next(_ids):06d}"


def _tool_input(kind: str, arg: str) -> tuple[str, dict[str, Any]]:
    """Map a directive to (tool name, tool input)."""
    if kind == "bash":
        return "Bash", {"command": arg, "description": "mock command"}
    if kind == "write":
        path, _, content = arg.partition("|")
        return "Write", {"file_path": path.strip(), "content": content}
    if kind == "ask":
        return "AskUserQuestion", {
            "questions": [
                {
                    "question": arg,
                    "header": "Choice",
                    "options": [
                        {"label": "Red", "description": "the red one"},
                        {"label": "Blue", "description": "the blue one"},
                    ],
                    "multiSelect": False,
                }
            ]
        }
    if kind == "plan":
        return "ExitPlanMode", {"plan": arg}
    if kind == "mcp":  # the sleeper server of tests/e2e/sleeper_mcp.py: `[[mcp: 20]]` sleeps 20 s
        return "mcp__sleeper__sleep", {"seconds": float(arg)}
    if kind == "tool":  # `[[tool:Bash:{"command": "echo a\\nb"}]]`: any tool, any JSON input
        name, _, raw = arg.partition(":")
        return name.strip(), json.loads(raw)
    if kind == "agent":
        return "Agent", {
            "description": "mock sub task",
            # `{{bash: x}}` in an agent's prompt becomes the agent's own `[[bash: x]]` directive.
            "prompt": arg.replace("{{", "[[").replace("}}", "]]"),
            "subagent_type": "general-purpose",
        }
    raise ValueError(f"unknown tool directive {kind!r}")


TOOL_DIRECTIVES = ("bash", "write", "ask", "plan", "agent", "mcp", "tool")
# A prompt holding this gets a reply that hangs mid-stream until the test releases it.
STALL = "[[stall]]"

# A subagent prompt containing this answers slowly, so that the parent's turn ends (Stop lists
# the agent as a running background task) before the agent finishes: `[[agent: hi (slow)]]`.
SLOW = "(slow)"
SLOW_DELAY_S = 2.0


@dataclass
class Reply:
    """One scripted answer: an HTTP error, or assistant content blocks."""

    status: int = 200
    text: str | None = None
    tool: tuple[str, dict[str, Any]] | None = None
    error_body: dict[str, Any] | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
    return "\n".join(parts)


def _prompt_index(body: dict[str, Any]) -> int:
    """The index of the user message whose directives script this reply: the newest one that
    carries a directive (a prompt typed again after Esc or No is scripted afresh), else the
    first user message."""
    messages = body.get("messages", [])
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    with_directive = [i for i in users if DIRECTIVE.search(_text_of(messages[i].get("content")))]
    if with_directive:
        return with_directive[-1]
    return users[0] if users else 0


def first_user_text(body: dict[str, Any]) -> str:
    """The text of the user message that scripts this reply (see _prompt_index)."""
    messages = body.get("messages", [])
    if not messages:
        return ""
    return _text_of(messages[_prompt_index(body)].get("content"))


def tool_uses_so_far(body: dict[str, Any]) -> list[str]:
    """Names of the tools called since the scripting prompt, in order."""
    names = []
    for message in body.get("messages", [])[_prompt_index(body) :]:
        if message["role"] == "assistant" and not isinstance(message["content"], str):
            names += [b.get("name", "") for b in message["content"] if b.get("type") == "tool_use"]
    return names


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t.get("name", "") for t in body.get("tools", []) or []}


def _is_compaction(body: dict[str, Any]) -> bool:
    # The client asks for a text-only summary; replaying the history's directives would be wrong.
    messages = body.get("messages") or [{}]
    return "Respond with TEXT ONLY" in _text_of(messages[-1].get("content"))


def scripted_reply(body: dict[str, Any]) -> Reply:
    """Default script: follow the directives of the conversation's first user message."""
    if _is_compaction(body):
        return Reply(text="Summary: the user said hello and the assistant answered.")
    text = first_user_text(body)
    directives = DIRECTIVE.findall(text)
    steps = [(k, a) for k, a in directives if k in TOOL_DIRECTIVES]
    called = tool_uses_so_far(body)
    done = sum(1 for name in called if name != "ToolSearch")
    offered = tool_names(body)
    if done < len(steps):
        name, tool_input = _tool_input(*steps[done])
        if name in offered:
            return Reply(tool=(name, tool_input))
        # A deferred tool (AskUserQuestion, ExitPlanMode in interactive mode) is loaded first
        # through ToolSearch, as a real model does; only once, so an absent tool cannot loop.
        if "ToolSearch" in offered and (not called or called[-1] != "ToolSearch"):
            return Reply(tool=("ToolSearch", {"query": f"select:{name}", "max_results": 1}))
    for kind, arg in directives:
        if kind == "error" and not called:
            code = int(arg)
            return Reply(status=code, error_body=error_body(code))
    says = [a for k, a in directives if k == "say"]
    # The subagent's conversation carries the agent prompt without the directive around it.
    delay = SLOW_DELAY_S if SLOW in text and not directives else 0.0
    return Reply(text=says[0] if says else DEFAULT_TEXT, delay_s=delay)


def error_body(status: int) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 529: "overloaded_error", 500: "api_error"}.get(
        status, "invalid_request_error"
    )
    return {"type": "error", "error": {"type": kind, "message": f"mock error {status}"}}


def sse_events(reply: Reply, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": _new_id("msg"),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 1},
            },
        },
    )
    yield "ping", {"type": "ping"}
    if reply.tool is not None:
        name, tool_input = reply.tool
        block = {"type": "tool_use", "id": _new_id("toolu"), "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool_input)}
        stop_reason = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply.text or DEFAULT_TEXT}
        stop_reason = "end_turn"
    yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 8},
        },
    )
    yield "message_stop", {"type": "message_stop"}


@dataclass
class MockAPI:
    """The server, its request log and its per-test script."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    queued: deque[Reply] = field(default_factory=deque)
    # A streaming reply to a conversation whose prompt holds STALL starts (message_start, ping)
    # and then sends nothing, the connection open, until `release` is set: a turn hung on a
    # live connection, its process alive (issue 32). `stalled` is set once one hangs.
    release: threading.Event = field(default_factory=threading.Event)
    stalled: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def fail_next(
        self,
        status: int,
        times: int = 1,
        message: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The next `times` requests fail with `status`; `message`: the error body's own
        message; `headers`: more response headers (retry-after, the rate-limit ones)."""
        body = error_body(status)
        if message is not None:
            body["error"]["message"] = message
        for _ in range(times):
            self.queued.append(Reply(status=status, error_body=body, headers=dict(headers or {})))

    def reply_for(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.queued:
                return self.queued.popleft()
        return scripted_reply(body)

    def start(self) -> MockAPI:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(
                self, status: int, ctype: str, payload: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                extra = dict(headers or {})
                if status == 429:
                    extra.setdefault("retry-after", "0")
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    body = {"input_tokens": 100} if "count_tokens" in self.path else {}
                    self._send(200 if body else 404, "application/json", json.dumps(body).encode())
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, "application/json", json.dumps(error_body(400)).encode())
                    return
                reply = api.reply_for(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    payload = json.dumps(reply.error_body or error_body(reply.status)).encode()
                    self._send(reply.status, "application/json", payload, reply.headers)
                    return
                model = body.get("model", "claude-mock")
                chunks = [
                    f"event: {name}\ndata: {json.dumps(data)}\n\n"
                    for name, data in sse_events(reply, model)
                ]
                if (
                    STALL in first_user_text(body)
                    and body.get("stream")
                    and not api.release.is_set()
                ):
                    self._stall(chunks)
                    return
                self._send(200, "text/event-stream", "".join(chunks).encode())

            def _stall(self, chunks: list[str]) -> None:
                # No Content-Length: the stream ends when the connection closes.
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write("".join(chunks[:2]).encode())  # message_start, ping
                self.wfile.flush()
                api.stalled.set()
                api.release.wait(600)
                self.wfile.write("".join(chunks[2:]).encode())
                self.wfile.flush()
                self.close_connection = True

            def do_GET(self) -> None:
                self._send(404, "application/json", b"{}")

            do_HEAD = do_GET

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> MockAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":  # manual use: python tests/e2e/mock_api.py
    import time

    with MockAPI() as mock:
        print(mock.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
