"""The one checker every config section uses: where a problem is blamed, how a key path reads,
and that every problem comes out in one ConfigError."""

from __future__ import annotations

import pytest

from lookout.config import check


def test_a_key_the_project_file_set_is_blamed_on_it() -> None:
    c = check.Checker("config.toml", {"channels": {"d": {"enabled": False}}}, "api/lookout.toml")
    c.error(("channels", "d", "enabled"), "set here")
    c.error(("channels", "d", "type"), "set by the user")
    c.error(("rules", 0, "when"), "an array the project did not replace")
    assert c.errors == [
        "api/lookout.toml: channels.d.enabled: set here",
        "config.toml: channels.d.type: set by the user",
        "config.toml: rules[0].when: an array the project did not replace",
    ]


def test_an_array_the_project_replaced_is_blamed_on_it() -> None:
    c = check.Checker("config.toml", {"rules": [{"when": ["done"]}]}, "api/lookout.toml")
    c.error(("rules", 0, "when", 0), "bad")
    assert c.errors == ["api/lookout.toml: rules[0].when[0]: bad"]


def test_done_raises_every_problem_at_once() -> None:
    c = check.Checker("config.toml")
    c.done()  # nothing found: nothing raised
    assert not c.expect(("a",), True, int, "an integer")  # a bool is no integer
    c.unknown_keys(("b",), {"urgncy": 1}, ("urgency", "app_name"))
    with pytest.raises(check.ConfigError) as caught:
        c.done()
    assert caught.value.errors == [
        "config.toml: a: expected an integer, got bool",
        "config.toml: b.urgncy: unknown key (did you mean 'urgency'?) (expected one of urgency,"
        " app_name)",
    ]
    assert caught.value.hint == "see config.example.toml for every key"


def test_did_you_mean_only_for_a_near_miss() -> None:
    assert check.did_you_mean("ntfi", ("ntfy", "webhook")) == " (did you mean 'ntfy'?)"
    assert check.did_you_mean("pager", ("ntfy", "webhook")) == ""
    assert check.did_you_mean(3, ("ntfy",)) == ""
