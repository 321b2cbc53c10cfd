"""`lookout channel add|remove` and `lookout rule add|remove`: change the user's config.toml
without editing TOML by hand. A new table is rendered with tomli-w and appended, so every comment,
key and order above it stays as written; a removal cuts out exactly that table. The result is
re-parsed, must equal the old config with only that change, and must validate; only then does it
replace the file (backup first, atomic, through symlinks). Anything else changes nothing."""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lookout import paths
from lookout.boundary import visible
from lookout.config.check import ConfigError
from lookout.config.files import validate
from lookout.config.notify import DEFAULT_TEXT
from lookout.errors import LookoutError
from lookout.install import files
from lookout.paths import tilde

NOTHING = "the config file is unchanged"


@dataclass
class Current:
    path: Path
    text: str  # the default config's text when there is no file yet
    exists: bool
    doc: dict[str, Any]


def _read() -> Current:
    path = Path(paths.config_path())
    where = tilde(path)
    try:
        text = files.read_text(path)
    except LookoutError as exc:
        raise LookoutError(str(exc), hint=NOTHING) from None
    exists = text is not None
    # No file means the built-in default: start from it as a file, or one new channel would
    # silently replace the default rules.
    text = DEFAULT_TEXT if text is None else text
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LookoutError(
            f"{where}: invalid TOML: {exc}", hint=f"fix it first (lookout check-config); {NOTHING}"
        ) from None
    try:
        validate(doc, where)
    except ConfigError as exc:
        raise LookoutError(
            f"{where} is not valid as it is: {exc.errors[0]}",
            hint=f"fix it first (lookout check-config lists every problem); {NOTHING}",
        ) from None
    return Current(path, text, exists, doc)


def _without_empty(doc: dict[str, Any]) -> dict[str, Any]:
    # A bare `[channels]` header left behind, or no `channels` at all: the same config.
    return {k: v for k, v in doc.items() if v not in ({}, [])}


def _append(text: str, table: str) -> str:
    if not text.strip():
        return table
    return (text if text.endswith("\n") else text + "\n") + "\n" + table


def _commit(
    cur: Current, new_text: str, expected: dict[str, Any], what: str, dry_run: bool, usage: str
) -> str:
    """Check new_text (parses to `expected`, validates), then write it; returns the note on the
    backup or the new file for the line that says what was done."""
    where = tilde(cur.path)
    try:
        parsed = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError as exc:
        # E.g. `channels` or `rules` written inline: a table appended after it cannot join it.
        raise LookoutError(
            f"{where}: {what} cannot be added to this file as a table ({exc})",
            hint=f"the file defines it inline; add it there by hand; {NOTHING}",
        ) from None
    if _without_empty(parsed) != _without_empty(expected):
        raise LookoutError(
            f"{where}: {what} cannot be changed here without changing something else",
            hint=f"edit the file by hand; {NOTHING}",
        )
    try:
        validate(parsed, where)
    except ConfigError as exc:
        raise LookoutError("; ".join(exc.errors), hint=f"{NOTHING}; see {usage} --help") from None
    if dry_run:
        loaded = files.Loaded(cur.path, cur.text if cur.exists else None, {})
        print(files.unified_diff(loaded, new_text).rstrip("\n"))
        return " (dry run: nothing written)"
    if not cur.exists:
        cur.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        files.atomic_write(cur.path, new_text.encode("utf-8"), 0o600)  # may hold tokens
        return " (new file: the default config plus this)"
    backup = files.write_settings(files.Loaded(cur.path, cur.text, {}), new_text)
    return files.suffix(backup)


# --- channels ------------------------------------------------------------------------------------


def channel_add(
    name: str,
    *,
    kind: str,
    options: dict[str, Any] | None = None,
    content: str | None = None,
    enabled: bool = True,
    dry_run: bool = False,
) -> int:
    """Append [channels.NAME] of type `kind`; `options`: the type's flags as given (argparse's
    dest -> value, None: not given)."""
    from lookout.channels import registry

    cur = _read()
    channels = cur.doc.get("channels", {})
    if name in channels:
        raise LookoutError(
            f"channel {name!r} already exists in {tilde(cur.path)}",
            hint=f"pick another name, or `lookout channel remove {name}` first; {NOTHING}",
        )
    given = {k: v for k, v in (options or {}).items() if v is not None}
    _check_flags(kind, given)
    table: dict[str, Any] = {"type": kind, **registry.table(kind, given)}
    if content is not None:
        table["content"] = content
    if not enabled:
        table["enabled"] = False
    checked = _inspect(name, table, tilde(cur.path))
    if not dry_run:
        _packages(kind)
    import tomli_w

    new_text = _append(cur.text, tomli_w.dumps({"channels": {name: table}}))
    expected = {**cur.doc, "channels": {**channels, name: table}}
    note = _commit(cur, new_text, expected, f"channel {name!r}", dry_run, "lookout channel add")
    if dry_run:
        return 0
    print(f"added channel {name} ({kind}) to {tilde(cur.path)}{note}")
    used = any(
        name in (r.get("channels", []) + r.get("escalate_to", []))
        for r in cur.doc.get("rules", [])
        if isinstance(r, dict)
    )
    if not used:
        print(
            f"note: no rule sends to {name} yet, e.g.: lookout rule add --when"
            f" permission,question,plan --channels {name}"
        )
    # What check-config will say of it (a variable not set, who can answer on it), said now.
    for risk in registry.CHANNELS[kind].warnings(name, checked, True):
        print(f"note: {visible(risk)}")
    print(f"try it: lookout test {name}")
    return 0


def _packages(kind: str) -> None:
    """What the type needs in lookout's runtime (its PACKAGES, e.g. slack-sdk), installed into
    this runtime's venv before the file changes (a failed install changes nothing)."""
    from lookout.channels import registry
    from lookout.install import packages

    mod = registry.CHANNELS[kind]
    deps: tuple[str, ...] = getattr(mod, "PACKAGES", ())
    if deps:
        venv = sys.prefix != sys.base_prefix
        module = str(getattr(mod, "PACKAGE_MODULE", ""))
        packages.ensure(sys.executable, deps, module, venv, print, f"--type {kind}")


def _inspect(name: str, table: dict[str, Any], where: str) -> Any:
    """The new table as check-config reads it, what it names included (a sound pack): refused
    before the file changes. The channel as validated."""
    try:
        cfg = validate({"channels": {name: table}, "rules": []}, where, deep=True)
        return cfg["channels"][name]
    except ConfigError as exc:
        # One problem per line, as check-config prints them; the last carries the hint.
        for problem in exc.errors[:-1]:
            print(f"error: {visible(problem)}", file=sys.stderr)
        raise LookoutError(
            exc.errors[-1], hint=f"{NOTHING}; see lookout channel add --help"
        ) from None


def _check_flags(kind: str, given: dict[str, Any]) -> None:
    """Refuse a flag the type does not take, and a type without a flag it needs."""
    from lookout.channels import registry

    mine = {registry.dest(opt) for opt in registry.CHANNELS[kind].OPTIONS}
    wrong = {
        opt["flag"]
        for other in registry.CHANNELS.values()
        for opt in other.OPTIONS
        if registry.dest(opt) in given and registry.dest(opt) not in mine
    }
    groups: dict[tuple[str, ...], list[str]] = {}
    for flag in (f for f in registry.flags() if f in wrong):
        groups.setdefault(tuple(registry.takers(flag)), []).append(flag)
    if groups:
        said = "; ".join(
            f"{' and '.join(flags)} {'is' if len(flags) == 1 else 'are'} for --type"
            f" {' or '.join(types)}"
            for types, flags in groups.items()
        )
        raise LookoutError(said, hint=NOTHING)
    needed = [o for o in registry.CHANNELS[kind].OPTIONS if o.get("required")]
    if any(registry.dest(o) not in given for o in needed):
        wants = " and ".join(f"{o['flag']} ({o['help']})" for o in needed)
        raise LookoutError(
            f"a {kind} channel needs {wants}",
            hint=f"{registry.CHANNELS[kind].EXAMPLE}; {NOTHING}",
        )


def channel_remove(name: str, *, dry_run: bool = False) -> int:
    cur = _read()
    channels = dict(cur.doc.get("channels", {}))
    if name not in channels:
        known = ", ".join(channels) or "none"
        raise LookoutError(
            f"no channel {name!r} in {tilde(cur.path)} (defined: {known})", hint=NOTHING
        )
    users = [
        f"rules[{i}].{key}"
        for i, rule in enumerate(cur.doc.get("rules", []))
        if isinstance(rule, dict)
        for key in ("channels", "escalate_to")
        if name in rule.get(key, [])
    ]
    if users:
        raise LookoutError(
            f"channel {name!r} is still used by {', '.join(users)}",
            hint=f"remove it from those rules first (lookout rule remove N); {NOTHING}",
        )
    channels.pop(name)
    expected = {**cur.doc, "channels": channels}
    new_text = _cut(cur.text, _channel_header(name), f"[channels.{name}]", cur.path, subtables=True)
    note = _commit(cur, new_text, expected, f"channel {name!r}", dry_run, "lookout channel remove")
    if not dry_run:
        print(f"removed channel {name} from {tilde(cur.path)}{note}")
    return 0


# --- rules ---------------------------------------------------------------------------------------


def rule_add(
    *,
    when: list[str],
    channels: list[str],
    projects: list[str] | None = None,
    agents: list[str] | None = None,
    min_duration_s: int | None = None,
    cooldown_s: int | None = None,
    quiet_hours: str | None = None,
    quiet_kinds: list[str] | None = None,
    escalate_after_s: int | None = None,
    escalate_to: list[str] | None = None,
    grace_s: int | None = None,
    digest_s: int | None = None,
    include_subagents: bool = False,
    dry_run: bool = False,
) -> int:
    cur = _read()
    rule: dict[str, Any] = {"when": when, "channels": channels}
    for key, value in (
        ("projects", projects),
        ("agents", agents),
        ("min_duration_s", min_duration_s),
        ("cooldown_s", cooldown_s),
        ("quiet_hours", quiet_hours),
        ("quiet_kinds", quiet_kinds),
        ("escalate_after_s", escalate_after_s),
        ("escalate_to", escalate_to),
        ("grace_s", grace_s),
        ("digest_s", digest_s),
    ):
        if value is not None:
            rule[key] = value
    if include_subagents:
        rule["include_subagents"] = True
    rules = list(cur.doc.get("rules", []))
    import tomli_w

    new_text = _append(cur.text, tomli_w.dumps({"rules": [rule]}))
    expected = {**cur.doc, "rules": [*rules, rule]}
    note = _commit(cur, new_text, expected, "a rule", dry_run, "lookout rule add")
    if not dry_run:
        print(
            f"added rules[{len(rules)}] to {tilde(cur.path)}: {', '.join(when)} →"
            f" {', '.join(channels)}{note}"
        )
    return 0


def rule_remove(index: int, *, dry_run: bool = False) -> int:
    cur = _read()
    rules = list(cur.doc.get("rules", []))
    if not 0 <= index < len(rules):
        raise LookoutError(
            f"no rules[{index}] in {tilde(cur.path)} (it has {len(rules)} rule(s),"
            f" rules[0] to rules[{max(0, len(rules) - 1)}])",
            hint=f"rules are numbered from 0 in the order the file lists them; {NOTHING}",
        )
    rules.pop(index)
    expected = {**cur.doc, "rules": rules}
    new_text = _cut(cur.text, _rules_header(), f"[[rules]] #{index}", cur.path, nth=index)
    note = _commit(cur, new_text, expected, f"rules[{index}]", dry_run, "lookout rule remove")
    if not dry_run:
        print(f"removed rules[{index}] from {tilde(cur.path)}{note}")
    return 0


# --- cutting one table out of the text ------------------------------------------------------------

_HEADER = re.compile(r"^[ \t]*\[")


def _name_pattern(name: str) -> str:
    return "(?:" + "|".join(re.escape(v) for v in (name, f'"{name}"', f"'{name}'")) + ")"


def _channel_header(name: str) -> re.Pattern[str]:
    # `[channels.NAME]` and its sub-tables (`[channels.NAME.urgency]`).
    return re.compile(
        rf"^[ \t]*\[[ \t]*channels[ \t]*\.[ \t]*{_name_pattern(name)}[ \t]*(?:\.[^\]]*)?\][ \t]*"
        r"(?:#.*)?$"
    )


def _rules_header() -> re.Pattern[str]:
    return re.compile(r"^[ \t]*\[\[[ \t]*rules[ \t]*\]\][ \t]*(?:#.*)?$")


def _cut(
    text: str, header: re.Pattern[str], what: str, path: Path, nth: int = 0, subtables: bool = False
) -> str:
    """The text without the nth table whose header matches, up to the next other header (with
    `subtables`, the following headers that also match are its own and go too). A line inside a
    value that looks like a header ends the cut early: the caller's re-parse then refuses."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if header.match(line.rstrip("\r\n"))]
    if not starts or nth >= len(starts):
        raise LookoutError(
            f"{tilde(path)}: {what} is not written as a table lookout can take out",
            hint=f"edit the file by hand; {NOTHING}",
        )
    first = starts[nth]
    end = first + 1
    while end < len(lines):
        line = lines[end].rstrip("\r\n")
        if _HEADER.match(line) and not (subtables and header.match(line)):
            break
        end += 1
    before, after = "".join(lines[:first]), "".join(lines[end:])
    if not after and before.endswith("\n\n"):
        before = before[:-1]  # the blank line `add` put before the table
    if not before.strip() and not after.strip():
        return ""
    return before + after
