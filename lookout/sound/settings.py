"""The sound channel's keys, their defaults and their checks: what config validation asks,
which may run in a hook (a config cache miss), so only pure, light modules are imported here.

`type = "sound"` plays a CESP 1.0 pack: `pack` (a name in ~/.openpeon/packs/, or a path;
default: lookout's own tones), `volume` (0.0-1.0), `categories` (the ones that play)."""

from __future__ import annotations

from lookout.sound.categories import CATEGORIES, PLAYED
from lookout.sound.manifest import is_pack_name, shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypedDict

    from lookout.config.check import Checker, KeyPath

    class SoundChannel(TypedDict):
        type: str  # "sound"
        enabled: bool
        timeout_ms: int
        content: str  # a sound shows no text: kept for the common keys' sake
        pack: str | None  # None: lookout's own pack
        volume: float
        categories: list[str]


TYPE = "sound"
KEYS = ("pack", "volume", "categories")
TIMEOUT_MS = 10_000  # the player's deadline: a sound is a few seconds at most
VOLUME = 1.0


def spec_problem(spec: str) -> str | None:
    """Why a `pack` setting can name no pack, before the disk is asked."""
    if is_pack_name(spec) or spec.startswith("/") or spec == "~" or spec.startswith("~/"):
        return None
    return (
        "expected a pack name in ~/.openpeon/packs/ (a-z, 0-9, '_' and '-') or a path"
        f" (/... or ~/...), got {shown(spec)}"
    )


def check(c: Checker, path: KeyPath, raw: dict[str, Any], ch: dict[str, Any]) -> None:
    """The sound keys of [channels.<name>] into `ch`; problems to `c` as `file: key: ...`.
    Never reads the pack (the hook path validates configs): check_pack does."""
    pack = c.get(path, raw, "pack", str, "a string")
    if pack is not None and (why := spec_problem(pack)) is not None:
        c.error((*path, "pack"), why)
    ch["pack"] = pack
    ch["volume"] = VOLUME
    if "volume" in raw and c.expect((*path, "volume"), raw["volume"], (int, float), "a number"):
        if 0 <= raw["volume"] <= 1:
            ch["volume"] = float(raw["volume"])
        else:
            c.error((*path, "volume"), f"expected a number from 0.0 to 1.0, got {raw['volume']:g}")
    ch["categories"] = list(PLAYED)
    if "categories" in raw:
        ch["categories"] = c.string_list((*path, "categories"), raw["categories"], CATEGORIES)
