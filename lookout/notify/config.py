"""Notification config: load config.toml (+ `<project>/.claude/lookout.toml`), validate it with
errors that name file, key path and expectation, and cache the validated result for the hook.

Reads only; the only files it writes are its own cache and one errors.log line per broken config.
"""

from __future__ import annotations

import os
import sys

from lookout import paths
from lookout.errors import LookoutError
from lookout.machine import ATTENTION_KINDS
from lookout.notify import templates

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from lookout.shapes import Channel, Config, Rule

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
    "print_mode",
    "cooldown_s",
    "quiet_hours",
    "quiet_kinds",
    "escalate_after_s",
    "escalate_to",
)
# A send that takes longer is broken; the bound also keeps deadlines inside time_t.
MAX_TIMEOUT_MS = 600_000
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
"""

PROJECT_FILE = os.path.join(".claude", "lookout.toml")
_CACHE_VERSION = 4  # 4: the config has `fleet` and `remote` tables
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


def project_path(cwd: str | None) -> str | None:
    """`.claude/lookout.toml` in cwd or the nearest parent, never above the repository root (the
    nearest directory holding `.git`) or the home directory (whose `.claude` is the user's own).
    With neither on the way up, only cwd itself: a shared parent such as /tmp belongs to nobody."""
    if not cwd or not os.path.isabs(cwd):
        return None
    for d in _search_dirs(os.path.normpath(cwd)):
        candidate = os.path.join(d, PROJECT_FILE)
        if os.path.isfile(candidate):
            return candidate
    return None


def _search_dirs(cwd: str) -> list[str]:
    home = os.path.normpath(os.path.expanduser("~"))
    found: list[str] = []
    d = cwd
    while d != home:
        found.append(d)
        if os.path.exists(os.path.join(d, ".git")):
            return found
        parent = os.path.dirname(d)
        if parent == d:
            return [cwd]  # reached / with no repository root and no home on the way
        d = parent
    return found


# -- loading -------------------------------------------------------------------------------------


class ProjectFile:
    """A project file as found: its bytes' hash, its table, and whether it applies."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.data: dict[str, Any] = {}
        self.sha256 = ""
        self.adds: list[str] = []  # what it sets beyond narrowing (needs `lookout trust`)
        self.trusted = False
        self.ignored: str | None = None  # why it does not apply, or None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "applies": self.ignored is None,
            "trusted": self.trusted,
            "ignored": self.ignored,
            "adds": self.adds,
        }


def _foreign(st: os.stat_result, what: str) -> str | None:
    """Why a file (or its directory) in a project may have been written by someone else."""
    if st.st_uid != os.geteuid():
        return f"{what} is owned by uid {st.st_uid}, not by you"
    if st.st_mode & 0o002:
        return f"{what} is writable by every user"
    if st.st_mode & 0o020 and st.st_gid != os.getegid():
        return f"{what} is writable by group {st.st_gid}"
    return None


def read_project(path: str, user_channels: dict[str, Any], trust_file: str | None) -> ProjectFile:
    """Read, hash and judge one project file. Raises ConfigError only for a file that would
    apply but cannot be parsed."""
    import hashlib

    pf = ProjectFile(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ConfigError([f"{display(path)}: cannot read: {exc.strerror}"]) from None
    with os.fdopen(fd, "rb") as f:
        why = _foreign(os.fstat(fd), "the file") or _foreign(
            os.stat(os.path.dirname(path)), "its directory"
        )
        if why is not None:
            pf.ignored = why
            return pf
        raw = f.read()
    pf.sha256 = hashlib.sha256(raw).hexdigest()
    pf.data = _parse_toml(raw, path)
    from lookout import programs  # N2: what a project file's command channel may run

    refused = programs.project_errors(pf.data, path, display(path))
    if refused:
        raise ConfigError(refused)
    pf.adds = needs_trust(pf.data, user_channels)
    if pf.adds:
        pf.trusted = trusted_hash(trust_file, path) == pf.sha256
        if not pf.trusted:
            changed = trusted_hash(trust_file, path) is not None
            first = pf.adds[0] + (f" (and {len(pf.adds) - 1} more)" if len(pf.adds) > 1 else "")
            pf.ignored = (
                f"{'changed since you trusted it' if changed else 'not trusted'}; it sets {first}"
            )
    return pf


# What an untrusted project file may set: it may narrow or quiet the user's config, never choose a
# program, a destination, a credential or what leaves the machine (docs/security.md has the table).
PROJECT_RULE_KEYS = (
    "when",
    "channels",
    "projects",
    "agents",
    "min_duration_s",
    "include_subagents",
    "cooldown_s",
    "quiet_hours",
    "quiet_kinds",
)


def _show(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def needs_trust(over: dict[str, Any], user_channels: dict[str, Any]) -> list[str]:
    """Every `key = value` of a project file beyond narrowing or quieting the user's config."""
    out: list[str] = []
    channels = over.get("channels")
    if isinstance(channels, dict):
        for name, table in channels.items():
            if not isinstance(table, dict):
                out.append(f"channels.{name} = {_show(table)}")
                continue
            new = name not in user_channels
            for key, value in table.items():
                if key == "enabled" and value is False and not new:
                    continue
                out.append(f"channels.{name}.{key} = {_show(value)}")
            if new and not table:
                out.append(f"channels.{name} (a new channel)")
    rules = over.get("rules")
    if isinstance(rules, list):
        for i, rule in enumerate(rules):
            if isinstance(rule, dict):
                for key, value in rule.items():
                    # An unknown key (a typo) is no grant: validation reports it, "did you mean".
                    if key in _RULE_KEYS and key not in PROJECT_RULE_KEYS:
                        out.append(f"rules[{i}].{key} = {_show(value)}")
    return out


def trust_path() -> str:
    from lookout import paths, store

    return os.path.join(paths.state_dir(), store.TRUST)


def trusted_hash(trust_file: str | None, path: str) -> str | None:
    """The sha256 the user trusted for `path`, if any (read only when a file needs it)."""
    if trust_file is None:
        return None
    from lookout import store

    # Trust someone else could have written is no trust: the file and its directory are ours.
    if store.unsafe_reason(os.path.dirname(trust_file)) is not None:
        return None
    try:
        if os.lstat(trust_file).st_uid != os.geteuid():
            return None
    except OSError:
        return None
    table = store.read_json(trust_file)
    files = table.get("files") if isinstance(table, dict) else None
    entry = files.get(path) if isinstance(files, dict) else None
    value = entry.get("sha256") if isinstance(entry, dict) else None
    return value if isinstance(value, str) else None


def _parse_toml(raw: bytes, path: str) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{display(path)}: invalid TOML: {exc}"]) from None
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{display(path)}: not UTF-8 text (byte {exc.start})"]) from None
    except RecursionError:
        raise ConfigError([f"{display(path)}: nested too deeply to be a config"]) from None


def _read_toml(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ConfigError([f"{display(path)}: cannot read: {exc.strerror}"]) from None
    return _parse_toml(raw, path)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    # Tables merge key by key; anything else (arrays such as [[rules]] included) replaces.
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def resolve(
    cwd: str | None = None, path: str | None = None, trust_file: str | None = None
) -> tuple[Config, ProjectFile | None]:
    """The validated config for a session in `cwd` (global file or the embedded default, then
    the project file over it when it applies), and the project file as judged. Raises
    ConfigError listing every problem found."""
    gpath = path or paths.config_path()
    if os.path.exists(gpath):
        base = _read_toml(gpath)
        base_name = display(gpath)
    else:
        base, base_name = DEFAULT_RAW, "default config"
    ppath = project_path(cwd)
    pf: ProjectFile | None = None
    over: dict[str, Any] = {}
    over_name = ""
    if ppath is not None:
        user_channels = base.get("channels")
        pf = read_project(
            ppath,
            user_channels if isinstance(user_channels, dict) else {},
            trust_path() if trust_file is None else trust_file,
        )
        if pf.ignored is None:
            over, over_name = pf.data, display(ppath)
    return validate(_merge(base, over), base_name, over, over_name), pf


def project_file(cwd: str | None) -> ProjectFile | None:
    """The project file a session in `cwd` meets, as judged (None: none, or unreadable)."""
    ppath = project_path(cwd)
    if ppath is None:
        return None
    try:
        return project_file_strict(ppath)
    except ConfigError:
        return None  # a broken file is a config error, reported as such


def project_file_strict(ppath: str) -> ProjectFile:
    """The project file at `ppath` as judged against the user's config; when it would apply
    (or be trusted), the merged config must validate. Raises ConfigError."""
    gpath = paths.config_path()
    base = _read_toml(gpath) if os.path.exists(gpath) else DEFAULT_RAW
    channels = base.get("channels")
    pf = read_project(ppath, channels if isinstance(channels, dict) else {}, trust_path())
    if pf.data:
        validate(_merge(base, pf.data), display(gpath), pf.data, display(ppath))
    return pf


def load(cwd: str | None = None, path: str | None = None) -> Config:
    """The validated config for a session in `cwd`: see resolve()."""
    return resolve(cwd, path)[0]


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
                self.error(
                    (*path, i),
                    f"expected one of {_choices(allowed)}, got {item!r}"
                    + did_you_mean(item, allowed),
                )
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
            c.error(
                (*path, key),
                f"unknown key{did_you_mean(key, allowed)} (expected one of {_choices(allowed)})",
            )


def did_you_mean(word: object, choices: tuple[str, ...]) -> str:
    """` (did you mean 'urgency'?)` for a near miss, else nothing."""
    if not isinstance(word, str):
        return ""
    import difflib

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


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
                c.error(
                    (*path, kind),
                    f"unknown kind{did_you_mean(kind, (*KINDS, 'default'))} (expected one of"
                    f" {_choices(KINDS)}, default)",
                )
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
        c.error(
            (*path, "type"),
            f"expected one of {_choices(CHANNEL_TYPES)}, got {kind!r}"
            + did_you_mean(kind, CHANNEL_TYPES),
        )
        return None
    _unknown_keys(c, path, raw, _COMMON_KEYS + _TYPE_KEYS[kind])
    ch: dict[str, Any] = {
        "type": kind,
        "enabled": True,
        "timeout_ms": _DEFAULT_TIMEOUT_MS[kind],
        "content": "summary" if kind in REMOTE_TYPES else "full",
    }
    if (enabled := _get(c, path, raw, "enabled", bool, "a bool")) is not None:
        ch["enabled"] = enabled
    if "timeout_ms" in raw and _get(c, path, raw, "timeout_ms", int, "an integer") is not None:
        if not 0 < raw["timeout_ms"] <= MAX_TIMEOUT_MS:
            c.error(
                (*path, "timeout_ms"),
                f"expected an integer from 1 to {MAX_TIMEOUT_MS}, got {raw['timeout_ms']}",
            )
        else:
            ch["timeout_ms"] = raw["timeout_ms"]
    if (content := _get(c, path, raw, "content", str, "a string")) is not None:
        if content not in CONTENT_LEVELS:
            c.error(
                (*path, "content"), f"expected one of {_choices(CONTENT_LEVELS)}, got {content!r}"
            )
        else:
            ch["content"] = content
    _TYPE_CHECKS[kind](c, path, raw, ch)
    return ch


def _get(
    c: _Checker,
    path: tuple[str | int, ...],
    raw: dict[str, Any],
    key: str,
    kinds: type | tuple[type, ...],
    what: str,
) -> Any:
    """raw[key] when present and of the expected type; else None (an error when of another)."""
    if key not in raw:
        return None
    value = raw[key]
    return value if c.expect((*path, key), value, kinds, what) else None


def _choice(
    c: _Checker, values: tuple[str, ...]
) -> Callable[[tuple[str | int, ...], object], object]:
    def check(p: tuple[str | int, ...], v: object) -> object:
        if not isinstance(v, str) or v not in values:
            c.error(p, f"expected one of {_choices(values)}, got {v!r}{did_you_mean(v, values)}")
            return None
        return v

    return check


# One checker per channel type: the keys of _TYPE_KEYS[type], their defaults and their rules.


def _desktop(c: _Checker, path: tuple[str | int, ...], raw: dict[str, Any], ch: Channel) -> None:
    ch["app_name"] = _get(c, path, raw, "app_name", str, "a string") or "lookout"
    ch["urgency"] = _by_kind(
        c, (*path, "urgency"), raw.get("urgency", "normal"), _choice(c, URGENCIES)
    )
    focused = _get(c, path, raw, "skip_when_focused", bool, "a bool")
    ch["skip_when_focused"] = True if focused is None else focused


def _ntfy(c: _Checker, path: tuple[str | int, ...], raw: dict[str, Any], ch: Channel) -> None:
    url = _get(c, path, raw, "url", str, "a string")
    if "url" not in raw:
        c.error(path, "missing key 'url' (server and topic, e.g. https://ntfy.sh/my-topic)")
    elif url is not None and (problem := _ntfy_url_problem(url)):
        c.error(
            (*path, "url"),
            "expected http(s)://server/topic with a topic of letters, "
            f"digits, - and _, got {shown_url(url)!r} ({problem})",
        )
    ch["url"] = url
    ch["token"] = _get(c, path, raw, "token", str, "a string")
    ch["token_env"] = _get(c, path, raw, "token_env", str, "a string")
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
    ch["click"] = _get(c, path, raw, "click", str, "a string")


def _webhook(c: _Checker, path: tuple[str | int, ...], raw: dict[str, Any], ch: Channel) -> None:
    url = _get(c, path, raw, "url", str, "a string")
    url_env = _get(c, path, raw, "url_env", str, "a string")
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
        c.error((*path, "format"), f"expected one of {_choices(WEBHOOK_FORMATS)}, got {fmt!r}")
    ch["format"] = fmt
    headers = _get(c, path, raw, "headers", dict, "a table of strings") or {}
    for key, value in headers.items():
        if not isinstance(value, str):
            c.error((*path, "headers", key), f"expected a string, got {_type_name(value)}")
    ch["headers"] = headers


def _command(c: _Checker, path: tuple[str | int, ...], raw: dict[str, Any], ch: Channel) -> None:
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


def _apprise(c: _Checker, path: tuple[str | int, ...], raw: dict[str, Any], ch: Channel) -> None:
    if "urls" not in raw:
        c.error(path, "missing key 'urls' (Apprise service URLs)")
        ch["urls"] = []
    else:
        ch["urls"] = c.string_list((*path, "urls"), raw["urls"], nonempty=True)


_TYPE_CHECKS: dict[
    str, Callable[[_Checker, tuple[str | int, ...], dict[str, Any], Channel], None]
] = {
    "desktop": _desktop,
    "ntfy": _ntfy,
    "webhook": _webhook,
    "command": _command,
    "apprise": _apprise,
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


def _rule(c: _Checker, i: int, raw: object, channel_names: tuple[str, ...]) -> Rule | None:
    path: tuple[str | int, ...] = ("rules", i)
    if not c.expect(path, raw, dict, "a table"):
        return None
    assert isinstance(raw, dict)
    _unknown_keys(c, path, raw, _RULE_KEYS)
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
    return rule


def validate(
    raw: dict[str, Any],
    base_name: str = "config.toml",
    over: dict[str, Any] | None = None,
    over_name: str = "",
) -> Config:
    c = _Checker(base_name, over or {}, over_name)
    # [fleet] is checked by lookout.fleet.config (a broken one must not silence notifications).
    _unknown_keys(c, (), raw, ("channels", "rules", "templates", "fleet", "remote"))
    if "fleet" in c.over:
        c.error(("fleet",), "only your own config file may name a broker (not a project file)")
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
    rules: list[Rule] = []
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
                c.error(
                    path,
                    f"unknown kind{did_you_mean(kind, KINDS)} (expected one of {_choices(KINDS)})",
                )
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
    remote = _remote(c, raw.get("remote", {}))
    if c.errors:
        raise ConfigError(c.errors)
    return {"channels": channels, "rules": rules, "templates": tmpl, "remote": remote}


# [remote]: answering a permission from the dashboard or `lookout answer` (issue 15). Off unless
# the user's own config turns it on: a repository's .claude/lookout.toml is text the user did
# not write, so it may never enable it, widen `tools` or allow "always".
REMOTE_DEFAULTS: dict[str, Any] = {
    "enabled": False,
    "wait_s": 300,
    "tools": ["*"],
    "allow_always": False,
    "url": "",
}
REMOTE_WAIT_RANGE = (10, 86400)


def _remote(c: _Checker, raw: object) -> dict[str, Any]:
    out = dict(REMOTE_DEFAULTS, tools=list(REMOTE_DEFAULTS["tools"]))
    path: tuple[str | int, ...] = ("remote",)
    if "remote" in c.over:
        c.error(
            path,
            "is read only from your own config file, never from a project's"
            f" {PROJECT_FILE} (a repository must not turn on answering from afar)",
        )
        return out
    if not c.expect(path, raw, dict, "a table"):
        return out
    assert isinstance(raw, dict)
    _unknown_keys(c, path, raw, tuple(REMOTE_DEFAULTS))
    for key in ("enabled", "allow_always"):
        if key in raw and c.expect((*path, key), raw[key], bool, "true or false"):
            out[key] = raw[key]
    if "wait_s" in raw and c.expect((*path, "wait_s"), raw["wait_s"], int, "a whole number"):
        low, high = REMOTE_WAIT_RANGE
        if low <= raw["wait_s"] <= high:
            out["wait_s"] = raw["wait_s"]
        else:
            c.error((*path, "wait_s"), f"expected {low} to {high} seconds, got {raw['wait_s']}")
    if "tools" in raw:
        tools = c.string_list((*path, "tools"), raw["tools"], nonempty=True)
        if tools:
            out["tools"] = tools
    if "url" in raw and c.expect((*path, "url"), raw["url"], str, "a string"):
        url = raw["url"].strip().rstrip("/")
        bad = any(ch in '?#@"\\<>' or ch.isspace() for ch in url)
        if url and (bad or not url.startswith(("http://", "https://"))):
            c.error(
                (*path, "url"),
                "expected the dashboard's address, e.g."
                " https://laptop.tailnet.ts.net:8787 (no query, no token)",
            )
        else:
            out["url"] = url
    return out


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

    gpath = paths.config_path()
    ppath = project_path(cwd)
    # The trust file counts only for a project file, but stat()ing it always keeps this simple.
    stamps = [_stamp(gpath), _stamp(ppath), _stamp(trust_path() if ppath else None)]
    key = _jsonfast.dumps([_CACHE_VERSION, sys.version_info[:2], *stamps])
    cache_file = os.path.join(state_dir, store.CONFIG_CACHE)
    cached = store.read_json(cache_file)
    entries = cached.get("entries") if isinstance(cached, dict) else None
    entries = entries if isinstance(entries, list) else []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("key") == key:
            cfg = entry.get("config")
            # Written by this function from a validated config (the key pins the version).
            return cfg if isinstance(cfg, dict) else None  # type: ignore[return-value]
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
    return cfg if isinstance(cfg, dict) else None  # type: ignore[return-value]
