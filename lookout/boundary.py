"""The one error boundary of every command line (`lookout` and install.py), like pre-commit's
error_handler: a LookoutError prints `error:` + `hint:` (exit 1); Ctrl-C exits 130; a closed pipe
exits 0; anything else goes with its traceback to errors.log and the user gets one line (exit 3).
Never on the hook path, which fails open instead (runner._fail_open)."""

from __future__ import annotations

import os
import stat
import sys

from lookout import paths, store
from lookout.errors import LookoutError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# Text from payloads, paths and servers must never reach a terminal as control characters (an OSC
# 52 sequence in a prompt would set the clipboard): C0, DEL, C1 and the bidi overrides that
# reorder what is shown become visible escapes. `--json` output is exact and never goes through it.
_ESCAPES = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in (
        *range(0x20),
        0x7F,
        *range(0x80, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    )
}
_ESCAPES_KEEP_NEWLINES = {k: v for k, v in _ESCAPES.items() if k != 0x0A}


# Characters that show as nothing, or hide or reorder the text around them, though they are no
# control (the same set as the dashboard's static/remote.js INVISIBLE): format characters
# (zero-width spaces and joiners, bidi marks and isolates, tags, the soft hyphen), line and
# paragraph separators, private use and lone surrogates, the Hangul fillers and the variation
# selectors. What shows a request escapes them; what steering types refuses them.
_INVISIBLE_CATEGORIES = frozenset(("Cf", "Zl", "Zp", "Co", "Cs"))
_INVISIBLE = frozenset((0x115F, 0x1160, 0x3164, 0xFFA0, *range(0xFE00, 0xFE10)))
_INVISIBLE_RANGES = ((0xE0100, 0xE01EF),)


def invisible(ch: str) -> bool:
    """Whether the character `ch` is one of those invisible ones (never a control: `visible`
    escapes those)."""
    o = ord(ch)
    if o < 0xA0:
        return False
    import unicodedata  # only now: most command lines never show a request

    return (
        unicodedata.category(ch) in _INVISIBLE_CATEGORIES
        or o in _INVISIBLE
        or any(a <= o <= b for a, b in _INVISIBLE_RANGES)
    )


def visible(text: object, keep_newlines: bool = False) -> str:
    """`text` safe to print to a terminal: every control character shown as `\\x1b`-style text."""
    return str(text).translate(_ESCAPES_KEEP_NEWLINES if keep_newlines else _ESCAPES)


def unsafe_socket(path: str, what: str) -> str | None:
    """Why lookout may not talk to the Unix socket at `path` (a path another party could have
    chosen: a registry file, a hook's $TMUX), or None: see socket_path; a socket that is not
    there is a reason too."""
    resolved, why = socket_path(path, what)
    if why is None and not os.path.lexists(resolved):
        return f"{what} {path} is not there"
    return why


# How many symlinks one path may go through (Linux's own limit, MAXSYMLINKS).
_MAX_LINKS = 40


def socket_path(path: str, what: str) -> tuple[str, str | None]:
    """(the path to connect to, why lookout may not: None when it may). The path is walked one
    component at a time from `/`, as the kernel does, symlinks followed: every directory on the
    way is owned by this user or root and no one else can write it (unless it is sticky, and then
    what lookout goes through below it is this user's or root's), every symlink is this user's or
    root's, and the last component is a socket (not a symlink to one) of this user's own. The
    path returned has no symlink left in it, so nothing another user can change lies between this
    check and the connect() that uses it. A socket, or a directory, that is not there is checked
    the same way (its directory must be one no one else can write: no one else can make it
    appear) and returned as it would be: the caller's connect says the server is gone."""
    if not os.path.isabs(path):
        return path, f"{what} {path!r} is not an absolute path"
    uid = os.geteuid()
    here, here_st = "/", os.stat("/")
    why = _directory(here, here_st, uid)
    todo = _parts(path)
    links = 0
    while todo and why is None:
        part = todo.pop(0)
        if part == "..":
            here = os.path.dirname(here)  # checked on the way down
            here_st = os.stat(here)
            continue
        entry = os.path.join(here, part)
        try:
            st = os.lstat(entry)
            target = os.readlink(entry) if stat.S_ISLNK(st.st_mode) else ""
        except FileNotFoundError:
            return _missing(f"{what} {path}", here, here_st, entry, todo)
        except OSError as exc:
            return path, f"{what} {path}: {entry} cannot be read ({exc.strerror})"
        why = _entry(here, here_st, entry, st, uid)
        if why is not None:
            break
        if target and not todo:
            return entry, f"{entry} is not a socket"  # the socket itself, never a link to one
        if target:
            links += 1
            if links > _MAX_LINKS:
                return path, f"{what} {path} goes through more than {_MAX_LINKS} symlinks"
            if target.startswith("/"):
                here, here_st = "/", os.stat("/")
            todo = _parts(target) + todo
        elif todo:
            if not stat.S_ISDIR(st.st_mode):
                return path, f"{what} {path}: {entry} is not a directory"
            why = _directory(entry, st, uid)
            here, here_st = entry, st
        else:
            here = entry
            why = _socket(entry, st, uid)
    return here, why


def _parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def _missing(
    what: str, here: str, here_st: os.stat_result, entry: str, todo: list[str]
) -> tuple[str, str | None]:
    """A component that is not there: the server is gone, unless someone else could make it
    appear (its directory is sticky and others can write it)."""
    if here_st.st_mode & 0o022:
        return entry, f"{what}: {entry} is not there, and others can write {here}"
    return os.path.join(entry, *todo), None


def _directory(directory: str, st: os.stat_result, uid: int) -> str | None:
    if st.st_uid not in (uid, 0):
        return f"{directory} is owned by uid {st.st_uid}, not by you or root"
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return f"{directory} can be written by another user"
    return None


def _entry(
    directory: str, directory_st: os.stat_result, entry: str, st: os.stat_result, uid: int
) -> str | None:
    """What lookout goes through in `directory`: in a sticky one that others can write, only an
    entry of this user's or root's is safe from being removed and replaced."""
    if stat.S_ISLNK(st.st_mode) and st.st_uid not in (uid, 0):
        return f"{entry} is a symlink owned by uid {st.st_uid}, not by you or root"
    if st.st_uid not in (uid, 0) and directory_st.st_mode & 0o022:
        return f"{entry} is owned by uid {st.st_uid}, in {directory}, which others can write"
    return None


def _socket(path: str, st: os.stat_result, uid: int) -> str | None:
    if not stat.S_ISSOCK(st.st_mode):
        return f"{path} is not a socket"
    if st.st_uid != uid:
        return f"{path} is owned by uid {st.st_uid}, not by you"
    return None


def guarded(command: Callable[[], int]) -> int:
    """Run `command`, turning every way it can fail into a message and an exit code."""
    try:
        return command()
    except LookoutError as exc:
        # messages quote paths and values
        print(f"error: {visible(exc, keep_newlines=True)}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {visible(exc.hint, keep_newlines=True)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `lookout tail | head`: the reader left; not an error worth a traceback.
        sys.stderr.close()
        return 0
    except store.NewerFormatError as exc:  # a newer lookout's file: said, and left alone
        print(f"error: {visible(exc)}", file=sys.stderr)
        print(f"hint: {exc.hint}", file=sys.stderr)
        return 1
    except Exception as exc:
        state_dir = paths.state_dir()
        import traceback  # only now: ~3 ms of every command line otherwise

        store.log_error(state_dir, f"lookout {' '.join(sys.argv[1:])}\n{traceback.format_exc()}")
        print(f"error: unexpected {type(exc).__name__}: {visible(exc)}", file=sys.stderr)
        print(
            f"hint: the details are in {paths.tilde(paths.state_dir())}/{store.ERRORS};"
            " please report it",
            file=sys.stderr,
        )
        return 3
