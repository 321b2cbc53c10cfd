"""Finding, reading and merging the config files: the user's config.toml (or the embedded
default), then a project's `.claude/lookout.toml` over it when it applies; `validate` checks the
whole table, one section module each. Reads only."""

from __future__ import annotations

import os

from lookout import paths
from lookout.config.trust import needs_trust, trust_path, trusted_hash
from lookout.config.trust import project_path as project_path  # its home: trust (no os)
from lookout.errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from lookout.shapes import Config


class ProjectFile:
    """A project file as found: its bytes' hash, its table, and whether it applies."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.data: dict[str, Any] = {}
        self.sha256 = ""
        self.adds: list[str] = []  # what it sets beyond narrowing (needs `lookout trust`)
        self.trusted = False
        self.ignored: str | None = None  # why it does not apply, or None


def _foreign(st: os.stat_result, what: str) -> str | None:
    """Why a file (or its directory) in a project may have been written by someone else."""
    if st.st_uid != os.geteuid():
        return f"{what} is owned by uid {st.st_uid}, not by you"
    if st.st_mode & 0o002:
        return f"{what} is writable by every user"
    if st.st_mode & 0o020 and st.st_gid != os.getegid():
        return f"{what} is writable by group {st.st_gid}"
    return None


def read_project(path: str, user_channels: dict[str, Any], trust_file: str | None) -> ProjectFile:
    """Read, hash and judge one project file. Raises ConfigError only for a file that would
    apply but cannot be parsed."""
    import hashlib

    pf = ProjectFile(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ConfigError([f"{paths.tilde(path)}: cannot read: {exc.strerror}"]) from None
    with os.fdopen(fd, "rb") as f:
        why = _foreign(os.fstat(fd), "the file") or _foreign(
            os.stat(os.path.dirname(path)), "its directory"
        )
        if why is not None:
            pf.ignored = why
            return pf
        raw = f.read()
    pf.sha256 = hashlib.sha256(raw).hexdigest()
    pf.data = parse_toml(raw, path)
    from lookout import programs  # N2: what a project file's command channel may run

    refused = programs.project_errors(pf.data, path, paths.tilde(path))
    if refused:
        raise ConfigError(refused)
    pf.adds = needs_trust(pf.data, user_channels)
    if pf.adds:
        pf.trusted = trusted_hash(trust_file, path) == pf.sha256
        if not pf.trusted:
            changed = trusted_hash(trust_file, path) is not None
            first = pf.adds[0] + (f" (and {len(pf.adds) - 1} more)" if len(pf.adds) > 1 else "")
            pf.ignored = (
                f"{'changed since you trusted it' if changed else 'not trusted'}; it sets {first}"
            )
    return pf


def parse_toml(raw: bytes, path: str) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{paths.tilde(path)}: invalid TOML: {exc}"]) from None
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{paths.tilde(path)}: not UTF-8 text (byte {exc.start})"]) from None
    except RecursionError:
        raise ConfigError([f"{paths.tilde(path)}: nested too deeply to be a config"]) from None


def read_toml(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ConfigError([f"{paths.tilde(path)}: cannot read: {exc.strerror}"]) from None
    return parse_toml(raw, path)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    # Tables merge key by key; anything else (arrays such as [[rules]] included) replaces.
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _user_table(gpath: str) -> tuple[dict[str, Any], str]:
    """The user's config file and its name in messages, or the embedded default without one."""
    if os.path.exists(gpath):
        return read_toml(gpath), paths.tilde(gpath)
    from lookout.config.notify import DEFAULT_RAW

    return DEFAULT_RAW, "default config"


def resolve(
    cwd: str | None = None,
    path: str | None = None,
    trust_file: str | None = None,
    deep: bool = False,
) -> tuple[Config, ProjectFile | None]:
    """The validated config for a session in `cwd` (global file or the embedded default, then
    the project file over it when it applies), and the project file as judged. Raises
    ConfigError listing every problem found (`deep`: also in what the channels name, such as a
    sound pack: `lookout check-config`)."""
    gpath = path or paths.config_path()
    base, base_name = _user_table(gpath)
    ppath = project_path(cwd)
    pf: ProjectFile | None = None
    over: dict[str, Any] = {}
    over_name = ""
    if ppath is not None:
        user_channels = base.get("channels")
        pf = read_project(
            ppath,
            user_channels if isinstance(user_channels, dict) else {},
            trust_path() if trust_file is None else trust_file,
        )
        if pf.ignored is None:
            over, over_name = pf.data, paths.tilde(ppath)
    return validate(_merge(base, over), base_name, over, over_name, deep), pf


def project_file(cwd: str | None) -> ProjectFile | None:
    """The project file a session in `cwd` meets, as judged (None: none, or unreadable)."""
    ppath = project_path(cwd)
    if ppath is None:
        return None
    try:
        return project_file_strict(ppath)
    except ConfigError:
        return None  # a broken file is a config error, reported as such


def project_file_strict(ppath: str) -> ProjectFile:
    """The project file at `ppath` as judged against the user's config; when it would apply
    (or be trusted), the merged config must validate. Raises ConfigError."""
    gpath = paths.config_path()
    base = _user_table(gpath)[0]
    channels = base.get("channels")
    pf = read_project(ppath, channels if isinstance(channels, dict) else {}, trust_path())
    if pf.data:
        validate(_merge(base, pf.data), paths.tilde(gpath), pf.data, paths.tilde(ppath))
    return pf


def load(cwd: str | None = None, path: str | None = None) -> Config:
    """The validated config for a session in `cwd`: see resolve()."""
    return resolve(cwd, path)[0]


def validate(
    raw: dict[str, Any],
    base_name: str = "config.toml",
    over: dict[str, Any] | None = None,
    over_name: str = "",
    deep: bool = False,
) -> Config:
    """The whole file, section by section, every problem in one ConfigError."""
    from lookout.config import notify, remote, sessions
    from lookout.config.check import Checker  # only to check: a reader of the cache never does

    c = Checker(base_name, over, over_name)
    # [fleet] and [steer] are checked by lookout.config.fleet and .steer (a broken one must not
    # silence notifications).
    known = ("channels", "rules", "templates", "fleet", "remote", "sessions", "steer")
    c.unknown_keys((), raw, known)
    if "fleet" in c.over:
        c.error(("fleet",), "only your own config file may name a broker (not a project file)")
    if "steer" in c.over:
        c.error(
            ("steer",),
            "is read only from your own config file, never from a project's (a repository must"
            " not turn on typing into your sessions or starting them)",
        )
    channels, names = notify.check_channels(c, raw.get("channels", {}), deep)
    rules = notify.check_rules(c, raw.get("rules", []), names)
    tmpl = notify.check_templates(c, raw.get("templates", {}))
    remote_cfg = remote.check_remote(c, raw.get("remote", {}))
    sessions_cfg = sessions.check_sessions(c, raw.get("sessions", {}))
    c.done()
    out: Config = {
        "channels": channels,
        "rules": rules,
        "templates": tmpl,
        "remote": remote_cfg,
        "sessions": sessions_cfg,
    }
    host = _fleet_host(raw.get("fleet"))
    if host:
        out["host"] = host
    return out


def _fleet_host(raw: object) -> str | None:
    """This host's name on the bus when [fleet] is set up (alerts then say which host they come
    from); its checks are lookout.config.fleet's, so a malformed name is left out here."""
    if not isinstance(raw, dict):
        return None
    host = raw.get("host")
    if host is None:
        from lookout import net  # only when the config changed: the hooks read the cache

        # os.uname() is gethostname() without loading socket on a hook's path.
        return net.host_name(os.uname().nodename.strip())
    return host if isinstance(host, str) and 0 < len(host) <= 63 and host.isprintable() else None
