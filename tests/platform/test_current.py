"""Which platform module lookout uses: LOOKOUT_PLATFORM, else sys.platform and /proc/version."""

from __future__ import annotations

import pytest

from lookout.errors import LookoutError
from lookout.platform import current, linux, macos, wsl

WSL2 = "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0)"
WSL1 = "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) )"
DEBIAN = "Linux version 6.1.0-27-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14))"


@pytest.mark.parametrize(
    ("forced", "sys_platform", "version", "chosen"),
    [
        (None, "linux", DEBIAN, "linux"),
        (None, "linux", WSL2, "wsl"),
        (None, "linux", WSL1, "wsl"),
        (None, "darwin", "", "macos"),
        ("macos", "linux", DEBIAN, "macos"),
        ("wsl", "linux", DEBIAN, "wsl"),
        ("linux", "linux", WSL2, "linux"),
    ],
)
def test_detect(forced: str | None, sys_platform: str, version: str, chosen: str) -> None:
    assert current.detect(forced, sys_platform, version) == chosen


def test_an_unknown_override_is_a_clear_error() -> None:
    with pytest.raises(LookoutError) as err:
        current.detect("windows", "linux", DEBIAN)
    assert str(err.value) == "LOOKOUT_PLATFORM='windows': expected one of linux, macos, wsl"
    assert err.value.hint == "unset LOOKOUT_PLATFORM to let lookout choose"


@pytest.mark.parametrize(
    ("name", "cls"), [("linux", linux.Linux), ("macos", macos.MacOS), ("wsl", wsl.WSL)]
)
def test_get_is_chosen_once(name: str, cls: type, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOKOUT_PLATFORM", name)
    current.reset()
    first = current.get()
    assert type(first) is cls and first.name == name
    monkeypatch.setenv("LOOKOUT_PLATFORM", "linux" if name != "linux" else "macos")
    assert current.get() is first
