"""Notification config: load config.toml (+ `<project>/.claude/lookout.toml`), validate it with
errors that name file, key path and expectation, and cache the validated result for the hook.

Reads only; the only files it writes are its own cache and one errors.log line per broken config.
"""

from __future__ import annotations

import os
import sys

from lookout.errors import LookoutError
from lookout.notify import templates

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Config = dict[str, Any]

KINDS = (
    "permission",
    "question",
    "plan",
    "elicitation",
    "input",
    "error",
    "done",
    "idle",
    "subagent_done",
    "session_start",
    "session_end",
    "message",
    "resolved",
)
ATTENTION_KINDS = ("permission", "question", "plan", "elicitation", "input", "error")
# Kinds that quiet hours mute unless the rule says otherwise: everything that is not "act now".
DEFAULT_QUIET_KINDS = ("done", "idle", "subagent_done", "session_start", "session_end", "message")
CHANNEL_TYPES = ("desktop", "ntfy", "webhook", "command", "apprise")
REMOTE_TYPES = ("ntfy", "webhook", "apprise")
# Channels that can replace an alert they sent when its episode resolves.
UPDATABLE_TYPES = ("desktop", "ntfy")
CONTENT_LEVELS = ("full", "summary", "none")
AGENTS = ("claude", "codex", "gemini", "copilot", "opencode", "cursor")
URGENCIES = ("low", "normal", "critical")
NTFY_PRIORITIES = ("min", "low", "default", "high", "max", "urgent")
WEBHOOK_FORMATS = ("json", "slack", "discord")
# Keys that can hold a secret: kept out of the hook's cache (and so out of every job file).
SECRET_KEYS = ("url", "token", "headers", "urls", "argv")

_COMMON_KEYS = ("type", "enabled", "timeout_ms", "content")
_TYPE_KEYS: dict[str, tuple[str, ...]] = {
    "desktop": ("urgency", "app_name", "skip_when_focused"),
    "ntfy": ("url", "token", "token_env", "priority", "tags", "click"),
    "webhook": ("url", "url_env", "format", "headers"),
    "command": ("argv",),
    "apprise": ("urls",),
}
_RULE_KEYS = (
    "when",
    "channels",
    "projects",
    "agents",
    "min_duration_s",
    "include_subagents",
    "cooldown_s",
    "quiet_hours",
    "quiet_kinds",
    "escalate_after_s",
    "escalate_to",
)
_DEFAULT_TIMEOUT_MS = {
    "desktop": 5000,
    "ntfy": 10000,
    "webhook": 10000,
    "command": 10000,
    "apprise": 20000,
}

# With no config file at all: desktop alerts for every attention reason, and for a finished turn
# that took at least 30 s. Nothing remote.
DEFAULT_RAW: dict[str, Any] = {
    "channels": {"desktop": {"type": "desktop"}},
    "rules": [
        {"when": list(ATTENTION_KINDS), "channels": ["desktop"]},
        {"when": ["done"], "channels": ["desktop"], "min_duration_s": 30},
    ],
}

PROJECT_FILE = os.path.join(".claude", "lookout.toml")
CACHE_NAME = "config-cache.json"
_CACHE_VERSION = 2
_CACHE_ENTRIES = 16


class ConfigError(LookoutError):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors), hint="see config.example.toml for every key")
        self.errors = errors


def display(path: str) -> str:
    """The path as shown in messages: `~/...` under the home directory."""
    home = os.path.expanduser("~")
    if home not in ("", "/") and path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


def global_path() -> str:
    from lookout import paths

    return paths.config_path()


def project_path(cwd: str | None) -> str | None:
    """`.claude/lookout.toml` in cwd or the nearest parent below the home directory."""
    if not cwd or not os.path.isabs(cwd):
        return None
    home = os.path.expanduser("~")
    d = os.path.normpath(cwd)
    while True:
        if d != home:
            candidate = os.path.join(d, PROJECT_FILE)
            if os.path.isfile(candidate):
                return candidate
        parent = os.path.dirname(d)
        if parent == d or d == home:
            return None
        d = parent


# -- loading -------------------------------------------------------------------------------------


def _read_toml(path: str) -> dict[str, Any]:
    import tomllib

    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{display(path)}: invalid TOML: {exc}"]) from None
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{display(path)}: not UTF-8 text (byte {exc.start})"]) from None
    except OSError as exc:
        raise ConfigError([f"{display(path)}: cannot read: {exc.strerror}"]) from None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    # Tables merge key by key; anything else (arrays such as [[rules]] included) replaces.
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def load(cwd: str | None = None, path: str | None = None) -> Config:
    """The validated config for a session in `cwd` (global file or the embedded default, then
    the project file over it). Raises ConfigError listing every problem found."""
    gpath = path or global_path()
    if os.path.exists(gpath):
        base = _read_toml(gpath)
        base_name = display(gpath)
    else:
        base, base_name = DEFAULT_RAW, "default config"
    ppath = project_path(cwd)
    over: dict[str, Any] = {}
    over_name = ""
    if ppath is not None:
        over = _read_toml(ppath)
        over_name = display(ppath)
    return validate(_merge(base, over), base_name, over, over_name)


# -- validation ----------------------------------------------------------------------------------


def _type_name(value: object) -> str:
    names = {bool: "bool", int: "int", float: "float", str: "string", list: "array", dict: "table"}
    return names.get(type(value), type(value).__name__)


def _choices(values: tuple[str, ...]) -> str:
    return ", ".join(values)


class _Checker:
    def __init__(self, base_name: str, over: dict[str, Any], over_name: str) -> None:
        self.base_name = base_name
        self.over = over
        self.over_name = over_name
        self.errors: list[str] = []

    def origin(self, path: tuple[str | int, ...]) -> str:
        # The project file is to blame for a key it sets, or for an array it replaced.
        if not self.over_name:
            return self.base_name
        node: object = self.over
        for part in path:
            if isinstance(part, int):
                return self.over_name
            if not isinstance(node, dict) or part not in node:
                return self.base_name
            node = node[part]
        return self.over_name

    def error(self, path: tuple[str | int, ...], text: str) -> None:
        self.errors.append(f"{self.origin(path)}: {_dotted(path)}: {text}")

    def expect(
        self, path: tuple[str | int, ...], value: object, kind: type | tuple[type, ...], what: str
    ) -> bool:
        ok = isinstance(value, kind) and not (
            isinstance(value, bool) and bool not in _as_tuple(kind)
        )
        if not ok:
            self.error(path, f"expected {what}, got {_type_name(value)}")
        return ok

    def string_list(
        self,
        path: tuple[str | int, ...],
        value: object,
        allowed: tuple[str, ...] | None = None,
        nonempty: bool = False,
    ) -> list[str]:
        if not self.expect(path, value, list, "an array of strings"):
            return []
        assert isinstance(value, list)
        out: list[str] = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.error((*path, i), f"expected a string, got {_type_name(item)}")
            elif allowed is not None and item not in allowed:
                self.error((*path, i), f"expected one of {_choices(allowed)}, got {item!r}")
            else:
                out.append(item)
        if nonempty and not value:
            self.error(path, "expected a non-empty array")
        return out

    def number(
        self, path: tuple[str | int, ...], value: object, minimum: float, positive: bool = False
    ) -> float | None:
        if not self.expect(path, value, (int, float), "a number"):
            return None
        assert isinstance(value, (int, float))
        if value < minimum or (positive and value <= 0):
            self.error(
                path, f"expected a number {'>' if positive else '>='} {minimum:g}, got {value:g}"
            )
            return None
        return float(value)


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _dotted(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def _unknown_keys(
    c: _Checker, path: tuple[str | int, ...], table: dict[str, Any], allowed: tuple[str, ...]
) -> None:
    for key in table:
        if key not in allowed:
            c.error((*path, key), f"unknown key (expected one of {_choices(allowed)})")


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


def _by_kind(c: _Checker, path: tuple[str | int, ...], value: object, check: Any) -> object:
    """A value, or a table of values by notification kind (`default` for the rest)."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for kind, item in value.items():
            if kind not in (*KINDS, "default"):
                c.error((*path, kind), f"unknown kind (expected one of {_choices(KINDS)}, default)")
                continue
            checked = check((*path, kind), item)
            if checked is not None:
                out[kind] = checked
        return out
    return check(path, value)


def _channel(c: _Checker, name: str, raw: object) -> dict[str, Any] | None:
    path: tuple[str | int, ...] = ("channels", name)
    if not c.expect(path, raw, dict, "a table"):
        return None
    assert isinstance(raw, dict)
    kind = raw.get("type")
    if kind is None:
        c.error(path, f"missing key 'type' (one of {_choices(CHANNEL_TYPES)})")
        return None
    if not isinstance(kind, str) or kind not in CHANNEL_TYPES:
        c.error((*path, "type"), f"expected one of {_choices(CHANNEL_TYPES)}, got {kind!r}")
        return None
    _unknown_keys(c, path, raw, _COMMON_KEYS + _TYPE_KEYS[kind])
    ch: dict[str, Any] = {
        "type": kind,
        "enabled": True,
        "timeout_ms": _DEFAULT_TIMEOUT_MS[kind],
        "content": "summary" if kind in REMOTE_TYPES else "full",
    }

    def get(key: str, kinds: type | tuple[type, ...], what: str) -> Any:
        if key not in raw:
            return None
        value = raw[key]
        return value if c.expect((*path, key), value, kinds, what) else None

    if (enabled := get("enabled", bool, "a bool")) is not None:
        ch["enabled"] = enabled
    if "timeout_ms" in raw and get("timeout_ms", int, "an integer") is not None:
        if raw["timeout_ms"] <= 0:
            c.error((*path, "timeout_ms"), f"expected an integer > 0, got {raw['timeout_ms']}")
        else:
            ch["timeout_ms"] = raw["timeout_ms"]
    if (content := get("content", str, "a string")) is not None:
        if content not in CONTENT_LEVELS:
            c.error(
                (*path, "content"), f"expected one of {_choices(CONTENT_LEVELS)}, got {content!r}"
            )
        else:
            ch["content"] = content

    def choice(values: tuple[str, ...]) -> Any:
        def check(p: tuple[str | int, ...], v: object) -> object:
            if not isinstance(v, str) or v not in values:
                c.error(p, f"expected one of {_choices(values)}, got {v!r}")
                return None
            return v

        return check

    if kind == "desktop":
        ch["app_name"] = get("app_name", str, "a string") or "lookout"
        ch["urgency"] = _by_kind(
            c, (*path, "urgency"), raw.get("urgency", "normal"), choice(URGENCIES)
        )
        focused = get("skip_when_focused", bool, "a bool")
        ch["skip_when_focused"] = True if focused is None else focused
    elif kind == "ntfy":
        url = get("url", str, "a string")
        if "url" not in raw:
            c.error(path, "missing key 'url' (server and topic, e.g. https://ntfy.sh/my-topic)")
        elif url is not None and not _ntfy_url_ok(url):
            c.error(
                (*path, "url"),
                "expected http(s)://server/topic with a topic of letters, "
                f"digits, - and _, got {redact_url(url)!r}",
            )
        ch["url"] = url
        ch["token"] = get("token", str, "a string")
        ch["token_env"] = get("token_env", str, "a string")
        if ch["token"] and ch["token_env"]:
            c.error(path, "set either 'token' or 'token_env', not both")

        def prio(p: tuple[str | int, ...], v: object) -> object:
            if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 5:
                return v
            if isinstance(v, str) and v in NTFY_PRIORITIES:
                return v
            c.error(p, f"expected 1-5 or one of {_choices(NTFY_PRIORITIES)}, got {v!r}")
            return None

        ch["priority"] = _by_kind(
            c,
            (*path, "priority"),
            raw.get("priority", {"default": 3, **dict.fromkeys(ATTENTION_KINDS, 4)}),
            prio,
        )
        ch["tags"] = c.string_list((*path, "tags"), raw["tags"]) if "tags" in raw else []
        ch["click"] = get("click", str, "a string")
    elif kind == "webhook":
        url = get("url", str, "a string")
        url_env = get("url_env", str, "a string")
        if "url" not in raw and "url_env" not in raw:
            c.error(path, "missing key 'url' or 'url_env'")
        if url is not None and url_env is not None:
            c.error(path, "set either 'url' or 'url_env', not both")
        if url is not None and not url.startswith(("http://", "https://")):
            c.error((*path, "url"), f"expected an http(s) URL, got {redact_url(url)!r}")
        ch["url"], ch["url_env"] = url, url_env
        fmt = raw.get("format", "json")
        if not isinstance(fmt, str) or fmt not in WEBHOOK_FORMATS:
            c.error((*path, "format"), f"expected one of {_choices(WEBHOOK_FORMATS)}, got {fmt!r}")
        ch["format"] = fmt
        headers = get("headers", dict, "a table of strings") or {}
        for key, value in headers.items():
            if not isinstance(value, str):
                c.error((*path, "headers", key), f"expected a string, got {_type_name(value)}")
        ch["headers"] = headers
    elif kind == "command":
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
    elif kind == "apprise":
        if "urls" not in raw:
            c.error(path, "missing key 'urls' (Apprise service URLs)")
            ch["urls"] = []
        else:
            ch["urls"] = c.string_list((*path, "urls"), raw["urls"], nonempty=True)
    return ch


def _ntfy_url_ok(url: str) -> bool:
    if not url.startswith(("http://", "https://")):
        return False
    server, _, topic = url.rstrip("/").rpartition("/")
    return (
        bool(topic)
        and "//" in server
        and len(topic) <= 64
        and all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in topic)
    )


def redact_url(url: str) -> str:
    """`https://hooks.slack.com/…`: scheme and host only, never the path that holds the secret."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "…"
    host = rest.split("/", 1)[0].rpartition("@")[2]
    return f"{scheme}://{host}/…"


def _channel_refs(
    c: _Checker, path: tuple[str | int, ...], value: object, names: tuple[str, ...]
) -> list[str]:
    out = []
    for i, name in enumerate(c.string_list(path, value, nonempty=True)):
        if name in names:
            out.append(name)
        else:
            defined = f"defined: {_choices(names)}" if names else "no [channels.<name>] defined"
            c.error((*path, i), f"unknown channel {name!r} ({defined})")
    return out


def _rule(
    c: _Checker, i: int, raw: object, channel_names: tuple[str, ...]
) -> dict[str, Any] | None:
    path: tuple[str | int, ...] = ("rules", i)
    if not c.expect(path, raw, dict, "a table"):
        return None
    assert isinstance(raw, dict)
    _unknown_keys(c, path, raw, _RULE_KEYS)
    for key in ("when", "channels"):
        if key not in raw:
            c.error(path, f"missing key {key!r}")
    rule: dict[str, Any] = {
        "when": c.string_list((*path, "when"), raw.get("when", []), KINDS, nonempty=True),
        "channels": _channel_refs(c, (*path, "channels"), raw.get("channels", []), channel_names),
        "projects": None,
        "agents": None,
        "min_duration_s": None,
        "include_subagents": False,
        "cooldown_s": 0.0,
        "quiet_hours": None,
        "quiet_kinds": list(DEFAULT_QUIET_KINDS),
        "escalate_after_s": None,
        "escalate_to": [],
    }
    if "projects" in raw:
        rule["projects"] = c.string_list((*path, "projects"), raw["projects"])
    if "agents" in raw:
        rule["agents"] = c.string_list((*path, "agents"), raw["agents"], AGENTS)
    if "min_duration_s" in raw:
        rule["min_duration_s"] = c.number((*path, "min_duration_s"), raw["min_duration_s"], 0)
    if "include_subagents" in raw and c.expect(
        (*path, "include_subagents"), raw["include_subagents"], bool, "a bool"
    ):
        rule["include_subagents"] = raw["include_subagents"]
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
    return rule


def validate(
    raw: dict[str, Any],
    base_name: str = "config.toml",
    over: dict[str, Any] | None = None,
    over_name: str = "",
) -> Config:
    c = _Checker(base_name, over or {}, over_name)
    _unknown_keys(c, (), raw, ("channels", "rules", "templates"))
    channels: dict[str, Any] = {}
    raw_channels = raw.get("channels", {})
    if c.expect(("channels",), raw_channels, dict, "a table"):
        for name, value in raw_channels.items():
            if not name or not all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in name):
                c.error(("channels", name), "channel names use letters, digits, - and _")
                continue
            ch = _channel(c, name, value)
            if ch is not None:
                channels[name] = ch
    names = tuple(raw_channels) if isinstance(raw_channels, dict) else ()
    rules: list[dict[str, Any]] = []
    raw_rules = raw.get("rules", [])
    if c.expect(("rules",), raw_rules, list, "an array of tables ([[rules]])"):
        for i, value in enumerate(raw_rules):
            rule = _rule(c, i, value, names)
            if rule is not None:
                rules.append(rule)
    tmpl = {kind: dict(t) for kind, t in templates.DEFAULTS.items()}
    raw_templates = raw.get("templates", {})
    if c.expect(("templates",), raw_templates, dict, "a table"):
        for kind, value in raw_templates.items():
            path: tuple[str | int, ...] = ("templates", kind)
            if kind not in KINDS:
                c.error(path, f"unknown kind (expected one of {_choices(KINDS)})")
                continue
            if not c.expect(path, value, dict, "a table"):
                continue
            _unknown_keys(c, path, value, ("title", "message"))
            for key in ("title", "message"):
                if key in value and c.expect((*path, key), value[key], str, "a string"):
                    try:
                        templates.parse(value[key])
                    except ValueError as exc:
                        c.error((*path, key), str(exc))
                    else:
                        tmpl[kind][key] = value[key]
    if c.errors:
        raise ConfigError(c.errors)
    return {"channels": channels, "rules": rules, "templates": tmpl}


def warnings(cfg: Config) -> list[str]:
    """Problems that only show at send time: missing env vars, apprise not installed."""
    out: list[str] = []
    for name, ch in cfg["channels"].items():
        if not ch.get("enabled", True):
            continue  # defined but switched off: nothing will be sent, nothing can fail
        for key in ("token_env", "url_env"):
            var = ch.get(key)
            if var and not os.environ.get(var):
                out.append(f"channels.{name}.{key}: environment variable {var} is not set")
        if ch["type"] == "apprise":
            import importlib.util

            if importlib.util.find_spec("apprise") is None:
                out.append(
                    f"channels.{name}: the optional 'apprise' package is not installed "
                    f"(pip install apprise into lookout's environment)"
                )
    return out


# -- the hook's cached view ----------------------------------------------------------------------


def _stamp(path: str | None) -> list[object]:
    if path is None:
        return [None]
    try:
        st = os.stat(path)
    except OSError:
        return [path, None]
    return [path, st.st_mtime_ns, st.st_size, st.st_ino]


def public(cfg: Config) -> Config:
    """The config without anything that can hold a secret (what the hook caches)."""
    channels = {
        name: {k: v for k, v in ch.items() if k not in SECRET_KEYS}
        for name, ch in cfg["channels"].items()
    }
    return {**cfg, "channels": channels}


def load_cached(state_dir: str, cwd: str | None) -> Config | None:
    """The hook's view: the validated config without secrets, re-parsed only when a config file
    changed. A broken config returns None and is logged to errors.log once per change.
    One entry per project file in use, so sessions in different projects do not thrash it."""
    from lookout import _jsonfast, store

    gpath = global_path()
    ppath = project_path(cwd)
    key = _jsonfast.dumps([_CACHE_VERSION, sys.version_info[:2], _stamp(gpath), _stamp(ppath)])
    cache_file = os.path.join(state_dir, CACHE_NAME)
    cached = store.read_json(cache_file)
    entries = cached.get("entries") if isinstance(cached, dict) else None
    entries = entries if isinstance(entries, list) else []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("key") == key:
            cfg = entry.get("config")
            return cfg if isinstance(cfg, dict) else None
    new: dict[str, Any] = {"key": key, "project": ppath, "config": None, "error": None}
    try:
        new["config"] = public(load(cwd, gpath))
    except ConfigError as exc:
        new["error"] = str(exc)
        store.log_error(
            state_dir, f"config error (notifications are off until it is fixed):\n{exc}"
        )
    # An older entry for the same project file is dead: its files changed.
    kept = [e for e in entries if isinstance(e, dict) and e.get("project") != ppath]
    store.ensure_dir(state_dir)
    store.write_json_atomic(cache_file, {"entries": [*kept[-(_CACHE_ENTRIES - 1) :], new]})
    cfg = new["config"]
    return cfg if isinstance(cfg, dict) else None
