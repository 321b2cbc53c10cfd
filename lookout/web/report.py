"""The dashboard's "this week" panel: `GET /api/report`, the waiting ledger of the last seven
days (lookout report --json) and the same split by day, for the page's small chart. Reads only."""

from __future__ import annotations

import threading
import time

from lookout import ledger, words
from lookout.web.routing import Request, Response, Routes, json_response

ROUTES = Routes()

DAYS = 7
DAY_MS = 86_400_000
# The page asks every minute: each state directory's lines are read once, then only what was
# appended (ledger.Kept; the week's log is up to 160 MiB).
_KEPT: dict[str, ledger.Kept] = {}
_KEPT_LOCK = threading.Lock()


def _kept(state_dir: str) -> ledger.Kept:
    with _KEPT_LOCK:
        kept = _KEPT.get(state_dir)
        if kept is None:
            kept = _KEPT[state_dir] = ledger.Kept(state_dir)
        return kept


@ROUTES.route("GET", "/api/report")
def week(request: Request) -> Response:
    now_ms = words.now_ms()
    # Seven whole local days, today included: the chart's bars are calendar days.
    local = time.localtime(now_ms / 1000)
    midnight = int(time.mktime((*local[:3], 0, 0, 0, 0, 0, -1)) * 1000)
    since_ms = midnight - (DAYS - 1) * DAY_MS
    history = _kept(request.app.state_dir).read(since_ms, now_ms)
    body = ledger.summarize(history, since_ms, now_ms)
    days = []
    for n in range(DAYS):
        start = since_ms + n * DAY_MS
        waits = [w for w in history.waits if start <= w.start_ms < start + DAY_MS]
        days.append(
            {
                "day": time.strftime("%Y-%m-%d", time.localtime(start / 1000)),
                "episodes": len(waits),
                "wait_s": round(sum(w.wait_ms for w in waits) / 1000, 3),
            }
        )
    body["days"] = days
    return json_response(body)
