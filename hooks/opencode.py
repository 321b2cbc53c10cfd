"""OpenCode: lookout's plugin starts this once per bus event (stdin JSON); it records it."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lookout.runner import run_agent

if __name__ == "__main__":
    raise SystemExit(run_agent("opencode", sys.argv[1:]))
