"""The dashboard's "this week" panel: `GET /api/report`, the waiting ledger of the last seven
days (lookout report --json) and the same split by day, for the page's small chart. Reads only."""

from __future__ import annotations

import time

from lookout import ledger, words
from lookout.web.routing import Request, Response, Routes, json_response

ROUTES = Routes()

DAYS = 7
DAY_MS = 86_400_000


@ROUTES.route("GET", "/api/report")
def week(request: Request) -> Response:
    now_ms = words.now_ms()
    # Seven whole local days, today included: the chart's bars are calendar days.
    local = time.localtime(now_ms / 1000)
    midnight = int(time.mktime((*local[:3], 0, 0, 0, 0, 0, -1)) * 1000)
    since_ms = midnight - (DAYS - 1) * DAY_MS
    history = ledger.read(request.app.state_dir, since_ms, now_ms)
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
