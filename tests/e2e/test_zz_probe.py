from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from .harness import ClaudePane, Sandbox

pytestmark = pytest.mark.e2e
OUT = Path("/tmp/truth-probe.log")


def watch(d: Path, stop: threading.Event, t0: float) -> None:
    last: dict[str, str] = {}
    while not stop.is_set():
        for f in d.glob("*.json") if d.exists() else []:
            try:
                text = f.read_text()
            except OSError:
                continue
            if last.get(f.name) != text:
                last[f.name] = text
                with OUT.open("a") as o:
                    o.write(f"{time.monotonic() - t0:7.2f} {f.name} {text}\n")
        time.sleep(0.05)


def mark(t0: float, what: str) -> None:
    with OUT.open("a") as o:
        o.write(f"{time.monotonic() - t0:7.2f} MARK {what}\n")


def test_probe(sandbox: Sandbox) -> None:
    sandbox.trust_project(idle_ms=2000)
    mcp = sandbox.root / "mcp.json"
    server = Path(__file__).with_name("sleeper_mcp.py")
    mcp.write_text(json.dumps({"mcpServers": {"sleeper": {"command": "python3", "args": [str(server)]}}}))
    t0 = time.monotonic()
    stop = threading.Event()
    th = threading.Thread(target=watch, args=(sandbox.home / ".claude" / "sessions", stop, t0), daemon=True)
    th.start()
    try:
        with ClaudePane(sandbox, "--permission-mode", "plan") as pane:
            pane.ready()
            mark(t0, "plan ready")
            pane.type("[[bash: touch fallback-marker]]")
            pane.wait_screen("Auto mode can't check actions", timeout=20)
            mark(t0, "fallback drawn")
            time.sleep(8)
            pane.keys("Escape")
            mark(t0, "fallback Esc")
            time.sleep(2)
        with ClaudePane(sandbox, "--permission-mode", "manual") as pane:
            pane.ready()
            pane.type("[[ask: Which colour?]]")
            pane.wait_screen("Enter to select", timeout=20)
            mark(t0, "question drawn")
            time.sleep(1.5)
            pane.keys("Enter")
            mark(t0, "question Enter")
            time.sleep(3)
    finally:
        stop.set()
        th.join()
