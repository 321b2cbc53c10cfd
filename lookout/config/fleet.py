"""`[fleet]` in the user's config.toml: where the broker is, who this host is, what goes on the bus.

Only the user's own config file counts (a repository's `.claude/lookout.toml` never chooses a
broker, a credential or what leaves the machine). Stdlib only: check-config and doctor use it
without the MQTT client installed."""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from lookout import paths
from lookout.config.check import Checker, choices, type_name
from lookout.config.files import read_toml
from lookout.errors import LookoutError
from lookout.words import CONTENT_LEVELS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.config.check import KeyPath

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
    ConfigError listing every problem otherwise."""
    gpath = path or paths.config_path()
    name = paths.tilde(gpath)
    hint = 'add [fleet] with mqtt = "mqtt://BROKER:1883" (README: "Every machine in one view")'
    if not os.path.exists(gpath):
        raise NotConfigured(f"no config file {name}, so no [fleet]", hint=hint)
    raw = read_toml(gpath)
    if "fleet" not in raw:
        raise NotConfigured(f"{name} has no [fleet] table", hint=hint)
    return validate(raw["fleet"], name)


def validate(raw: object, name: str = "config.toml") -> FleetConfig:
    c = Checker(name)
    path: KeyPath = ("fleet",)
    if not isinstance(raw, dict):
        c.error(path, "expected a table ([fleet])")
        c.done()
    assert isinstance(raw, dict)
    for key in raw:
        if key == "password":
            c.error(
                (*path, key),
                "a password does not belong in a config file: put it in an environment "
                "variable and name that variable in password_env",
            )
        elif key not in KEYS:
            c.error((*path, key), f"unknown key (expected one of {choices(KEYS)})")

    def string(key: str) -> str | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            c.error((*path, key), f"expected a non-empty string, got {type_name(value)}")
            return None
        return value

    url = string("mqtt")
    tls, broker_host, port, shown = False, "", 0, ""
    if url is None and "mqtt" not in raw:
        c.error(path, "missing key 'mqtt' (e.g. mqtt = \"mqtt://broker.lan:1883\")")
    elif url is not None:
        parsed = _broker(url)
        if isinstance(parsed, str):
            c.error((*path, "mqtt"), parsed)
        else:
            tls, broker_host, port = parsed
            shown = f"{'mqtts' if tls else 'mqtt'}://{_bracket(broker_host)}:{port}"

    ca_file = string("ca_file")
    if ca_file is not None:
        ca_file = os.path.expanduser(ca_file)
        if not tls and url is not None and not isinstance(_broker(url), str):
            c.error(
                (*path, "ca_file"),
                "needs an mqtts:// URL (the CA checks the broker's TLS certificate)",
            )
        elif not os.path.isfile(ca_file):
            c.error((*path, "ca_file"), f"no such file: {paths.tilde(ca_file)}")

    username = string("username")
    password_env = string("password_env")
    if password_env is not None:
        if not _ENV_NAME.fullmatch(password_env):
            c.error(
                (*path, "password_env"),
                f"expected an environment variable name, got {password_env!r}",
            )
        if username is None:
            c.error(
                (*path, "password_env"),
                "needs username (MQTT sends a password only with a user name)",
            )

    host = string("host")
    if host is not None and not HOST.fullmatch(host):
        c.error(
            (*path, "host"),
            f"expected letters, digits, '.', '-' and '_' (at most 63), got {host!r}",
        )

    prefix = string("topic_prefix")
    if prefix is not None and (problem := _prefix_problem(prefix)):
        c.error((*path, "topic_prefix"), problem)
    ha_prefix = string("home_assistant_prefix")
    if ha_prefix is not None and (problem := _prefix_problem(ha_prefix)):
        c.error((*path, "home_assistant_prefix"), problem)

    keepalive = raw.get("keepalive_s", 30)
    if not c.expect((*path, "keepalive_s"), keepalive, int, "a whole number of seconds"):
        keepalive = 30
    elif not 5 <= keepalive <= 65535:
        c.error((*path, "keepalive_s"), f"expected 5 to 65535 seconds, got {keepalive}")

    content = raw.get("content", "summary")
    if content not in CONTENT_LEVELS:
        c.error((*path, "content"), f"expected one of {choices(CONTENT_LEVELS)}, got {content!r}")

    home_assistant = raw.get("home_assistant", False)
    c.expect((*path, "home_assistant"), home_assistant, bool, "true or false")

    c.done()
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


def warnings(cfg: FleetConfig) -> list[str]:
    """What only shows when the bridge runs: an unset password variable, no MQTT client."""
    import importlib.util

    out = []
    if cfg.password_env and not os.environ.get(cfg.password_env):
        out.append(f"fleet.password_env: environment variable {cfg.password_env} is not set")
    if importlib.util.find_spec("paho") is None:
        out.append(
            "fleet: the MQTT client paho-mqtt is not installed in lookout's environment "
            "(python3 install.py --bridge installs it)"
        )
    return out
