"""Install lookout's hooks into Claude Code: `python3 install.py --help` (runs from a checkout)."""

import os
import sys

if sys.version_info < (3, 11):  # noqa: UP036 - say so instead of a SyntaxError later
    sys.stderr.write(
        "error: lookout needs Python 3.11 or newer (this is {}.{})\n"
        "hint: run install.py with a newer python3, e.g. python3.11 install.py\n".format(
            *sys.version_info[:2]
        )
    )
    raise SystemExit(1)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lookout.install.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
