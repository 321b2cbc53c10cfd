"""GitHub Copilot CLI hook: records the event named in argv[1] (stdin JSON, camelCase)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lookout.runner import run_agent

if __name__ == "__main__":
    raise SystemExit(run_agent("copilot", sys.argv[1:]))
