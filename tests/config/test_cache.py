"""The hook's view of the config: secret-free, re-parsed only when a file changed, one entry per
project file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lookout import store
from lookout.config import cache

G = "~/.config/lookout/config.toml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def cfg_file(isolated_env: Path) -> Path:
    return Path(os.environ["LOOKOUT_CONFIG"])


# -- the hook's cache --------------------------------------------------------------------------

SECRET = "tk_supersecret"


def test_cache_has_no_secrets_and_is_reused(cfg_file: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write(
        cfg_file,
        f"""
[channels.phone]
type = "ntfy"
url = "https://ntfy.sh/topic-{SECRET}"
token = "{SECRET}"

[[rules]]
when = ["permission"]
channels = ["phone"]
""",
    )
    cfg = cache.load_cached(str(state), None)
    assert cfg is not None and cfg["channels"]["phone"]["type"] == "ntfy"
    assert "url" not in cfg["channels"]["phone"] and "token" not in cfg["channels"]["phone"]
    cache_file = state / store.CONFIG_CACHE
    assert SECRET not in cache_file.read_text()
    assert cache_file.stat().st_mode & 0o777 == 0o600
    before = cache_file.stat().st_mtime_ns
    assert cache.load_cached(str(state), None) == cfg
    assert cache_file.stat().st_mtime_ns == before  # not re-parsed


def cached_error(state: Path) -> object:
    """The error the cache recorded for the newest entry (what the hooks met)."""
    return json.loads((state / store.CONFIG_CACHE).read_text())["entries"][-1]["error"]


def test_cache_follows_edits_and_logs_a_broken_config_once(cfg_file: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write(cfg_file, "rules = 3\n")
    assert cache.load_cached(str(state), None) is None
    assert cache.load_cached(str(state), None) is None
    log = (state / "errors.log").read_text()
    assert log.count("rules: expected an array of tables") == 1
    assert cached_error(state) == f"{G}: rules: expected an array of tables ([[rules]]), got int"
    write(
        cfg_file,
        '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["done"]\n'
        'channels = ["d"]\n# a longer file\n',
    )
    cfg = cache.load_cached(str(state), None)
    assert cfg is not None and cfg["rules"][0]["when"] == ["done"]
    assert cached_error(state) is None


def test_cache_without_any_file_is_the_default(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    cfg = cache.load_cached(str(state), None)
    assert cfg is not None and list(cfg["channels"]) == ["desktop"]


def test_cache_keeps_one_entry_per_project_file(cfg_file: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    write(
        cfg_file, '[channels.d]\ntype = "desktop"\n[[rules]]\nwhen = ["done"]\nchannels = ["d"]\n'
    )
    api = tmp_path / "home" / "api"
    write(api / ".claude" / "lookout.toml", "[channels.d]\nenabled = false\n")
    web = tmp_path / "home" / "web"
    web.mkdir()
    for _ in range(2):
        for cwd in (str(api), str(web), None):
            assert cache.load_cached(str(state), cwd) is not None
    table = json.loads((state / store.CONFIG_CACHE).read_text())
    assert [e["project"] for e in table["entries"]] == [str(api / ".claude" / "lookout.toml"), None]
    assert cache.load_cached(str(state), str(api))["channels"]["d"]["enabled"] is False
    assert cache.load_cached(str(state), str(web))["channels"]["d"]["enabled"] is True


def test_known_error_is_the_hooks_finding_for_the_files_as_they_are(
    cfg_file: Path, tmp_path: Path
) -> None:
    # `lookout status --line` says "config error" from this instead of parsing TOML.
    state = tmp_path / "state"
    state.mkdir()
    assert cache.known_error(str(state), None) == (False, None)  # nothing cached: parse
    write(cfg_file, "rules = 3\n")
    cache.load_cached(str(state), None)
    assert cache.known_error(str(state), None) == (True, cached_error(state))
    write(cfg_file, '[channels.d]\ntype = "desktop"\n# edited: another size\n')
    assert cache.known_error(str(state), None) == (False, None)  # changed since: parse again
    cache.load_cached(str(state), None)
    assert cache.known_error(str(state), None) == (True, None)
