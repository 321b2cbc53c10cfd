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
    from paho.mqtt.client import Client, MQTTv5
    from paho.mqtt.enums import CallbackAPIVersion

    # MQTT 5: the broker answers each QoS 1 publish with a reason code, so a publish its ACL
    # denies is "Not authorized", not silence (3.1.1 acknowledges it and drops it).
    client = Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id(role, cfg),
        protocol=MQTTv5,
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
        client.connect(cfg.broker_host, cfg.port, keepalive=cfg.keepalive_s, clean_start=True)
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
    if reason.is_failure and reason.value == 0x84:  # Unsupported Protocol Version
        client.loop_stop()
        raise ConnectError(
            f"the broker at {cfg.url} does not speak MQTT 5 ({reason})",
            hint="lookout's fleet needs MQTT 5 (Mosquitto 1.6 or later, EMQX, HiveMQ)",
            transient=False,
        )
    if reason.is_failure:
        client.loop_stop()
        who = f" for user {cfg.username!r}" if cfg.username else " (no username set)"
        raise ConnectError(
            f"the broker at {cfg.url} refused the connection{who}: {reason}",
            hint="check fleet.username and the password in "
            + (f"${cfg.password_env}" if cfg.password_env else "fleet.password_env"),
            transient=False,
        )


def close(client: Client) -> None:
    """Disconnect and stop the network thread connect() started."""
    client.disconnect()
    client.loop_stop()


class Acks:
    """The broker's answer to every QoS 1 publish of one client (MQTT 5 PUBACK reason codes).
    A publish the broker's ACL denies comes back "Not authorized": collected here, by topic."""

    def __init__(self, client: Client) -> None:
        self._lock = threading.Lock()
        self._pending: dict[int, str] = {}  # mid -> topic, until its PUBACK
        self._early: dict[int, Any] = {}  # a PUBACK that came before publish() returned
        self._denied: list[tuple[str, str]] = []
        client.on_publish = self._on_publish

    def _on_publish(self, _c: Any, _u: Any, mid: int, reason: Any, _props: Any) -> None:
        with self._lock:
            topic = self._pending.pop(mid, None)
            if topic is None:
                self._early[mid] = reason
            elif reason.is_failure:
                self._denied.append((topic, str(reason)))

    def publish(
        self, client: Client, topic: str, body: bytes, retain: bool = True, props: Any = None
    ) -> Any:
        info = client.publish(topic, body, qos=1, retain=retain, properties=props)
        with self._lock:
            reason = self._early.pop(info.mid, None)
            if reason is None:
                self._pending[info.mid] = topic
            elif reason.is_failure:
                self._denied.append((topic, str(reason)))
        return info

    def take_denied(self) -> list[tuple[str, str]]:
        """(topic, reason) of every publish refused since the last call."""
        with self._lock:
            out, self._denied = self._denied, []
        return out


def denied_text(denied: list[tuple[str, str]], cfg: FleetConfig) -> tuple[str, str]:
    """An error and its hint for publishes the broker refused."""
    topic, reason = denied[0]
    more = f" and {len(denied) - 1} more" if len(denied) > 1 else ""
    who = f"user {cfg.username!r}" if cfg.username else "an anonymous client"
    text = f"the broker at {cfg.url} refused to publish {topic}{more} ({reason})"
    hint = f"its ACL must let {who} write {cfg.topic_prefix}/{cfg.host}/#"
    if cfg.home_assistant:
        hint += f" and {cfg.home_assistant_prefix}/+/{topics.ha_node(cfg.host)}/#"
    if cfg.username and cfg.username != cfg.host:
        hint += (
            f"; fleet.username ({cfg.username}) is not fleet.host ({cfg.host}), and the ACL"
            " in docs/fleet.md gives each user the host of the same name"
        )
    else:
        hint += " (docs/fleet.md: the broker ACL)"
    return text, hint


# The host's clock rides on its `online` message (MQTT 5 properties: the payload stays `true`
# for Home Assistant). The broker counts the message expiry down while it holds the message, so a
# viewer knows how long ago `clock_ms` was read, retained or not, and so the host's clock skew.
CLOCK = "clock_ms"
CLOCK_EXPIRY = "expiry_s"
CLOCK_EXPIRY_S = 10 * 365 * 86400


def clock_properties(now_ms: int) -> Any:
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    props.MessageExpiryInterval = CLOCK_EXPIRY_S
    props.UserProperty = [(CLOCK, str(now_ms)), (CLOCK_EXPIRY, str(CLOCK_EXPIRY_S))]
    return props


def clock_of(props: Any) -> int | None:
    """The publisher's clock (ms) now, by a message's clock properties; None without them."""
    if props is None:
        return None
    user = dict(getattr(props, "UserProperty", None) or [])
    left = getattr(props, "MessageExpiryInterval", None)
    sent, expiry = user.get(CLOCK, ""), user.get(CLOCK_EXPIRY, "")
    if not (sent.isdigit() and expiry.isdigit() and isinstance(left, int)):
        return None
    held_s = int(expiry) - left
    if not 0 <= held_s <= int(expiry):
        return None
    return int(sent) + held_s * 1000
