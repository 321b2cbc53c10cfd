"""`lookout suggest`: list the allow rules the history supports; `--apply ID` adds one to
`permissions.allow` of a Claude Code settings file (this project's `.claude/settings.local.json`
unless `--scope` says otherwise) with the installer's guarantees (strict parse or refuse, its own
rewrite, re-read before replacing, private backup, atomic write through symlinks); `--revert ID`
takes exactly that rule out again, giving back the original bytes when nothing else changed.
A rule that runs code from the repository, or acts beyond it as its files say, is never applied
for the user (every project)."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from lookout import ledger, paths, store, words
from lookout import suggest as rules
from lookout.boundary import visible
from lookout.commands import args
from lookout.errors import LookoutError

# What --apply wrote, so --revert can undo exactly that (a state file of this command's own).
APPLIED = "suggest-applied.json"


def declare(p: argparse.ArgumentParser) -> None:
    """Each Claude Code permission rule that would have spared you dialogs you approved (never wider
    than what you approved, never for destructive commands), with the asks and the waiting it
    would have removed. --apply ID adds one to this project's settings (backup, atomic); --revert
    ID takes it out again."""
    p.add_argument(
        "--since",
        dest="since_s",
        type=args.duration,
        default=30 * 86400,
        metavar="AGE",
        help="how far back (30d)",
    )
    args.json_flag(p, dest="as_json")
    do = p.add_mutually_exclusive_group()
    do.add_argument("--apply", metavar="ID", help="add suggestion ID to permissions.allow")
    do.add_argument("--revert", metavar="ID", help="remove the rule --apply ID added")
    p.add_argument(
        "--scope",
        choices=("local", "project", "user"),
        default="local",
        help="with --apply: ./.claude/settings.local.json (local, default),"
        " ./.claude/settings.json (project) or ~/.claude/settings.json (user: never for a rule"
        " that runs code from the repository)",
    )


def run(ns: argparse.Namespace) -> int:
    return args.call(suggest, ns)


def collect(state_dir: str, since_ms: int, until_ms: int) -> list[rules.Suggestion]:
    return rules.suggest(ledger.read(state_dir, since_ms, until_ms).waits)


def suggest(
    *,
    since_s: int,
    as_json: bool,
    apply: str | None = None,
    revert: str | None = None,
    scope: str = "local",
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
        effect = rules.repo_effect(chosen[0].rule)
        if scope == "user" and effect is not None:
            does = (
                "run any checkout's code"
                if effect == rules.RUNS_CODE
                else "do what any checkout's files say"
            )
            raise LookoutError(
                f"{chosen[0].rule} {effect}: allowed for every project, it would {does}"
                " (a hostile clone's too) without a dialog, so --scope user is refused",
                hint=f"apply it to this project only: lookout suggest --apply {apply}"
                " (./.claude/settings.local.json); nothing was changed",
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
        effect = rules.repo_effect(s.rule)
        if effect is not None:
            here = effect.replace("the repository", "this repository")
            print(f"        {here}: for this project only")
        for example in s.examples:
            print(visible(f"        e.g. {example}"))
    print("apply one: lookout suggest --apply ID [--scope local|project|user]")
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


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _applied(state_dir: str) -> dict[str, Any]:
    value = store.read_json(os.path.join(state_dir, APPLIED))
    return value if isinstance(value, dict) else {}


def _save_applied(state_dir: str, entries: dict[str, Any]) -> None:
    store.ensure_dir(state_dir)
    store.write_json_atomic(os.path.join(state_dir, APPLIED), entries)


def _apply(state_dir: str, s: rules.Suggestion, path: Path) -> int:
    from lookout.install import files, registry, settings

    loaded = files.load_settings(path, check=_check)
    data = json.loads(json.dumps(loaded.data))  # a copy to change
    created = "file" if loaded.text is None else None  # an empty file is given back empty
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
    # The installer's own rewrite (its indent, escapes, final newline): a file in another style
    # (inline objects, aligned values) is reformatted, its original bytes kept in the backup.
    text = settings.dumps(data, like=loaded.text)
    reformatted = bool(loaded.text and loaded.text.strip()) and (
        settings.dumps(loaded.data, like=loaded.text) != loaded.text
    )
    created_dirs = registry.missing_dirs(path) if loaded.text is None else []
    backup = files.write_settings(loaded, text)
    entries = _applied(state_dir)
    entries[s.id] = {
        "rule": s.rule,
        "path": str(path),
        "created": created,
        "created_dirs": [str(d) for d in created_dirs],
        "written": _digest(text),
        "backup": str(backup) if backup is not None else None,
        "original": _digest(loaded.text) if loaded.text is not None else None,
    }
    _save_applied(state_dir, entries)
    details = ["reformatted"] if reformatted else []
    print(
        visible(
            f"added {s.rule} to permissions.allow of {paths.tilde(path)}"
            f"{files.written_note(details, backup, loaded)}; undo: lookout suggest --revert {s.id}"
        )
    )
    return 0


def _original(entry: dict[str, Any]) -> str | None:
    """The file's bytes before --apply, from its private backup, if it is still kept and still
    what it was."""
    backup, digest = entry.get("backup"), entry.get("original")
    if not isinstance(backup, str) or not isinstance(digest, str):
        return None
    try:
        text = Path(backup).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if _digest(text) == digest else None


def _remove_created(entry: dict[str, Any], path: Path, text: str, rule: str) -> None:
    """The file --apply created for this rule alone, unchanged since: gone, and the folders it
    made for it when they are empty."""
    if path.read_bytes() != text.encode("utf-8"):
        # Someone (a running Claude Code?) wrote it since we read it: never clobber that.
        raise LookoutError(
            f"{paths.tilde(path)}: changed while lookout was reading it",
            hint="run the command again; nothing was changed",
        )
    os.unlink(path)
    dirs = entry.get("created_dirs")
    for directory in dirs if isinstance(dirs, list) else []:
        try:
            os.rmdir(str(directory))
        except OSError:
            break  # something else is in it now: not ours to remove
    print(visible(f"removed {rule}: deleted {paths.tilde(path)} (lookout had created it)"))


def _revert(state_dir: str, rule_id: str) -> int:
    from lookout.install import files, settings

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
    untouched = loaded.text is not None and _digest(loaded.text) == entry.get("written")
    created = entry.get("created")
    if untouched and created == "file" and loaded.text is not None and not path.is_symlink():
        _remove_created(entry, path, loaded.text, rule)  # made for this rule, unchanged since
    else:
        original = _original(entry) if untouched else None
        if original is None:  # changed since (or the backup is gone): take out only the rule
            del allow[len(allow) - 1 - allow[::-1].index(rule)]  # the one --apply appended
            if created in ("allow", "permissions", "file") and not allow:
                del perms["allow"]
            if created in ("permissions", "file") and not perms:
                del data["permissions"]
        text = original if original is not None else settings.dumps(data, like=loaded.text)
        backup = files.write_settings(loaded, text)
        note = files.written_note([], backup, loaded)
        print(visible(f"removed {rule} from permissions.allow of {paths.tilde(path)}{note}"))
    del entries[rule_id]
    _save_applied(state_dir, entries)
    return 0
