"""Home Assistant as an answer surface (issue 25, `[fleet] answers = true`): its Allow / Deny are
MQTT button entities that the bridge publishes and whose presses it takes (lookout.fleet.answers),
not buttons on a channel type's alert, so the sender never binds one. What a button shows of a
request is lookout.remote.shown's rule within this surface's limit (LIMITS, below), asked by
`view`."""

from __future__ import annotations

from lookout.remote import shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

NAME = "home_assistant"  # the surface answers.answer and RemoteDecision's source name
LABEL = "Home Assistant"  # how the installer names it


class ButtonName:
    """An Allow button shows the request in its name, `Allow <title>: <text>`: Home Assistant's
    core keeps an entity name whole (only the entity_id made from it is cut, at 255 characters),
    but the frontend shows a name on one line, cut with an ellipsis at the row's width
    (`white-space: nowrap; text-overflow: ellipsis`), and HTML collapses a run of spaces. So
    Allow only for one line this short; no tool before it (the title names it), no commentary,
    no refusal text after it."""

    WHAT = "button's name"
    ONE_LINE = 60
    TAIL_ROOM = True

    def fits(self, title: str, lines: list[str]) -> bool:
        name = f"Allow {title}: {' '.join(lines)}"
        return (
            len(lines) == 1 and len(name) <= self.ONE_LINE and "  " not in name
        ) and name == name.strip()

    def render(self, lines: list[str]) -> str:
        return "\n".join(lines)


LIMITS = ButtonName()


def view(rec: Mapping[str, Any], title: str, content: str) -> shown.View:
    """What a button under `title` shows of request `rec` at `content`, and whether Allow may
    be one."""
    return shown.view(rec, LIMITS, title=title, content=content)
