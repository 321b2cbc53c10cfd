"""config.example.toml is a working config that shows every key lookout understands."""

from __future__ import annotations

import tomllib
from typing import Any

from lookout import templates
from lookout.channels import base, registry
from lookout.config import files, notify, remote, sessions
from tests.helpers import ROOT

EXAMPLE = ROOT / "config.example.toml"


def every_key() -> set[str]:
    keys = {"channels", "rules", "templates", "title", "message", "default"}
    keys.update(base.COMMON_KEYS, notify.RULE_KEYS)
    for kind in registry.CHANNELS.values():
        keys.update(kind.KEYS)
    keys.add("remote")
    keys.update(remote.REMOTE_DEFAULTS)
    keys.add("sessions")
    keys.update(sessions.SESSIONS_DEFAULTS)
    return keys


def keys_in(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            out.add(key)
            keys_in(value, out)
    elif isinstance(node, list):
        for item in node:
            keys_in(item, out)
    return out


def test_example_parses_and_validates() -> None:
    raw = tomllib.loads(EXAMPLE.read_text())
    cfg = files.validate(raw, "config.example.toml")
    assert set(cfg["channels"]) == {
        "desktop", "phone", "homelab", "team", "log", "other", "chat", "workspace", "room",
        "speaker",
    }  # fmt: skip
    assert {ch["type"] for ch in cfg["channels"].values()} == set(registry.NAMES)


def test_example_shows_every_key() -> None:
    shown = keys_in(tomllib.loads(EXAMPLE.read_text()), set())
    assert every_key() - shown == set()


def test_example_names_every_kind_and_placeholder() -> None:
    text = EXAMPLE.read_text()
    for kind in notify.KINDS:
        assert kind in text, kind
    for placeholder in templates.PLACEHOLDERS:
        assert "{" + placeholder + "}" in text, placeholder


def test_as_the_default_config_it_sends_nothing_off_the_machine() -> None:
    # install.py writes this file as the default config: only local channels may be on.
    cfg = files.validate(tomllib.loads(EXAMPLE.read_text()), "config.example.toml")
    enabled = {name for name, ch in cfg["channels"].items() if ch.get("enabled", True)}
    assert {cfg["channels"][name]["type"] for name in enabled} <= {"desktop"}


def test_readme_explains_every_key() -> None:
    # The README's reference moved to docs/: every key is explained on one of its pages.
    readme = "".join(p.read_text() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
    assert sorted(k for k in every_key() if f"`{k}`" not in readme) == []
