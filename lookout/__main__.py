from __future__ import annotations

from lookout.commands.main import main

if __name__ == "__main__":
    raise SystemExit(main())
