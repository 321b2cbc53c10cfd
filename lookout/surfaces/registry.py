"""Every answer surface lookout knows (as lookout.channels.registry lists the channel types): a
channel type's ANSWERS names the surface of its alerts' buttons here. A channel type that answers
is two modules, channels/<x>.py (send) and surfaces/<x>.py (answer), and a line in each registry.

Loaded by the sender and the installer; never by a hook."""

from __future__ import annotations

from lookout.channels import registry as channels
from lookout.surfaces import desktop, home_assistant, matrix, ntfy, slack, telegram

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lookout.remote.shown import Limits
    from lookout.shapes import Channel
    from lookout.surfaces.base import Surface

SURFACES: dict[str, Surface] = {
    s.NAME: s
    for s in (desktop.Popup(), ntfy.Buttons(), telegram.Chat(), slack.Buttons(), matrix.Room())
}
# Every surface that answers a request: the channel types' and Home Assistant's buttons (fleet).
NAMES = (*SURFACES, home_assistant.NAME)
# What each surface's alert can show (lookout.remote.shown's rule asks): its module's LIMITS.
LIMITS: dict[str, Limits] = {
    desktop.Popup.NAME: desktop.LIMITS,
    telegram.SURFACE: telegram.LIMITS,
    ntfy.SURFACE: ntfy.LIMITS,
    home_assistant.NAME: home_assistant.LIMITS,
    slack.NAME: slack.LIMITS,
    matrix.SURFACE: matrix.LIMITS,
}
LABELS = {
    **{name: s.LABEL for name, s in SURFACES.items()},
    home_assistant.NAME: home_assistant.LABEL,
}


def of(ch: Channel) -> Surface | None:
    """The surface of a validated channel's buttons (its type's ANSWERS); None: it has none, or
    the channel says `answers = false` (a type whose buttons are opt-in: ntfy)."""
    name = channels.of(ch).ANSWERS
    return SURFACES[name] if name is not None and ch.get("answers") is not False else None
