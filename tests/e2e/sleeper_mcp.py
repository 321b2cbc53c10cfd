"""A tiny MCP stdio server with one tool, `sleep`, that takes `seconds` to answer: the long
non-Bash tool of the attention matrix (nothing is observable from outside while it runs).

Run as `python3 sleeper_mcp.py`; speaks newline-delimited JSON-RPC 2.0 on stdin/stdout."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

TOOL = {
    "name": "sleep",
    "description": "Wait the given number of seconds, then say done.",
    "inputSchema": {
        "type": "object",
        "properties": {"seconds": {"type": "number"}},
        "required": ["seconds"],
    },
}


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method = request.get("method")
    if "id" not in request:
        return None  # a notification (notifications/initialized): no answer
    if method == "initialize":
        version = (request.get("params") or {}).get("protocolVersion") or "2024-11-05"
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "sleeper", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        seconds = float(((request.get("params") or {}).get("arguments") or {}).get("seconds", 1))
        time.sleep(min(max(seconds, 0.0), 120.0))
        result = {"content": [{"type": "text", "text": f"slept {seconds:g} s"}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> int:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        reply = answer(request) if isinstance(request, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
