"""Apprise (the optional `apprise` package, installed into lookout's environment): one message to
every service URL it is given (Slack, Discord, Matrix, Pushover, e-mail, ...). Leaves the
machine."""

from __future__ import annotations

from lookout.channels import base

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.channels.base import Doctor, Finding, Message, Option, Outcome
    from lookout.config.check import Checker, KeyPath
    from lookout.shapes import Channel

    class Apprise(Channel):
        urls: list[str]  # Apprise service URLs: each holds its service's secret


NAME = "apprise"
KEYS = ("urls",)
SECRETS = ("urls",)
TIMEOUT_MS = 20000
REMOTE = True
UPDATABLE = False
LOUD = False
ANSWERS = None
STEERS = False
FOCUS = False
OPTIONS: tuple[Option, ...] = ({"flag": "--url", "key": "urls", "help": "a URL", "many": True},)
EXAMPLE = "lookout channel add chat --type apprise --url 'matrixs://user:token@matrix.org/#room'"
MISSING = (
    "the optional 'apprise' package is not installed"
    " (pip install apprise into lookout's environment)"
)

replace = base.cannot_replace
withdraw = base.cannot_withdraw
add_buttons = base.cannot_add_buttons
inspect = base.nothing_to_inspect


def check(c: Checker, path: KeyPath, raw: dict[str, Any], ch: Apprise) -> None:
    ch["urls"] = base.required_strings(c, path, raw, "urls", "Apprise service URLs")


def installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("apprise") is not None


def send(ch: Apprise, msg: Message, timeout_s: float) -> Outcome:
    try:
        import apprise  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise base.ChannelError(MISSING) from None
    ap = apprise.Apprise()
    for url in ch["urls"]:
        if not ap.add(url):
            raise base.ChannelError(f"apprise does not understand {base.redact_url(url)}")
    if not ap.notify(title=msg["title"], body=msg["body"] or msg["title"]):
        raise base.ChannelError("apprise reported a failure")
    return "sent", f"apprise ({len(ch['urls'])} url(s))", None


def warnings(name: str, ch: Apprise, answers: bool) -> list[str]:
    return base.env_warnings(name, ch, answers) + (
        [] if installed() else [f"channels.{name}: {MISSING}"]
    )


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    if installed():
        return [(name, base.OK, "apprise is installed", None) for name in used]
    hint = "pip install apprise into lookout's environment"
    return [(name, base.WARN, "the apprise package is not installed", hint) for name in used]
