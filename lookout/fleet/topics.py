"""The topic tree. One host owns `<prefix>/<host>/...`, so a broker ACL such as
`pattern readwrite lookout/%u/#` lets each host write only its own state.

    public: every host and viewer reads them (the ACL's `pattern read` lines name exactly these)
    <prefix>/<host>/online               true | false   retained; false is the Last Will
    <prefix>/<host>/sessions/<id>        JSON           retained QoS 1; empty when pruned
    <prefix>/<host>/summary              JSON           retained; counts + most urgent (HA state)
    <prefix>/!sync/sessions/<random>     empty          a viewer's end-of-retained probe

    private: the host itself and Home Assistant's user only, never another host (issue 31: they
    carry press tokens, and a host that knows one could lure Home Assistant into pressing it)
    <prefix>/<host>/requests/<token>     JSON           retained; an open request (answers = true)
    <prefix>/<host>/press/<token>        allow | deny   by Home Assistant, never retained
                                         JSON           by the hub (an answer token), never retained
    <prefix>/<host>/steer/<id>           JSON           by the hub: say, interrupt, start, stop
    <prefix>/<host>/steered/<id>         JSON           the host's outcome of a steer or a press
    <ha_prefix>/<component>/lookout_<node>/<object>/config   Home Assistant discovery
"""

from __future__ import annotations

from lookout import store

ONLINE = "online"
SESSIONS = "sessions"
SUMMARY = "summary"
REQUESTS = "requests"
PRESS = "press"
STEER = "steer"
STEERED = "steered"
PUBLIC = (ONLINE, SUMMARY, SESSIONS)
PRIVATE = (REQUESTS, PRESS, STEER, STEERED)
# A level no escaped host or session id can produce: the viewer's end-of-retained probe.
SYNC = "!sync"
# A pseudo-host no grant names but a wildcard for every host: a publish to its press or steer
# topic that the broker accepts proves that this user (and so, by a `pattern`, every host) may
# write any host's (lookout.fleet.access.private_writes).
PROBE = "!probe"


def segment(text: str) -> str:
    """`text` as one topic level: session ids come from payloads, so escape (never drop) every
    character that could add a level (/), match as a wildcard (+ #) or confuse a broker."""
    return store.safe_name(text)


def unsegment(text: str) -> str:
    """The inverse of segment() for display (%xx and %uXXXXXX escapes)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%" and text[i + 1 : i + 2] == "u" and _hex(text[i + 2 : i + 8], 6):
            out.append(chr(int(text[i + 2 : i + 8], 16)))
            i += 8
        elif c == "%" and _hex(text[i + 1 : i + 3], 2):
            out.append(chr(int(text[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _hex(text: str, n: int) -> bool:
    return len(text) == n and all(c in "0123456789abcdef" for c in text)


def online(prefix: str, host: str) -> str:
    return f"{prefix}/{host}/{ONLINE}"


def session(prefix: str, host: str, session_id: str) -> str:
    return f"{prefix}/{host}/{SESSIONS}/{segment(session_id)}"


def summary(prefix: str, host: str) -> str:
    return f"{prefix}/{host}/{SUMMARY}"


def sync(prefix: str, client_id: str) -> str:
    """The end-of-retained probe: a session topic of the `!sync` pseudo-host, so the grant that
    lets it come back is the one that lets this user read every host's sessions."""
    return f"{prefix}/{SYNC}/{SESSIONS}/{segment(client_id)}"


def private_probe(prefix: str, kind: str, client_id: str) -> str:
    """A `kind` (requests, press) topic of the `!sync` pseudo-host: a user that gets it back may
    read that area of every host, by a wildcard grant (`pattern read lookout/#`), and so, when the
    grant is a pattern, may every other host read this host's press tokens."""
    return f"{prefix}/{SYNC}/{kind}/{segment(client_id)}"


def subscriptions(prefix: str) -> list[str]:
    """What a viewer subscribes to: every host's liveness and sessions."""
    return [f"{prefix}/+/{ONLINE}", f"{prefix}/+/{SESSIONS}/+"]


def parse(prefix: str, topic: str) -> tuple[str, str, str | None] | None:
    """(host, kind, session segment) for a topic of the tree, None for anything else."""
    if not topic.startswith(prefix + "/"):
        return None
    parts = topic[len(prefix) + 1 :].split("/")
    if len(parts) == 2 and parts[1] in (ONLINE, SUMMARY) and parts[0] and parts[0] != SYNC:
        return parts[0], parts[1], None
    if len(parts) == 3 and parts[1] == SESSIONS and parts[0] and parts[0] != SYNC and parts[2]:
        return parts[0], SESSIONS, parts[2]
    return None


def private(prefix: str, host: str, kind: str, name: str) -> str:
    """`<prefix>/<host>/<kind>/<name>` of a private area (requests, press, steer, steered)."""
    return f"{prefix}/{host}/{kind}/{segment(name)}"


def ha_node(host: str) -> str:
    """The Home Assistant node id for a host: discovery allows only [a-zA-Z0-9_-]."""
    return "lookout_" + "".join(
        c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in host
    )


def ha_config(ha_prefix: str, component: str, host: str, object_id: str) -> str:
    return f"{ha_prefix}/{component}/{ha_node(host)}/{object_id}/config"
