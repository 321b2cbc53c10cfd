"""The MQTT client: paho-mqtt (the optional extra `lookout[fleet]`), built from `[fleet]` in one
place, with connection failures turned into messages that say what to fix."""

from __future__ import annotations

import secrets
import ssl
import threading
from typing import TYPE_CHECKING, Any

from lookout.config.fleet import FleetConfig
from lookout.errors import LookoutError
from lookout.fleet import topics

if TYPE_CHECKING:
    from paho.mqtt.client import Client

CONNECT_TIMEOUT_S = 5.0


class ConnectError(LookoutError):
    """The broker could not be reached or refused us; `transient` when retrying may help."""

    def __init__(self, message: str, hint: str | None = None, transient: bool = True) -> None:
        super().__init__(message, hint)
        self.transient = transient


def require() -> None:
    """Raise a clear error when the optional MQTT client is missing."""
    try:
        import paho.mqtt.client  # noqa: F401
    except ImportError:
        raise LookoutError(
            "the fleet needs the MQTT client paho-mqtt, which is not installed here",
            hint="python3 install.py --bridge installs it into lookout's runtime "
            "(or: pip install 'lookout[fleet]')",
        ) from None


def client_id(role: str, cfg: FleetConfig) -> str:
    # Random suffix: two clients never take over each other's connection (a takeover would
    # fire the other's Last Will).
    return f"lookout-{role}-{cfg.host}-{secrets.token_hex(4)}"[:64]


def new_client(cfg: FleetConfig, role: str, will: bool = False) -> Client:
    require()
    from paho.mqtt.client import Client, MQTTv311
    from paho.mqtt.enums import CallbackAPIVersion

    client = Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id(role, cfg),
        clean_session=True,
        protocol=MQTTv311,
        reconnect_on_failure=False,  # the bridge reconnects itself, with backoff and a log line
    )
    client.connect_timeout = CONNECT_TIMEOUT_S
    if cfg.username:
        client.username_pw_set(cfg.username, cfg.password())
    if cfg.tls:
        client.tls_set(ca_certs=cfg.ca_file, cert_reqs=ssl.CERT_REQUIRED)
    if will:
        client.will_set(topics.online(cfg.topic_prefix, cfg.host), b"false", qos=1, retain=True)
    return client


def connect(client: Client, cfg: FleetConfig, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Connect and start the network thread; raises ConnectError saying why it failed."""
    done = threading.Event()
    result: dict[str, Any] = {}

    def on_connect(_c: Any, _u: Any, _flags: Any, reason: Any, _props: Any) -> None:
        result["reason"] = reason
        done.set()

    client.on_connect = on_connect
    try:
        client.connect(cfg.broker_host, cfg.port, keepalive=cfg.keepalive_s)
    except ssl.SSLCertVerificationError as exc:
        raise ConnectError(
            f"TLS: the broker's certificate at {cfg.url} is not trusted ({exc.verify_message})",
            hint="set fleet.ca_file to the CA that signed the broker's certificate",
            transient=False,
        ) from None
    except ssl.SSLError as exc:
        raise ConnectError(f"TLS handshake with {cfg.url} failed: {exc.reason or exc}") from None
    except OSError as exc:
        raise ConnectError(
            f"cannot reach the broker at {cfg.url}: {exc.strerror or exc}",
            hint="is the broker running and listening there? (fleet.mqtt in your config)",
        ) from None
    client.loop_start()
    if not done.wait(timeout):
        client.loop_stop()
        client.disconnect()
        raise ConnectError(f"the broker at {cfg.url} did not answer within {timeout:g} s")
    client.on_connect = None
    reason = result["reason"]
    if reason.is_failure:
        client.loop_stop()
        who = f" for user {cfg.username!r}" if cfg.username else " (no username set)"
        raise ConnectError(
            f"the broker at {cfg.url} refused the connection{who}: {reason}",
            hint="check fleet.username and the password in "
            + (f"${cfg.password_env}" if cfg.password_env else "fleet.password_env"),
            transient=False,
        )
