"""At most one sound per 2 s across every process of a state directory (each sender is a process
of its own), and the file each category played last (so a pack's sounds take turns). One small
JSON file changed under an flock, as store.py's files are.

A "needs you" sound (categories.URGENT) within the window of a lesser one still plays, once:
a finished turn never hides the question that came a second later."""

from __future__ import annotations

import os

from lookout import store
from lookout.sound.categories import URGENT
from lookout.sound.default import LOCK

FILE = "sound-played.json"  # {"ts_ms": when the last sound started, "category", "last": {...}}
WINDOW_MS = 2000


class Debounce(store.Locked):
    """`with Debounce(state_dir) as d:` the store under its lock: `d.wait_ms(category, now)`,
    then `d.last(category)` and `d.played(category, file, now)`."""

    def __init__(self, state_dir: str, window_ms: int = WINDOW_MS) -> None:
        super().__init__(state_dir, LOCK)
        self.path = os.path.join(state_dir, FILE)
        self.window_ms = window_ms
        self._data: dict[str, object] = {}

    def __enter__(self) -> Debounce:
        super().__enter__()
        found = store.read_json(self.path)
        # Another shape (a newer lookout's, a damaged file): as if nothing had played.
        self._data = found if isinstance(found, dict) and "v" not in found else {}
        return self

    def wait_ms(self, category: str, now_ms: int) -> int:
        """0 when a sound of `category` may play now, else how long the window still runs."""
        last = self._data.get("ts_ms")
        if not isinstance(last, int) or isinstance(last, bool):
            return 0
        age = now_ms - last
        if age < 0 or age >= self.window_ms:
            return 0  # the window is over, or the clock went back: never silent for long
        if category in URGENT and self._data.get("category") not in URGENT:
            return 0
        return self.window_ms - age

    def last(self, category: str) -> str | None:
        table = self._data.get("last")
        file = table.get(category) if isinstance(table, dict) else None
        return file if isinstance(file, str) else None

    def played(self, category: str, file: str, now_ms: int) -> None:
        table = self._data.get("last")
        last = (
            {k: v for k, v in table.items() if isinstance(v, str)}
            if isinstance(table, dict)
            else {}
        )
        last[category] = file
        self._data = {"ts_ms": now_ms, "category": category, "last": last}
        try:
            store.write_json_atomic(self.path, self._data)
        except store.NewerFormatError:
            pass  # a newer lookout's file: left as it is (this sound plays undebounced)
