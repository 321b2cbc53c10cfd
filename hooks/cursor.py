"""Cursor hook: records the agent's event (stdin JSON), translated by lookout.agents.cursor."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lookout.runner import run_agent

if __name__ == "__main__":
    raise SystemExit(run_agent("cursor", sys.argv[1:]))
