"""The notification sections of config.toml: [channels.<name>] (one checker per type), [[rules]]
and [templates], their defaults (the embedded default config among them) and the warnings that
only show at send time. Pure but for `warnings`, which reads the environment."""

from __future__ import annotations

from lookout import events, templates
from lookout.config.check import Checker, choices, did_you_mean
from lookout.words import (
    ATTENTION_KINDS,
    CONTENT_LEVELS,
    KINDS,
    LIFE_KINDS,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.config.check import KeyPath
    from lookout.shapes import Config, Rule

# Kinds that quiet hours mute unless the rule says otherwise: everything that is not "act now".
DEFAULT_QUIET_KINDS = LIFE_KINDS
# Every key of a [[rules]] table, and whether a project's .claude/lookout.toml may set it without
# `lookout trust` (lookout.config.trust): only what narrows or quiets, never what a notification
# shows or where an escalation goes. A new key says which.
RULE_KEY_PROJECT_MAY_SET = {
    "when": True,
    "channels": True,
    "projects": True,
    "agents": True,
    "min_duration_s": True,
    "include_subagents": True,
    "print_mode": False,
    "cooldown_s": True,
    "quiet_hours": True,
    "quiet_kinds": True,
    "escalate_after_s": False,
    "escalate_to": False,
    "grace_s": True,
    "digest_s": True,
}
RULE_KEYS = tuple(RULE_KEY_PROJECT_MAY_SET)
# A held or merged alert waits at most this long: the sender drops anything later than that.
MAX_HOLD_S = 3600.0
# A send that takes longer is broken; the bound also keeps deadlines inside time_t.
MAX_TIMEOUT_MS = 600_000

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

# Every time an agent waits for you: a permission, a question, a plan, an MCP form, input, an error.
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


def _channel(c: Checker, name: str, raw: object, deep: bool = False) -> dict[str, Any] | None:
    from lookout.channels.base import COMMON_KEYS
    from lookout.channels.registry import CHANNELS

    path: KeyPath = ("channels", name)
    if not c.expect(path, raw, dict, "a table"):
        return None
    assert isinstance(raw, dict)
    kind = _type(c, path, raw, tuple(CHANNELS))
    if kind is None:
        return None
    of = CHANNELS[kind]
    c.unknown_keys(path, raw, COMMON_KEYS + of.KEYS)
    ch: dict[str, Any] = {
        "type": kind,
        "enabled": True,
        "timeout_ms": of.TIMEOUT_MS,
        "content": "summary" if of.REMOTE else "full",
        # Its type's traits, for what reads the cached config (a hook's rules) without loading
        # the type's module.
        "remote": of.REMOTE,
        "updatable": of.UPDATABLE,
        "loud": of.LOUD,
    }
    _common_keys(c, path, raw, ch)
    of.check(c, path, raw, ch)
    if deep:
        of.inspect(c, path, ch)
    return ch


def _type(c: Checker, path: KeyPath, raw: dict[str, Any], names: tuple[str, ...]) -> str | None:
    kind = raw.get("type")
    if kind is None:
        c.error(path, f"missing key 'type' (one of {choices(names)})")
        return None
    if not isinstance(kind, str) or kind not in names:
        c.error(
            (*path, "type"),
            f"expected one of {choices(names)}, got {kind!r}" + did_you_mean(kind, names),
        )
        return None
    return kind


def _common_keys(c: Checker, path: KeyPath, raw: dict[str, Any], ch: dict[str, Any]) -> None:
    """enabled, timeout_ms and content, over their defaults in `ch`."""
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
    _rule_filters(c, path, raw, rule)
    _rule_quiet(c, path, raw, rule)
    _rule_escalation(c, path, raw, rule, channel_names)
    _rule_holds(c, path, raw, rule)
    return rule


def _rule_filters(c: Checker, path: KeyPath, raw: dict[str, Any], rule: Rule) -> None:
    """What a rule sends: projects, agents, min_duration_s, include_subagents, print_mode."""
    if "projects" in raw:
        rule["projects"] = c.string_list((*path, "projects"), raw["projects"])
    if "agents" in raw:
        rule["agents"] = c.string_list((*path, "agents"), raw["agents"], events.AGENTS)
    if "min_duration_s" in raw:
        rule["min_duration_s"] = c.number((*path, "min_duration_s"), raw["min_duration_s"], 0)
    for key in ("include_subagents", "print_mode"):
        if key in raw and c.expect((*path, key), raw[key], bool, "a bool"):
            rule[key] = raw[key]


def _rule_quiet(c: Checker, path: KeyPath, raw: dict[str, Any], rule: Rule) -> None:
    """When it keeps quiet: cooldown_s, quiet_hours and the kinds they mute."""
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


def _rule_escalation(
    c: Checker, path: KeyPath, raw: dict[str, Any], rule: Rule, channel_names: tuple[str, ...]
) -> None:
    """escalate_after_s and escalate_to: each needs the other."""
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


def _rule_holds(c: Checker, path: KeyPath, raw: dict[str, Any], rule: Rule) -> None:
    """grace_s or digest_s, never both."""
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


def _hold_s(c: Checker, path: KeyPath, value: object) -> float | None:
    seconds = c.number(path, value, 0, positive=True)
    if seconds is not None and seconds > MAX_HOLD_S:
        c.error(path, f"expected a number <= {MAX_HOLD_S:g}, got {seconds:g}")
        return None
    return seconds


def check_channels(
    c: Checker, raw: object, deep: bool = False
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """[channels.<name>]: the valid channels, and every name defined (for the rules' refs);
    `deep`: each type also looks at what its table names (check-config, never a hook)."""
    channels: dict[str, Any] = {}
    if c.expect(("channels",), raw, dict, "a table"):
        assert isinstance(raw, dict)
        for name, value in raw.items():
            if not name or not all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in name):
                c.error(("channels", name), "channel names use letters, digits, - and _")
                continue
            ch = _channel(c, name, value, deep)
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
    from lookout.channels.registry import CHANNELS

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
    answers = _answers_on(cfg)
    for name, ch in cfg["channels"].items():
        if ch.get("enabled", True):  # switched off: nothing will be sent, nothing can fail
            out.extend(CHANNELS[ch["type"]].warnings(name, ch, answers))
    return out


def _answers_on(cfg: Config) -> bool:
    remote = cfg.get("remote")
    return isinstance(remote, dict) and bool(remote.get("enabled"))
