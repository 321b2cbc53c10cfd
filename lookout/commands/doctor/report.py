"""`lookout doctor`: where the hooks are installed, whether each command can run, whether the config
is valid, the state directory and its permissions, and which notification channels can work here.

Each agent's hooks are checked by its own module (lookout.agents.<agent>.check); the rest is in
state, channels and features. Reads and probes only: never writes a file, never sends anything.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict
from pathlib import Path

from lookout import paths
from lookout.agents.registry import AGENTS
from lookout.boundary import visible
from lookout.commands import args
from lookout.commands.doctor.channels import check_channels
from lookout.commands.doctor.features import (
    check_away,
    check_client_registry,
    check_fleet,
    check_remote,
    check_steer,
)
from lookout.commands.doctor.state import (
    check_config,
    check_deliveries,
    check_formats,
    check_state,
)
from lookout.install import runtimes
from lookout.install.checks import FAIL, INFO, OK, WARN, Check, Report

__all__ = ["FAIL", "INFO", "OK", "WARN", "Check", "Report", "diagnose", "doctor", "render"]

_LABEL = {OK: "ok  ", INFO: "--  ", WARN: "warn", FAIL: "FAIL"}


def declare(p: argparse.ArgumentParser) -> None:
    """Check lookout's installation, config, state directory and notification channels. Changes
    nothing; exits 1 when something is broken."""
    args.project(p, "project whose .claude settings to check")
    args.json_flag(p)


def run(args: argparse.Namespace) -> int:
    return doctor(project=args.project, as_json=args.json)


def diagnose(project: str) -> Report:
    report = Report()
    home = paths.runtime_home()
    if (home / "hooks").is_dir():
        check_runtime(report, home)
        _check_pack(report, runtimes.code_root(home))
    else:
        report.add("runtime", INFO, f"{paths.tilde(home)} not installed (plugin or checkout?)")
    found = sum(agent.installer().check(report, project) for agent in AGENTS.values())
    if not found:
        report.add("hooks", FAIL, "lookout's hooks are not installed in any scope", _install_hint())
    loaded = check_config(report, project)
    check_remote(report, project)
    check_away(report)
    check_steer(report)
    check_state(report)
    check_formats(report)
    check_channels(report, loaded)
    check_deliveries(report)
    check_fleet(report)
    check_client_registry(report)
    return report


def _install_hint() -> str:
    """How to install, for the agents set up here: Codex alone gets its own flag."""
    from lookout.agents import claude

    here = [name for name, agent in AGENTS.items() if agent.home().is_dir()]
    if here == ["codex"] and not claude.present():
        return "python3 install.py --agent codex"
    return "python3 install.py (or install the plugin: see the README)"


def check_runtime(report: Report, home: Path) -> None:
    """Which runtime `current` names and that it is whole (an older install.py writes into it);
    the layout before runtimes/ is reported as it is."""
    now = runtimes.current(home)
    if now is None:
        report.add("runtime", OK, f"{paths.tilde(home)}")
        return
    manifest = runtimes.read_manifest(now)
    shown = f"{paths.tilde(home)}: {runtimes.describe(manifest, now)}"
    if not runtimes.intact(now):
        report.add(
            "runtime",
            WARN,
            f"{shown}: its files changed since install (an older install.py ran over it?)",
            "python3 install.py from your lookout checkout installs a whole runtime again",
        )
    else:
        report.add("runtime", OK, shown)


def _check_pack(report: Report, home: Path) -> None:
    from lookout import hookpack

    if hookpack.is_current(str(home / "lookout")):
        report.add("hook pack", OK, "the hook path is precompiled into one file, current")
    else:
        report.add(
            "hook pack",
            WARN,
            "the hook path's precompiled file is missing or out of date: each hook imports its"
            " modules one by one (about 0.7 ms more per tool call)",
            "python3 install.py writes it again",
        )


def render(report: Report) -> str:
    lines = []
    for c in report.checks:
        # Messages quote settings, paths and errors.log lines: never raw control characters.
        message = visible(c.message, keep_newlines=True).replace("\n", "\n      ")
        lines.append(f"{_LABEL[c.status]}  {c.check}: {message}")
        if c.hint and c.status in (WARN, FAIL):
            lines.append(f"      hint: {visible(c.hint)}")
    lines.append(summary(report))
    return "\n".join(lines)


def summary(report: Report) -> str:
    """The last line: failures and warnings counted, never "no problems" under a warn line."""
    n, w = report.problems, report.warnings
    warned = f"{w} warning{'s' if w != 1 else ''}"
    if n:
        found = f"{n} problem{'s' if n != 1 else ''} found"
        return f"{found}, {warned}" if w else found
    return f"{warned} (nothing failed)" if w else "no problems found"


def doctor(*, project: str | None, as_json: bool) -> int:
    report = diagnose(os.path.abspath(project or os.getcwd()))
    if as_json:
        doc = {
            "ok": not report.problems,
            "problems": report.problems,
            "warnings": report.warnings,
            "checks": [asdict(c) for c in report.checks],
        }
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print(render(report))
    return 1 if report.problems else 0
