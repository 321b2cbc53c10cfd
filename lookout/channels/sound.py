"""A sound: a short sound played on this machine from a CESP 1.0 sound pack (lookout/sound/, the
pure library this plug-in stands on), a different one for "needs you" than for "done". Loud: a
rule's quiet hours mute it for every kind. Local, no buttons, no Focus, nothing to replace or
withdraw (a sound that played is over).

`type = "sound"`: `pack` (a name in ~/.openpeon/packs/, or a path; default: lookout's own tones),
`volume` (0.0-1.0), `categories` (the ones that play). Its keys' checks run in a hook too (a
config cache miss), so only pure, light modules are imported at the top; playing, the pack's
check and doctor's line import the pack reader, the debounce store and the player inside their
functions, when they are asked for."""

from __future__ import annotations

from lookout import paths, words
from lookout.channels import base
from lookout.sound.categories import CATEGORIES, PLAYED, category_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    import random
    from collections.abc import Mapping
    from typing import Any

    from lookout.channels.base import Doctor, Finding, Message, Option, Outcome
    from lookout.config.check import Checker, KeyPath
    from lookout.platform.base import SoundPlayer
    from lookout.shapes import Channel
    from lookout.sound.pack import Pack, Sound

    class SoundChannel(Channel):
        pack: str | None  # a name in ~/.openpeon/packs/ or a path; None: lookout's own tones
        volume: float  # 0.0-1.0, where the player takes one
        categories: list[str]  # the CESP categories that play


NAME = "sound"
KEYS = ("pack", "volume", "categories")
SECRETS = ()
TIMEOUT_MS = 10_000  # the player's deadline: a sound is a few seconds at most
VOLUME = 1.0
REMOTE = False
UPDATABLE = False
LOUD = True
ANSWERS = None
STEERS = False
FOCUS = False


def categories_arg(text: str) -> list[str]:
    """`--categories input.required,task.error` (checked with the rest of the table)."""
    return [part.strip() for part in text.split(",") if part.strip()]


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
    """The keys (check_keys), and what only your own config may say: a repository's
    .claude/lookout.toml never adds a sound channel nor chooses its pack (a file lookout opens
    and hands to a player), even when trusted."""
    for key, what in PROJECT_REFUSES.items():
        if c.over_name and key in raw and c.origin((*path, key)) == c.over_name:
            c.error(
                (*path, key),
                f"a project file may not {what}: define the channel in your own config (a"
                " project's rules may name it)",
            )
    check_keys(c, path, raw, ch)


def check_keys(c: Checker, path: KeyPath, raw: dict[str, Any], ch: dict[str, Any]) -> None:
    """The sound keys of [channels.<name>] into `ch`; problems to `c` as `file: key: ...`.
    Never reads the pack (the hook path validates configs): check_pack does."""
    from lookout.sound.pack import spec_problem

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


def inspect(c: Checker, path: KeyPath, ch: SoundChannel) -> None:
    """check-config reads the pack: each problem an error on `channels.NAME.pack`. A disabled
    channel plays nothing: its pack is read once it is on (the example config names one)."""
    if not ch["enabled"]:
        return
    check_pack(c, path, ch)


def warnings(name: str, ch: SoundChannel, answers: bool) -> list[str]:
    """No player here: every sound would fail (doctor says what to install)."""
    from lookout.platform import current

    found, detail = current.get().sound_status()
    return [] if found else [f"channels.{name}: {detail}"]


def doctor(used: dict[str, Any], ctx: Doctor) -> list[Finding]:
    """Each sound channel's player and pack; none found: a warning saying what to install."""
    out: list[Finding] = []
    for name, ch in used.items():
        fine, detail, hint = doctor_line(ch)
        out.append((name, base.OK if fine else base.WARN, detail, hint))
    return out


# What a platform's doctor line adds when no player is found.
INSTALL_HINTS = {
    "linux": "install one: apt install pipewire-bin (pw-play), pulseaudio-utils (paplay) or"
    " alsa-utils (aplay)",
    "macos": "afplay ships with macOS: put /usr/bin on the PATH the hooks run with",
    "wsl": "turn WSL interop on (powershell.exe) or use WSLg (its PulseAudio server)",
}


def pack_problems(ch: Mapping[str, Any]) -> list[str]:
    """What is wrong with the channel's pack on disk ([] when it plays): check-config and doctor
    ask it. lookout's own pack is made on demand and always plays."""
    from lookout.sound.pack import PackError, load_pack, spec_problem

    spec = ch.get("pack")
    if not isinstance(spec, str) or spec_problem(spec) is not None:
        return []
    try:
        load_pack(spec)
    except PackError as exc:
        return exc.problems
    return []


def check_pack(c: Checker, path: KeyPath, ch: Mapping[str, Any]) -> None:
    """check-config's look at the pack: each problem as `file: channels.NAME.pack: ...`."""
    for problem in pack_problems(ch):
        c.error((*path, "pack"), problem)


def doctor_line(ch: Mapping[str, Any]) -> tuple[bool, str, str | None]:
    """(fine, what doctor says, a hint): the player found here, and the pack's state."""
    from lookout.platform import current
    from lookout.sound import default

    platform = current.get()
    found, detail = platform.sound_status()
    if not found:
        return False, detail, INSTALL_HINTS.get(platform.name)
    problems = pack_problems(ch)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return False, f"pack: {problems[0]}{more}", "lookout check-config lists every problem"
    which = ch.get("pack") or f"lookout's own ({default.NAME})"
    return True, f"{detail}; pack {which}", None


def send(
    ch: Mapping[str, Any],
    msg: Message | dict[str, Any],
    timeout_s: float,
    state_dir: str | None = None,
    now_ms: int | None = None,
    rng: random.Random | None = None,
) -> Outcome:
    """Play the sound for `msg` (its kind, its intent): a category, the pack, the debounce,
    the player. `msg["test"]` (lookout test): the first category it plays, not debounced."""
    from lookout.sound.pack import PackError
    from lookout.sound.play import find_player

    test = msg.get("test") is True
    category, why = ("", None) if test else _category(ch, msg)
    if why is not None:
        return "skipped", why, None
    player = find_player()
    if player is None:
        from lookout.platform import current

        return "failed", current.get().sound_status()[1], None
    state = state_dir or paths.state_dir()
    try:
        pack = _pack(ch, state)
        if test:
            category, sound = _first(pack, ch, player, rng)
        else:
            now = words.now_ms() if now_ms is None else now_ms
            sound, why = _claim(state, pack, category, player, now, rng)
    except PackError as exc:
        more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
        return "failed", f"pack: {exc.problems[0]}{more}", None
    except OSError as exc:  # the state directory: unsafe, full, or its lock held too long
        return "failed", f"state directory: {exc}", None
    if why is not None:
        return "skipped", why, None
    return _play(pack, category, sound, ch, player, timeout_s)


def _category(ch: Mapping[str, Any], msg: Message | dict[str, Any]) -> tuple[str, str | None]:
    """(the category `msg` plays, None), or ("", why it plays none)."""
    if msg.get("update"):
        return "", "a sound is not replaced when its episode ends"
    kind = str(msg.get("kind"))
    category = category_for(kind, msg.get("intent") or {})
    if category is None:
        return "", f"no sound for {kind} (it maps to no CESP category)"
    if category not in ch["categories"]:
        return "", f"{category} is not in this channel's categories"
    return category, None


def _first(
    pack: Pack, ch: Mapping[str, Any], player: SoundPlayer, rng: random.Random | None
) -> tuple[str, Sound | None]:
    """`lookout test`'s sound: the channel's first category the pack has a sound for."""
    from lookout.sound.pack import pick_sound

    for category in ch["categories"]:
        sound = pick_sound(pack, category, player.formats, rng=rng)
        if sound is not None:
            return category, sound
    return "", None


def _claim(
    state_dir: str,
    pack: Pack,
    category: str,
    player: SoundPlayer,
    now_ms: int,
    rng: random.Random | None,
) -> tuple[Sound | None, str | None]:
    """Under the debounce store's lock: the sound to play now (recorded as played), or why
    none plays (the window of the last sound still runs)."""
    from lookout.sound.debounce import WINDOW_MS, Debounce
    from lookout.sound.pack import pick_sound

    with Debounce(state_dir) as memo:
        wait = memo.wait_ms(category, now_ms)
        if wait:
            return None, (
                f"debounced: a sound played {WINDOW_MS - wait} ms before (at most one per"
                f" {WINDOW_MS // 1000} s)"
            )
        sound = pick_sound(pack, category, player.formats, memo.last(category), rng)
        if sound is not None:
            memo.played(category, sound["file"], now_ms)
    return sound, None


def _pack(ch: Mapping[str, Any], state_dir: str) -> Pack:
    from pathlib import Path

    from lookout.sound import default
    from lookout.sound.pack import load_pack

    spec = ch.get("pack")
    if isinstance(spec, str):
        return load_pack(spec)
    return load_pack(default.default_pack(Path(state_dir) / default.DIR))


def _play(
    pack: Pack,
    category: str,
    sound: Sound | None,
    ch: Mapping[str, Any],
    player: SoundPlayer,
    timeout_s: float,
) -> Outcome:
    if not category:
        return "skipped", f"pack {pack['name']} has nothing {player.name} plays", None
    if sound is None:
        return (
            "skipped",
            (
                f"pack {pack['name']} has no {category} sound {player.name} plays"
                f" ({', '.join(player.formats)})"
            ),
            None,
        )
    from lookout.sound.play import play

    result, detail, _ = play(sound["path"], ch["volume"], player, timeout_s)
    volume = f"volume {ch['volume']:g}" if player.volume else "no volume control"
    return result, f"{category}: {sound['file']} of pack {pack['name']}, {detail} ({volume})", None
