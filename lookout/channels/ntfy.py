"""ntfy (ntfy.sh or a server of your own): a JSON publish to the server's root, by topic. An alert
for an episode carries a sequence id, so its update replaces it in place; one for a request
[remote] may answer links to the request's page (a `view` action, never an `http` one that would
itself carry a decision), unless the channel says `answers = true` (issue 40, the ntfy answer
surface: lookout/surfaces/ntfy.py): a request's alert then carries Allow (where the one rule lets
it), Deny and Show all, Allow and Deny `http` actions the phone's app POSTs itself to a reply
topic on the same server, each with a single-use press token in its body. Leaves the machine."""

from __future__ import annotations

from lookout.channels import base
from lookout.words import ATTENTION_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
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
        answers: bool  # its request alerts carry Allow/Deny (only in the user's own config)
        reply_topic: str | None  # where the presses come back (None: the kept default)


NAME = "ntfy"
KEYS = ("url", "token", "token_env", "priority", "tags", "click", "answers", "reply_topic")
SECRETS = ("url", "token")
TIMEOUT_MS = 10000
REMOTE = True
UPDATABLE = True
LOUD = False
ANSWERS = "ntfy"  # with `answers = true` only (lookout.surfaces.ntfy binds nothing otherwise)
STEERS = False
FOCUS = False
OPTIONS: tuple[Option, ...] = (
    {"flag": "--url", "key": "url", "help": "server and topic"},
    {"flag": "--token-env", "key": "token_env", "help": "the variable holding a token",
     "metavar": "VAR"},
    {"flag": "--answers", "key": "answers", "action": "store_true", "default": None,
     "help": "a request's alert carries Allow/Deny buttons that answer it (anyone who can read"
     " the topic can press them: docs/remote.md)"},
    {"flag": "--reply-topic", "key": "reply_topic", "metavar": "TOPIC",
     "help": "the topic the buttons' presses come back on (default: the topic and a random"
     " suffix lookout keeps)"},
)  # fmt: skip
EXAMPLE = "lookout channel add phone --type ntfy --url https://ntfy.sh/my-long-secret-topic"

PRIORITIES = ("min", "low", "default", "high", "max", "urgent")
PRIORITY = {"min": 1, "low": 2, "default": 3, "high": 4, "max": 5, "urgent": 5}

withdraw = base.cannot_withdraw
# Buttons added late republish the whole alert (lookout.surfaces.ntfy.late): ntfy has no edit of
# the actions alone.
add_buttons = base.cannot_add_buttons
inspect = base.nothing_to_inspect

PUBLIC = "ntfy.sh"  # the public server: anyone may subscribe to (and publish on) a topic
MESSAGE_MAX = 4096  # bytes of UTF-8, title and body (a longer message becomes an attachment)
ACTIONS_MAX = 3  # ntfy's limit of actions a message
PRESS_PREFIX = "lookout-press:"  # a press's body: this and an opaque token (answers.mint)
PROBE = "lookout doctor: a probe of whether this topic takes anonymous posts (ignore it)"
REPLY_TOPICS = "ntfy-reply-topics.json"  # channel name -> the random suffix of its reply topic
PROBE_TIMEOUT_S = 5.0


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
    _check_answers(c, path, raw, ch)


def _check_answers(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Ntfy) -> None:
    """`answers` and `reply_topic`: a channel whose buttons answer is the user's own (issue 40): a
    project file may neither add one nor change any key of one (it could send the presses, or
    the alerts that carry the press tokens, elsewhere)."""
    answers = c.get(path, raw, "answers", bool, "true or false")
    ch["answers"] = bool(answers)
    reply = c.get(path, raw, "reply_topic", str, "a string")
    if reply is not None and topic_problem(reply):
        c.error(
            (*path, "reply_topic"),
            f"expected a topic of letters, digits, - and _ ({topic_problem(reply)})",
        )
        reply = None
    ch["reply_topic"] = reply
    theirs = c.over.get("channels") if c.over_name else None
    if ch["answers"] and isinstance(theirs, dict) and path[-1] in theirs:
        c.error(
            path,
            "a channel whose buttons answer requests (answers = true) is read only from your own"
            " config file: a project file may not add or change it",
        )


def url_problem(url: str) -> str | None:
    """What is wrong with an ntfy URL, said without repeating the topic (it is the secret)."""
    if not url.startswith(("http://", "https://")):
        return base.scheme_problem(url)
    server, _, topic = url.rstrip("/").rpartition("/")
    if not topic or "//" not in server:
        return "no topic after the server"
    return topic_problem(topic)


def topic_problem(topic: str) -> str | None:
    if not topic:
        return "an empty topic"
    if len(topic) > 64:
        return f"the topic has {len(topic)} characters, at most 64"
    bad = sorted({ch for ch in topic if not (ch.isascii() and (ch.isalnum() or ch in "-_"))})
    if bad:
        return f"the topic contains {' '.join(repr(ch) for ch in bad)}"
    return None


def split(ch: Mapping[str, Any]) -> tuple[str, str]:
    """(server, topic) of the channel's url."""
    server, _, topic = str(ch["url"]).rstrip("/").rpartition("/")
    return server, topic


# -- the reply topic (issue 40) ------------------------------------------------------------------


def reply_topic(state_dir: str, name: str, ch: Mapping[str, Any]) -> str:
    """Where the presses on channel `name`'s buttons come back: `reply_topic`, or the alert's
    topic and a random suffix made once and kept in the state directory (so a stranger who
    guesses the alert topic's name does not know the reply topic's)."""
    if ch.get("reply_topic"):
        return str(ch["reply_topic"])
    import os
    import secrets

    from lookout import store

    topic = split(ch)[1]
    path = os.path.join(state_dir, REPLY_TOPICS)
    with store.Locked(state_dir, store.REQUESTS_LOCK):
        table = store.read_json(path)
        table = table if isinstance(table, dict) else {}
        suffix = table.get(name)
        if not isinstance(suffix, str) or topic_problem(suffix):
            suffix = table[name] = secrets.token_hex(8)
            store.write_json_atomic(path, table)
    return f"{topic[: 64 - len(suffix) - 1]}-{suffix}"


def public(ch: Mapping[str, Any]) -> bool:
    """The server is the public ntfy.sh."""
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(split(ch)[0]).hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    return host == PUBLIC


def warnings(name: str, ch: Ntfy, answers: bool) -> list[str]:
    out = base.env_warnings(name, ch, answers)
    if ch.get("answers") and not answers:
        out.append(f"channels.{name}.answers: [remote] is off: its alerts carry no buttons")
    if not (answers and ch.get("answers")):
        return out
    from lookout import paths

    reply = reply_topic(paths.state_dir(), name, ch)
    out.append(
        f"channels.{name}.answers: a request's alert carries Allow/Deny; the phone posts a press"
        f" to the reply topic {reply!r} on {base.redact_url(split(ch)[0] + '/')}. Anyone who can"
        " read the alert topic can press its buttons: keep the topic secret, or better, use a"
        " self-hosted server with access control (docs/remote.md)"
    )
    if public(ch):
        out.append(
            f"channels.{name}.url: the public ntfy.sh: anyone who learns the topic's name reads"
            " the alerts and can press Allow (use a self-hosted server with access control)"
        )
    return out


def probe(state_dir: str, name: str, ch: Mapping[str, Any], timeout_s: float) -> int | None:
    """doctor: the HTTP status of an anonymous post of a harmless message to the reply topic
    (2xx: anyone may post there); None without an answer."""
    from lookout.channels import post

    server = split(ch)[0]
    url = f"{server}/{reply_topic(state_dir, name, ch)}"
    try:
        return post.post(url, PROBE.encode(), {"Title": "lookout doctor"}, timeout_s)[0]
    except base.ChannelError:
        return None


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    out = base.network_findings(NAME, used)
    for name, ch in used.items():
        if not (ctx["answers"] and ch.get("answers")):
            continue
        from lookout import paths

        hint = "use a self-hosted ntfy server with access control (docs/remote.md)"
        if public(ch):
            out.append(
                (
                    name,
                    base.WARN,
                    "ntfy answers on the public ntfy.sh: anyone who learns"
                    " the topic reads the alerts and can press Allow",
                    hint,
                )
            )
        status = probe(paths.state_dir(), name, ch, PROBE_TIMEOUT_S)
        if status is not None and 200 <= status < 300:
            out.append(
                (
                    name,
                    base.WARN,
                    "ntfy's reply topic accepts anonymous posts: anyone"
                    " who knows its name can post to it (a press still needs a token from"
                    " the alert)",
                    hint,
                )
            )
        elif status is None:
            out.append((name, base.WARN, "ntfy's reply topic: no answer from the server", None))
        else:
            out.append(
                (name, base.OK, f"ntfy's reply topic refuses anonymous posts (HTTP {status})", None)
            )
    return out


def send(ch: Mapping[str, Any], msg: Message, timeout_s: float) -> Outcome:
    import json

    from lookout.channels import post

    server, topic = split(ch)
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
        # A `view` action opens the request's page (which asks for the dashboard's login).
        payload.setdefault("click", link)
        payload["actions"] = [{"action": "view", "label": "Answer", "url": link, "clear": True}]
    if msg.get("buttons") and msg.get("reply_url"):
        payload["actions"] = actions(msg["buttons"], str(msg["reply_url"]), link)
    # An update publishes under the alert's own sequence id (its ref): ntfy replaces it. An alert
    # with buttons always has one (its outcome replaces it).
    seq = msg["ref"] if msg.get("update") and msg.get("ref") else msg.get("sequence_id")
    if not seq and msg.get("buttons"):
        import secrets

        seq = "lookout-" + secrets.token_hex(16)
    if seq:
        payload["sequence_id"] = seq
    payload["title"], payload["message"] = fit(payload["title"], payload["message"])
    headers = {"Content-Type": "application/json", **auth(ch)}
    status, text = post.post(server + "/", json.dumps(payload).encode(), headers, timeout_s)
    if status != 200:
        raise base.ChannelError(post.failure(status, text))
    what = ", with answer buttons" if msg.get("buttons") and msg.get("reply_url") else ""
    return "sent", f"HTTP 200 {base.redact_url(server)}{what}", seq


def replace(ch: Mapping[str, Any], ref: str, title: str, body: str, timeout_s: float) -> Outcome:
    """Alert `ref` as `title` and `body` without actions: ntfy 2.16+ replaces it in place (its
    sequence id), an older server shows it as a new message after it."""
    msg = {"title": title, "body": body, "kind": "", "update": True, "ref": ref}
    return send(ch, msg, timeout_s)


def actions(buttons: list[tuple[str, str]], reply_url: str, link: str | None) -> list[Any]:
    """Allow/Deny (or a question's options) as `http` actions the phone's app posts to the reply
    topic, each body a press token; Show all (the request's card) last. At most ACTIONS_MAX: a
    question whose options do not all fit offers none of them (Deny, and its card)."""
    from lookout.boundary import visible

    out: list[dict[str, Any]] = [
        {"action": "http", "label": visible(label), "url": reply_url, "method": "POST",
         "body": PRESS_PREFIX + token, "clear": True}
        for label, token in buttons
    ]  # fmt: skip
    deny, picks = out[-1:], out[:-1]  # Deny is always last (answers.choices) and always kept
    if len(picks) > ACTIONS_MAX - len(deny) - (1 if link else 0):
        picks = []  # a question's options, not all of them: none (the card has them all)
    kept = picks + deny
    if link:
        kept.append({"action": "view", "label": "Show all", "url": link, "clear": False})
    return kept


def size(title: str, body: str) -> int:
    """A message's size as the ntfy server counts it: bytes of UTF-8."""
    return len(title.encode()) + len(body.encode())


def fit(title: str, body: str) -> tuple[str, str]:
    """Title and body within MESSAGE_MAX bytes, the body cut with … (never within a character)."""
    if size(title, body) <= MESSAGE_MAX:
        return title, body
    title = title.encode()[: MESSAGE_MAX // 4].decode("utf-8", "ignore")
    room = MESSAGE_MAX - len(title.encode()) - len("…".encode())
    return title, body.encode()[: max(room, 0)].decode("utf-8", "ignore") + "…"


def _priority(ch: Mapping[str, Any], msg: Message) -> object:
    if msg.get("update"):
        return 2  # replacing an alert should not buzz the phone again
    priority = base.by_kind(ch.get("priority"), msg["kind"], 3)
    return PRIORITY.get(str(priority), priority)


def auth(ch: Mapping[str, Any]) -> dict[str, str]:
    token = ch.get("token")
    if ch.get("token_env"):
        token = base.clean(base.env(ch, "token_env"), f"environment variable {ch['token_env']}")
    if not token:
        return {}
    if ":" in token:  # user:password
        import base64

        return {"Authorization": "Basic " + base64.b64encode(token.encode()).decode()}
    return {"Authorization": f"Bearer {token}"}
