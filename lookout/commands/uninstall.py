"""`lookout uninstall`: the same as `python3 install.py --uninstall`, with the options it shares
with install.py (install/cli.py); the installer is imported only when it runs."""

from __future__ import annotations

import argparse
from typing import NoReturn

from lookout.commands.args import UsageError
from lookout.install import cli as install_cli


def declare(p: argparse.ArgumentParser) -> None:
    """Remove lookout's hook entries from Claude Code's settings (and another agent's files with
    --agent), keeping everything else in them. The same as `python3 install.py --uninstall`."""
    install_cli.add_options(p, uninstall=True)


class _Refusing(argparse.ArgumentParser):
    """What install/cli.py checks the options with: its refusals reach main.py, which says them
    as `lookout`'s own usage errors."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def run(args: argparse.Namespace) -> int:
    from lookout.install import plan as install

    return install.do_uninstall(install_cli.request(_Refusing(), args), install_cli.out)
