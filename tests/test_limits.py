"""When a usage limit lifts, read from what the client printed: every form docs/statuses.md lists,
each with the text as it was seen (captured from Claude Code 2.1.332 here, or quoted in the issue
that reported it), in the zone it names."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from lookout import limits

BERLIN = ZoneInfo("Europe/Berlin")
TRANSCRIPTS = Path(__file__).parent / "fixtures" / "transcripts"


def ms(*when: int, zone: object = UTC) -> int:
    return int(datetime(*when, tzinfo=zone).timestamp() * 1000)  # type: ignore[arg-type, misc]


# 2026-11-27 10:45:37 UTC = 11:45:37 in Berlin (CET, UTC+1): when the texts were printed.
AT = ms(2026, 11, 27, 10, 45, 37)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Claude Code 2.1.332, captured here (OAuth session, the mock's unified rate-limit headers)
        ("You've hit your 5-hour limit · resets 12:45pm (Europe/Berlin)", ms(2026, 11, 27, 11, 45)),
        ("You've hit your 5-hour limit · resets 1pm (Europe/Berlin)", ms(2026, 11, 27, 12, 0)),
        (
            "You've hit your weekly limit · resets Nov 29, 6:19pm (Europe/Berlin)",
            ms(2026, 11, 29, 17, 19),
        ),
        (
            "You've hit your Opus limit · resets Nov 28, 11:45am (Europe/Berlin)",
            ms(2026, 11, 28, 10, 45),
        ),
        # 2.1.x, quoted in anthropics/claude-code#22946, #77082, #94390
        ("You've hit your limit · resets 10pm (America/New_York)", ms(2026, 11, 28, 3, 0)),
        ("You've hit your session limit · resets 8:30pm (Asia/Tokyo)", ms(2026, 11, 27, 11, 30)),
        ("You've hit your weekly limit · resets 5pm (America/Detroit)", ms(2026, 11, 27, 22, 0)),
        # 1.0.x, quoted in anthropics/claude-code#9236, #15064, #2087
        (
            "Claude usage limit reached. Your limit will reset at 3pm (America/Santiago).",
            ms(2026, 11, 27, 18, 0),
        ),
        (
            "Claude usage limit reached. Your limit will reset at 9am (America/Chicago).",
            ms(2026, 11, 27, 15, 0),
        ),
        (
            "Claude usage limit reached. Your limit will reset at 1pm (Etc/GMT+5).",
            ms(2026, 11, 27, 18, 0),
        ),
        # the 24-hour clock (issue 38): later today, or tomorrow once passed; zone or none
        ("Usage limit reached. Your limit will reset at 16:09", ms(2026, 11, 27, 15, 9)),
        ("Your limit will reset at 09:30 (Europe/Berlin).", ms(2026, 11, 28, 8, 30)),
        ("You've hit your limit · resets Nov 29, 18:19 (Europe/Berlin)", ms(2026, 11, 29, 17, 19)),
        ("Your limit will reset at 3pm (America/New_York)", ms(2026, 11, 27, 20, 0)),
        # no zone named: the local one (here Berlin)
        ("Claude usage limit reached. Your limit will reset at 12am.", ms(2026, 11, 27, 23, 0)),
        # the raw form older versions wrote (issue titles #2087, #9046, #11429): epoch seconds
        ("Claude AI usage limit reached|1795862749", 1795862749 * 1000),
        # durations from the moment it was printed
        ("You've hit your fast limit · resets in 3h 20m", AT + (3 * 3600 + 20 * 60) * 1000),
        ("Rate limited. Please try again in 20s.", AT + 20_000),
        ("Please try again in 1m30s.", AT + 90_000),
        (
            "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or"
            " try again in 5 days 22 hours 11\nminutes.",
            AT + ((5 * 24 + 22) * 3600 + 11 * 60) * 1000,
        ),
        ("API Error (429 …) · Retrying in 2892 seconds… (attempt 1/10)", AT + 2_892_000),
        # an RFC 3339 time, as the API's anthropic-ratelimit-*-reset headers give it
        ("limit reached, resets at 2026-11-28T13:59:59+00:00", ms(2026, 11, 28, 13, 59, 59)),
        # a date alone (2.1.332's spend limit "resets Aug 8"): its midnight
        ("spend limit reached · resets Dec 8 · request an increase", ms(2026, 12, 7, 23, 0)),
    ],
)
def test_every_form_gives_the_moment_it_lifts(text: str, expected: int) -> None:
    assert limits.from_text(text, AT, BERLIN) == expected


def test_a_time_alone_is_the_next_such_moment() -> None:
    # Printed at 11:45:37: "11:45am" is now (shown to the minute), "11:44am" is tomorrow's.
    assert limits.from_text("resets 11:45am (Europe/Berlin)", AT, BERLIN) == ms(
        2026, 11, 27, 10, 45
    )
    assert limits.from_text("resets 11:44am (Europe/Berlin)", AT, BERLIN) == ms(
        2026, 11, 28, 10, 44
    )


def test_a_date_without_a_year_past_new_year() -> None:
    printed = ms(2026, 12, 30, 20, 0)
    assert limits.from_text("resets Jan 2, 9am (Europe/Berlin)", printed, BERLIN) == ms(
        2027, 1, 2, 8, 0
    )


def test_a_wall_time_across_a_dst_change_keeps_its_zones_rules() -> None:
    # Printed on the eve of the spring change in Berlin: 3am the next morning is CEST (UTC+2).
    printed = ms(2026, 3, 28, 22, 0)
    assert limits.from_text("resets 10am (Europe/Berlin)", printed, BERLIN) == ms(2026, 3, 29, 8, 0)


@pytest.mark.parametrize(
    "text",
    [
        "API Error: Request rejected (429) · This request would exceed your account's rate limit."
        " Please try again later.",  # the API key's 429 (2.1.332): no time given
        "You've hit your limit · resets 10pm (Mars/Olympus)",  # a zone nobody knows: no guess
        "You've hit your weekly limit · resets Sep 15 at 7pm",  # passed already: a year out
        "resets today",
        "resets at 25:09",  # no clock shows it
        "resets at 13pm",
        "resets at 4:75pm",
        "",
    ],
)
def test_what_names_no_time_gives_none(text: str) -> None:
    assert limits.from_text(text, AT, BERLIN) is None


def test_a_date_with_at_reads_as_printed_by_2_1_263() -> None:
    # anthropics/claude-code#92834: "You've hit your weekly limit · resets Sep 15 at 7pm"
    printed = ms(2026, 9, 10, 12, 0)
    assert limits.from_text("resets Sep 15 at 7pm", printed, BERLIN) == ms(2026, 9, 15, 17, 0)


def test_the_transcripts_api_error_line_gives_the_exact_time() -> None:
    # tests/fixtures/transcripts/usage-limit.jsonl: 2.1.332's own line, resetsAt in seconds.
    lines = [json.loads(x) for x in (TRANSCRIPTS / "usage-limit.jsonl").read_text().splitlines()]
    error = next(line for line in lines if line.get("isApiErrorMessage"))
    assert limits.from_entry(error) == 1795780858 * 1000
    # The text it shows rounds down to the minute (13:00:58 reads "1pm"): the line wins.
    text = error["message"]["content"][0]["text"]
    assert text == "You've hit your 5-hour limit · resets 1pm (Europe/Berlin)"
    stamp = ms(2026, 11, 27, 10, 1, 1)
    assert limits.from_text(text, stamp, BERLIN) == ms(2026, 11, 27, 12, 0)
    assert limits.from_entry({"quotaLimits": {"resetsAt": "soon"}}) is None
    assert limits.from_entry({}) is None


def test_the_local_zone_follows_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/Chicago")
    assert limits.from_text("resets 9am", AT, None) == ms(2026, 11, 27, 15, 0)
