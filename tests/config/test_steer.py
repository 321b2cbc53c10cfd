"""[steer]: off by default, read from the user's own file only, every key checked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lookout.config import steer
from lookout.errors import ConfigError
from tests.helpers import write_config


def test_defaults_are_off() -> None:
    cfg = steer.load()
    assert (cfg.enabled, cfg.projects, cfg.agents, cfg.max_chars, cfg.per_minute) == (
        False,
        ("~/src/*",),
        ("claude",),
        4000,
        20,
    )


def test_projects_are_globs_resolved_through_symlinks(tmp_path: Path) -> None:
    (tmp_path / "src" / "a").mkdir(parents=True)
    (tmp_path / "src" / "file").write_text("")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "src" / "b").symlink_to(tmp_path / "elsewhere")
    write_config(f'[steer]\nenabled = true\nprojects = ["{tmp_path}/src/*"]\n')
    cfg = steer.load()
    assert cfg.enabled
    assert cfg.project_dirs() == sorted(
        [os.path.realpath(tmp_path / "elsewhere"), os.path.realpath(tmp_path / "src" / "a")]
    )


def test_every_key_is_checked() -> None:
    write_config('[steer]\nenabled = "yes"\nprojects = ["src/*"]\nper_minute = 1000\n')
    with pytest.raises(ConfigError) as info:
        steer.load()
    assert info.value.errors == [
        "~/.config/lookout/config.toml: steer.enabled: expected true or false, got string",
        "~/.config/lookout/config.toml: steer.projects[0]: expected an absolute path or glob"
        " (/... or ~/...), got 'src/*'",
        "~/.config/lookout/config.toml: steer.per_minute: expected 1 to 600, got 1000",
    ]


def test_the_example_config_shows_it_off() -> None:
    import tomllib

    from tests.helpers import ROOT

    raw = tomllib.loads((ROOT / "config.example.toml").read_text())
    cfg = steer.validate(raw["steer"])
    assert not cfg.enabled
    assert set(raw["steer"]) == set(steer.KEYS)
