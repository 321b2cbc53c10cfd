"""`[fleet]` in the user's config.toml: where the broker is, who this host is, what goes on the bus.

Only the user's own config file counts (a repository's `.claude/lookout.toml` never chooses a
broker, a credential or what leaves the machine). Stdlib only: check-config and doctor use it
without the MQTT client installed."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from lookout import net, paths
from lookout.config.check import Checker, choices, type_name
from lookout.config.files import read_toml
from lookout.errors import LookoutError
from lookout.words import CONTENT_LEVELS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

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
    "answers",
    "hub",
)
DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883}
HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FLEET: KeyPath = ("fleet",)


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
    # Answer permission requests from Home Assistant buttons (issue 25); only when authenticated.
    answers: bool = False
    # The one host of the fleet that listens on the shared chat surfaces and may press and steer
    # this host's sessions through the broker (issue 42); "" when each host works alone.
    hub: str = ""

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
    import socket

    return net.host_name(socket.gethostname().strip())


def load(path: str | None = None) -> FleetConfig:
    """The validated `[fleet]` of the user's config. Raises NotConfigured without one,
    ConfigError listing every problem otherwise."""
    gpath = path or paths.config_path()
    name = paths.tilde(gpath)
    hint = 'add [fleet] with mqtt = "mqtt://BROKER:1883" (docs/fleet-setup.md)'
    if not os.path.exists(gpath):
        raise NotConfigured(f"no config file {name}, so no [fleet]", hint=hint)
    raw = read_toml(gpath)
    if "fleet" not in raw:
        raise NotConfigured(f"{name} has no [fleet] table", hint=hint)
    return validate(raw["fleet"], name)


def validate(raw: object, name: str = "config.toml") -> FleetConfig:
    c = Checker(name)
    if not isinstance(raw, dict):
        c.error(_FLEET, "expected a table ([fleet])")
        c.done()
    assert isinstance(raw, dict)
    for key in raw:
        if key == "password":
            c.error(
                (*_FLEET, key),
                "a password does not belong in a config file: put it in an environment "
                "variable and name that variable in password_env",
            )
        elif key not in KEYS:
            c.error((*_FLEET, key), f"unknown key (expected one of {choices(KEYS)})")
    tls, broker_host, port, shown = _mqtt(c, raw)
    ca_file = _ca_file(c, raw, tls, bool(shown))
    username, password_env = _login(c, raw)
    host = _string(c, raw, "host", _host_problem)
    hub = _string(c, raw, "hub", _host_problem)
    prefix = _string(c, raw, "topic_prefix", _prefix_problem)
    ha_prefix = _string(c, raw, "home_assistant_prefix", _prefix_problem)

    keepalive = raw.get("keepalive_s", 30)
    if not c.expect((*_FLEET, "keepalive_s"), keepalive, int, "a whole number of seconds"):
        keepalive = 30
    elif not 5 <= keepalive <= 65535:
        c.error((*_FLEET, "keepalive_s"), f"expected 5 to 65535 seconds, got {keepalive}")

    content = raw.get("content", "summary")
    if content not in CONTENT_LEVELS:
        levels = choices(CONTENT_LEVELS)
        c.error((*_FLEET, "content"), f"expected one of {levels}, got {content!r}")

    home_assistant = raw.get("home_assistant", False)
    c.expect((*_FLEET, "home_assistant"), home_assistant, bool, "true or false")
    answers = _answers(c, raw, home_assistant is True, username, password_env)

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
        answers=answers,
        hub=hub or "",
    )


def _answers(
    c: Checker,
    raw: dict[str, Any],
    home_assistant: bool,
    username: str | None,
    password_env: str | None,
) -> bool:
    """`answers`: a button pressed in Home Assistant answers a permission request. Refused on an
    unauthenticated connection: whoever may publish on the broker could then approve commands."""
    answers = raw.get("answers", False)
    path = (*_FLEET, "answers")
    if not c.expect(path, answers, bool, "true or false") or not answers:
        return False
    if not home_assistant:
        c.error(path, "needs home_assistant = true (the buttons are Home Assistant entities)")
    if not (username and password_env):
        c.error(
            path,
            "needs an authenticated broker connection (username and password_env): on an "
            "anonymous one anybody on the broker could approve commands",
        )
    return True


def _string(
    c: Checker,
    raw: dict[str, Any],
    key: str,
    problem: Callable[[str], str | None] | None = None,
) -> str | None:
    """raw[key]: absent (None), or a non-empty string without a `problem`."""
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        c.error((*_FLEET, key), f"expected a non-empty string, got {type_name(value)}")
        return None
    if problem is not None and (text := problem(value)):
        c.error((*_FLEET, key), text)
    return value


def _mqtt(c: Checker, raw: dict[str, Any]) -> tuple[bool, str, int, str]:
    """(tls, broker host, port, the URL as shown); an empty URL when there is none to use."""
    url = _string(c, raw, "mqtt")
    if url is None:
        if "mqtt" not in raw:
            c.error(_FLEET, "missing key 'mqtt' (e.g. mqtt = \"mqtt://broker.lan:1883\")")
        return False, "", 0, ""
    parsed = _broker(url)
    if isinstance(parsed, str):
        c.error((*_FLEET, "mqtt"), parsed)
        return False, "", 0, ""
    tls, broker_host, port = parsed
    return tls, broker_host, port, f"{'mqtts' if tls else 'mqtt'}://{_bracket(broker_host)}:{port}"


def _ca_file(c: Checker, raw: dict[str, Any], tls: bool, has_broker: bool) -> str | None:
    ca_file = _string(c, raw, "ca_file")
    if ca_file is None:
        return None
    ca_file = os.path.expanduser(ca_file)
    if not tls and has_broker:
        c.error(
            (*_FLEET, "ca_file"),
            "needs an mqtts:// URL (the CA checks the broker's TLS certificate)",
        )
    elif not os.path.isfile(ca_file):
        c.error((*_FLEET, "ca_file"), f"no such file: {paths.tilde(ca_file)}")
    return ca_file


def _login(c: Checker, raw: dict[str, Any]) -> tuple[str | None, str | None]:
    username = _string(c, raw, "username")
    password_env = _string(c, raw, "password_env")
    if password_env is not None:
        if not _ENV_NAME.fullmatch(password_env):
            c.error(
                (*_FLEET, "password_env"),
                f"expected an environment variable name, got {password_env!r}",
            )
        if username is None:
            c.error(
                (*_FLEET, "password_env"),
                "needs username (MQTT sends a password only with a user name)",
            )
    return username, password_env


def _host_problem(host: str) -> str | None:
    if HOST.fullmatch(host):
        return None
    return f"expected letters, digits, '.', '-' and '_' (at most 63), got {host!r}"


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
    plain = cleartext(cfg)
    if plain:
        out.append(plain)
    plain_answers = cleartext_answers(cfg)
    if plain_answers:
        out.append(plain_answers)
    if cfg.password_env and not os.environ.get(cfg.password_env):
        out.append(f"fleet.password_env: environment variable {cfg.password_env} is not set")
    if cfg.hub and not (cfg.username and cfg.password_env):
        out.append(
            f"fleet.hub: without a login (username and password_env) the broker cannot tell the"
            f" hub {cfg.hub} from anybody else, so no host takes presses or steering from it"
        )
    if cfg.username and cfg.username != cfg.host:
        out.append(
            f"fleet.username ({cfg.username}) is not fleet.host ({cfg.host}): the broker ACL in"
            " docs/fleet.md lets each user write only the host of its own name"
        )
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
    if cfg.tls or net.is_loopback(cfg.broker_host):
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


def cleartext_answers(cfg: FleetConfig) -> str | None:
    """The warning for Home Assistant answers over a plain mqtt:// connection that leaves this
    machine (issue 31), or None: whoever can watch that network reads the broker password (and
    with it may press this host's buttons) and the press tokens, and so can approve commands."""
    if not cfg.answers or cfg.tls or net.is_loopback(cfg.broker_host):
        return None
    return (
        f"fleet.answers: Home Assistant answers over {cfg.url}, which is not encrypted: whoever"
        " can watch that network reads the broker password and the press tokens, and can"
        " approve your commands (use mqtts://)"
    )
