"""Claude Code Elicitation hook: records the event and the session status it implies."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lookout.runner import run

if __name__ == "__main__":
    raise SystemExit(run("Elicitation"))
