"""`lookout check-config`: the user's way to see config errors with file, key path and
expectation, and what the project file and [fleet], [steer] add. Never run by a hook."""

from __future__ import annotations

import argparse
import os
import sys

from lookout import paths
from lookout.boundary import visible
from lookout.commands import args, view
from lookout.config import check, files, notify


def declare(p: argparse.ArgumentParser) -> None:
    """Validate the notification config (and the project's .claude/lookout.toml) with errors that
    name the file, the key and what was expected."""
    args.project(p, "project directory whose .claude/lookout.toml applies")


def run(args: argparse.Namespace) -> int:
    return check_config(os.path.abspath(args.project or os.getcwd()))


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
        print(view.project_file_line(pf))
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
    if cfg.hub == cfg.host:
        extras += ", the fleet's hub (listens on the shared chat surfaces)"
    elif cfg.hub:
        extras += f", hub {cfg.hub} (may answer and steer this host)"
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
