"""What goes on the bus: a session's public state at a content level, a host's summary, and the
Home Assistant discovery configs. Pure functions; stdlib only."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any

from lookout import mask, version
from lookout.config.fleet import FleetConfig
from lookout.fleet import topics
from lookout.sessions import public
from lookout.words import SUMMARY_CHARS

SCHEMA = 1

MASK = mask.MASK


def scrub(text: str) -> str:
    """`text` with the credential-looking parts replaced by … (the one shared masker: the bus
    is read by other machines, and a command is the session's summary)."""
    return mask.mask(text)


def _first_line(text: str) -> str:
    for line in text.split("\n"):
        if line.strip():
            return line.strip()
    return ""


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _home(path: object) -> object:
    if not isinstance(path, str):
        return path
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def session_message(session: Mapping[str, Any], host: str, content: str) -> dict[str, Any]:
    """A session as `lookout status --json` shows it, with `host`, at a content level:
    full (everything, credentials masked), summary (one line, ≤140 characters, home as ~) or
    none (no summary, no working directory)."""
    out = public(session)
    summary = out.get("summary") or ""
    if content == "none":
        out["summary"] = ""
        out["cwd"] = None
        out["title"] = out.get("project") or ""  # a name the user typed may say what they do
    elif content == "summary":
        out["summary"] = _short(scrub(_first_line(summary)), SUMMARY_CHARS)
        out["cwd"] = _home(out.get("cwd"))
    else:
        out["summary"] = scrub(summary)
    out["host"] = host
    out["schema"] = SCHEMA
    return out


def encode(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def host_summary(messages: list[dict[str, Any]], host: str) -> dict[str, Any]:
    """The host at a glance (the Home Assistant state topic): counts and the most urgent session.
    `messages` are session_message() results."""
    counts = {"attention": 0, "working": 0, "idle": 0, "ended": 0}
    for m in messages:
        if m.get("status") in counts:
            counts[m["status"]] += 1
    waiting = [m for m in messages if m.get("status") == "attention"]
    # The longest-waiting attention first: it has been blocked on you the longest.
    waiting.sort(key=lambda m: str(m.get("updated_at") or ""))
    urgent: dict[str, Any] = {}
    if waiting:
        m = waiting[0]
        urgent = {
            "session_id": m.get("session_id"),
            "project": m.get("project"),
            "reason": m.get("reason"),
            "detail": m.get("detail"),
            "summary": m.get("summary"),
            "since": m.get("updated_at"),
            "text": f"{m.get('project') or '?'}: {m.get('reason') or 'attention'}",
        }
    return {
        "host": host,
        "needs_you": bool(waiting),
        **counts,
        "sessions": len(messages),
        "most_urgent": urgent,
        "schema": SCHEMA,
    }


def ha_device(cfg: FleetConfig) -> dict[str, Any]:
    """What every entity of this host shares: its device, its origin, and its availability (the
    host's `online`: unavailable while the bridge is not running)."""
    node = topics.ha_node(cfg.host)
    return {
        "availability": [
            {
                "topic": topics.online(cfg.topic_prefix, cfg.host),
                "payload_available": "true",
                "payload_not_available": "false",
            }
        ],
        "device": {
            "identifiers": [node],
            "name": f"lookout {cfg.host}",
            "manufacturer": "lookout",
            "model": "lookout bridge",
            "sw_version": version.version(),
        },
        "origin": {"name": "lookout", "sw_version": version.version()},
    }


def ha_discovery(cfg: FleetConfig) -> list[tuple[str, dict[str, Any]]]:
    """(topic, config) per Home Assistant entity of this host: a binary sensor "needs you" and a
    sensor with the attention count (the most urgent session as its attributes)."""
    node = topics.ha_node(cfg.host)
    state = topics.summary(cfg.topic_prefix, cfg.host)
    common: dict[str, Any] = {
        "state_topic": state,
        "json_attributes_topic": state,
        "json_attributes_template": "{{ value_json.most_urgent | tojson }}",
        **ha_device(cfg),
        "qos": 1,
    }
    needs_you = {
        **common,
        "name": "Needs you",
        "unique_id": f"{node}_needs_you",
        "value_template": "{{ 'ON' if value_json.needs_you else 'OFF' }}",
        "payload_on": "ON",
        "payload_off": "OFF",
        "icon": "mdi:account-alert",
    }
    attention = {
        **common,
        "name": "Attention",
        "unique_id": f"{node}_attention",
        "value_template": "{{ value_json.attention }}",
        "state_class": "measurement",
        "unit_of_measurement": "sessions",
        "icon": "mdi:bell-alert",
    }
    p = cfg.home_assistant_prefix
    return [
        (topics.ha_config(p, "binary_sensor", cfg.host, "needs_you"), needs_you),
        (topics.ha_config(p, "sensor", cfg.host, "attention"), attention),
    ]
