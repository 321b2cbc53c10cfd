"""`lookout test [CHANNEL...]` and `lookout check-config`: the user's way to prove a channel
works and to see config errors with file, key path and expectation. Never run by a hook."""

from __future__ import annotations

import os
import sys

from lookout import deliveries, paths, store, templates, words
from lookout.boundary import visible
from lookout.channels import registry
from lookout.config import check, files, notify
from lookout.errors import LookoutError
from lookout.machine import make_intent

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.shapes import Channel, Intent


def check_config(project: str) -> int:
    gpath = paths.config_path()
    try:
        cfg, pf = files.resolve(project, deep=True)
    except check.ConfigError as exc:
        for line in exc.errors:
            print(f"error: {visible(line)}", file=sys.stderr)
        _check_fleet(set(exc.errors))
        _check_steer(set(exc.errors))
        return 1
    if os.path.exists(gpath):
        print(
            f"{paths.tilde(gpath)}: ok ({len(cfg['channels'])} channel(s), "
            f"{len(cfg['rules'])} rule(s))"
        )
    else:
        print(
            f"{paths.tilde(gpath)}: not found, using the built-in default "
            f"(desktop alerts for attention, and for turns of 30 s or more)"
        )
    if pf is not None:
        print(project_file_line(pf))
    for warning in notify.warnings(cfg):
        print(f"warning: {visible(warning)}")
    remote = cfg.get("remote")
    fleet_rc = _check_fleet(
        set(), remote_on=isinstance(remote, dict) and bool(remote.get("enabled"))
    )
    return max(fleet_rc, _check_steer(set()))


def _check_steer(shown: set[str]) -> int:
    """[steer]: on or off, what it allows, or its own errors (a TOML error was already printed)."""
    from lookout.config import steer

    try:
        cfg = steer.load()
    except check.ConfigError as exc:
        for line in exc.errors:
            if line not in shown:
                print(f"error: {visible(line)}", file=sys.stderr)
        return 1
    if cfg.configured:  # said only for a [steer] table, as [fleet] is (doctor always says it)
        print(visible(steer.describe(cfg)))
    for warning in cfg.escapes() if cfg.enabled else []:
        print(f"warning: [steer] projects: {visible(warning)}; {steer.ESCAPE_HINT}")
    return 0


def _check_fleet(shown: set[str], remote_on: bool = True) -> int:
    """[fleet], when there is one: its own errors (a TOML error was already printed)."""
    from lookout.config import fleet

    try:
        cfg = fleet.load()
    except fleet.NotConfigured:
        return 0
    except check.ConfigError as exc:
        for line in exc.errors:
            if line not in shown:
                print(f"error: {visible(line)}", file=sys.stderr)
        return 1
    extras = ", Home Assistant discovery" if cfg.home_assistant else ""
    if cfg.answers:
        extras += ", answers from Home Assistant buttons"
    print(
        f"fleet: ok ({cfg.url} as host {cfg.host}, topics {cfg.topic_prefix}/{cfg.host}/..., "
        f"content {cfg.content}{extras})"
    )
    for warning in fleet.warnings(cfg):
        print(f"warning: {visible(warning)}")
    if cfg.answers and not remote_on:
        print(
            "warning: fleet.answers: [remote] enabled is not true, so no request waits for an "
            "answer and Home Assistant shows no buttons (docs/remote.md)"
        )
    return 0


def project_file_line(pf: files.ProjectFile) -> str:
    """What check-config (and status) say about the project file a session uses."""
    where = visible(paths.tilde(pf.path))
    if pf.ignored is None:
        how = "trusted: it may add to your config" if pf.trusted else "it narrows your config"
        return f"{where}: ok ({how})"
    hint = (
        f"lookout trust {visible(paths.tilde(os.path.dirname(os.path.dirname(pf.path))))}"
        " shows what it adds and asks"
        if pf.adds
        else "a project file must be yours and writable only by you"
    )
    return f"warning: {where}: ignored: {visible(pf.ignored)}\nhint: {hint}"


def test_intent(project: str) -> Intent:
    now_ms = words.now_ms()
    intent = make_intent(
        "message",
        "lookout-test",
        now_ms,
        project=os.path.basename(project.rstrip("/")) or "lookout",
        cwd=project,
        summary="test notification",
        message="Test notification from lookout.",
    )
    intent["ts"] = store.rfc3339(now_ms)
    return intent


def test_channels(project: str, names: list[str]) -> int:
    cfg, pf = files.resolve(project)
    if pf is not None and pf.ignored is not None:
        print(project_file_line(pf), file=sys.stderr)
    available = cfg["channels"]
    chosen = _chosen(available, names)
    intent = test_intent(project)
    tasks = [(name, available[name], _message(name, available[name], intent)) for name in chosen]
    state_dir = paths.state_dir()
    failed = 0
    for (name, _ch, _msg), (result, detail, _ref) in zip(
        tasks, deliveries.run_parallel(tasks), strict=True
    ):
        print(f"{name}: {result} ({visible(detail)})")
        failed += result != "sent"
        try:
            deliveries.record(state_dir, intent, name, result, f"lookout test: {detail}")
        except OSError:
            pass  # the terminal already shows the result
    return 1 if failed else 0


def _chosen(available: dict[str, Channel], names: list[str]) -> list[str]:
    """The channels to test: those named (disabled or not), else every enabled one (saying
    which are left out)."""
    unknown = [n for n in names if n not in available]
    if unknown:
        raise LookoutError(
            f"unknown channel {', '.join(repr(n) for n in unknown)} "
            f"(configured: {', '.join(available) or 'none'})",
            hint="lookout check-config shows the config lookout reads",
        )
    chosen = names or [n for n, ch in available.items() if ch["enabled"]]
    disabled = [n for n, ch in available.items() if not ch["enabled"] and n not in chosen]
    if not available:
        raise LookoutError(
            "no channel to test: the config defines none",
            hint=f"add one: lookout channel add NAME --type {'|'.join(registry.NAMES)}",
        )
    if not chosen:
        first = disabled[0]
        raise LookoutError(
            f"every channel is disabled ({', '.join(disabled)})",
            hint=f"set enabled = true in [channels.{first}], or test it anyway: lookout test"
            f" {first}",
        )
    if disabled and not names:
        print(
            f"skipped {', '.join(disabled)} (disabled; `lookout test {disabled[0]}` tests it"
            " anyway)"
        )
    return chosen


def _message(name: str, ch: Channel, intent: Intent) -> dict[str, Any]:
    values = templates.values(intent, ch["content"])
    return {
        "title": f"{values['project']} · lookout test",
        "body": f"Notifications from lookout reach you through '{name}'.",
        "kind": "message",
        "intent": intent,
        "values": values,
        "update": False,
        "test": True,  # `lookout test`: a type may say so (a sound plays, never debounced)
    }
