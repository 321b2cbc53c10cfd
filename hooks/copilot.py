"""GitHub Copilot CLI hook: records the event named in argv[1] (stdin JSON, camelCase)."""

import sys

# The checkout (or runtime) holding lookout/: __file__ is absolute. No `os`: it costs ~1 ms.
sys.path.insert(0, __file__.rpartition("/")[0].rpartition("/")[0])

from lookout import hookpack

hookpack.boot()  # the hook path from one precompiled file (when current); no GC

from lookout.runner import exit_now, run_agent

if __name__ == "__main__":
    exit_now(run_agent("copilot", sys.argv[1:]))  # no interpreter teardown: see exit_now
