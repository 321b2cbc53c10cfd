"""Optional packages in lookout's runtime: paho-mqtt for `install.py --bridge`, slack-sdk for
`lookout channel add --type slack` (a channel type's PACKAGES). pip-installed into lookout's own
venv; an interpreter that is no venv gets a clear error with the pip line to run."""

from __future__ import annotations

import os
import shlex

from lookout.errors import LookoutError
from lookout.install.files import Out
from lookout.paths import tilde
from lookout.platform.base import capture, last_line


def ensure(
    python: str, deps: tuple[str, ...], module: str, venv: bool, out: Out, what: str
) -> None:
    """`deps` in the interpreter `python` unless `module` imports there already; `what` is the
    option that needs them (in the error)."""
    done = capture([python, "-I", "-c", f"import {module}"], timeout=60)
    if done.returncode == 0:
        return
    line = " ".join(shlex.quote(d) for d in deps)
    if not venv:
        raise LookoutError(
            f"{what}: {deps[0]} is not installed in {tilde(python)}",
            hint=f"{shlex.quote(python)} -m pip install {line}",
        )
    out(f"installing {', '.join(deps)} into it (pip) ...")
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    done = capture([python, "-m", "pip", "install", "--quiet", *deps], env=env)
    if done.returncode != 0:
        raise LookoutError(
            f"pip install {line} failed: {last_line(done)}",
            hint="check the network or your pip configuration",
        )
