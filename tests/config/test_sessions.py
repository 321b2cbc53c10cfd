"""[sessions]: stuck_after_s, validated, read from your own file only, and which timed kinds the
rules send (what a hook asks before it starts the sender's timers)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lookout.commands import main as cli
from lookout.config import check, files
from lookout.config.sessions import timed_kinds


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def cfg_file(isolated_env: Path) -> Path:
    return Path(os.environ["LOOKOUT_CONFIG"])


def errors_of(text: str, cfg_file: Path) -> list[str]:
    write(cfg_file, text)
    with pytest.raises(check.ConfigError) as exc:
        files.load()
    return exc.value.errors


def test_stuck_after_s_defaults_to_ten_minutes_and_is_validated(cfg_file: Path) -> None:
    assert files.load()["sessions"] == {"stuck_after_s": 600}
    write(cfg_file, "[sessions]\nstuck_after_s = 90\n")
    assert files.load()["sessions"] == {"stuck_after_s": 90}
    write(cfg_file, "[sessions]\nstuck_after_s = 0\n")
    assert files.load()["sessions"] == {"stuck_after_s": 0}
    G = "~/.config/lookout/config.toml"
    assert errors_of("[sessions]\nstuck_after_s = 0.5\n", cfg_file) == [
        f"{G}: sessions.stuck_after_s: expected 0 (off) or 1 to 86400 seconds, got 0.5"
    ]
    assert errors_of('[sessions]\nstuck_after_s = "10m"\nstuck = 1\n', cfg_file) == [
        f"{G}: sessions.stuck: unknown key (expected one of stuck_after_s)",
        f"{G}: sessions.stuck_after_s: expected a number of seconds, got string",
    ]
    assert errors_of("sessions = 3\n", cfg_file) == [f"{G}: sessions: expected a table, got int"]


def test_a_project_file_may_not_set_it(cfg_file: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    write(project / ".claude" / "lookout.toml", "[sessions]\nstuck_after_s = 1\n")
    with pytest.raises(check.ConfigError) as exc:
        files.load(str(project))
    assert "sessions: is read only from your own config file" in str(exc.value)


def test_check_config_accepts_it(cfg_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(cfg_file, "[sessions]\nstuck_after_s = 300\n")
    assert cli.main(["check-config"]) == 0
    write(cfg_file, "[sessions]\nstuck_after_s = -1\n")
    assert cli.main(["check-config"]) == 1
    assert "sessions.stuck_after_s: expected 0 (off) or 1 to 86400 seconds, got -1" in (
        capsys.readouterr().err
    )


def test_the_timers_run_only_for_kinds_a_rule_sends(cfg_file: Path) -> None:
    assert timed_kinds(files.load()) == {"stuck", "limit_lifted"}  # the default config
    write(
        cfg_file, '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["done"]\nchannels = ["d"]\n'
    )
    assert timed_kinds(files.load()) == frozenset()
    write(
        cfg_file,
        '[channels.d]\ntype = "desktop"\nenabled = false\n[channels.e]\ntype = "desktop"\n'
        '[[rules]]\nwhen = ["stuck"]\nchannels = ["d"]\n'
        '[[rules]]\nwhen = ["limit_lifted", "stuck"]\nchannels = ["e"]\n'
        "[sessions]\nstuck_after_s = 0\n",
    )
    assert timed_kinds(files.load()) == {"limit_lifted"}  # stuck is off
    assert timed_kinds(None) == frozenset()
