"""Claude Code PermissionRequest hook: records the event and the session status it implies."""

import sys

# The checkout (or runtime) holding lookout/: __file__ is absolute. No `os`: it costs ~1 ms.
sys.path.insert(0, __file__.rpartition("/")[0].rpartition("/")[0])

from lookout import hookpack

hookpack.boot()  # the hook path from one precompiled file (when current); no GC

from lookout.runner import exit_now, run

if __name__ == "__main__":
    exit_now(run("PermissionRequest"))  # no interpreter teardown: see exit_now
