"""The sound channel's parts, for its plug-in module (lookout/channels/sound.py) to call: the
pack's check for check-config and doctor, the send, doctor's line. Its keys and their checks,
which config validation runs (in a hook too, on a cache miss), are settings.py's."""

from __future__ import annotations

from pathlib import Path

from lookout import paths, words
from lookout.sound import default
from lookout.sound.categories import category_for
from lookout.sound.debounce import WINDOW_MS, Debounce
from lookout.sound.pack import PackError, load_pack, pick_sound
from lookout.sound.play import find_player, play
from lookout.sound.settings import spec_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    import random
    from collections.abc import Mapping
    from typing import Any

    from lookout.config.check import Checker, KeyPath
    from lookout.platform.base import SoundPlayer
    from lookout.sound.pack import Pack, Sound

    Outcome = tuple[str, str, str | None]


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


def doctor(ch: Mapping[str, Any]) -> tuple[bool, str, str | None]:
    """(fine, what doctor says, a hint): the player found here, and the pack's state."""
    from lookout.platform import current

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
    msg: dict[str, Any],
    timeout_s: float,
    state_dir: str | None = None,
    now_ms: int | None = None,
    rng: random.Random | None = None,
) -> Outcome:
    """Play the sound for `msg` (its kind, its intent): a category, the pack, the debounce,
    the player. `msg["test"]` (lookout test): the first category it plays, not debounced."""
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


def _category(ch: Mapping[str, Any], msg: dict[str, Any]) -> tuple[str, str | None]:
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
    result, detail, _ = play(sound["path"], ch["volume"], player, timeout_s)
    volume = f"volume {ch['volume']:g}" if player.volume else "no volume control"
    return result, f"{category}: {sound['file']} of pack {pack['name']}, {detail} ({volume})", None
