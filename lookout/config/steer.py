"""`[steer]` in the user's config.toml: whether lookout may type into sessions, start them, and
where (issue 33). Off unless the user's own file turns it on: a repository's
`.claude/lookout.toml` is text the user did not write, so it may never enable it, add a project
or an agent. Pure apart from reading that one file; stdlib only."""

from __future__ import annotations

import os
from dataclasses import dataclass

from lookout import paths
from lookout.config.check import Checker
from lookout.config.files import read_toml
from lookout.words import STEER_AGENTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.config.check import KeyPath

AGENTS = STEER_AGENTS
DEFAULTS: dict[str, Any] = {
    "enabled": False,
    "projects": ["~/src/*"],
    "agents": ["claude"],
    "max_chars": 4000,
    "per_minute": 20,
    "max_age_s": 120,
}
KEYS = tuple(DEFAULTS)
MAX_CHARS_RANGE = (1, 100_000)
PER_MINUTE_RANGE = (1, 600)
MAX_AGE_RANGE = (10, 86_400)
_STEER: KeyPath = ("steer",)
ESCAPE_HINT = "name it by its own path in [steer] projects if you mean it, or remove the link"
HOW_TO_ENABLE = "add `[steer]` with `enabled = true` to your config (docs/steer.md)"


@dataclass(frozen=True)
class SteerConfig:
    enabled: bool
    projects: tuple[str, ...]  # globs as written (~ allowed)
    agents: tuple[str, ...]
    max_chars: int
    per_minute: int  # say/interrupt/start per surface per minute
    source: str  # the file it came from, as shown
    configured: bool = True  # False: no [steer] table in the user's config (the defaults)
    # The oldest a Telegram message may be when the poller reads it (T3: the Bot API keeps a
    # message a day; one sent while no poller ran must not be typed hours later).
    max_age_s: int = DEFAULTS["max_age_s"]

    def project_dirs(self) -> list[str]:
        """Every existing directory the globs name, resolved through symlinks, sorted."""
        import glob  # not for a hook that only asks whether steering is on

        found: set[str] = set()
        for pattern in self.projects:
            for match in glob.glob(os.path.expanduser(pattern)):
                if os.path.isdir(match):
                    found.add(os.path.realpath(match))
        return sorted(found)

    def escapes(self) -> list[str]:
        """Each glob match that resolves outside the glob's directory (`~/src/link`, a symlink
        to /x/evil, under `~/src/*`): allowed, as project_dirs resolves it, but said
        (check-config, doctor), since one link there opens a directory anywhere. A path
        written without a wildcard names what it names: nothing to say."""
        import glob

        out = []
        for pattern in self.projects:
            base = _fixed_dir(os.path.expanduser(pattern))
            if base is None:
                continue
            inside = os.path.realpath(base)
            for match in sorted(glob.glob(os.path.expanduser(pattern))):
                real = os.path.realpath(match)
                if not os.path.isdir(real) or os.path.commonpath([real, inside]) == inside:
                    continue
                how = (
                    "is a symlink to" if os.path.islink(match) else "resolves through a symlink to"
                )
                out.append(
                    f"{paths.tilde(match)} {how} {paths.tilde(real)}, outside"
                    f" {paths.tilde(base)}: allowed (start runs sessions there)"
                )
        return out


def _fixed_dir(pattern: str) -> str | None:
    """The directory a glob's matches lie under (its leading components without a wildcard);
    None for a path without one."""
    import glob

    if not glob.has_magic(pattern):
        return None
    fixed: list[str] = []
    for part in pattern.split("/"):
        if glob.has_magic(part):
            break
        fixed.append(part)
    return "/".join(fixed) or "/"


def default(source: str = "default") -> SteerConfig:
    return SteerConfig(
        False,
        tuple(DEFAULTS["projects"]),
        tuple(DEFAULTS["agents"]),
        DEFAULTS["max_chars"],
        DEFAULTS["per_minute"],
        source,
        configured=False,
    )


def load(path: str | None = None) -> SteerConfig:
    """The validated `[steer]` of the user's own config file (the defaults, off, without one).
    Raises ConfigError listing every problem."""
    gpath = path or paths.config_path()
    if not os.path.exists(gpath):
        return default(f"{paths.tilde(gpath)} (not found)")
    raw = read_toml(gpath)
    if "steer" not in raw:
        return default(paths.tilde(gpath))
    return validate(raw["steer"], paths.tilde(gpath))


def validate(raw: object, name: str = "config.toml") -> SteerConfig:
    c = Checker(name)
    if not c.expect(_STEER, raw, dict, "a table ([steer])"):
        c.done()
    assert isinstance(raw, dict)
    c.unknown_keys(_STEER, raw, KEYS)
    enabled = c.get(_STEER, raw, "enabled", bool, "true or false")
    projects = DEFAULTS["projects"]
    if "projects" in raw:
        projects = c.string_list((*_STEER, "projects"), raw["projects"])
        for i, pattern in enumerate(projects):
            if not (pattern.startswith(("/", "~/")) or pattern == "~"):
                c.error(
                    (*_STEER, "projects", i),
                    f"expected an absolute path or glob (/... or ~/...), got {pattern!r}",
                )
    agents = DEFAULTS["agents"]
    if "agents" in raw:
        agents = c.string_list((*_STEER, "agents"), raw["agents"], allowed=AGENTS)
    max_chars = _whole(c, raw, "max_chars", MAX_CHARS_RANGE)
    per_minute = _whole(c, raw, "per_minute", PER_MINUTE_RANGE)
    max_age_s = _whole(c, raw, "max_age_s", MAX_AGE_RANGE)
    c.done()
    return SteerConfig(
        bool(enabled) if enabled is not None else False,
        tuple(projects),
        tuple(agents),
        max_chars,
        per_minute,
        name,
        max_age_s=max_age_s,
    )


def _whole(c: Checker, raw: dict[str, Any], key: str, bounds: tuple[int, int]) -> int:
    value = c.get(_STEER, raw, key, int, "a whole number")
    if value is None:
        return int(DEFAULTS[key])
    low, high = bounds
    if not low <= value <= high:
        c.error((*_STEER, key), f"expected {low} to {high}, got {value}")
        return int(DEFAULTS[key])
    return int(value)


def describe(cfg: SteerConfig) -> str:
    """One line for check-config and doctor."""
    if not cfg.enabled:
        return f"steer: off (`lookout say`, `interrupt` and `start` refuse); {HOW_TO_ENABLE}"
    dirs = cfg.project_dirs()
    return (
        f"steer: on (say, interrupt, start; up to {cfg.max_chars} characters, {cfg.per_minute}"
        f" per minute per surface; Telegram messages up to {cfg.max_age_s} s old);"
        f" start: agents {', '.join(cfg.agents) or 'none'},"
        f" {len(dirs)} project director{'y' if len(dirs) == 1 else 'ies'}"
        f" ({', '.join(cfg.projects) or 'none'})"
    )
