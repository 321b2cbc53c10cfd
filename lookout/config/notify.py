"""The notification sections of config.toml: [channels.<name>] (one checker per type), [[rules]]
and [templates], their defaults (the embedded default config among them) and the warnings that
only show at send time. Pure but for `warnings`, which reads the environment."""

from __future__ import annotations

import os

from lookout import events
from lookout.config.check import Checker, choices, did_you_mean, type_name
from lookout.notify import templates
from lookout.words import (
    ATTENTION_KINDS,
    CHANNEL_TYPES,
    CONTENT_LEVELS,
    KINDS,
    REMOTE_TYPES,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from lookout.config.check import KeyPath
    from lookout.shapes import Channel, Config, Rule

# Kinds that quiet hours mute unless the rule says otherwise: everything that is not "act now".
DEFAULT_QUIET_KINDS = ("done", "idle", "subagent_done", "session_start", "session_end", "message")
URGENCIES = ("low", "normal", "critical")
NTFY_PRIORITIES = ("min", "low", "default", "high", "max", "urgent")
WEBHOOK_FORMATS = ("json", "slack", "discord")

COMMON_KEYS = ("type", "enabled", "timeout_ms", "content")
TYPE_KEYS: dict[str, tuple[str, ...]] = {
    "desktop": ("urgency", "app_name", "skip_when_focused"),
    "ntfy": ("url", "token", "token_env", "priority", "tags", "click"),
    "webhook": ("url", "url_env", "format", "headers"),
    "command": ("argv",),
    "apprise": ("urls",),
    "telegram": ("token_env", "chat_id", "allowed_user_ids", "api_url"),
}
TELEGRAM_API = "https://api.telegram.org"
RULE_KEYS = (
    "when",
    "channels",
    "projects",
    "agents",
    "min_duration_s",
    "include_subagents",
    "print_mode",
    "cooldown_s",
    "quiet_hours",
    "quiet_kinds",
    "escalate_after_s",
    "escalate_to",
    "grace_s",
    "digest_s",
)
# A held or merged alert waits at most this long: the sender drops anything later than that.
MAX_HOLD_S = 3600.0
# A send that takes longer is broken; the bound also keeps deadlines inside time_t.
MAX_TIMEOUT_MS = 600_000
_DEFAULT_TIMEOUT_MS = {
    "desktop": 5000,
    "ntfy": 10000,
    "webhook": 10000,
    "command": 10000,
    "apprise": 20000,
    "telegram": 10000,
}

# With no config file at all: desktop alerts for every attention reason, for a finished turn
# that took at least 30 s, for a stuck session and a lifted usage limit. Nothing remote.
DEFAULT_RAW: dict[str, Any] = {
    "channels": {"desktop": {"type": "desktop"}},
    "rules": [
        {"when": list(ATTENTION_KINDS), "channels": ["desktop"]},
        {"when": ["done"], "channels": ["desktop"], "min_duration_s": 30},
        {"when": ["stuck", "limit_lifted"], "channels": ["desktop"]},
    ],
}

# The config file install.py writes: DEFAULT_RAW as TOML (a test holds the two equal), so a user
# who has the file gets exactly what a user without one gets, and can read and change it.
DEFAULT_TEXT = """\
# lookout's notification config (`lookout check-config` validates it).
# Every key, with comments: config.example.toml in lookout's repository. Add channels and rules
# without editing by hand:
#   lookout channel add phone --type ntfy --url https://ntfy.sh/<a-long-secret-topic>
#   lookout rule add --when permission,question,plan --channels phone
# then try it: lookout test phone

# Desktop notifications (notify-send on Linux, osascript on macOS).
[channels.desktop]
type = "desktop"

# Every time Claude waits for you: a permission, a question, a plan, an MCP form, input, an error.
[[rules]]
when = ["permission", "question", "plan", "elicitation", "input", "error"]
channels = ["desktop"]

# A finished turn that took 30 s or more.
[[rules]]
when = ["done"]
channels = ["desktop"]
min_duration_s = 30

# A session that says working while nothing moves (stuck), and a usage limit that lifted.
[[rules]]
when = ["stuck", "limit_lifted"]
channels = ["desktop"]
"""


def _parse_hhmm(text: str) -> int | None:
    hh, sep, mm = text.strip().partition(":")
    if not sep or not (hh.isdigit() and mm.isdigit()) or len(mm) != 2 or len(hh) > 2:
        return None
    h, m = int(hh), int(mm)
    if h > 23 or m > 59:
        return None
    return h * 60 + m


def parse_quiet_hours(text: str) -> tuple[int, int] | None:
    start, sep, end = text.partition("-")
    a, b = _parse_hhmm(start), _parse_hhmm(end)
    if not sep or a is None or b is None or a == b:
        return None
    return a, b


def _by_kind(c: Checker, path: KeyPath, value: object, check: Any) -> object:
    """A value, or a table of values by notification kind (`default` for the rest)."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for kind, item in value.items():
            if kind not in (*KINDS, "default"):
                c.error(
                    (*path, kind),
                    f"unknown kind{did_you_mean(kind, (*KINDS, 'default'))} (expected one of"
                    f" {choices(KINDS)}, default)",
                )
                continue
            checked = check((*path, kind), item)
            if checked is not None:
                out[kind] = checked
        return out
    return check(path, value)


def _channel(c: Checker, name: str, raw: object) -> dict[str, Any] | None:
    path: KeyPath = ("channels", name)
    if not c.expect(path, raw, dict, "a table"):
        return None
    assert isinstance(raw, dict)
    kind = raw.get("type")
    if kind is None:
        c.error(path, f"missing key 'type' (one of {choices(CHANNEL_TYPES)})")
        return None
    if not isinstance(kind, str) or kind not in CHANNEL_TYPES:
        c.error(
            (*path, "type"),
            f"expected one of {choices(CHANNEL_TYPES)}, got {kind!r}"
            + did_you_mean(kind, CHANNEL_TYPES),
        )
        return None
    c.unknown_keys(path, raw, COMMON_KEYS + TYPE_KEYS[kind])
    ch: dict[str, Any] = {
        "type": kind,
        "enabled": True,
        "timeout_ms": _DEFAULT_TIMEOUT_MS[kind],
        "content": "summary" if kind in REMOTE_TYPES else "full",
    }
    if (enabled := c.get(path, raw, "enabled", bool, "a bool")) is not None:
        ch["enabled"] = enabled
    if "timeout_ms" in raw and c.get(path, raw, "timeout_ms", int, "an integer") is not None:
        if not 0 < raw["timeout_ms"] <= MAX_TIMEOUT_MS:
            c.error(
                (*path, "timeout_ms"),
                f"expected an integer from 1 to {MAX_TIMEOUT_MS}, got {raw['timeout_ms']}",
            )
        else:
            ch["timeout_ms"] = raw["timeout_ms"]
    if (content := c.get(path, raw, "content", str, "a string")) is not None:
        if content not in CONTENT_LEVELS:
            c.error(
                (*path, "content"), f"expected one of {choices(CONTENT_LEVELS)}, got {content!r}"
            )
        else:
            ch["content"] = content
    _TYPE_CHECKS[kind](c, path, raw, ch)
    return ch


def _desktop(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Channel) -> None:
    ch["app_name"] = c.get(path, raw, "app_name", str, "a string") or "lookout"
    ch["urgency"] = _by_kind(
        c, (*path, "urgency"), raw.get("urgency", "normal"), c.choice(URGENCIES)
    )
    focused = c.get(path, raw, "skip_when_focused", bool, "a bool")
    ch["skip_when_focused"] = True if focused is None else focused


def _ntfy(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Channel) -> None:
    url = c.get(path, raw, "url", str, "a string")
    if "url" not in raw:
        c.error(path, "missing key 'url' (server and topic, e.g. https://ntfy.sh/my-topic)")
    elif url is not None and (problem := _ntfy_url_problem(url)):
        c.error(
            (*path, "url"),
            "expected http(s)://server/topic with a topic of letters, "
            f"digits, - and _, got {shown_url(url)!r} ({problem})",
        )
    ch["url"] = url
    ch["token"] = c.get(path, raw, "token", str, "a string")
    ch["token_env"] = c.get(path, raw, "token_env", str, "a string")
    if ch["token"] and ch["token_env"]:
        c.error(path, "set either 'token' or 'token_env', not both")

    def prio(p: KeyPath, v: object) -> object:
        if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 5:
            return v
        if isinstance(v, str) and v in NTFY_PRIORITIES:
            return v
        c.error(p, f"expected 1-5 or one of {choices(NTFY_PRIORITIES)}, got {v!r}")
        return None

    ch["priority"] = _by_kind(
        c,
        (*path, "priority"),
        raw.get("priority", {"default": 3, **dict.fromkeys(ATTENTION_KINDS, 4)}),
        prio,
    )
    ch["tags"] = c.string_list((*path, "tags"), raw["tags"]) if "tags" in raw else []
    ch["click"] = c.get(path, raw, "click", str, "a string")


def _webhook(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Channel) -> None:
    url = c.get(path, raw, "url", str, "a string")
    url_env = c.get(path, raw, "url_env", str, "a string")
    if "url" not in raw and "url_env" not in raw:
        c.error(path, "missing key 'url' or 'url_env'")
    if url is not None and url_env is not None:
        c.error(path, "set either 'url' or 'url_env', not both")
    if url is not None and not url.startswith(("http://", "https://")):
        c.error(
            (*path, "url"),
            f"expected an http(s) URL, got {shown_url(url)!r} ({_scheme_problem(url)})",
        )
    ch["url"], ch["url_env"] = url, url_env
    fmt = raw.get("format", "json")
    if not isinstance(fmt, str) or fmt not in WEBHOOK_FORMATS:
        c.error((*path, "format"), f"expected one of {choices(WEBHOOK_FORMATS)}, got {fmt!r}")
    ch["format"] = fmt
    headers = c.get(path, raw, "headers", dict, "a table of strings") or {}
    for key, value in headers.items():
        if not isinstance(value, str):
            c.error((*path, "headers", key), f"expected a string, got {type_name(value)}")
    ch["headers"] = headers


def _command(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Channel) -> None:
    if "argv" not in raw:
        c.error(path, "missing key 'argv' (the program and its arguments, no shell)")
        argv: list[str] = []
    else:
        argv = c.string_list((*path, "argv"), raw["argv"], nonempty=True)
    for i, arg in enumerate(argv):
        try:
            templates.parse(arg, templates.ARGV_PLACEHOLDERS)
        except ValueError as exc:
            c.error((*path, "argv", i), str(exc))
    ch["argv"] = argv


def _apprise(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Channel) -> None:
    if "urls" not in raw:
        c.error(path, "missing key 'urls' (Apprise service URLs)")
        ch["urls"] = []
    else:
        ch["urls"] = c.string_list((*path, "urls"), raw["urls"], nonempty=True)


def _telegram(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Channel) -> None:
    # The bot token is a secret: only the name of the variable that holds it is in the file.
    if "token_env" not in raw:
        c.error(path, "missing key 'token_env' (the environment variable holding the bot token)")
    ch["token_env"] = c.get(path, raw, "token_env", str, "a string")
    chat = raw.get("chat_id")
    if "chat_id" not in raw:
        c.error(path, "missing key 'chat_id' (the chat the bot writes to, e.g. 123456789)")
    elif isinstance(chat, bool) or not isinstance(chat, int):
        c.error((*path, "chat_id"), f"expected an integer, got {type_name(chat)}")
        chat = None
    ch["chat_id"] = chat
    users: list[int] = []
    if "allowed_user_ids" in raw:
        value = raw["allowed_user_ids"]
        if not isinstance(value, list) or any(
            isinstance(u, bool) or not isinstance(u, int) for u in value
        ):
            c.error((*path, "allowed_user_ids"), f"expected a list of integers, got {value!r}")
        else:
            users = value
    ch["allowed_user_ids"] = users
    api = c.get(path, raw, "api_url", str, "a string")
    if api is not None and not api.startswith(("http://", "https://")):
        c.error(
            (*path, "api_url"),
            f"expected an http(s) URL, got {shown_url(api)!r} ({_scheme_problem(api)})",
        )
    ch["api_url"] = (api or TELEGRAM_API).rstrip("/")


_TYPE_CHECKS: dict[str, Callable[[Checker, KeyPath, dict[str, Any], Channel], None]] = {
    "desktop": _desktop,
    "ntfy": _ntfy,
    "webhook": _webhook,
    "command": _command,
    "apprise": _apprise,
    "telegram": _telegram,
}


def _scheme_problem(url: str) -> str:
    scheme, sep, _ = url.partition("://")
    return f"the scheme is {scheme!r}, not http or https" if sep else "no http:// or https://"


def _ntfy_url_problem(url: str) -> str | None:
    """What is wrong with an ntfy URL, said without repeating the topic (it is the secret)."""
    if not url.startswith(("http://", "https://")):
        return _scheme_problem(url)
    server, _, topic = url.rstrip("/").rpartition("/")
    if not topic or "//" not in server:
        return "no topic after the server"
    if len(topic) > 64:
        return f"the topic has {len(topic)} characters, at most 64"
    bad = sorted({ch for ch in topic if not (ch.isascii() and (ch.isalnum() or ch in "-_"))})
    if bad:
        return f"the topic contains {' '.join(repr(ch) for ch in bad)}"
    return None


def shown_url(url: str) -> str:
    """A URL as a config error may show it: scheme, user and host as written (a typo there is the
    usual mistake), the password and everything after the host (topics, webhook tokens) hidden."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    host, slash, path = rest.partition("/")
    user, at, hostport = host.rpartition("@")
    if at:
        name, colon, _ = user.partition(":")
        host = f"{name}{':…' if colon else ''}@{hostport}"
    tail = "/…" if path else slash
    return f"{scheme}{sep}{host}{tail}"


def redact_url(url: str) -> str:
    """`https://hooks.slack.com/…`: scheme and host only, never the path that holds the secret."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "…"
    host = rest.split("/", 1)[0].rpartition("@")[2]
    return f"{scheme}://{host}/…"


def _channel_refs(c: Checker, path: KeyPath, value: object, names: tuple[str, ...]) -> list[str]:
    out = []
    for i, name in enumerate(c.string_list(path, value, nonempty=True)):
        if name in names:
            out.append(name)
        else:
            defined = f"defined: {choices(names)}" if names else "no [channels.<name>] defined"
            c.error((*path, i), f"unknown channel {name!r} ({defined})")
    return out


def _rule(c: Checker, i: int, raw: object, channel_names: tuple[str, ...]) -> Rule | None:
    path: KeyPath = ("rules", i)
    if not c.expect(path, raw, dict, "a table"):
        return None
    assert isinstance(raw, dict)
    c.unknown_keys(path, raw, RULE_KEYS)
    for key in ("when", "channels"):
        if key not in raw:
            c.error(path, f"missing key {key!r}")
    rule: Rule = {
        "when": c.string_list((*path, "when"), raw.get("when", []), KINDS, nonempty=True),
        "channels": _channel_refs(c, (*path, "channels"), raw.get("channels", []), channel_names),
        "projects": None,
        "agents": None,
        "min_duration_s": None,
        "include_subagents": False,
        "print_mode": False,
        "cooldown_s": 0.0,
        "quiet_hours": None,
        "quiet_kinds": list(DEFAULT_QUIET_KINDS),
        "escalate_after_s": None,
        "escalate_to": [],
        "grace_s": None,
        "digest_s": None,
    }
    if "projects" in raw:
        rule["projects"] = c.string_list((*path, "projects"), raw["projects"])
    if "agents" in raw:
        rule["agents"] = c.string_list((*path, "agents"), raw["agents"], events.AGENTS)
    if "min_duration_s" in raw:
        rule["min_duration_s"] = c.number((*path, "min_duration_s"), raw["min_duration_s"], 0)
    if "include_subagents" in raw and c.expect(
        (*path, "include_subagents"), raw["include_subagents"], bool, "a bool"
    ):
        rule["include_subagents"] = raw["include_subagents"]
    if "print_mode" in raw and c.expect((*path, "print_mode"), raw["print_mode"], bool, "a bool"):
        rule["print_mode"] = raw["print_mode"]
    if "cooldown_s" in raw:
        rule["cooldown_s"] = c.number((*path, "cooldown_s"), raw["cooldown_s"], 0) or 0.0
    if "quiet_hours" in raw and c.expect(
        (*path, "quiet_hours"), raw["quiet_hours"], str, "a string"
    ):
        window = parse_quiet_hours(raw["quiet_hours"])
        if window is None:
            c.error(
                (*path, "quiet_hours"),
                f'expected "HH:MM-HH:MM" (two different times), got {raw["quiet_hours"]!r}',
            )
        else:
            rule["quiet_hours"] = list(window)
    if "quiet_kinds" in raw:
        rule["quiet_kinds"] = c.string_list((*path, "quiet_kinds"), raw["quiet_kinds"], KINDS)
        if "quiet_hours" not in raw:
            c.error((*path, "quiet_kinds"), "has no effect without 'quiet_hours'")
    if "escalate_after_s" in raw:
        rule["escalate_after_s"] = c.number(
            (*path, "escalate_after_s"), raw["escalate_after_s"], 0, positive=True
        )
        if "escalate_to" not in raw:
            c.error(path, "missing key 'escalate_to' (escalate_after_s needs it)")
    if "escalate_to" in raw:
        rule["escalate_to"] = _channel_refs(
            c, (*path, "escalate_to"), raw["escalate_to"], channel_names
        )
        if "escalate_after_s" not in raw:
            c.error(path, "missing key 'escalate_after_s' (escalate_to needs it)")
    if "grace_s" in raw:
        rule["grace_s"] = _hold_s(c, (*path, "grace_s"), raw["grace_s"])
    if "digest_s" in raw:
        rule["digest_s"] = _hold_s(c, (*path, "digest_s"), raw["digest_s"])
        if "grace_s" in raw:
            c.error(
                path,
                "grace_s and digest_s exclude each other (a digest already drops what was"
                " answered before it is sent)",
            )
    return rule


def _hold_s(c: Checker, path: KeyPath, value: object) -> float | None:
    seconds = c.number(path, value, 0, positive=True)
    if seconds is not None and seconds > MAX_HOLD_S:
        c.error(path, f"expected a number <= {MAX_HOLD_S:g}, got {seconds:g}")
        return None
    return seconds


def check_channels(c: Checker, raw: object) -> tuple[dict[str, Any], tuple[str, ...]]:
    """[channels.<name>]: the valid channels, and every name defined (for the rules' refs)."""
    channels: dict[str, Any] = {}
    if c.expect(("channels",), raw, dict, "a table"):
        assert isinstance(raw, dict)
        for name, value in raw.items():
            if not name or not all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in name):
                c.error(("channels", name), "channel names use letters, digits, - and _")
                continue
            ch = _channel(c, name, value)
            if ch is not None:
                channels[name] = ch
    return channels, tuple(raw) if isinstance(raw, dict) else ()


def check_rules(c: Checker, raw: object, channel_names: tuple[str, ...]) -> list[Rule]:
    rules: list[Rule] = []
    if c.expect(("rules",), raw, list, "an array of tables ([[rules]])"):
        assert isinstance(raw, list)
        for i, value in enumerate(raw):
            rule = _rule(c, i, value, channel_names)
            if rule is not None:
                rules.append(rule)
    return rules


def check_templates(c: Checker, raw: object) -> dict[str, dict[str, str]]:
    """[templates.<kind>] over the built-in ones."""
    tmpl = {kind: dict(t) for kind, t in templates.DEFAULTS.items()}
    if c.expect(("templates",), raw, dict, "a table"):
        assert isinstance(raw, dict)
        for kind, value in raw.items():
            path: KeyPath = ("templates", kind)
            if kind not in KINDS:
                c.error(
                    path,
                    f"unknown kind{did_you_mean(kind, KINDS)} (expected one of {choices(KINDS)})",
                )
                continue
            if not c.expect(path, value, dict, "a table"):
                continue
            c.unknown_keys(path, value, ("title", "message"))
            for key in ("title", "message"):
                if key in value and c.expect((*path, key), value[key], str, "a string"):
                    try:
                        templates.parse(value[key])
                    except ValueError as exc:
                        c.error((*path, key), str(exc))
                    else:
                        tmpl[kind][key] = value[key]
    return tmpl


def warnings(cfg: Config) -> list[str]:
    """Problems that only show at send time: missing env vars, apprise not installed, and a
    config under which nothing can ever be sent."""
    out: list[str] = []
    if not cfg["rules"]:
        out.append("no [[rules]]: nothing will ever be sent (lookout rule add adds one)")
    elif not any(
        cfg["channels"][name]["enabled"]
        for rule in cfg["rules"]
        for name in rule["channels"] + rule["escalate_to"]
        if name in cfg["channels"]
    ):
        used = sorted({n for r in cfg["rules"] for n in r["channels"] + r["escalate_to"]})
        out.append(
            f"every channel the rules send to is disabled ({', '.join(used)}): nothing will ever"
            " be sent (set enabled = true in one)"
        )
    for name, ch in cfg["channels"].items():
        if not ch.get("enabled", True):
            continue  # defined but switched off: nothing will be sent, nothing can fail
        for key in ("token_env", "url_env"):
            var = ch.get(key)
            if var and not os.environ.get(var):
                out.append(f"channels.{name}.{key}: environment variable {var} is not set")
        if ch["type"] == "telegram":
            out.extend(telegram_warnings(name, ch, _answers_on(cfg)))
        if ch["type"] == "apprise":
            import importlib.util

            if importlib.util.find_spec("apprise") is None:
                out.append(
                    f"channels.{name}: the optional 'apprise' package is not installed "
                    f"(pip install apprise into lookout's environment)"
                )
    return out


def _answers_on(cfg: Config) -> bool:
    remote = cfg.get("remote")
    return isinstance(remote, dict) and bool(remote.get("enabled"))


def telegram_warnings(name: str, ch: Channel, answers: bool) -> list[str]:
    """S6: the bot token is part of every Bot API call's URL, so plain http to a host off this
    machine hands it (and with [remote] on, the power to press Allow) to the network; and with
    [remote] on and no allowed_user_ids, any member of the chat answers requests. A host name is
    not resolved: only `localhost` and loopback addresses count as this machine."""
    out = []
    api = str(ch.get("api_url") or "")
    if api.startswith("http://") and not _loopback(api):
        out.append(
            f"channels.{name}.api_url: {shown_url(api)} is not encrypted: the bot token (part of "
            "every call's URL) crosses the network in clear text, and whoever holds it can "
            "answer your requests (use https://)"
        )
    if answers and not ch.get("allowed_user_ids"):
        out.append(
            f"channels.{name}.allowed_user_ids is empty: a press from anyone in chat "
            f"{ch.get('chat_id')} answers a permission request (set it to your Telegram user id)"
        )
    return out


def _loopback(url: str) -> bool:
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost" or host.endswith(".localhost")
