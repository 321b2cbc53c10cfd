"""`lookout suggest`: list the allow rules the history supports; `--apply ID` adds one to
`permissions.allow` of a Claude Code settings file with the installer's guarantees (strict parse or
refuse, re-read before replacing, private backup, atomic write through symlinks, every other byte
kept); `--revert ID` takes exactly that rule out again."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from lookout import ledger, paths, store, words
from lookout import suggest as rules
from lookout.boundary import visible
from lookout.errors import LookoutError

# What --apply wrote, so --revert can undo exactly that (a state file of this command's own).
APPLIED = "suggest-applied.json"


def collect(state_dir: str, since_ms: int, until_ms: int) -> list[rules.Suggestion]:
    return rules.suggest(ledger.read(state_dir, since_ms, until_ms).waits)


def suggest(
    *,
    since_s: int,
    as_json: bool,
    apply: str | None = None,
    revert: str | None = None,
    scope: str = "user",
    now_ms: int | None = None,
) -> int:
    state_dir = paths.state_dir()
    if revert is not None:
        return _revert(state_dir, revert)
    now_ms = words.now_ms() if now_ms is None else now_ms
    found = collect(state_dir, now_ms - since_s * 1000, now_ms)
    if apply is not None:
        chosen = [s for s in found if s.id == apply]
        if not chosen:
            raise LookoutError(
                f"no suggestion {apply!r} in the last {since_s // 86400} days",
                hint="lookout suggest lists them (the ID column)",
            )
        return _apply(state_dir, chosen[0], paths.scope_path(scope))
    if as_json:
        print(json.dumps({"suggestions": [s.as_json() for s in found]}))
        return 0
    if not found:
        print("no suggestion: no permission request was approved often enough to make a rule")
        return 0
    applied = _applied(state_dir)
    for s in found:
        what = f"{s.count} asks, {s.wait_ms / 1000:.0f}s waited"
        where = ", ".join(p or "-" for p in s.projects)
        done = f" [applied to {_where(applied[s.id])}]" if s.id in applied else ""
        print(visible(f"{s.id}  {s.rule}  ({what}; {where}){done}"))
        for example in s.examples:
            print(visible(f"        e.g. {example}"))
    print("apply one: lookout suggest --apply ID [--scope user|project]")
    return 0


def _where(entry: object) -> str:
    path = entry.get("path") if isinstance(entry, dict) else None
    return paths.tilde(path) if isinstance(path, str) else "?"


# -- the settings file ---------------------------------------------------------------------------


def _check(data: object) -> object:
    from lookout.install import settings

    settings.check_shape(data)
    assert isinstance(data, dict)  # check_shape says so
    perms = data.get("permissions")
    if perms is None and "permissions" not in data:
        return data
    if not isinstance(perms, dict):
        raise settings.ShapeError("permissions: expected an object")
    allow = perms.get("allow")
    if "allow" in perms and not (
        isinstance(allow, list) and all(isinstance(r, str) for r in allow)
    ):
        raise settings.ShapeError("permissions.allow: expected an array of strings")
    return data


def _render(loaded: Any, data: dict[str, Any]) -> str:
    """The new text, or a refusal when the file's own style would not survive a rewrite."""
    from lookout.install import settings

    text = loaded.text
    if text is not None and text.strip() and settings.dumps(loaded.data, like=text) != text:
        raise LookoutError(
            f"{paths.tilde(loaded.path)}: lookout cannot change it without reformatting it",
            hint="add the rule to permissions.allow yourself; the file is unchanged",
        )
    return settings.dumps(data, like=loaded.text)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _applied(state_dir: str) -> dict[str, Any]:
    value = store.read_json(os.path.join(state_dir, APPLIED))
    return value if isinstance(value, dict) else {}


def _save_applied(state_dir: str, entries: dict[str, Any]) -> None:
    store.ensure_dir(state_dir)
    store.write_json_atomic(os.path.join(state_dir, APPLIED), entries)


def _apply(state_dir: str, s: rules.Suggestion, path: Path) -> int:
    from lookout.install import files

    loaded = files.load_settings(path, check=_check)
    data = json.loads(json.dumps(loaded.data))  # a copy to change
    created = "file" if loaded.text is None or not loaded.text.strip() else None
    perms = data.get("permissions")
    if perms is None:
        perms = data["permissions"] = {}
        created = created or "permissions"
    allow = perms.get("allow")
    if allow is None:
        allow = perms["allow"] = []
        created = created or "allow"
    if s.rule in allow:
        print(visible(f"{s.rule} is already allowed in {paths.tilde(path)}; nothing changed"))
        return 0
    allow.append(s.rule)
    text = _render(loaded, data)
    backup = files.write_settings(loaded, text)
    entries = _applied(state_dir)
    entries[s.id] = {
        "rule": s.rule,
        "path": str(path),
        "created": created,
        "written": _digest(text),
    }
    _save_applied(state_dir, entries)
    print(
        visible(
            f"added {s.rule} to permissions.allow of {paths.tilde(path)}"
            f"{files.written_note([], backup, loaded)}; undo: lookout suggest --revert {s.id}"
        )
    )
    return 0


def _revert(state_dir: str, rule_id: str) -> int:
    from lookout.install import files

    entries = _applied(state_dir)
    entry = entries.get(rule_id)
    if not isinstance(entry, dict) or not isinstance(entry.get("rule"), str):
        raise LookoutError(
            f"no rule {rule_id!r} was added by lookout suggest --apply",
            hint="lookout suggest --apply ID adds one; only those can be reverted",
        )
    path = Path(str(entry["path"]))
    rule = str(entry["rule"])
    loaded = files.load_settings(path, check=_check)
    data = json.loads(json.dumps(loaded.data))
    perms = data.get("permissions") if isinstance(data.get("permissions"), dict) else None
    allow = perms.get("allow") if perms is not None else None
    if not isinstance(allow, list) or rule not in allow:
        del entries[rule_id]
        _save_applied(state_dir, entries)
        print(visible(f"{rule} is no longer in {paths.tilde(path)}; nothing changed"))
        return 0
    assert perms is not None
    del allow[len(allow) - 1 - allow[::-1].index(rule)]  # the one --apply appended
    created = entry.get("created")
    if created in ("allow", "permissions", "file") and not allow:
        del perms["allow"]
    if created in ("permissions", "file") and not perms:
        del data["permissions"]
    untouched = loaded.text is not None and _digest(loaded.text) == entry.get("written")
    if created == "file" and not data and untouched:
        path_real = Path(os.path.realpath(path))
        path_real.unlink()  # lookout made it for this rule alone, and nobody changed it since
        print(visible(f"removed {rule}: deleted {paths.tilde(path)} (lookout had created it)"))
    else:
        backup = files.write_settings(loaded, _render(loaded, data))
        note = files.written_note([], backup, loaded)
        print(visible(f"removed {rule} from permissions.allow of {paths.tilde(path)}{note}"))
    del entries[rule_id]
    _save_applied(state_dir, entries)
    return 0
