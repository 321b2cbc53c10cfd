"""Every test runs with HOME, XDG dirs, lookout's state/config and Claude's config dir pointed at
its own temporary directory: nothing here may touch the real ~/.claude or ~/.config."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.helpers import write_config
from tests.synapse import hs  # noqa: F401 - a real Matrix homeserver, started once when used

# A run started in the background of a non-interactive shell (`.ci/run &`) inherits SIGINT
# ignored, and so would every lookout the tests start: the Ctrl-C tests need it as a terminal
# delivers it. A handler here becomes the default action in each child.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Fixtures that start a real part costing seconds (an MQTT broker, a tmux server with clients
# attached, a browser): a test using one is marked `real`, which `bash tests/run --fast` skips.
REAL_PARTS = {"broker", "world", "chromium"}


# Session and module fixtures too dear to start on every xdist worker (a Synapse; the soak's 2
# minutes under load): the tests using one run on one worker (`--dist loadgroup`, as tests/run
# passes it), which starts it once.
SHARED_PARTS = {"hs": "synapse", "soak": "soak"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if REAL_PARTS & names:
            item.add_marker(pytest.mark.real)
        for fixture in sorted(SHARED_PARTS.keys() & names):
            item.add_marker(pytest.mark.xdist_group(SHARED_PARTS[fixture]))


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("LOOKOUT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("LOOKOUT_CONFIG", str(home / ".config" / "lookout" / "config.toml"))
    monkeypatch.setenv("LOOKOUT_HOME", str(home / ".local" / "share" / "lookout"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    for var in (
        "CLAUDE_PID",
        "TMUX_PANE",
        "TMUX",
        "CLAUDE_PROJECT_DIR",
        "CLAUDE_CODE_SESSION_ID",
        "CLAUDE_CODE_ENTRYPOINT",
    ):
        monkeypatch.delenv(var, raising=False)
    # The platform is chosen once per process: each test chooses again (LOOKOUT_PLATFORM).
    monkeypatch.delenv("LOOKOUT_PLATFORM", raising=False)
    from lookout.platform import current

    current.reset()
    return home


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def no_notifications() -> None:
    # A config without rules: recording events here must not start notification senders.
    write_config("# no rules\n")
