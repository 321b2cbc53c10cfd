"""Which platform lookout runs on, chosen once: LOOKOUT_PLATFORM=linux|macos|wsl when set, else
sys.platform and WSL's markers in /proc/version."""

from __future__ import annotations

import os
import sys

from lookout.errors import LookoutError
from lookout.platform.base import NAMES, Platform

ENV = "LOOKOUT_PLATFORM"


def detect(forced: str | None, sys_platform: str, proc_version: str) -> str:
    if forced:
        if forced not in NAMES:
            raise LookoutError(
                f"{ENV}={forced[:40]!r}: expected one of {', '.join(NAMES)}",
                hint=f"unset {ENV} to let lookout choose",
            )
        return forced
    if sys_platform == "darwin":
        return "macos"
    version = proc_version.lower()
    if sys_platform.startswith("linux") and ("microsoft" in version or "wsl" in version):
        return "wsl"
    return "linux"


def _proc_version() -> str:
    try:
        with open("/proc/version", encoding="utf-8", errors="replace") as f:
            return f.read(4096)
    except OSError:
        return ""


# Chosen once per process. Not functools.lru_cache: functools (with collections) is ~2 ms of
# `status --line`, which tmux runs every few seconds.
_chosen: Platform | None = None


def get() -> Platform:
    global _chosen
    if _chosen is None:
        _chosen = _choose(detect(os.environ.get(ENV), sys.platform, _proc_version()))
    return _chosen


def _choose(name: str) -> Platform:
    if name == "macos":
        from lookout.platform import macos

        return macos.MacOS()
    if name == "wsl":
        from lookout.platform import wsl

        return wsl.WSL()
    from lookout.platform import linux

    return linux.Linux()


def reset() -> None:
    """Forget the choice (tests that change LOOKOUT_PLATFORM in-process)."""
    global _chosen
    _chosen = None
