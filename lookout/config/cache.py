"""The hook's view of the config: validated, without secrets, re-parsed only when a config file
changed. The only part of lookout.config a hook imports; parsing and validation load lazily, and
a notifying hook loads no `os` (~1 ms): files go through `posix`."""

from __future__ import annotations

import posix
import sys

from lookout import paths, words
from lookout.config.trust import project_path, trust_path
from lookout.errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.shapes import Config

_CACHE_VERSION = words.CONFIG_CACHE_VERSION
_CACHE_ENTRIES = 16


def _stamp(path: str | None) -> list[object]:
    if path is None:
        return [None]
    try:
        st = posix.stat(path)
    except OSError:
        return [path, None]
    return [path, st.st_mtime_ns, st.st_size, st.st_ino]


def public(cfg: Config) -> Config:
    """The config without anything that can hold a secret (what the hook caches): each channel
    without its type's SECRETS. Runs where the config was just validated, which loaded the
    types already."""
    from lookout.channels.registry import CHANNELS

    channels: dict[str, Any] = {
        name: {k: v for k, v in ch.items() if k not in CHANNELS[ch["type"]].SECRETS}
        for name, ch in cfg["channels"].items()
    }
    return {**cfg, "channels": channels}


def load_cached(state_dir: str, cwd: str | None) -> Config | None:
    """The hook's view: the validated config without secrets, re-parsed only when a config file
    changed. A broken config returns None and is logged to errors.log once per change.
    One entry per project file in use, so sessions in different projects do not thrash it."""
    from lookout import store

    gpath = paths.config_path()
    key, ppath, entries, entry = _lookup(state_dir, cwd, gpath)
    if entry is not None:
        cfg = entry.get("config")
        # Written by this function from a validated config (the key pins the version).
        return cfg if isinstance(cfg, dict) else None  # type: ignore[return-value]
    from lookout.config.files import load  # only when a config file changed

    cache_file = paths.join(state_dir, store.CONFIG_CACHE)
    new: dict[str, Any] = {"key": key, "project": ppath, "config": None, "error": None}
    try:
        new["config"] = public(load(cwd, gpath))
    except ConfigError as exc:
        new["error"] = str(exc)
        store.log_error(
            state_dir, f"config error (notifications are off until it is fixed):\n{exc}"
        )
    # An older entry for the same project file is dead: its files changed.
    kept = [e for e in entries if isinstance(e, dict) and e.get("project") != ppath]
    store.ensure_dir(state_dir)
    store.write_json_atomic(cache_file, {"entries": [*kept[-(_CACHE_ENTRIES - 1) :], new]})
    if ppath is None:  # the user's own file alone: what the Telegram poller reads
        _mark_poller(state_dir, gpath, new["config"])
    cfg = new["config"]
    return cfg if isinstance(cfg, dict) else None  # type: ignore[return-value]


def poller_wanted(state_dir: str) -> bool:
    """Whether the Telegram poller is wanted (store.TELEGRAM_WANTED), the user's file read again
    (and the mark set) when it changed since the cache last read it; writes no cache entry (a
    command such as `lookout doctor` changes nothing it need not)."""
    from lookout import store

    gpath = paths.config_path()
    if _lookup(state_dir, None, gpath)[3] is None:
        from lookout.config.files import load

        try:
            cfg: Config | None = public(load(None, gpath))
        except ConfigError:
            cfg = None
        _mark_poller(state_dir, gpath, cfg)
    try:
        posix.stat(paths.join(state_dir, store.TELEGRAM_WANTED))
    except OSError:
        return False
    return True


def _mark_poller(state_dir: str, gpath: str, cfg: Config | None) -> None:
    """Say whether the Telegram poller is wanted (an enabled Telegram channel in the user's own
    file and [steer] on, or this host the fleet's hub: every host's buttons come to it; never on
    a host that is not the hub), for the hooks: store.TELEGRAM_WANTED (lookout.runner._poller)."""
    from lookout import store
    from lookout.channels.registry import of
    from lookout.config import steer

    try:
        on = steer.load(gpath).enabled
    except (ConfigError, OSError):
        on = False
    channels = cfg["channels"].values() if cfg is not None else ()
    # A plug-in channel type may not say (STEERS): it steers nothing.
    wanted = any(ch["enabled"] and getattr(of(ch), "STEERS", False) for ch in channels)
    if wanted:
        host, hub = fleet_hub(gpath)  # only when the config changed, never per hook
        wanted = (on and not hub) or (bool(hub) and hub == host)
    store.mark(paths.join(state_dir, store.TELEGRAM_WANTED), wanted)


def fleet_hub(gpath: str | None = None) -> tuple[str, str]:
    """(this host, the hub) as the user's own [fleet] names them (issue 42); ("", "") with no
    [fleet] or an unreadable file, the hub "" when none is named. Read from the table itself, so
    a [fleet] the broker's checks refuse still keeps a host that is not the hub off a shared bot
    (no 409 against the hub's poller): only the hub listens (lookout.surfaces.listener)."""
    from lookout.config.files import read_toml

    path = gpath or paths.config_path()
    try:
        table = read_toml(path).get("fleet") if posix.access(path, posix.F_OK) else None
    except (ConfigError, OSError):
        return "", ""
    if not isinstance(table, dict):
        return "", ""
    hub, host = table.get("hub"), table.get("host")
    if not isinstance(hub, str) or not hub:  # no hub: this host's name does not matter here
        return (host if isinstance(host, str) else ""), ""
    if not isinstance(host, str) or not host:
        from lookout.config.fleet import default_host

        host = default_host()
    return host, hub


def _lookup(
    state_dir: str, cwd: str | None, gpath: str
) -> tuple[str, str | None, list[Any], dict[str, Any] | None]:
    """(key of the config files as they are now, the project file, the cache's entries, the
    entry for that key or None)."""
    from lookout import _jsonfast, store

    ppath = project_path(cwd)
    # The trust file counts only for a project file, but stat()ing it always keeps this simple.
    stamps = [_stamp(gpath), _stamp(ppath), _stamp(trust_path() if ppath else None)]
    key = _jsonfast.dumps([_CACHE_VERSION, sys.version_info[:2], *stamps])
    cached = store.read_json(paths.join(state_dir, store.CONFIG_CACHE))
    entries = cached.get("entries") if isinstance(cached, dict) else None
    entries = entries if isinstance(entries, list) else []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("key") == key:
            return key, ppath, entries, entry
    return key, ppath, entries, None


def known_error(state_dir: str, cwd: str | None) -> tuple[bool, str | None]:
    """What load_cached found for a session in `cwd`, the config files being as they are now:
    (True, its error or None) when the cache says, (False, None) when only a parse can tell.
    Reads only: lets a status line say "config error" without parsing TOML."""
    entry = _lookup(state_dir, cwd, paths.config_path())[3]
    if entry is None:
        return False, None
    error = entry.get("error")
    if isinstance(error, str):
        return True, error
    return (True, None) if isinstance(entry.get("config"), dict) else (False, None)
