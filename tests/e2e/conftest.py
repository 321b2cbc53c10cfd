"""Fixtures for the e2e suite: the pinned client, the mock API, lookout installed in a HOME."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import filelock
import pytest

from tests.web.conftest import browser, chromium  # noqa: F401 - the real Chromium, shared

from .client import RegistryUnreachable, cache_dir, ensure_client
from .harness import CHECKOUT, Install, Sandbox, installed_lookout, run_install_py
from .mock_api import MockAPI

if str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))


# Codex's workspace-write sandbox makes the folders it guards (.git, .codex, .agents, .aws) in
# each writable root, /tmp among them unless its config leaves /tmp out: an empty /tmp/.git
# makes every test folder below /tmp part of "a repository" for the tests that run after.
GUARDED = ("/tmp/.git", "/tmp/.codex", "/tmp/.agents", "/tmp/.aws")


@pytest.fixture(autouse=True, scope="module")
def _no_sandbox_folders_left_in_tmp() -> Iterator[None]:
    before = {p for p in GUARDED if Path(p).exists()}
    yield
    for p in GUARDED:
        if p not in before:
            try:
                Path(p).rmdir()  # only an empty folder a client made: never anything else
            except OSError:
                pass


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The real client, installed into the cache on first use; skip only if npm is offline."""
    target = cache_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    # Parallel sessions (xdist, two checkouts) must not install into the same folder at once.
    with filelock.FileLock(str(target) + ".lock", timeout=900):
        try:
            return ensure_client()
        except RegistryUnreachable as exc:
            pytest.skip(str(exc))


@pytest.fixture
def mock_api() -> Iterator[MockAPI]:
    with MockAPI() as api:
        yield api


@pytest.fixture(scope="session")
def lookout_install(tmp_path_factory: pytest.TempPathFactory) -> Install:
    """lookout installed once per test session by `python3 install.py`, into its own HOME.

    Tests copy the resulting settings.json into their own HOME: the hook commands point at this
    session's runtime, while each test gets its own state directory and config. (One test runs
    install.py in a fresh HOME end to end: test_install_real_client.py.)
    """
    home = tmp_path_factory.mktemp("install-home")
    done = run_install_py(home)
    assert done.returncode == 0, f"install.py failed:\n{done.stdout}\n{done.stderr}"
    return Install(home, home / ".claude" / "settings.json", installed_lookout(home))


@pytest.fixture
def sandbox(
    tmp_path: Path, claude_bin: Path, lookout_install: Install, mock_api: MockAPI
) -> Sandbox:
    return Sandbox(tmp_path, claude_bin, lookout_install, mock_api.url).prepare()
