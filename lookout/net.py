"""Whether a host named in the config is this machine. A name is never resolved (check-config
and doctor never wait on DNS): only `localhost`, `*.localhost` and loopback addresses count.
And this machine's name, as fleet.host defaults to it."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """`host` as a URL gives it (an IPv6 address with or without brackets)."""
    name = host.strip("[]").lower().rstrip(".")
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return name == "localhost" or name.endswith(".localhost")


def is_loopback_url(url: str) -> bool:
    """Whether `url`'s host is this machine (False for a URL that does not parse)."""
    from urllib.parse import urlsplit

    try:
        return is_loopback(urlsplit(url).hostname or "")
    except ValueError:
        return False


def host_name(name: str) -> str:
    """A hostname made topic-safe (letters, digits, `.`, `-`, `_`; at most 63)."""
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "-" for c in name)
    cleaned = cleaned.strip().strip("-._")[:63]
    return cleaned or "localhost"
