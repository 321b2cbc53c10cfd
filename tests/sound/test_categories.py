"""lookout's mapping contract (lookout/sound/categories.py): which CESP category each kind plays,
as docs/notifications.md publishes it, and for the intents the state machine really makes from
captured Claude Code payloads (a rate limit's StopFailure plays resource.limit)."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from lookout import events, machine, words
from lookout.sound.categories import (
    CATEGORIES,
    KIND_CATEGORY,
    LIMIT_ERRORS,
    PLAYED,
    category_for,
)
from tests.helpers import ROOT, payload

_clock = itertools.count(1_800_000_000_000, 1000)


def intents_after(*stems: str, **last: Any) -> list[Any]:
    """The intents the real state machine makes from the last of these captured payloads (with
    `last`'s fields over it), the others fed to the same session before it."""
    session = None
    intents: list[Any] = []
    for i, stem in enumerate(stems):
        body = {**payload(stem), "session_id": "s-sound", **(last if i == len(stems) - 1 else {})}
        event = events.parse(body, {}, next(_clock), f"d-{stem}", None)
        session, _record, intents = machine.apply(session, event)
    return intents


def test_every_kind_has_its_category_or_none() -> None:
    # A new kind must say what it plays (None is an answer): this fails until it does.
    assert set(words.KINDS) <= set(KIND_CATEGORY)
    assert {c for c in KIND_CATEGORY.values() if c is not None} <= set(CATEGORIES)
    mapped = {c for c in KIND_CATEGORY.values() if c is not None} | {"resource.limit"}
    assert mapped == set(PLAYED)  # resource.limit: an error that is a limit


@pytest.mark.parametrize(
    ("kind", "category"),
    [
        ("permission", "input.required"),
        ("question", "input.required"),
        ("plan", "input.required"),
        ("elicitation", "input.required"),
        ("input", "input.required"),
        ("idle", "input.required"),
        ("limit_lifted", "input.required"),
        ("error", "task.error"),
        ("stuck", "task.error"),
        ("done", "task.complete"),
        ("subagent_done", "task.complete"),
        ("session_start", "session.start"),
        ("session_end", "session.end"),
        ("message", None),
        ("resolved", None),
        ("not-a-kind", None),
    ],
)
def test_the_category_of_each_kind(kind: str, category: str | None) -> None:
    assert category_for(kind, {}) == category


@pytest.mark.parametrize(
    ("summary", "category"),
    [
        ("rate_limit", "resource.limit"),
        ("rate_limit: API Error: 429", "resource.limit"),
        ("billing_error: credits", "resource.limit"),
        ("max_output_tokens", "resource.limit"),
        ("server_error: API Error: 500", "task.error"),
        ("authentication_failed", "task.error"),
        ("the build broke: rate_limit", "task.error"),
        ("", "task.error"),
    ],
)
def test_a_failed_turn_on_a_limit_plays_resource_limit(summary: str, category: str) -> None:
    assert category_for("error", {"summary": summary}) == category
    assert category_for("error", {"error": "rate_limit", "summary": summary}) == "resource.limit"


def test_the_intents_of_real_payloads_map_as_documented() -> None:
    limit = intents_after("SessionStart-startup", "UserPromptSubmit", "StopFailure-rate_limit")
    assert [(i["kind"], category_for(i["kind"], i)) for i in limit] == [("error", "resource.limit")]
    failed = intents_after(
        "SessionStart-startup", "UserPromptSubmit", "StopFailure", error="server_error"
    )
    assert [(i["kind"], category_for(i["kind"], i)) for i in failed] == [("error", "task.error")]
    asked = intents_after("SessionStart-startup", "UserPromptSubmit", "PermissionRequest-Bash")
    assert [category_for(i["kind"], i) for i in asked] == ["input.required"]
    done = intents_after("SessionStart-startup", "UserPromptSubmit", "Stop")
    assert [(i["kind"], category_for(i["kind"], i)) for i in done] == [("done", "task.complete")]


def documented() -> dict[str, str | None]:
    """The mapping table of docs/notifications.md's Sound section: kind -> category."""
    text = (ROOT / "docs" / "notifications.md").read_text(encoding="utf-8")
    section = text.split("### Which sound for which notification", 1)[1]
    rows = section.split("| lookout kind | CESP category |", 1)[1].split("\n\n", 1)[0]
    table: dict[str, str | None] = {}
    for row in rows.strip().splitlines()[1:]:
        kinds, category = (cell.strip() for cell in row.strip("|").split("|")[:2])
        first = re.match(r"`([a-z.]+)`", category)
        value = first.group(1) if first else None  # "none (...)"
        assert value is not None or category.startswith("none"), row
        for kind in re.findall(r"`([a-z_]+)`", kinds.split("(")[0]):
            table[kind] = value
    return table


def test_the_documented_table_is_the_map() -> None:
    assert documented() == KIND_CATEGORY
    text = (ROOT / "docs" / "notifications.md").read_text(encoding="utf-8")
    limits = text.split("when the turn failed on a limit (", 1)[1].split(")", 1)[0]
    assert set(re.findall(r"`([a-z_]+)`", limits)) == set(LIMIT_ERRORS)
