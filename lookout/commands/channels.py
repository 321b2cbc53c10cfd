"""`lookout test [CHANNEL...]` and `lookout check-config`: the user's way to prove a channel
works and to see config errors with file, key path and expectation. Never run by a hook."""

from __future__ import annotations

import os
import sys
import time

from lookout import paths
from lookout.errors import LookoutError
from lookout.notify import config, sender, templates

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def check_config(project: str) -> int:
    gpath = config.global_path()
    try:
        cfg = config.load(project)
    except config.ConfigError as exc:
        for line in exc.errors:
            print(f"error: {line}", file=sys.stderr)
        _check_fleet(set(exc.errors))
        return 1
    if os.path.exists(gpath):
        print(
            f"{config.display(gpath)}: ok ({len(cfg['channels'])} channel(s), "
            f"{len(cfg['rules'])} rule(s))"
        )
    else:
        print(
            f"{config.display(gpath)}: not found, using the built-in default "
            f"(desktop alerts for attention, and for turns of 30 s or more)"
        )
    ppath = config.project_path(project)
    if ppath is not None:
        print(f"{config.display(ppath)}: ok (overrides the global config key by key)")
    for warning in config.warnings(cfg):
        print(f"warning: {warning}")
    return _check_fleet(set())


def _check_fleet(shown: set[str]) -> int:
    """[fleet], when there is one: its own errors (a TOML error was already printed)."""
    from lookout.fleet import config as fleet

    try:
        cfg = fleet.load()
    except fleet.NotConfigured:
        return 0
    except config.ConfigError as exc:
        for line in exc.errors:
            if line not in shown:
                print(f"error: {line}", file=sys.stderr)
        return 1
    extras = ", Home Assistant discovery" if cfg.home_assistant else ""
    print(
        f"fleet: ok ({cfg.url} as host {cfg.host}, topics {cfg.topic_prefix}/{cfg.host}/..., "
        f"content {cfg.content}{extras})"
    )
    for warning in fleet.warnings(cfg):
        print(f"warning: {warning}")
    return 0


def test_intent(project: str) -> dict[str, Any]:
    now_ms = int(time.time() * 1000)
    return {
        "kind": "message",
        "session_id": "lookout-test",
        "agent": "claude",
        "agent_id": None,
        "agent_type": None,
        "project": os.path.basename(project.rstrip("/")) or "lookout",
        "cwd": project,
        "reason": None,
        "tool_name": None,
        "summary": "test notification",
        "message": "Test notification from lookout.",
        "duration_ms": None,
        "episode": None,
        "ts_ms": now_ms,
        "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now_ms / 1000)),
        "tmux_pane": None,
        "pid": None,
    }


def test_channels(project: str, names: list[str]) -> int:
    cfg = config.load(project)
    available = cfg["channels"]
    unknown = [n for n in names if n not in available]
    if unknown:
        raise LookoutError(
            f"unknown channel {', '.join(repr(n) for n in unknown)} "
            f"(configured: {', '.join(available) or 'none'})",
            hint="lookout check-config shows the config lookout reads",
        )
    chosen = names or [n for n, ch in available.items() if ch["enabled"]]
    if not chosen:
        raise LookoutError("no enabled channel to test", hint="add a [channels.<name>] table")
    intent = test_intent(project)
    tasks = []
    for name in chosen:
        ch = available[name]
        values = templates.values(intent, ch["content"])
        msg = {
            "title": f"{values['project']} · lookout test",
            "body": f"Notifications from lookout reach you through '{name}'.",
            "kind": "message",
            "intent": intent,
            "values": values,
            "update": False,
        }
        tasks.append((name, ch, msg))
    state_dir = paths.state_dir()
    failed = 0
    for (name, _ch, _msg), (result, detail, _ref) in zip(
        tasks, sender.run_parallel(tasks), strict=True
    ):
        print(f"{name}: {result} ({detail})")
        failed += result != "sent"
        try:
            sender.record(state_dir, intent, name, result, f"lookout test: {detail}")
        except OSError:
            pass  # the terminal already shows the result
    return 1 if failed else 0
