"""The vocabulary is defined once at run time (lookout/words.py) and once for the type checker
(the Literals in lookout/shapes.py): the two must say the same words, in the same order."""

from __future__ import annotations

import time
from typing import get_args

from lookout import shapes, words


def test_the_statuses_match_the_literals() -> None:
    assert get_args(shapes.Status) == words.STATUSES
    assert get_args(shapes.ChildStatus) == words.CHILD_STATUSES


def test_the_reasons_and_kinds_match_the_literals() -> None:
    assert get_args(shapes.Reason) == words.ATTENTION_KINDS
    assert get_args(shapes.LifeKind) == words.LIFE_KINDS
    assert get_args(shapes.Kind) == words.KINDS
    assert get_args(shapes.ContentLevel) == words.CONTENT_LEVELS


def test_every_word_is_said_once() -> None:
    for values in (words.CHILD_STATUSES, words.KINDS, words.CONTENT_LEVELS):
        assert len(set(values)) == len(values)


def test_now_ms_is_the_wall_clock_in_milliseconds() -> None:
    before = int(time.time() * 1000)
    now = words.now_ms()
    after = int(time.time() * 1000)
    assert isinstance(now, int) and before <= now <= after
