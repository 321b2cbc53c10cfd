"""Other agents' real CLIs from the npm registry, pinned, installed once into the test cache
(`$LOOKOUT_TEST_CACHE` or ~/.cache/lookout-tests/<name>-<version>) and reused; a private tmux
server to drive their interactive UIs. The tests skip only when the registry is unreachable."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import filelock
import pytest

from tests.helpers import short_tmpdir

# Read at import, before the autouse fixture points HOME and XDG_* at a temporary directory.
_ENV = dict(os.environ)
DEAD_PROXY = "http://127.0.0.1:9"


def cache_root() -> Path:
    root = _ENV.get("LOOKOUT_TEST_CACHE")
    if not root:
        xdg = _ENV.get("XDG_CACHE_HOME") or str(Path(_ENV.get("HOME") or Path.home()) / ".cache")
        root = str(Path(xdg) / "lookout-tests")
    return Path(root)


def _version(binary: Path) -> str | None:
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, env=_ENV
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = done.stdout.split()
    return words[-1] if done.returncode == 0 and words else None


def ensure(package: str, version: str, name: str, binary: str) -> Path:
    """node_modules/.bin/<binary> of package@version in the cache, installed on first use."""
    target = cache_root() / f"{name}-{version}"
    bin_path = target / "node_modules" / ".bin" / binary
    target.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(target) + ".lock", timeout=900):
        if _version(bin_path) == version:
            return bin_path
        npm = shutil.which("npm", path=_ENV.get("PATH"))
        if npm is None:
            pytest.fail(f"npm is not installed: the {name} e2e tests need node and npm")
        ping = subprocess.run([npm, "ping"], capture_output=True, text=True, timeout=60, env=_ENV)
        if ping.returncode != 0:
            pytest.skip(
                f"npm registry unreachable (npm ping: {(ping.stderr or ping.stdout)[-300:]})"
            )
        staging = target.with_name(f"{target.name}.partial-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            argv = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(staging)]
            done = subprocess.run(
                [*argv, f"{package}@{version}"],
                capture_output=True,
                text=True,
                timeout=900,
                env=_ENV,
            )
            if done.returncode != 0:
                pytest.fail(f"npm install {package}@{version} failed:\n{done.stderr[-2000:]}")
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)  # whole or nothing: never a half-populated cache
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        if _version(bin_path) != version:
            pytest.fail(f"{bin_path} does not report version {version} after installing it")
        return bin_path


def offline_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment for a client that may talk to 127.0.0.1 only."""
    env = {
        "PATH": _ENV.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "TERM": "xterm-256color",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        **extra,
    }
    for var in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy"):
        env[var] = DEAD_PROXY
    return env


class Tmux:
    """One pane of a private tmux server (`-L`, own TMUX_TMPDIR): never the user's server."""

    def __init__(self, root: Path, name: str) -> None:
        self.name = f"lookout-e2e-{name}-{os.getpid()}"
        # A short directory: a socket path over ~100 bytes cannot be bound.
        self.tmpdir = short_tmpdir("lk-tmux-")

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.name, *args],
            capture_output=True,
            text=True,
            timeout=30,
            env={**_ENV, "TMUX_TMPDIR": str(self.tmpdir)},
        )
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def start(self, argv: list[str], env: dict[str, str], cwd: Path, in_tmux: bool = False) -> None:
        """`in_tmux`: the pane's own TMUX and TMUX_PANE pass through, as in a user's terminal
        (what lookout's hooks record to find the pane)."""
        exports = " ".join(f"{k}={_q(v)}" for k, v in env.items())
        if in_tmux:
            exports += ' TMUX="$TMUX" TMUX_PANE="$TMUX_PANE"'
        command = f"cd {_q(str(cwd))} && exec env -i {exports} {' '.join(_q(a) for a in argv)}"
        self.tmux("new-session", "-d", "-s", "e2e", "-x", "160", "-y", "50", command)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "e2e")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "e2e", *keys)

    def text(self, text: str) -> None:
        self.tmux("send-keys", "-t", "e2e", "-l", text)

    def wait_for(self, needle: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if needle in screen:
                return screen
            if self.tmux("display-message", "-p", "-t", "e2e", "#{pane_dead}").strip() == "1":
                raise AssertionError(f"the program in the pane exited:\n{screen}")
            time.sleep(0.25)
        raise AssertionError(f"{needle!r} never appeared on screen:\n{screen}")

    def kill(self) -> None:
        try:
            self.tmux("kill-server")
        except RuntimeError:
            pass
        shutil.rmtree(self.tmpdir, ignore_errors=True)


def _q(text: str) -> str:
    import shlex

    return shlex.quote(text)
