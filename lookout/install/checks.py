"""What doctor asks of an installation, shared by every agent module's check: the report, whether
each hook command can run, and which of the wanted events have lookout's entries.

Reads and probes only: never writes a file (its import probe runs with -B)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from lookout import paths
from lookout.install import settings

OK, INFO, WARN, FAIL = "ok", "info", "warn", "fail"


@dataclass
class Check:
    check: str
    status: str
    message: str
    hint: str | None = None


class Report:
    def __init__(self) -> None:
        self.checks: list[Check] = []
        # (interpreter, runtime) pairs from the user's own settings, filled by the user scope
        # (which doctor checks first): a project's commands are probed only when they run
        # exactly these.
        self.user_chosen: set[tuple[str, str]] = set()

    def add(self, check: str, status: str, message: str, hint: str | None = None) -> None:
        self.checks.append(Check(check, status, message, hint))

    @property
    def problems(self) -> int:
        return sum(c.status == FAIL for c in self.checks)

    @property
    def warnings(self) -> int:
        return sum(c.status == WARN for c in self.checks)


def our_script(handler: dict[str, Any]) -> str | None:
    command = handler.get("command")
    words = settings.loose_words(command) if isinstance(command, str) else []
    for word in words:
        path = PurePosixPath(word)
        if path.name in settings.OUR_SCRIPTS and path.parent.name == "hooks":
            return word
    return None


def _interpreter(handler: dict[str, Any]) -> str | None:
    command = handler.get("command")
    try:
        words = settings.command_words(command) if isinstance(command, str) else []
    except ValueError:
        return None
    return words[0] if words else None


def import_probe(python: str, runtime: str) -> str | None:
    """None if `python -I -S` can import the hook runner from `runtime`, else what went wrong."""
    code = f"import sys; sys.path.insert(0, {runtime!r}); import lookout.runner"
    try:
        done = subprocess.run(
            [python, "-I", "-S", "-B", "-c", code], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit {done.returncode}"


def check_commands(
    report: Report,
    name: str,
    handlers: list[dict[str, Any]],
    runnable: set[tuple[str, str]] | None = None,
) -> None:
    """Check that each command can run. The import probe runs an interpreter with a runtime on
    its path, so it runs only for the (interpreter, runtime) pairs in `runnable`: the ones the
    user chose (their installed runtime, their own settings). None: these handlers are the
    user's own; everything is probed. A repository's settings are inspected, never executed."""
    probed: dict[tuple[str, str], str | None] = {}
    broken: list[str] = []
    from_path: set[str] = set()
    not_run = 0
    for handler in handlers:
        python = _interpreter(handler)
        script = our_script(handler)
        if python is None or script is None:
            broken.append(f"cannot parse {handler.get('command')!r}")
            continue
        resolved = python if os.path.isabs(python) else shutil.which(python)
        if not os.path.isabs(python):
            from_path.add(python)
        if resolved is None or not os.access(resolved, os.X_OK):
            broken.append(f"interpreter {python} not found")
            continue
        if not os.path.isfile(script):
            broken.append(f"script {paths.tilde(script)} is missing")
            continue
        # The runtime the script runs: the directory holding its hooks/ (through the links of
        # an installed runtime: runtimes/<name>, whose package the script imports).
        runtime = str(Path(os.path.realpath(script)).parent.parent)
        key = (os.path.realpath(resolved), os.path.realpath(runtime))
        if runnable is not None and key not in runnable:
            not_run += 1
            continue
        if key not in probed:
            probed[key] = import_probe(resolved, runtime)
        if probed[key] is not None:
            broken.append(f"{paths.tilde(resolved)} cannot import the runner: {probed[key]}")
    if broken:
        shown = "; ".join(sorted(set(broken))[:3])
        report.add(
            name,
            FAIL,
            f"{len(broken)} hook commands cannot run: {shown}",
            "run python3 install.py again from a lookout checkout",
        )
    elif not_run:
        report.add(
            name,
            OK,
            f"all {len(handlers)} hook commands resolve; {not_run} of them use an interpreter or"
            " runtime the repository chose: found, not run (doctor never runs what a repository"
            " chose)",
        )
    else:
        report.add(name, OK, f"all {len(handlers)} hook commands resolve and import the runner")
    if runnable is None:
        report.user_chosen.update(probed)
    if from_path:
        report.add(
            name,
            WARN,
            f"commands run {', '.join(sorted(from_path))} from PATH (slower, may change)",
            "re-run install.py: it pins an absolute interpreter",
        )


def runnable(report: Report) -> set[tuple[str, str]]:
    """The (interpreter, runtime) pairs a repository's commands may be probed with."""
    home = paths.runtime_home()
    python = os.path.realpath(paths.venv_python(home))
    current = os.path.realpath(home / "current")  # runtimes/<name>
    return {*report.user_chosen, (python, os.path.realpath(home)), (python, current)}


def ours(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """lookout's handlers in a hooks file (settings.json or hooks.json), with their events."""
    return [
        (event, handler)
        for event, groups in data.get("hooks", {}).items()
        for group in groups
        for handler in group["hooks"]
        if settings.is_ours(handler, [str(paths.runtime_home())])
    ]


def report_events(
    report: Report, name: str, where: str, present: list[str], wanted: list[str], hint: str
) -> None:
    """`N hooks in FILE`, or which of the wanted events have none of ours."""
    missing = sorted(set(wanted) - set(present))
    if missing:
        report.add(
            name,
            WARN,
            f"{len(present)} hooks in {where}, missing {len(missing)} events"
            f" ({', '.join(missing[:4])}{'...' if len(missing) > 4 else ''})",
            hint,
        )
    else:
        report.add(name, OK, f"{len(present)} hooks in {where}")


def report_agent(
    report: Report,
    name: str,
    ours: list[tuple[str, dict[str, Any]]],
    agent: str,
    what: str,
    hint: str,
) -> None:
    """Warn when some of lookout's entries in `agent`'s own file declare another agent (its
    sessions would be recorded as that one's): `N of them` and `what` they are."""
    others = sum(settings.handler_agent(h) != agent for _, h in ours)
    if others:
        report.add(name, WARN, f"{others} of them {what}", hint)
