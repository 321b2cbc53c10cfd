"""What a project's `.claude/lookout.toml` may set without `lookout trust`: it may narrow or
quiet the user's config, never choose a program, a destination, a credential or what leaves the
machine (docs/security.md has the table), and where that file is. Reads the trust file; never
writes it. On a notifying hook's path: `posix`, never `os` (~1 ms)."""

from __future__ import annotations

import posix

from lookout import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PROJECT_FILE = ".claude/lookout.toml"


def _show(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def needs_trust(over: dict[str, Any], user_channels: dict[str, Any]) -> list[str]:
    """Every `key = value` of a project file beyond narrowing or quieting the user's config."""
    # Only a project file pays for the schema, which says the rule keys it may set.
    from lookout.config.notify import RULE_KEY_PROJECT_MAY_SET

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
                    if RULE_KEY_PROJECT_MAY_SET.get(key) is False:
                        out.append(f"rules[{i}].{key} = {_show(value)}")
    return out


def project_path(cwd: str | None) -> str | None:
    """`.claude/lookout.toml` in cwd or the nearest parent, never above the repository root (the
    nearest directory holding `.git`) or the home directory (whose `.claude` is the user's own).
    With neither on the way up, only cwd itself: a shared parent such as /tmp belongs to nobody."""
    if not cwd or not cwd.startswith("/"):
        return None
    for d in _search_dirs(paths.normpath(cwd)):
        candidate = paths.join(d, PROJECT_FILE)
        if paths.isfile(candidate):
            return candidate
    return None


def _search_dirs(cwd: str) -> list[str]:
    home = paths.normpath(paths.home())
    found: list[str] = []
    d = cwd
    while d != home:
        found.append(d)
        if paths.exists(paths.join(d, ".git")):
            return found
        parent = d.rpartition("/")[0] or "/"
        if parent == d:
            return [cwd]  # reached / with no repository root and no home on the way
        d = parent
    return found


def trust_path() -> str:
    from lookout import store

    return paths.join(paths.state_dir(), store.TRUST)


def trusted_hash(trust_file: str | None, path: str) -> str | None:
    """The sha256 the user trusted for `path`, if any (read only when a file needs it)."""
    if trust_file is None:
        return None
    from lookout import store

    # Trust someone else could have written is no trust: the file and its directory are ours.
    if store.unsafe_reason(trust_file.rpartition("/")[0] or "/") is not None:
        return None
    try:
        if posix.lstat(trust_file).st_uid != posix.geteuid():
            return None
    except OSError:
        return None
    table = store.read_json(trust_file)
    if store.newer(table, 1):
        return None  # a newer lookout's trust: not read as this one's (fails closed)
    files = table.get("files") if isinstance(table, dict) else None
    entry = files.get(path) if isinstance(files, dict) else None
    value = entry.get("sha256") if isinstance(entry, dict) else None
    return value if isinstance(value, str) else None
