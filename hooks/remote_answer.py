"""Claude Code PermissionRequest hook (registered only with `[remote] enabled = true`): waits for
an answer from the dashboard or `lookout answer` and prints the decision, or nothing."""

import sys

# The checkout (or runtime) holding lookout/: __file__ is absolute. No `os`: it costs ~1 ms.
sys.path.insert(0, __file__.rpartition("/")[0].rpartition("/")[0])

from lookout.runner import run_remote

if __name__ == "__main__":
    raise SystemExit(run_remote())
