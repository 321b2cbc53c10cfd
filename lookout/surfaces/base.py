"""What every answer surface provides (as lookout.channels.base is for sending): the buttons or
replies by which an alert answers its request, one module each (surfaces/<x>.py, beside the
channel type that sends the alert, channels/<x>.py), listed in registry.py and found by the
channel type's ANSWERS.

A surface binds an alert to its request before the send (`bind`), takes the alert's id after it
(`sent`), starts what takes a press on it (`take`), adds its buttons to an alert that went out
before its request was recorded (`late`), and says whether an alert already shows its request's
outcome (`shows_outcome`: the "handled" update then stays away). What it shows of a request, and
within which limits, is lookout.remote.shown's one rule (`choices` asks it) with the surface's
own limits (its module's LIMITS: what its alert shows, as measured on the real thing)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol

    from lookout.remote.requests import Record
    from lookout.remote.shown import Limits
    from lookout.shapes import Channel, Intent

    # Runs a wait in a thread of its own while the sender stays up (the sender's Lanes.watch).
    Watch = Callable[..., None]

    class Surface(Protocol):
        """An object in lookout/surfaces/<x>.py (its module's SURFACE)."""

        @property
        def NAME(self) -> str: ...  # the surface answers.answer names (RemoteDecision's source)

        @property
        def LABEL(self) -> str: ...  # how the installer names it: "the desktop popup"

        def bind(self, a: Alert) -> None:
            """Before the send: the request the alert is about gets its buttons on `a.msg`
            (and the body shows the request as shown.view renders it for this surface)."""
            ...

        def sent(self, a: Alert, ref: str) -> None:
            """The alert went out as `ref`, with its buttons if `bind` added any."""
            ...

        def take(self, a: Alert, ref: str | None, watch: Watch) -> None:
            """After the send (`ref`: its id, None: not sent): start what takes a press on this
            alert, if it is the alert's own (the popup's notify-send, through `watch`); a
            surface whose presses come to a poller of its own does nothing here."""
            ...

        def late(self, a: Alert, ref: str) -> None:
            """Alert `ref` went out before its request was recorded: add its buttons now."""
            ...

        def shows_outcome(self, state_dir: str, name: str, ref: str, episode: str) -> bool:
            """Alert `ref` of channel `name` shows (or will show) its request's outcome."""
            ...


class Alert:
    """One alert and where it goes: what an answer surface works on."""

    def __init__(
        self,
        state_dir: str,
        intent: Intent,
        name: str,
        ch: Channel,
        msg: dict[str, Any],
        remote: dict[str, Any],
        mark: object,
    ) -> None:
        self.state_dir, self.intent, self.name, self.ch = state_dir, intent, name, ch
        self.msg, self.remote, self.mark = msg, remote, mark


def choices(
    rec: Record, limits: Limits, msg: dict[str, Any], content: str
) -> list[tuple[str, str, dict[str, str] | None]]:
    """The alert's body becomes the request as a surface with these `limits` shows it, and its
    buttons the ones that rule allows: Allow (or a question's options) only when that body holds
    all of it."""
    from lookout.remote import answers, shown

    url = msg["intent"].get("url") if isinstance(msg.get("intent"), dict) else None
    seen = shown.view(
        rec, limits, title=msg["title"], content=content, url=url if isinstance(url, str) else None
    )
    msg["body"] = seen["text"]
    return [c for c in answers.choices(rec) if seen["allow"] or c[1] == "deny"]
