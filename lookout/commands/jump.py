"""`lookout jump`: switch to the pane of a session (see jump.locate), or print where it is."""

from __future__ import annotations

import json
import sys

from lookout.jump import locate as places


def jump(query: str | None, *, client: str | None, print_only: bool, as_json: bool) -> int:
    landed = places.jump(query, client=client, print_only=print_only)
    if as_json:
        print(
            json.dumps(
                {
                    "session_id": landed.session_id,
                    "title": landed.title,
                    "project": landed.project,
                    "via": landed.via,
                    "target": landed.target,
                    "socket": landed.socket,
                }
            )
        )
    elif print_only:
        print(places.printable(landed.target))
    elif sys.stdout.isatty():
        # From a key binding (run-shell) say nothing: tmux would show it over the pane.
        on = f" on client {landed.client}" if landed.client else ""
        who = places.name({"title": landed.title, "session_id": landed.session_id})
        print(f"{who}: {landed.via} {places.printable(landed.target)}{on}")
    return 0
