"""OpenAI Codex legacy `notify` program: records a completed turn (JSON in the last argument)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lookout.runner import run_notify

if __name__ == "__main__":
    raise SystemExit(run_notify("codex", sys.argv[1:]))
