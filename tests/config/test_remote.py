"""[remote]: off by default, validated, and never set by a project file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lookout.config import check, files


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def errors_of(text: str, cfg_file: Path) -> list[str]:
    write(cfg_file, text)
    with pytest.raises(check.ConfigError) as exc:
        files.load()
    return exc.value.errors


@pytest.fixture
def cfg_file(isolated_env: Path) -> Path:
    return Path(os.environ["LOOKOUT_CONFIG"])


def test_remote_is_off_by_default_and_validated(cfg_file: Path) -> None:
    assert files.load()["remote"] == {
        "enabled": False,
        "wait_s": 300,
        "tools": ["*"],
        "allow_always": False,
        "url": "",
    }
    write(
        cfg_file,
        '[remote]\nenabled = true\nwait_s = 120\ntools = ["Bash", "mcp__*"]\n'
        'url = "https://laptop.tail.ts.net:8787/"\n',
    )
    remote = files.load()["remote"]
    assert (remote["enabled"], remote["wait_s"], remote["tools"]) == (True, 120, ["Bash", "mcp__*"])
    assert remote["url"] == "https://laptop.tail.ts.net:8787"
    errors = errors_of(
        '[remote]\nenabled = "yes"\nwait_s = 5\ntools = []\nurl = "https://h/?token=x"\nfoo = 1\n',
        cfg_file,
    )
    text = "\n".join(errors)
    for key in ("remote.enabled", "remote.wait_s", "remote.tools", "remote.url", "remote.foo"):
        assert key in text, text


def test_a_project_file_may_not_touch_remote(cfg_file: Path, tmp_path: Path) -> None:
    write(cfg_file, "[remote]\nenabled = false\n")
    project = tmp_path / "repo"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "lookout.toml").write_text("[remote]\nenabled = true\n")
    with pytest.raises(check.ConfigError) as exc:
        files.load(str(project))
    assert "remote: is read only from your own config file" in str(exc.value)
    assert files.load(None)["remote"]["enabled"] is False
