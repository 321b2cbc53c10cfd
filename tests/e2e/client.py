"""The pinned real Claude Code client: where it is cached, how it is installed, how it runs offline.

The version is pinned here and nowhere else. Installing talks only to the npm registry; running
the client talks only to the loopback mock API (the offline environment below).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

CLAUDE_CODE_VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"
DUMMY_API_KEY = "sk-ant-lookout-e2e-dummy-key-0000"

# Read once at import, before any test fixture points HOME / XDG_* at a temporary directory:
# the cache must outlive the test run.
_ENV = dict(os.environ)


class RegistryUnreachable(Exception):
    """npm cannot reach its registry: the only reason the e2e tests may skip."""


def cache_dir(version: str = CLAUDE_CODE_VERSION) -> Path:
    root = _ENV.get("LOOKOUT_TEST_CACHE")
    if not root:
        xdg = _ENV.get("XDG_CACHE_HOME") or str(Path(_ENV.get("HOME") or Path.home()) / ".cache")
        root = str(Path(xdg) / "lookout-tests")
    return Path(root) / f"claude-code-{version}"


def claude_path(version: str = CLAUDE_CODE_VERSION) -> Path:
    return cache_dir(version) / "node_modules" / ".bin" / "claude"


def installed_version(binary: Path) -> str | None:
    try:
        out = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=30, env=_ENV
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.split()[0] if out.returncode == 0 and out.stdout.strip() else None


def ensure_client(version: str = CLAUDE_CODE_VERSION) -> Path:
    """Return the client binary, installing it into the cache first when it is missing."""
    binary = claude_path(version)
    if installed_version(binary) == version:
        return binary
    npm = shutil.which("npm", path=_ENV.get("PATH"))
    if npm is None:
        raise RuntimeError("npm is not installed: the e2e tests need node and npm")
    ping = subprocess.run(
        [npm, "ping"], capture_output=True, text=True, timeout=60, env=_ENV, check=False
    )
    if ping.returncode != 0:
        raise RegistryUnreachable(
            f"npm registry unreachable (npm ping: {(ping.stderr or ping.stdout).strip()[-300:]})"
        )
    target = cache_dir(version)
    staging = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(staging),
                f"{PACKAGE}@{version}",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env=_ENV,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"npm install {PACKAGE}@{version} failed:\n{done.stderr[-2000:]}")
        # Swap in whole: an interrupted install never leaves a half-populated cache behind.
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if installed_version(binary) != version:
        raise RuntimeError(f"{binary} does not report version {version} after installing it")
    return binary


def offline_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    """The environment that keeps the client on the loopback mock API, away from any other host."""
    env = {
        "PATH": _ENV.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "ANTHROPIC_API_KEY": DUMMY_API_KEY,
        "ANTHROPIC_BASE_URL": base_url,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }
    # A python3 that is a pyenv shim finds its versions through these (the plugin's hooks run
    # `python3` from PATH).
    for key in ("PYENV_ROOT", "PYENV_VERSION"):
        if key in _ENV:
            env[key] = _ENV[key]
    env.update(extra)
    return env
