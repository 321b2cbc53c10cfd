"""Slack (issue 40): chat.postMessage / chat.update for alerts and their updates, with Block Kit
buttons for a request [remote] may answer (the slack answer surface). Presses and thread replies
come back over Socket Mode (lookout.surfaces.slack: a WebSocket the listener opens with the app
token; no public Request URL, no inbound port). Leaves the machine.

Uses the optional `slack-sdk` (pyproject's `slack` extra; `lookout channel add --type slack`
installs it into lookout's runtime), imported inside the calls: runs in the sender, the listener,
`lookout test` and doctor, never in a hook. The tokens come from the variables the config names
and never appear in a detail, the state or a log."""

from __future__ import annotations

import os

from lookout.channels import base

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from slack_sdk.web import WebClient

    from lookout.channels.base import Doctor, Finding, Message, Option, Outcome
    from lookout.config.check import Checker, KeyPath
    from lookout.shapes import Channel

    class Slack(Channel):
        bot_token_env: str | None  # the variable holding the bot token (xoxb-)
        app_token_env: str | None  # the variable holding the app-level token (xapp-, Socket Mode)
        channel: str | None  # the channel the bot writes to (an id, C0123..., or #name)
        allowed_user_ids: list[str]  # whose presses and replies count (empty: nobody's)
        api_url: str  # the Web API's base URL, ending in /


NAME = "slack"
KEYS = ("bot_token_env", "app_token_env", "channel", "allowed_user_ids", "api_url")
SECRETS = ()  # the tokens are in the environment
TIMEOUT_MS = 10000
REMOTE = True
UPDATABLE = True
LOUD = False
ANSWERS = "slack"
STEERS = False  # its listener runs while an alert can be answered or replied to (sender)
FOCUS = False
# What `lookout channel add --type slack` installs into lookout's runtime (and its module).
PACKAGES = ("slack-sdk>=3.27",)
PACKAGE_MODULE = "slack_sdk.socket_mode"
OPTIONS: tuple[Option, ...] = (
    {"flag": "--url", "key": "api_url", "help": "the Web API's base URL (api_url, default"
     " https://slack.com/api/)"},
    {"flag": "--bot-token-env", "key": "bot_token_env", "metavar": "VAR", "required": True,
     "help": "the variable holding the bot token (xoxb-...)"},
    {"flag": "--app-token-env", "key": "app_token_env", "metavar": "VAR", "required": True,
     "help": "the variable holding the app-level token (xapp-..., Socket Mode)"},
    {"flag": "--channel", "key": "channel", "metavar": "CHANNEL", "required": True,
     "help": "the channel the bot writes to (its id, C0123...)"},
    {"flag": "--allowed-user", "key": "allowed_user_ids", "dest": "allowed_slack_users",
     "help": "a Slack user id (U0123...) whose presses and replies count (repeat for more;"
     " default: nobody's)", "action": "append", "metavar": "ID"},
)  # fmt: skip
EXAMPLE = (
    "lookout channel add team --type slack --bot-token-env SLACK_BOT_TOKEN --app-token-env"
    " SLACK_APP_TOKEN --channel C0123456789 --allowed-user U0123456789"
)
API = "https://slack.com/api/"

withdraw = base.cannot_withdraw  # an alert is updated to its outcome instead (replace)
inspect = base.nothing_to_inspect

SECTION_MAX = 3000  # a section block's text, in characters
BUTTON_TEXT_MAX = 75  # a button's plain_text label
ACTION_PREFIX = "lk1-"  # each button's action_id: this prefix and its index


class SlackError(base.ChannelError):
    """A Web API call that failed, said without the token."""


def token(ch: Mapping[str, Any], key: str, prefix: str) -> str:
    var = ch.get(key)
    value = os.environ.get(var) if isinstance(var, str) and var else None
    if not value:
        raise SlackError(f"environment variable {var} is not set")
    if not value.startswith(prefix) or any(c.isspace() or ord(c) < 0x20 for c in value):
        raise SlackError(f"environment variable {var} does not hold a {prefix} token")
    return value


def client(ch: Mapping[str, Any], timeout_s: float) -> WebClient:
    """slack-sdk's Web API client with the bot token, at api_url."""
    try:
        from slack_sdk.web import WebClient
    except ImportError:
        raise SlackError(
            "the slack-sdk package is not installed in lookout's runtime (lookout channel add"
            " --type slack installs it)"
        ) from None
    return WebClient(
        token=token(ch, "bot_token_env", "xoxb-"),
        base_url=str(ch["api_url"]),
        timeout=max(1, int(timeout_s)),
    )


def call(ch: Mapping[str, Any], method: str, params: dict[str, Any], timeout_s: float) -> Any:
    """One Web API method with the bot token: its answer (a dict), or SlackError."""
    from slack_sdk.errors import SlackApiError, SlackClientError

    web = client(ch, timeout_s)
    try:
        return web.api_call(method, json=params).data
    except SlackApiError as exc:
        data = exc.response.data if isinstance(exc.response.data, dict) else {}
        raise SlackError(f"{method}: {visible_error(data.get('error'))}") from None
    except (SlackClientError, OSError, ValueError) as exc:
        raise SlackError(f"{method}: cannot connect: {type(exc).__name__}") from None


def visible_error(err: object) -> str:
    from lookout.boundary import visible

    return visible(str(err or "no error given"))[:200]


def section_text(title: str, body: str, outcome: str | None = None) -> str:
    """The message's one section: title, body (and the outcome once the request ended), as
    plain_text (nothing in it is markup), control characters made visible, within 3000."""
    return base.plain_text(title, body, outcome, SECTION_MAX)


def blocks(title: str, body: str, buttons: list[tuple[str, str]] | None = None) -> list[Any]:
    """A section with the text and, for a request, an actions block: each button's value is its
    press token (answers.mint), never the request's nonce."""
    from lookout.boundary import visible

    out: list[Any] = [
        {"type": "section", "text": {"type": "plain_text", "text": section_text(title, body)}}
    ]
    if buttons:
        elements = []
        for n, (label, tok) in enumerate(buttons):
            button = {
                "type": "button",
                "action_id": f"{ACTION_PREFIX}{n}",
                "value": tok,
                "text": {"type": "plain_text", "text": visible(label)[:BUTTON_TEXT_MAX]},
            }
            if label == "Allow":
                button["style"] = "primary"
            elif label == "Deny":
                button["style"] = "danger"
            elements.append(button)
        out.append({"type": "actions", "elements": elements})
    return out


def split_ref(ref: str) -> tuple[str, str]:
    """A ref is `CHANNEL_ID/TS` (chat.update needs the channel's id, not its name)."""
    channel, _, ts = ref.partition("/")
    return channel, ts


def send(ch: Slack, msg: Message, timeout_s: float) -> Outcome:
    """An alert (chat.postMessage, with the request's buttons if msg["buttons"]) or, for an
    update, the alert replaced (chat.update)."""
    if msg.get("update") and msg.get("ref"):
        return replace(ch, str(msg["ref"]), msg["title"], msg["body"], timeout_s)
    params = {
        "channel": ch["channel"],
        "text": section_text(msg["title"], "")[:SECTION_MAX],
        "blocks": blocks(msg["title"], msg["body"], msg.get("buttons")),
    }
    try:
        result = call(ch, "chat.postMessage", params, timeout_s)
    except SlackError as exc:
        return "failed", str(exc), None
    cid, ts = result.get("channel"), result.get("ts")
    if not isinstance(cid, str) or not isinstance(ts, str):
        return "failed", "chat.postMessage: no channel and ts in the answer", None
    what = ", with answer buttons" if msg.get("buttons") else ""
    return "sent", f"chat.postMessage ts {ts}{what}", f"{cid}/{ts}"


def update(
    ch: Mapping[str, Any], ref: str, blocks_: list[Any], text: str, timeout_s: float
) -> None:
    cid, ts = split_ref(ref)
    call(ch, "chat.update", {"channel": cid, "ts": ts, "text": text, "blocks": blocks_}, timeout_s)


def replace(ch: Slack, ref: str, title: str, body: str, timeout_s: float) -> Outcome:
    """The alert `ref` updated to `title` and `body`, its buttons gone (chat.update)."""
    try:
        update(ch, ref, blocks(title, body), section_text(title, ""), timeout_s)
    except SlackError as exc:
        return "failed", str(exc), None
    return "sent", f"chat.update {split_ref(ref)[1]}", ref


def add_buttons(
    ch: Slack, ref: str, buttons: list[tuple[str, str]], timeout_s: float
) -> tuple[str, str]:
    """Not used: a late request's message is updated with its body and buttons by the surface
    (it has the body); here for the protocol."""
    return "skipped", "the slack surface updates the whole message (surfaces/slack.py)"


# -- the config ----------------------------------------------------------------------------------


def check(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Slack) -> None:
    # The tokens are secrets: only the names of the variables that hold them are in the file.
    for key, what in (("bot_token_env", "bot token, xoxb-"), ("app_token_env", "app token, xapp-")):
        if key not in raw:
            c.error(path, f"missing key {key!r} (the environment variable holding the {what})")
    ch["bot_token_env"] = c.get(path, raw, "bot_token_env", str, "a string")
    ch["app_token_env"] = c.get(path, raw, "app_token_env", str, "a string")
    if "channel" not in raw:
        c.error(path, "missing key 'channel' (the channel the bot writes to, e.g. C0123456789)")
    ch["channel"] = c.get(path, raw, "channel", str, "a string")
    users: list[str] = []
    if "allowed_user_ids" in raw:
        value = raw["allowed_user_ids"]
        if not isinstance(value, list) or any(not isinstance(u, str) or not u for u in value):
            got = f"expected a list of Slack user ids, got {value!r}"
            c.error((*path, "allowed_user_ids"), got)
        else:
            users = value
    ch["allowed_user_ids"] = users
    api = c.get(path, raw, "api_url", str, "a string")
    base.check_http_url(c, (*path, "api_url"), api)
    ch["api_url"] = (api or API).rstrip("/") + "/"


def warnings(name: str, ch: Slack, answers: bool) -> list[str]:
    out = [
        f"channels.{name}.{key}: environment variable {ch.get(key)} is not set"
        for key in ("bot_token_env", "app_token_env")
        if ch.get(key) and not os.environ.get(str(ch.get(key)))
    ]
    return out + risks(name, ch, answers)


def risks(name: str, ch: Mapping[str, Any], answers: bool) -> list[str]:
    out = []
    if not ch.get("allowed_user_ids"):
        out.append(
            f"channels.{name}.allowed_user_ids is empty: nobody's press or reply answers (set it"
            " to your Slack user id, U0123...)"
        )
    try:
        import slack_sdk  # noqa: F401
    except ImportError:
        out.append(
            f"channels.{name}: the slack-sdk package is not installed in lookout's runtime"
            " (pip install 'slack-sdk>=3.27' there)"
        )
    return out


def connection_problem(ch: Mapping[str, Any], timeout_s: float = 10) -> str | None:
    """Why the app token cannot open a Socket Mode connection (apps.connections.open), or None."""
    try:
        web = client(ch, timeout_s)
        app = token(ch, "app_token_env", "xapp-")
        from slack_sdk.errors import SlackApiError, SlackClientError

        try:
            web.apps_connections_open(app_token=app)
        except SlackApiError as exc:
            data = exc.response.data if isinstance(exc.response.data, dict) else {}
            return f"apps.connections.open: {visible_error(data.get('error'))}"
        except (SlackClientError, OSError, ValueError) as exc:
            return f"apps.connections.open: cannot connect: {type(exc).__name__}"
    except SlackError as exc:
        return str(exc)
    return None


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    out: list[Finding] = []
    for name, ch in used.items():
        problem = connection_problem(ch)
        if problem is not None:
            hint = "check the app-level token (xapp-, connections:write) and that Socket Mode is on"
            what = f"slack: the app token cannot open a connection: {problem}"
            out.append((name, base.WARN, what, hint))
        else:
            out.append((name, base.OK, "slack: Socket Mode connection opens", None))
        out += [
            (name, base.WARN, risk.removeprefix(f"channels.{name}."), None)
            for risk in risks(name, ch, ctx["answers"])
        ]
    return out
