"""Turns the state machine's notification intents into a detached send (placeholder until the
notifications module lands). Must never block: the hook calls it on its own hot path."""

from __future__ import annotations


def handle(intents: list[dict[str, object]], state_dir: str) -> None:
    return None
