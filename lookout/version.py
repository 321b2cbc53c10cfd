"""lookout's version, written in one place: pyproject.toml. A checkout reads it there; an
installed copy reads its package metadata (pip's dist-info, or the one install.py writes into
each runtime), as pre-commit does with importlib.metadata. Never on a hook's path: importlib
and tomllib cost milliseconds, and no hook needs the version."""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

NAME = "lookout"
# The directory holding this package: a checkout, a runtime, or site-packages.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNKNOWN = "unknown"  # said as it is: a copy of the package with neither
_known: list[str] = []


def version() -> str:
    """The version of the code running now (looked up once)."""
    if not _known:
        _known.append(of(ROOT))
    return _known[0]


def of(root: str) -> str:
    """The version of the lookout tree in `root`. A checkout's pyproject.toml comes first: the
    metadata an editable install left there (lookout.egg-info) may be older than it."""
    return of_checkout(root) or _installed(root) or UNKNOWN


def of_checkout(root: str) -> str | None:
    """What `root`/pyproject.toml says lookout's version is; None when `root` is no checkout."""
    import tomllib

    try:
        with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
            project = tomllib.load(fh).get("project")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(project, dict) or project.get("name") != NAME:
        return None
    found = project.get("version")
    return found if isinstance(found, str) and found else None


def _installed(root: str) -> str | None:
    """The metadata of the distribution installed in `root` (only there: another lookout
    installed elsewhere on sys.path is not the one running)."""
    from importlib.metadata import distributions

    for dist in distributions(name=NAME, path=[root]):
        found: str | None = dist.version
        return found
    return None


def metadata(number: str) -> tuple[str, bytes]:
    """(path, bytes) of the smallest dist-info importlib.metadata reads the version from: what a
    runtime holds beside its lookout/ package."""
    text = f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {number}\n"
    return f"{NAME}-{number}.dist-info/METADATA", text.encode("utf-8")


class Action(argparse.Action):
    """--version, looked up only when it is asked for (not on every command line)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "show lookout's version and exit")
        kwargs.setdefault("default", argparse.SUPPRESS)
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        sys.stdout.write(f"{NAME} {version()}\n")
        parser.exit(0)
