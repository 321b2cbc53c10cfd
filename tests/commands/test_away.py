"""`lookout away`, through the real entry point: on, off, --for, --json, and each change an
`Away` event with its source."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lookout import away
from tests.helpers import lookout


def shown() -> dict[str, object]:
    done = lookout("away", "--json")
    assert (done.returncode, done.stderr) == (0, "")
    value: dict[str, object] = json.loads(done.stdout)
    return value


def away_lines(state_dir: Path) -> list[dict[str, object]]:
    lines = (state_dir / "events.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["event"] == "Away"]


def test_never_set_it_is_off_and_says_what_it_does(state_dir: Path) -> None:
    assert shown() == {"away": False, "since_ms": None, "until_ms": None, "source": None}
    done = lookout("away")
    assert done.stdout.startswith("away: off already: Codex asks at its own prompt at once")
    assert not state_dir.exists() or not (state_dir / "events.jsonl").exists()


def test_on_then_off_each_recorded_with_its_source(state_dir: Path) -> None:
    done = lookout("away", "on")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("away: on (from terminal)\nCodex: a permission request waits")
    on = shown()
    assert (on["away"], on["until_ms"], on["source"]) == (True, None, "terminal")
    assert lookout("away", "off").stdout.startswith("away: off (from terminal)\n")
    off = shown()
    assert (off["away"], off["source"]) == (False, "terminal")
    assert isinstance(off["since_ms"], int) and off["since_ms"] >= on["since_ms"]  # type: ignore[operator]
    lines = away_lines(state_dir)
    assert [(r["outcome"], r["source"], r["session_id"]) for r in lines] == [
        ("on", "terminal", ""),
        ("off", "terminal", ""),
    ]
    assert lines[0]["away"] == on and lines[1]["away"] == off
    # An off while off changes nothing and records nothing.
    again = lookout("away", "off")
    assert again.stdout.startswith("away: off (from terminal) already")
    assert len(away_lines(state_dir)) == 2
    mode = os.stat(state_dir / "away.json").st_mode & 0o777
    assert mode == 0o600
    # `lookout tail` shows them as lines of no session.
    tail = lookout("tail").stdout.splitlines()
    assert tail[-1].endswith("Away                — away off (from terminal)")


def test_for_sets_until_and_a_past_until_reads_as_off(state_dir: Path) -> None:
    done = lookout("away", "on", "--for", "1h30m")
    assert done.returncode == 0 and " until " in done.stdout.splitlines()[0]
    on = shown()
    assert on["until_ms"] == on["since_ms"] + 5400 * 1000  # type: ignore[operator]
    # Its end as any reader sees it, from the file's own until_ms.
    raw = json.loads((state_dir / "away.json").read_text())
    raw["until_ms"] = raw["since_ms"] + 1
    (state_dir / "away.json").write_text(json.dumps(raw))
    expired = shown()
    assert expired == {
        "away": False,
        "since_ms": raw["since_ms"] + 1,
        "until_ms": None,
        "source": "expired",
    }
    assert lookout("away").stdout.startswith("away: off (ran out at ")


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["off", "--for", "1h"], "--for goes with on"),
        (["--for", "1h"], "--for goes with on"),
        (["on", "--for", "0"], "--for needs a duration above zero"),
        (["on", "--for", "soon"], "invalid duration 'soon'"),
        (["maybe"], "invalid choice: 'maybe'"),
    ],
)
def test_bad_input_is_said(state_dir: Path, argv: list[str], error: str) -> None:
    done = lookout("away", *argv)
    assert done.returncode == 2 and error in done.stderr and "Traceback" not in done.stderr
    assert not (state_dir / "away.json").exists()


def test_a_newer_lookouts_file_is_off_and_left_alone(state_dir: Path) -> None:
    state_dir.mkdir(mode=0o700)
    newer = {"v": 2, "away": True, "since_ms": 1, "until_ms": None, "source": "terminal"}
    (state_dir / "away.json").write_text(json.dumps(newer))
    assert shown()["away"] is False  # never misread
    done = lookout("away", "on")
    assert done.returncode == 1 and done.stderr.startswith("error: ")
    assert "written by a newer lookout" in done.stderr and "Traceback" not in done.stderr
    assert json.loads((state_dir / "away.json").read_text()) == newer


def test_only_a_known_source_may_turn_it(state_dir: Path) -> None:
    with pytest.raises(ValueError, match="may not turn"):
        away.turn(str(state_dir), True, source="webhook")
    assert not (state_dir / "away.json").exists()


def test_status_its_line_and_json_show_it(state_dir: Path) -> None:
    assert lookout("status", "--line").stdout == "no sessions\n"
    assert json.loads(lookout("status", "--json").stdout)["away"]["away"] is False
    lookout("away", "on", "--for", "2h")
    assert lookout("status", "--line").stdout == "no sessions · away\n"
    body = json.loads(lookout("status", "--json").stdout)
    assert body["away"] == shown() and body["away"]["away"] is True
    table = lookout("status").stdout
    assert "away: on until " in table and "Codex waits for an answer from afar" in table
    lookout("away", "off")
    assert lookout("status", "--line").stdout == "no sessions\n"
    assert "away:" not in lookout("status").stdout


def test_every_steering_surface_may_turn_it() -> None:
    """`away`/`back` are steering commands on every chat surface (issue 41): the switch takes
    each surface that steers (away sits floors below steer/, so it keeps its own copy)."""
    from lookout.steer.shapes import SURFACES

    assert set(away.SOURCES) == set(SURFACES)
