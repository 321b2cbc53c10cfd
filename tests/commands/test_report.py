"""`lookout report` through the real entry point over the recorded week of
tests/fixtures/ledger (made by the real hook runner; its README hand-counts every figure)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lookout import ledger, store
from lookout.commands import main as cli
from lookout.commands import report
from tests.fixtures.ledger import build
from tests.helpers import FIXTURES

WEEK = FIXTURES / "ledger" / "state"
UNTIL_MS = build.BASE_MS + 7 * 86400 * 1000


@pytest.fixture
def week(state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(WEEK, state_dir)
    monkeypatch.setattr(report.time, "time", lambda: UNTIL_MS / 1000)
    return state_dir


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert cli.main(["report", "--json", *args]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_the_committed_week_is_what_the_runner_records(tmp_path: Path) -> None:
    build.build(tmp_path / "again")
    names = sorted(p.name for p in WEEK.iterdir())
    assert names == ["events.jsonl", "events.jsonl.1", "events.jsonl.2"]  # rotation is read
    for name in names:
        assert (tmp_path / "again" / name).read_bytes() == (WEEK / name).read_bytes(), name


def test_the_week_matches_the_hand_count(week: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys)
    assert data["since"] == build.BASE_MS and data["until"] == UNTIL_MS
    assert (data["episodes"], data["wait_s"], data["p50_s"], data["p95_s"]) == (
        20,
        613.1,
        9.5,
        90.0,
    )
    assert data["by_project"] == [
        {"project": "web", "episodes": 7, "wait_s": 493.0, "p50_s": 25.0, "p95_s": 300.0},
        {"project": "api", "episodes": 12, "wait_s": 105.1, "p50_s": 6.5, "p95_s": 30.0},
        {"project": "cli", "episodes": 1, "wait_s": 15.0, "p50_s": 15.0, "p95_s": 15.0},
    ]
    assert [(r["reason"], r["episodes"], r["wait_s"]) for r in data["by_reason"]] == [  # type: ignore[attr-defined, index]
        ("error", 1, 300.0),
        ("permission", 17, 178.1),
        ("plan", 1, 90.0),
        ("question", 1, 45.0),
    ]
    assert [(r["tool"], r["episodes"], r["wait_s"]) for r in data["by_tool"]] == [  # type: ignore[attr-defined, index]
        (None, 1, 300.0),
        ("Bash", 13, 120.1),
        ("ExitPlanMode", 1, 90.0),
        ("AskUserQuestion", 1, 45.0),
        ("mcp__github__search_repositories", 2, 40.0),
        ("WebFetch", 2, 18.0),
    ]
    assert [(r["agent"], r["episodes"], r["wait_s"]) for r in data["by_agent"]] == [  # type: ignore[attr-defined, index]
        ("claude", 19, 598.1),
        ("codex", 1, 15.0),
    ]
    assert data["longest"] == {
        "session_id": build.SESSIONS["web2"][0],
        "project": "web",
        "reason": "error",
        "tool": None,
        "summary": (
            "rate or usage limit reached: API Error: Request rejected (429) · mock error 429"
        ),
        "since": build.BASE_MS + 3 * 86400 * 1000 + 10_000,
        "wait_s": 300.0,
        "title": "web",  # no snapshot kept: its project
    }
    assert data["idle"] == {"gaps": 4, "idle_s": 1250.0, "p50_s": 295.0, "p95_s": 600.0}


def test_since_and_project_narrow_it(week: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The last 3 days: only the Codex dialog (day 5) and the -p one (day 6) began in them.
    data = run_json(capsys, "--since", "3d")
    assert (data["episodes"], data["wait_s"]) == (2, 15.1)
    data = run_json(capsys, "--since", "8d", "--project", "a*")
    # api: the week's 12 plus the day before's 50 s npm test.
    assert (data["episodes"], data["wait_s"]) == (13, 155.1)
    assert [r["project"] for r in data["by_project"]] == ["api"]  # type: ignore[attr-defined, index]
    assert data["idle"] == {"gaps": 3, "idle_s": 650.0, "p50_s": 120.0, "p95_s": 470.0}


def test_the_table_says_it_in_words(week: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["report", "--project", "web"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "7 episodes, 8m 13s in all; time to unblock: median 25s, p95 5m 00s"
    assert out[2].startswith("longest: 5m 00s web (error rate or usage limit reached: API Error")
    assert out[3] == "idle after finishing: 1 times, 10m 00s in all, median 10m 00s"
    assert "permission                      4      58s      14s      25s" in out


def test_a_session_is_named_by_its_title_as_status_names_it(
    week: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 32 item 4: the client's name for the session (`/rename billing-fix`, kept in its
    snapshot from the registry) names it in the report, as in `lookout status`."""
    sid = build.SESSIONS["web2"][0]
    (week / store.SESSIONS).mkdir()
    store.write_json_atomic(
        store.session_file(str(week), sid),
        {"session_id": sid, "project": "web", "name": "billing-fix", "name_source": "user"},
    )
    assert cli.main(["report", "--project", "web"]) == 0
    assert (
        capsys.readouterr()
        .out.splitlines()[2]
        .startswith("longest: 5m 00s billing-fix (error rate or usage limit reached: API Error")
    )
    assert run_json(capsys)["longest"]["title"] == "billing-fix"  # type: ignore[index]


def test_nothing_recorded_is_a_report_of_nothing(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["report"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "no dialog waited on you in this period"
    data = run_json(capsys)
    assert (data["episodes"], data["wait_s"], data["by_project"], data["longest"]) == (
        0,
        0,
        [],
        None,
    )


def test_a_bad_since_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["report", "--since", "7 days"])
    assert exc.value.code == 2
    assert "invalid duration" in capsys.readouterr().err


def test_percentiles_are_the_documented_ones() -> None:
    assert ledger.p50([]) == 0 and ledger.p50([3, 1]) == 2 and ledger.p50([5, 1, 3]) == 3
    values = list(range(1, 21))
    assert ledger.p95(values) == 19 and ledger.p95([7]) == 7
    assert ledger.p95(list(range(1, 101))) == 95


REAL = FIXTURES / "ledger-real" / "state"


def test_the_real_client_recording_matches_the_hand_count(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # tests/fixtures/ledger-real/README.md counts these figures by hand from the lines.
    shutil.copytree(REAL, state_dir)
    data = run_json(capsys, "--since", "3650d")
    assert (data["episodes"], data["wait_s"], data["p50_s"], data["p95_s"]) == (
        2,
        1.764,
        0.882,
        0.902,
    )
    row = {"episodes": 2, "wait_s": 1.764, "p50_s": 0.882, "p95_s": 0.902}
    assert data["by_project"] == [{"project": "project", **row}]
    assert data["by_reason"] == [{"reason": "permission", **row}]
    assert data["by_tool"] == [{"tool": "Bash", **row}]
    assert data["by_agent"] == [{"agent": "claude", **row}]
    longest = data["longest"]
    assert isinstance(longest, dict)
    assert (longest["session_id"][:8], longest["wait_s"]) == ("af9d3955", 0.902)
    assert cli.main(["suggest", "--json", "--since", "3650d"]) == 0
    (found,) = json.loads(capsys.readouterr().out)["suggestions"]
    assert (found["rule"], found["count"], found["wait_s"]) == (
        "Bash(touch made-by-claude)",
        2,
        1.764,
    )
