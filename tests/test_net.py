"""lookout.net: which broker or API hosts count as this machine (never resolved)."""

from __future__ import annotations

import pytest

from lookout import net


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LocalHost.", True),
        ("box.localhost", True),
        ("localhost.example.org", False),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("broker.lan", False),
        ("", False),
    ],
)
def test_is_loopback(host: str, expected: bool) -> None:
    assert net.is_loopback(host) is expected
