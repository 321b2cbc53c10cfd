"""`lookout trust [DIR]`: let one project file add what only the user's own config may set.

A repository's `.claude/lookout.toml` is written by whoever wrote the repository: until the user
trusts it, it may only narrow or quiet their config (config.trust.needs_trust says what is
beyond that).
Trust is recorded in the user's state directory, outside the repository, as the file's path and
the sha256 of its exact bytes: one changed byte and it is untrusted again."""

from __future__ import annotations

import argparse
import os
import sys

from lookout import paths, store, words
from lookout.boundary import visible
from lookout.config.files import project_file_strict, project_path
from lookout.config.trust import PROJECT_FILE, trust_path
from lookout.errors import LookoutError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def declare(p: argparse.ArgumentParser) -> None:
    """A project's .claude/lookout.toml may only narrow or quiet your config until you trust it:
    this shows exactly what the file adds beyond that, asks, and records the file's path and the
    hash of its bytes in your state directory. A changed file is untrusted again."""
    p.add_argument(
        "dir", nargs="?", metavar="DIR", help="the project directory (default: the current one)"
    )
    p.add_argument("--yes", action="store_true", help="trust without asking (for scripts)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the trusted files")
    what.add_argument("--remove", action="store_true", help="stop trusting DIR's file")


def run(args: argparse.Namespace) -> int:
    if args.list:
        return list_trusted()
    directory = os.path.abspath(args.dir or os.getcwd())
    if args.remove:
        return untrust(directory)
    return trust(directory, yes=args.yes)


def _table() -> dict[str, Any]:
    data = store.read_json(trust_path())
    files = data.get("files") if isinstance(data, dict) else None
    return (
        {k: v for k, v in files.items() if isinstance(v, dict)} if isinstance(files, dict) else {}
    )


def _save(files: dict[str, Any]) -> None:
    state_dir = paths.state_dir()
    with store.Locked(state_dir):  # a moment, never across a prompt
        store.write_json_atomic(trust_path(), {"v": 1, "files": files})


def _find(directory: str) -> str:
    path = project_path(directory)
    if path is None:
        raise LookoutError(
            f"no {PROJECT_FILE} in {visible(paths.tilde(directory))}"
            " or above it up to the repository root",
            hint="lookout trust DIR takes the project directory (the one holding .claude/)",
        )
    return path


def trust(directory: str, *, yes: bool) -> int:
    path = _find(directory)
    where = visible(paths.tilde(path))
    pf = project_file_strict(path)
    if pf.ignored is not None and not pf.adds:
        raise LookoutError(
            f"{where}: {visible(pf.ignored)}",
            hint="a project file must be yours and writable only by you; lookout will not trust it",
        )
    if not pf.adds:
        print(f"{where} only narrows or quiets your config: it applies without trust")
        return 0
    if pf.trusted:
        print(f"{where} is already trusted (sha256 {pf.sha256[:12]}…)")
        return 0
    print(f"{where} (sha256 {pf.sha256[:12]}…) sets what only your own config may set:")
    for item in pf.adds:
        print(f"  {visible(item)}")
    print("Trusted, it may run these programs, send to these addresses and read these")
    print("variables, as you, in every session under this project, until the file changes.")
    if not yes:
        if not sys.stdin.isatty():
            raise LookoutError(
                "not trusted: nobody to ask (stdin is not a terminal)",
                hint="read the lines above, then run lookout trust --yes"
                f" {visible(paths.tilde(directory))}",
            )
        answer = input("Trust this file? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("not trusted; nothing changed")
            return 1
    files = _table()
    files[path] = {"sha256": pf.sha256, "trusted_at": store.rfc3339(words.now_ms())}
    _save(files)
    print(
        f"trusted {where}; `lookout trust --remove {visible(paths.tilde(directory))}` takes it back"
    )
    return 0


def untrust(directory: str) -> int:
    files = _table()
    path = project_path(directory)
    gone = [p for p in files if p == path or os.path.dirname(os.path.dirname(p)) == directory]
    if not gone:
        raise LookoutError(
            f"no trusted project file for {visible(paths.tilde(directory))}",
            hint="lookout trust --list shows them",
        )
    for p in gone:
        del files[p]
    _save(files)
    for p in gone:
        print(f"no longer trusted: {visible(paths.tilde(p))}")
    return 0


def list_trusted() -> int:
    files = _table()
    if not files:
        print("no trusted project files")
        return 0
    for path, entry in sorted(files.items()):
        try:
            with open(path, "rb") as f:
                import hashlib

                now = hashlib.sha256(f.read()).hexdigest()
            state = "trusted" if now == entry.get("sha256") else "changed since (not applied)"
        except OSError:
            state = "missing"
        print(f"{visible(paths.tilde(path))}  {state}  (since {visible(entry.get('trusted_at'))})")
    return 0
