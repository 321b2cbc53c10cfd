"""When a usage or rate limit lifts, read from what the client printed or wrote. Pure: the
caller says when the text was printed (`at_ms`, the event's or the transcript line's own time
stamp) and which time zone a time without one is in (the local one: the client runs here).

Every form, with where it was seen, is in docs/statuses.md ("Usage limits"):
- the transcript's API error line (Claude Code 2.1.332): `quotaLimits.resetsAt` /
  `apiErrorParams.rate_limit_info.resetsAt`, epoch seconds: exact, preferred;
- `Claude AI usage limit reached|1749924000`: epoch seconds after the bar;
- `… resets 12:45pm (Europe/Berlin)`, `… resets Nov 29, 6:19pm (Europe/Berlin)`,
  `… resets Sep 15 at 7pm`, `Your limit will reset at 3pm (America/Santiago).`, a 24-hour time
  (`… reset at 16:09`), a date alone (`resets Aug 8`): a wall time, in the zone named in
  parentheses, else the local one; a time without a date is its next occurrence;
- `resets in 3h 20m`, `try again in 5 days 22 hours 11 minutes`, `Please try again in 20s`,
  `Retrying in 2892 seconds`: a duration from `at_ms`;
- `resets at 2026-01-17T13:59:59+00:00`: an RFC 3339 time (the API's reset headers' form).

A text none of these fits gives None: lookout says nothing rather than guess."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from datetime import datetime, tzinfo
    from typing import Any

# A bare wall time names the next such moment after the text was printed, give or take this:
# the client shows the reset to the minute (11:15am for 11:15:49), and may print it a moment after.
SLACK_MS = 60_000
# Nothing lifts further out than this (the weekly limit is the longest): a stamp past it is no
# reset time but noise.
HORIZON_MS = 35 * 86400 * 1000
_MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}
_UNITS = {
    "d": 86400,
    "day": 86400,
    "days": 86400,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
}
# The patterns, compiled on first use: `re` (with enum) is ~10 ms a reader without a limit to
# read never pays (`lookout status --line`).
_EPOCH = r"usage limit reached\|(\d{9,11})\b"
_RELATIVE = (
    r"\b(?:resets?|try(?:ing)? again|retry(?:ing)?|available again)\s+in\s+"
    r"((?:\d+(?:\.\d+)?\s*[a-z]+[\s,]*(?:and\s+)?)+)"
)
_ISO = (
    r"\breset(?:s)?(?:\s+at)?\s+"
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d))"
)
_DATE = (
    r"(?:(?P<mon>[A-Za-z]{3})[a-z]*\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?"
    r"(?:,?\s+(?P<year>\d{4}))?)"
)


def _time(n: str) -> str:
    # 3pm, 12:45 pm, or a 24-hour time with its minutes (16:09)
    return (
        rf"(?P<hour{n}>\d{{1,2}})(?:(?::(?P<min{n}>\d\d))?\s*(?P<ampm{n}>[ap]\.?m\.?)"
        rf"|:(?P<h24min{n}>\d\d)\b)"
    )


_WALL = (
    r"\b(?:resets?|reset\s+at|resets\s+at|try\s+again\s+at)\s+"
    rf"(?:{_DATE}(?:,?\s*(?:at\s+)?{_time('')})?|{_time('2')})"
    r"(?:\s*\((?P<tz>[A-Za-z][A-Za-z0-9_+\-/]{0,63})\))?"
)
_COMPILED: dict[str, re.Pattern[str]] = {}
# A text without any of these words names no reset time: not worth `re`.
_WORDS = ("reset", "again", "retry", "limit reached|")


def _pattern(source: str) -> re.Pattern[str]:
    found = _COMPILED.get(source)
    if found is None:
        import re

        found = _COMPILED[source] = re.compile(source, re.I)
    return found


def from_entry(line: dict[str, Any]) -> int | None:
    """The reset time (epoch ms) the client wrote on its API error line, when it did."""
    params = line.get("apiErrorParams")
    info = params.get("rate_limit_info") if isinstance(params, dict) else None
    for holder in (line.get("quotaLimits"), info):
        if isinstance(holder, dict):
            resets = holder.get("resetsAt")
            if isinstance(resets, (int, float)) and not isinstance(resets, bool) and resets > 0:
                return int(resets * 1000)
    return None


def from_text(text: str, at_ms: int, local: tzinfo | None = None) -> int | None:
    """The reset time (epoch ms) a message states, printed at `at_ms`; None when it states none
    lookout can read. `local`: the zone of a wall time that names none (default: this host's)."""
    lowered = text.lower()
    if not any(word in lowered for word in _WORDS):
        return None
    for read in (_epoch, _relative, _iso, _wall):
        found = read(text, at_ms, local)
        if found is not None:
            return found if abs(found - at_ms) <= HORIZON_MS else None
    return None


def _epoch(text: str, at_ms: int, local: tzinfo | None) -> int | None:
    m = _pattern(_EPOCH).search(text)
    return int(m.group(1)) * 1000 if m else None


def _relative(text: str, at_ms: int, local: tzinfo | None) -> int | None:
    m = _pattern(_RELATIVE).search(text)
    if not m:
        return None
    seconds = 0.0
    for amount, unit in _pattern(r"(\d+(?:\.\d+)?)\s*([a-z]+)").findall(m.group(1)):
        factor = _UNITS.get(unit.lower())
        if factor is None:
            break  # "in 5 minutes or so": what came before still counts
        seconds += float(amount) * factor
    return at_ms + int(seconds * 1000) if seconds > 0 else None


def _iso(text: str, at_ms: int, local: tzinfo | None) -> int | None:
    m = _pattern(_ISO).search(text)
    if not m:
        return None
    from datetime import datetime

    stamp = m.group(1).replace("Z", "+00:00")
    try:
        return int(datetime.fromisoformat(stamp).timestamp() * 1000)
    except ValueError:
        return None


def _zone(name: str | None, local: tzinfo | None) -> tzinfo | None:
    """The named zone (IANA: Europe/Berlin, Etc/GMT+5, UTC), else the local one; None for a
    name this host's zone database does not know (then nothing is guessed)."""
    if not name:
        return local if local is not None else local_zone()
    if name.upper() in ("UTC", "GMT", "Z"):
        from datetime import UTC

        return UTC
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except (ValueError, KeyError, OSError, ImportError):
        return None


def local_zone() -> tzinfo:
    """This host's zone with its rules (TZ, else /etc/localtime), so that a wall time across a
    DST change still means the right moment; its offset now when neither can be read."""
    import os
    from datetime import datetime
    from zoneinfo import ZoneInfo

    name = (os.environ.get("TZ") or "").lstrip(":")
    try:
        if name and not name.startswith("/"):
            return ZoneInfo(name)
        path = name or "/etc/localtime"
        real = os.path.realpath(path)
        if "/zoneinfo/" in real:
            return ZoneInfo(real.split("/zoneinfo/", 1)[1])
        with open(path, "rb") as f:
            return ZoneInfo.from_file(f)
    except (ValueError, KeyError, OSError):
        zone = datetime.now().astimezone().tzinfo
        assert zone is not None
        return zone


def _wall(text: str, at_ms: int, local: tzinfo | None) -> int | None:
    m = _pattern(_WALL).search(text)
    if not m:
        return None
    zone = _zone(m.group("tz"), local)
    if zone is None:
        return None
    from datetime import datetime, timedelta

    printed = datetime.fromtimestamp(at_ms / 1000, zone)
    clock = _clock(m)
    if clock is None:
        return None
    hour, minute = clock
    if m.group("mon"):
        return _on_date(m, printed, hour, minute)
    # A time alone is the next such moment (the client adds the date when it is further out).
    moment = printed.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if _ms(moment) < at_ms - SLACK_MS:
        moment = _same_wall_time(moment + timedelta(days=1), hour, minute)
    return _ms(moment)


def _clock(m: re.Match[str]) -> tuple[int, int] | None:
    """(hour, minute) on the 24-hour clock; midnight for a date with no time; None for a time
    no clock shows (25:00)."""
    n = "" if m.group("hour") is not None else "2"
    if m.group(f"hour{n}") is None:
        return 0, 0
    hour = int(m.group(f"hour{n}"))
    if m.group(f"ampm{n}") is None:  # 16:09
        minute = int(m.group(f"h24min{n}"))
        return (hour, minute) if hour < 24 and minute < 60 else None
    minute = int(m.group(f"min{n}") or 0)
    if not 1 <= hour <= 12 or minute >= 60:
        return None
    return hour % 12 + (12 if m.group(f"ampm{n}").lower().startswith("p") else 0), minute


def _on_date(m: re.Match[str], printed: datetime, hour: int, minute: int) -> int | None:
    month = _MONTHS.get(m.group("mon").lower()[:3])
    if month is None:
        return None
    year = int(m.group("year")) if m.group("year") else printed.year
    try:
        moment = printed.replace(
            year=year, month=month, day=int(m.group("day")), hour=hour, minute=minute, second=0
        )
    except ValueError:
        return None
    if not m.group("year") and _ms(moment) < _ms(printed) - 86400 * 1000:
        try:
            moment = moment.replace(year=year + 1)  # "Jan 2" printed on Dec 30
        except ValueError:
            return None
    return _ms(moment)


def _same_wall_time(day: datetime, hour: int, minute: int) -> datetime:
    # The next day's same wall time (across a DST change the offset is the zone's then).
    return day.replace(hour=hour, minute=minute, second=0, microsecond=0, fold=0)


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
