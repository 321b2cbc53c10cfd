"""A webhook: one JSON POST per alert, as lookout's own fields, a Slack message or a Discord one
(no @everyone from a message's text). Leaves the machine."""

from __future__ import annotations

from lookout import templates
from lookout.channels import base

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.channels.base import Doctor, Finding, Message, Option, Outcome
    from lookout.config.check import Checker, KeyPath
    from lookout.shapes import Channel

    class Webhook(Channel):
        url: str | None  # the URL holds the secret: shown by scheme and host only
        url_env: str | None
        format: str  # json | slack | discord
        headers: dict[str, str]


NAME = "webhook"
KEYS = ("url", "url_env", "format", "headers")
SECRETS = ("url", "headers")
TIMEOUT_MS = 10000
REMOTE = True
UPDATABLE = False
LOUD = False
ANSWERS = None
STEERS = False
FOCUS = False
FORMATS = ("json", "slack", "discord")
OPTIONS: tuple[Option, ...] = (
    {"flag": "--url", "key": "url", "help": "the URL"},
    {"flag": "--url-env", "key": "url_env", "help": "the variable holding the URL",
     "metavar": "VAR"},
    {"flag": "--format", "key": "format", "help": "body format", "choices": FORMATS},
)  # fmt: skip
EXAMPLE = "lookout channel add team --type webhook --url-env SLACK_WEBHOOK_URL --format slack"
DISCORD_LIMIT = 2000

replace = base.cannot_replace
withdraw = base.cannot_withdraw
add_buttons = base.cannot_add_buttons
inspect = base.nothing_to_inspect
warnings = base.env_warnings


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    return base.network_findings(NAME, used)


def check(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Webhook) -> None:
    url = c.get(path, raw, "url", str, "a string")
    url_env = c.get(path, raw, "url_env", str, "a string")
    if "url" not in raw and "url_env" not in raw:
        c.error(path, "missing key 'url' or 'url_env'")
    if url is not None and url_env is not None:
        c.error(path, "set either 'url' or 'url_env', not both")
    base.check_http_url(c, (*path, "url"), url)
    ch["url"], ch["url_env"] = url, url_env
    fmt = raw.get("format", "json")
    if not isinstance(fmt, str) or fmt not in FORMATS:
        c.error((*path, "format"), f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    ch["format"] = fmt
    headers = c.get(path, raw, "headers", dict, "a table of strings") or {}
    for key, value in headers.items():
        c.expect((*path, "headers", key), value, str, "a string")
    ch["headers"] = headers


def body(fmt: str, msg: Message) -> dict[str, Any]:
    """The JSON the webhook gets: lookout's fields, or a Slack or Discord message."""
    if fmt == "slack":
        return _slack(msg)
    if fmt == "discord":
        return _discord(msg)
    title, text = msg["title"], msg["body"]
    link = base.link(msg)
    intent = msg.get("intent") or {}
    extra = {"url": link} if link else {}
    return {
        **extra,
        "title": title,
        "message": text,
        "kind": msg["kind"],
        "reason": intent.get("reason"),
        "project": msg["values"].get("project"),
        "session_id": intent.get("session_id"),
        "agent": intent.get("agent"),
        "episode": intent.get("episode"),
        "duration_ms": intent.get("duration_ms"),
        "ts": intent.get("ts"),
    }


def _slack(msg: Message) -> dict[str, Any]:
    def esc(s: str) -> str:  # Slack mrkdwn control characters
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    title, text, link = msg["title"], msg["body"], base.link(msg)
    more = f"\n<{esc(link)}|Answer in lookout>" if link else ""
    return {"text": f"*{esc(title)}*" + (f"\n{esc(text)}" if text else "") + more}


def _discord(msg: Message) -> dict[str, Any]:
    title, text, link = msg["title"], msg["body"], base.link(msg)
    content = f"**{title}**" + (f"\n{text}" if text else "")
    content = templates.truncate(content, DISCORD_LIMIT - (len(link) + 1 if link else 0))
    return {
        "content": content + (f"\n{link}" if link else ""),
        "allowed_mentions": {"parse": []},
    }  # no @everyone from a message's text


def send(ch: Webhook, msg: Message, timeout_s: float) -> Outcome:
    import json

    from lookout.channels import post

    url = ch.get("url")
    if ch.get("url_env"):
        url = base.clean(base.env(ch, "url_env"), f"environment variable {ch['url_env']}", False)
    headers = {"Content-Type": "application/json", **(ch.get("headers") or {})}
    data = json.dumps(body(ch.get("format") or "json", msg), ensure_ascii=False).encode()
    status, text = post.post(str(url), data, headers, timeout_s)
    if not 200 <= status < 300:
        raise base.ChannelError(post.failure(status, text))
    return "sent", f"HTTP {status} {base.redact_url(str(url))}", None
