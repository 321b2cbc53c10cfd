"""ntfy (ntfy.sh or a server of your own): a JSON publish to the server's root, by topic. An alert
for an episode carries a sequence id, so its update replaces it in place; one for a request
[remote] may answer links to the request's page (a `view` action, never an `http` one that would
itself carry a decision). Leaves the machine."""

from __future__ import annotations

from lookout.channels import base
from lookout.words import ATTENTION_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.channels.base import Doctor, Finding, Message, Option, Outcome
    from lookout.config.check import Checker, KeyPath
    from lookout.shapes import Channel

    class Ntfy(Channel):
        url: str | None  # server and topic: the topic is the secret
        token: str | None
        token_env: str | None
        priority: object  # 1-5 or a name, or a table of them by kind
        tags: list[str]
        click: str | None


NAME = "ntfy"
KEYS = ("url", "token", "token_env", "priority", "tags", "click")
SECRETS = ("url", "token")
TIMEOUT_MS = 10000
REMOTE = True
UPDATABLE = True
LOUD = False
ANSWERS = None
STEERS = False
FOCUS = False
OPTIONS: tuple[Option, ...] = (
    {"flag": "--url", "key": "url", "help": "server and topic"},
    {"flag": "--token-env", "key": "token_env", "help": "the variable holding a token",
     "metavar": "VAR"},
)  # fmt: skip
EXAMPLE = "lookout channel add phone --type ntfy --url https://ntfy.sh/my-long-secret-topic"

PRIORITIES = ("min", "low", "default", "high", "max", "urgent")
PRIORITY = {"min": 1, "low": 2, "default": 3, "high": 4, "max": 5, "urgent": 5}

replace = base.cannot_replace  # an update replaces it (send, msg["update"])
withdraw = base.cannot_withdraw
add_buttons = base.cannot_add_buttons
inspect = base.nothing_to_inspect
warnings = base.env_warnings


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    return base.network_findings(NAME, used)


def check(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Ntfy) -> None:
    url = c.get(path, raw, "url", str, "a string")
    if "url" not in raw:
        c.error(path, "missing key 'url' (server and topic, e.g. https://ntfy.sh/my-topic)")
    elif url is not None and (problem := url_problem(url)):
        c.error(
            (*path, "url"),
            "expected http(s)://server/topic with a topic of letters, "
            f"digits, - and _, got {base.shown_url(url)!r} ({problem})",
        )
    ch["url"] = url
    ch["token"] = c.get(path, raw, "token", str, "a string")
    ch["token_env"] = c.get(path, raw, "token_env", str, "a string")
    if ch["token"] and ch["token_env"]:
        c.error(path, "set either 'token' or 'token_env', not both")

    def prio(p: KeyPath, v: object) -> object:
        if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 5:
            return v
        if isinstance(v, str) and v in PRIORITIES:
            return v
        c.error(p, f"expected 1-5 or one of {', '.join(PRIORITIES)}, got {v!r}")
        return None

    default = {"default": 3, **dict.fromkeys(ATTENTION_KINDS, 4)}
    ch["priority"] = c.by_kind((*path, "priority"), raw.get("priority", default), prio)
    ch["tags"] = c.string_list((*path, "tags"), raw["tags"]) if "tags" in raw else []
    ch["click"] = c.get(path, raw, "click", str, "a string")


def url_problem(url: str) -> str | None:
    """What is wrong with an ntfy URL, said without repeating the topic (it is the secret)."""
    if not url.startswith(("http://", "https://")):
        return base.scheme_problem(url)
    server, _, topic = url.rstrip("/").rpartition("/")
    if not topic or "//" not in server:
        return "no topic after the server"
    if len(topic) > 64:
        return f"the topic has {len(topic)} characters, at most 64"
    bad = sorted({ch for ch in topic if not (ch.isascii() and (ch.isalnum() or ch in "-_"))})
    if bad:
        return f"the topic contains {' '.join(repr(ch) for ch in bad)}"
    return None


def send(ch: Ntfy, msg: Message, timeout_s: float) -> Outcome:
    import json

    from lookout.channels import post

    server, _, topic = str(ch["url"]).rstrip("/").rpartition("/")
    # JSON publish (to the server root): any title, emoji included, without header encoding.
    payload: dict[str, Any] = {
        "topic": topic,
        "title": msg["title"],
        "message": msg["body"] or msg["title"],
        "priority": _priority(ch, msg),
        "tags": list(ch.get("tags") or []),
    }
    if ch.get("click"):
        payload["click"] = ch["click"]
    link = base.link(msg)
    if link:
        # A `view` action opens the request's page (which asks for the dashboard's login); never
        # an `http` action that would itself carry a decision through the broker.
        payload.setdefault("click", link)
        payload["actions"] = [{"action": "view", "label": "Answer", "url": link, "clear": True}]
    # An update publishes under the alert's own sequence id (its ref): ntfy replaces it.
    seq = msg["ref"] if msg.get("update") and msg.get("ref") else msg.get("sequence_id")
    if seq:
        payload["sequence_id"] = seq
    headers = {"Content-Type": "application/json", **_auth(ch)}
    status, text = post.post(server + "/", json.dumps(payload).encode(), headers, timeout_s)
    if status != 200:
        raise base.ChannelError(post.failure(status, text))
    return "sent", f"HTTP 200 {base.redact_url(server)}", seq


def _priority(ch: Ntfy, msg: Message) -> object:
    if msg.get("update"):
        return 2  # replacing an alert should not buzz the phone again
    priority = base.by_kind(ch.get("priority"), msg["kind"], 3)
    return PRIORITY.get(str(priority), priority)


def _auth(ch: Ntfy) -> dict[str, str]:
    token = ch.get("token")
    if ch.get("token_env"):
        token = base.clean(base.env(ch, "token_env"), f"environment variable {ch['token_env']}")
    if not token:
        return {}
    if ":" in token:  # user:password
        import base64

        return {"Authorization": "Basic " + base64.b64encode(token.encode()).decode()}
    return {"Authorization": f"Bearer {token}"}
