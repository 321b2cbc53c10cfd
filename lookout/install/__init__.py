"""The installer: `python3 install.py` and `lookout uninstall` (plan), the safe writes of other
programs' files (files, settings, hooks, hookfiles), the runtime, the bridge's service."""

from __future__ import annotations

from collections.abc import Sequence

from lookout.install.plan import Options, do_install, do_uninstall

__all__ = ["Options", "do_install", "do_uninstall", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """install.py's entry point; its options are declared with the CLI's in commands.main."""
    from lookout.commands.main import install_main

    return install_main(argv)
