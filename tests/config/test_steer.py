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


def test_check_config_says_when_a_glob_match_resolves_outside_its_directory(
    tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """newuser-4 3f: `~/src/link`, a symlink to a directory elsewhere, is allowed by `~/src/*`
    (project_dirs resolves it); check-config and doctor say so. A link inside the glob's
    directory, and a path written without a wildcard, say nothing."""
    from lookout.commands.main import main

    src = isolated_env / "src"
    (src / "api").mkdir(parents=True)
    (src / "alias").symlink_to(src / "api")  # stays inside ~/src: nothing to say
    evil = tmp_path / "outside" / "evil"
    evil.mkdir(parents=True)
    (src / "link").symlink_to(evil)
    (tmp_path / "mine").mkdir()
    write_config('[steer]\nenabled = true\nprojects = ["~/src/*", "~/mine-link"]\n')
    (isolated_env / "mine-link").symlink_to(tmp_path / "mine")  # named as it is: fine
    assert main(["check-config"]) == 0
    out = capsys.readouterr().out.splitlines()
    warnings = [line for line in out if line.startswith("warning: [steer]")]
    assert warnings == [
        f"warning: [steer] projects: ~/src/link is a symlink to {evil}, outside ~/src: allowed"
        " (start runs sessions there); name it by its own path in [steer] projects if you mean"
        " it, or remove the link"
    ]
    main(["doctor"])
    out = capsys.readouterr().out.splitlines()
    (i,) = [i for i, line in enumerate(out) if "outside ~/src" in line]
    assert out[i].split(None, 1) == [
        "warn",
        f"steer: projects: ~/src/link is a symlink to {evil}, outside ~/src: allowed (start runs"
        " sessions there)",
    ]
    # Off: nothing is started anywhere, nothing to say.
    write_config('[steer]\nenabled = false\nprojects = ["~/src/*"]\n')
    assert main(["check-config"]) == 0
    assert "outside ~/src" not in capsys.readouterr().out
