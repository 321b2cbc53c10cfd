"""Whether a host named in the config is this machine. A name is never resolved (check-config
and doctor never wait on DNS): only `localhost`, `*.localhost` and loopback addresses count."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """`host` as a URL gives it (an IPv6 address with or without brackets)."""
    name = host.strip("[]").lower().rstrip(".")
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return name == "localhost" or name.endswith(".localhost")
