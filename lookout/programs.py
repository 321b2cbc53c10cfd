"""What a project file's command channel may name as a program (N2 in security-2.md).

A trusted `.claude/lookout.toml` is trusted byte for byte, but a program *inside* the repository
is not in those bytes: a `git pull` (or another clone) changes it without asking, and a relative
path is resolved against whatever directory the process that runs it happens to be in. So a
project file may name programs installed on the machine (an absolute path outside the project,
or a bare name looked up on PATH), never a relative path or a file inside the project. Pure;
stdlib only.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def project_root(project_file: str) -> str:
    """The directory holding `.claude/`, or the repository root above it when there is one."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(project_file)))
    d = root
    home = os.path.expanduser("~")
    while d not in (home, os.path.dirname(d)):
        if os.path.exists(os.path.join(d, ".git")):
            return d
        d = os.path.dirname(d)
    return root


def _inside(path: str, root: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")


def project_errors(data: dict[str, Any], project_file: str, where: str) -> list[str]:
    """One error per argv item of a project file's command channels that names a relative path
    or a path inside the project; `where` is how the file is shown."""
    channels = data.get("channels")
    if not isinstance(channels, dict):
        return []
    root = project_root(project_file)
    out: list[str] = []
    for name, ch in channels.items():
        argv = ch.get("argv") if isinstance(ch, dict) else None
        if not isinstance(argv, list):
            continue
        for i, item in enumerate(argv):
            if not isinstance(item, str):
                continue
            key = f"{where}: channels.{name}.argv[{i}]"
            relative = item.startswith(("./", "../")) or item in (".", "..")
            if relative or (i == 0 and "/" in item and not os.path.isabs(item)):
                out.append(
                    f"{key}: a project file may not name a relative path ({item!r}): it would be "
                    "resolved in the background sender's directory, not the project's "
                    "(give an absolute path outside the project, or a program on your PATH)"
                )
            elif os.path.isabs(item) and _inside(item, root):
                out.append(
                    f"{key}: a project file may not run a file inside the project ({item!r}): "
                    "`lookout trust` covers the project file's bytes, not that file's (install it "
                    "outside the repository, or name it in your own config)"
                )
    return out
