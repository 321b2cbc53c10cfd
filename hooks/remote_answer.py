"""Claude Code PermissionRequest hook (registered only with `[remote] enabled = true`): waits for
an answer from the dashboard or `lookout answer` and prints the decision, or nothing."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lookout.remote.decide import run

if __name__ == "__main__":
    raise SystemExit(run())
