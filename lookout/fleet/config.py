"""`[fleet]` in the user's config.toml: where the broker is, who this host is, what goes on the bus.

Only the user's own config file counts (a repository's `.claude/lookout.toml` never chooses a
broker, a credential or what leaves the machine). Stdlib only: check-config and doctor use it
without the MQTT client installed."""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from lookout import paths
from lookout.errors import LookoutError
from lookout.notify import config as notify_config

KEYS = (
    "mqtt",
    "ca_file",
    "username",
    "password_env",
    "host",
    "topic_prefix",
    "keepalive_s",
    "content",
    "home_assistant",
    "home_assistant_prefix",
)
DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883}
HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class FleetConfig:
    url: str  # as shown to people: scheme://host:port, never a credential
    tls: bool
    broker_host: str
    port: int
    ca_file: str | None
    username: str | None
    password_env: str | None
    host: str
    topic_prefix: str
    keepalive_s: int
    content: str
    home_assistant: bool
    home_assistant_prefix: str

    def password(self) -> str | None:
        """The broker password from the environment; a named but unset variable is an error."""
        if not self.password_env:
            return None
        value = os.environ.get(self.password_env)
        if not value:
            raise LookoutError(
                f"environment variable {self.password_env} (fleet.password_env) is not set",
                hint=f"export {self.password_env}=... in the environment lookout runs in "
                "(for the systemd unit: ~/.config/lookout/fleet.env)",
            )
        return value


class NotConfigured(LookoutError):
    pass


def default_host() -> str:
    name = socket.gethostname().strip()
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "-" for c in name)
    cleaned = cleaned.strip("-._")[:63]
    return cleaned or "localhost"


def load(path: str | None = None) -> FleetConfig:
    """The validated `[fleet]` of the user's config. Raises NotConfigured without one,
    notify_config.ConfigError listing every problem otherwise."""
    gpath = path or paths.config_path()
    name = notify_config.display(gpath)
    hint = 'add [fleet] with mqtt = "mqtt://BROKER:1883" (README: "Every machine in one view")'
    if not os.path.exists(gpath):
        raise NotConfigured(f"no config file {name}, so no [fleet]", hint=hint)
    raw = notify_config._read_toml(gpath)
    if "fleet" not in raw:
        raise NotConfigured(f"{name} has no [fleet] table", hint=hint)
    return validate(raw["fleet"], name)


def validate(raw: object, name: str = "config.toml") -> FleetConfig:
    errors: list[str] = []

    def error(key: str, text: str) -> None:
        errors.append(f"{name}: fleet{'.' + key if key else ''}: {text}")

    if not isinstance(raw, dict):
        raise notify_config.ConfigError([f"{name}: fleet: expected a table ([fleet])"])
    for key in raw:
        if key == "password":
            error(
                key,
                "a password does not belong in a config file: put it in an environment "
                "variable and name that variable in password_env",
            )
        elif key not in KEYS:
            error(key, f"unknown key (expected one of {', '.join(KEYS)})")

    def string(key: str) -> str | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            error(key, f"expected a non-empty string, got {_type(value)}")
            return None
        return value

    url = string("mqtt")
    tls, broker_host, port, shown = False, "", 0, ""
    if url is None and "mqtt" not in raw:
        error("", "missing key 'mqtt' (e.g. mqtt = \"mqtt://broker.lan:1883\")")
    elif url is not None:
        parsed = _broker(url)
        if isinstance(parsed, str):
            error("mqtt", parsed)
        else:
            tls, broker_host, port = parsed
            shown = f"{'mqtts' if tls else 'mqtt'}://{_bracket(broker_host)}:{port}"

    ca_file = string("ca_file")
    if ca_file is not None:
        ca_file = os.path.expanduser(ca_file)
        if not tls and url is not None and not isinstance(_broker(url), str):
            error("ca_file", "needs an mqtts:// URL (the CA checks the broker's TLS certificate)")
        elif not os.path.isfile(ca_file):
            error("ca_file", f"no such file: {notify_config.display(ca_file)}")

    username = string("username")
    password_env = string("password_env")
    if password_env is not None:
        if not _ENV_NAME.fullmatch(password_env):
            error("password_env", f"expected an environment variable name, got {password_env!r}")
        if username is None:
            error("password_env", "needs username (MQTT sends a password only with a user name)")

    host = string("host")
    if host is not None and not HOST.fullmatch(host):
        error("host", f"expected letters, digits, '.', '-' and '_' (at most 63), got {host!r}")

    prefix = string("topic_prefix")
    if prefix is not None and (problem := _prefix_problem(prefix)):
        error("topic_prefix", problem)
    ha_prefix = string("home_assistant_prefix")
    if ha_prefix is not None and (problem := _prefix_problem(ha_prefix)):
        error("home_assistant_prefix", problem)

    keepalive = raw.get("keepalive_s", 30)
    if isinstance(keepalive, bool) or not isinstance(keepalive, int):
        error("keepalive_s", f"expected a whole number of seconds, got {_type(keepalive)}")
        keepalive = 30
    elif not 5 <= keepalive <= 65535:
        error("keepalive_s", f"expected 5 to 65535 seconds, got {keepalive}")

    content = raw.get("content", "summary")
    if content not in notify_config.CONTENT_LEVELS:
        levels = ", ".join(notify_config.CONTENT_LEVELS)
        error("content", f"expected one of {levels}, got {content!r}")

    home_assistant = raw.get("home_assistant", False)
    if not isinstance(home_assistant, bool):
        error("home_assistant", f"expected true or false, got {_type(home_assistant)}")

    if errors:
        raise notify_config.ConfigError(errors)
    return FleetConfig(
        url=shown,
        tls=tls,
        broker_host=broker_host,
        port=port,
        ca_file=ca_file,
        username=username,
        password_env=password_env,
        host=host or default_host(),
        topic_prefix=prefix or "lookout",
        keepalive_s=int(keepalive),
        content=str(content),
        home_assistant=bool(home_assistant),
        home_assistant_prefix=ha_prefix or "homeassistant",
    )


def _broker(url: str) -> tuple[bool, str, int] | str:
    """(tls, host, port), or what is wrong with the URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"not a valid URL ({exc}): {url!r}"
    if parts.scheme not in DEFAULT_PORTS:
        return f"expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT], got {url!r}"
    if parts.username is not None or parts.password is not None:
        # Never echo it: it may hold the password.
        return "credentials do not belong in the URL: use username and password_env"
    if not parts.hostname:
        return f"no broker host in {url!r}"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return f"expected no path, query or fragment, got {url!r}"
    return parts.scheme == "mqtts", parts.hostname, port or DEFAULT_PORTS[parts.scheme]


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _prefix_problem(prefix: str) -> str | None:
    if len(prefix) > 100:
        return "expected at most 100 characters"
    if prefix.startswith("$"):
        return "must not start with $ (brokers reserve $ topics)"
    if any(c in prefix for c in "+#\0") or any(ord(c) < 0x20 for c in prefix):
        return f"expected no wildcard (+ #) or control character, got {prefix!r}"
    if any(not level for level in prefix.split("/")):
        return f"expected levels separated by single '/', none empty, got {prefix!r}"
    return None


def _type(value: Any) -> str:
    names = {bool: "bool", int: "int", float: "float", str: "string", list: "array", dict: "table"}
    return names.get(type(value), type(value).__name__)


def warnings(cfg: FleetConfig) -> list[str]:
    """What only shows when the bridge runs: an unset password variable, no MQTT client."""
    import importlib.util

    out = []
    plain = cleartext(cfg)
    if plain:
        out.append(plain)
    if cfg.password_env and not os.environ.get(cfg.password_env):
        out.append(f"fleet.password_env: environment variable {cfg.password_env} is not set")
    if importlib.util.find_spec("paho") is None:
        out.append(
            "fleet: the MQTT client paho-mqtt is not installed in lookout's environment "
            "(python3 install.py --bridge installs it)"
        )
    return out


def cleartext(cfg: FleetConfig) -> str | None:
    """The warning for a plain mqtt:// connection that leaves this machine (N7), or None. A name
    is not resolved (check-config never waits on DNS): only `localhost` and loopback addresses
    count as this machine."""
    import ipaddress

    if cfg.tls:
        return None
    name = cfg.broker_host.strip("[]").lower()
    try:
        local = ipaddress.ip_address(name).is_loopback
    except ValueError:
        local = name == "localhost" or name.endswith(".localhost")
    if local:
        return None
    if cfg.username or cfg.password_env:
        return (
            f"fleet.mqtt: {cfg.url} is not encrypted: the broker login "
            f"({cfg.username or 'password'}, password from {cfg.password_env or 'nowhere'}) and "
            "every session's text cross the network in clear text (use mqtts://)"
        )
    return (
        f"fleet.mqtt: {cfg.url} is not encrypted: every session's text crosses the network in "
        "clear text (use mqtts://)"
    )
