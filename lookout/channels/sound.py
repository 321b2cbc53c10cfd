"""A sound: a short sound played on this machine from a CESP 1.0 sound pack (lookout/sound/), a
different one for "needs you" than for "done". Loud: a rule's quiet hours mute it for every kind.
Local, no buttons, no Focus, nothing to replace or withdraw (a sound that played is over).

Its keys and their checks are lookout/sound/settings.py's (pure: the only part a hook's config
check loads); playing, the pack's check and doctor's line load lookout/sound/channel.py, which
runs the player, only when they are asked for."""

from __future__ import annotations

from lookout.channels import base
from lookout.sound import settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.channels.base import Doctor, Finding, Message, Option, Outcome
    from lookout.config.check import Checker, KeyPath
    from lookout.shapes import Channel

    class Sound(Channel):
        pack: str | None  # a name in ~/.openpeon/packs/ or a path; None: lookout's own tones
        volume: float  # 0.0-1.0, where the player takes one
        categories: list[str]  # the CESP categories that play


def categories_arg(text: str) -> list[str]:
    """`--categories input.required,task.error` (checked with the rest of the table)."""
    return [part.strip() for part in text.split(",") if part.strip()]


NAME = settings.TYPE
KEYS = settings.KEYS
SECRETS = ()
TIMEOUT_MS = settings.TIMEOUT_MS
REMOTE = False
UPDATABLE = False
LOUD = True
ANSWERS = None
FOCUS = False
OPTIONS: tuple[Option, ...] = (
    {"flag": "--pack", "key": "pack", "metavar": "NAME|PATH",
     "help": "a CESP pack: a name in ~/.openpeon/packs/ or a path (default: lookout's own tones)"},
    {"flag": "--volume", "key": "volume", "type": float, "metavar": "0.0-1.0",
     "help": "how loud (default 1.0)"},
    {"flag": "--categories", "key": "categories", "type": categories_arg,
     "metavar": "CATEGORY,...", "help": "the CESP categories that play (default: all six lookout"
     " maps a kind to)"},
)  # fmt: skip
EXAMPLE = "lookout channel add speaker --type sound --pack peon --volume 0.6"
# What only your own config may set (trust rule 6), with why.
PROJECT_REFUSES = {
    "type": "add a sound channel (a repository never chooses what this machine plays)",
    "pack": "choose a sound pack (a repository never chooses a file lookout opens)",
}

replace = base.cannot_replace
withdraw = base.cannot_withdraw
add_buttons = base.cannot_add_buttons


def check(c: Checker, path: KeyPath, raw: dict[str, Any], ch: dict[str, Any]) -> None:
    """The keys (settings.check), and what only your own config may say: a repository's
    .claude/lookout.toml never adds a sound channel nor chooses its pack (a file lookout opens
    and hands to a player), even when trusted."""
    for key, what in PROJECT_REFUSES.items():
        if c.over_name and key in raw and c.origin((*path, key)) == c.over_name:
            c.error(
                (*path, key),
                f"a project file may not {what}: define the channel in your own config (a"
                " project's rules may name it)",
            )
    settings.check(c, path, raw, ch)


def send(ch: Sound, msg: Message, timeout_s: float) -> Outcome:
    """The sound for msg's kind (msg["test"]: the channel's first category, never debounced)."""
    from lookout.sound import channel

    return channel.send(ch, msg, timeout_s)


def inspect(c: Checker, path: KeyPath, ch: Sound) -> None:
    """check-config reads the pack: each problem an error on `channels.NAME.pack`. A disabled
    channel plays nothing: its pack is read once it is on (the example config names one)."""
    from lookout.sound import channel

    if not ch["enabled"]:
        return
    channel.check_pack(c, path, ch)


def warnings(name: str, ch: Sound, answers: bool) -> list[str]:
    """No player here: every sound would fail (doctor says what to install)."""
    from lookout.platform import current

    found, detail = current.get().sound_status()
    return [] if found else [f"channels.{name}: {detail}"]


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    """Each sound channel's player and pack; none found: a warning saying what to install."""
    from lookout.sound import channel

    out: list[Finding] = []
    for name, ch in used.items():
        fine, detail, hint = channel.doctor(ch)
        out.append((name, base.OK if fine else base.WARN, detail, hint))
    return out
