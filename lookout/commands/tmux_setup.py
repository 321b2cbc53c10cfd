"""`lookout tmux-setup`: the tmux key bindings (prefix a: jump, prefix A: pick) and the status-right
snippet, printed, or kept in one marked block of ~/.tmux.conf (--apply) and taken out again
(--remove). The file is the user's: every byte outside the block stays, a backup comes first, the
write is atomic and goes through a symlink; what lookout cannot read safely it refuses."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lookout import paths
from lookout.commands import args
from lookout.errors import LookoutError
from lookout.install import tmuxconf
from lookout.install.tmuxconf import (
    ABOUT,
    BEGIN,
    CREATED_NOTE,
    END,
    NEWLINE_NOTE,
    NOTHING_CHANGED,
    default_file,
    find_block,
)
from lookout.paths import tilde

# Room for tmux's default status-right (up to 39 columns) and lookout's line after it; a
# longer status-right-length of the user's is kept.
STATUS_RIGHT_LENGTH = 120


def declare(p: argparse.ArgumentParser) -> None:
    """Print the tmux bindings (prefix a: jump to the session waiting longest, prefix A: pick one
    from a menu) and the status-right snippet for `status --line`; --apply keeps them in one
    marked block of ~/.tmux.conf (a backup first), --remove takes that block out again."""
    action = p.add_mutually_exclusive_group()
    action.add_argument("--apply", action="store_true", help="add or update the block in the file")
    action.add_argument("--remove", action="store_true", help="take the block out of the file")
    p.add_argument("--file", metavar="PATH", help="the tmux config file (default: ~/.tmux.conf)")
    p.add_argument("--jump-key", default="a", metavar="KEY", help="after the prefix (a)")
    p.add_argument("--pick-key", default="A", metavar="KEY", help="after the prefix (A)")


def run(ns: argparse.Namespace) -> int:
    return args.call(tmux_setup, ns)


def lookout_command() -> str:
    """How tmux should start lookout: an executable `lookout`, by absolute path. Under
    install.py's wrapper (~/.local/bin/lookout) argv[0] is the runtime's inner entry file, which
    is no program (tmux would get exit 126): the wrapper is what tmux must run."""
    argv0 = sys.argv[0]
    named = os.path.basename(argv0) == "lookout" and os.path.isfile(argv0)
    wrapper = str(paths.bin_dir() / "lookout")
    for candidate in (argv0 if named else None, wrapper, shutil.which("lookout")):
        if candidate and _runnable(candidate):
            return shlex.quote(os.path.abspath(candidate))
    if named:  # an entry file that is no program (no wrapper around it): through Python
        return f"{shlex.quote(sys.executable)} -I {shlex.quote(os.path.abspath(argv0))}"
    return f"{shlex.quote(sys.executable)} -m lookout"


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _tmux_quoted(text: str) -> str:
    """A tmux double-quoted string whose content reaches the shell as `text`; `#` doubled
    where the text is not a format of ours."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def block(command: str, jump_key: str, pick_key: str) -> str:
    if not command.isprintable():
        raise LookoutError("the lookout command path holds control characters")
    cmd = command.replace("#", "##")  # run-shell expands formats in its command
    jump = _tmux_quoted(f"{cmd} jump --client '#{{client_name}}'")
    pick = _tmux_quoted(f"{cmd} pick --client '#{{client_name}}'")
    status = _tmux_quoted(f" #({cmd} status --line)")
    return "\n".join(
        (
            BEGIN,
            ABOUT,
            f"bind-key {_key(jump_key)} run-shell -b {jump}",
            f"bind-key {_key(pick_key)} run-shell -b {pick}",
            '%if "#{==:#{m:*lookout* status --line*,#{status-right}},0}"',
            f"set -ag status-right {status}",
            "%endif",
            # tmux cuts status-right at 40 columns by default, which its own clock fills.
            f'%if "#{{e|<|:#{{status-right-length}},{STATUS_RIGHT_LENGTH}}}"',
            f"set -g status-right-length {STATUS_RIGHT_LENGTH}",
            "%endif",
            END,
            "",
        )
    )


def _key(key: str) -> str:
    if not key or not key.isprintable() or any(c in key for c in " \"'#;\\{}$~"):
        raise LookoutError(f"invalid key {key!r}", hint="a tmux key name such as a, A, C-j or F5")
    return key


# -- the file ----------------------------------------------------------------------------------


def check_outside(text: str, where: str) -> None:
    """What would make an appended block part of the user's last command, or of a %if."""
    lines = text.splitlines()
    if lines and lines[-1].rstrip().endswith("\\"):
        raise LookoutError(
            f"{where}: its last line continues onto the next (ends with a backslash)",
            hint=f"end that command first; {NOTHING_CHANGED}",
        )
    depth = 0
    for line in lines:
        word = line.strip().split(None, 1)[0] if line.strip() else ""
        if word == "%if":
            depth += 1
        elif word == "%endif":
            depth -= 1
    if depth != 0:
        raise LookoutError(
            f"{where}: its %if and %endif lines do not pair up",
            hint=f"fix the file so that tmux can read it; {NOTHING_CHANGED}",
        )


def check_with_tmux(block_text: str) -> None:
    """Let tmux itself parse the block (source-file -n: parse only) on a private server."""
    if shutil.which("tmux") is None:
        return
    # The server's socket is TMUX_TMPDIR/tmux-UID/check, and a socket's path holds at most 107
    # bytes: under /tmp when $TMPDIR is long (a private folder's).
    base = tempfile.gettempdir()
    short = base if len(base) <= 40 else "/tmp"  # noqa: S108 - mkdtemp: a new 0700 folder
    with tempfile.TemporaryDirectory(prefix="lookout-tmux-", dir=short) as tmp:
        conf = Path(tmp) / "block.conf"
        conf.write_text(block_text)
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        env["TMUX_TMPDIR"] = tmp
        done = subprocess.run(
            [
                "tmux",
                "-L",
                "check",
                "-f",
                "/dev/null",
                "start-server",
                ";",
                "source-file",
                "-n",
                str(conf),
            ],
            capture_output=True,
            text=True,
            timeout=10,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        raise LookoutError(
            f"tmux cannot read the bindings lookout would add: {done.stderr.strip()}",
            hint=f"pick other keys (--jump-key, --pick-key); {NOTHING_CHANGED}",
        )


def with_block(text: str | None, new_block: str, where: str) -> str:
    """The file's text with lookout's block added at the end, or put in place of the old one."""
    first, rest = new_block.split("\n", 1)
    if text is None:
        return first + CREATED_NOTE + "\n" + rest
    found = find_block(text, where)
    if found is not None:
        start, end, note = found
        return text[:start] + first + note + "\n" + rest + text[end:]
    check_outside(text, where)
    if text and not text.endswith("\n"):
        return text + "\n" + first + NEWLINE_NOTE + "\n" + rest
    return text + new_block


# -- the command -------------------------------------------------------------------------------


def tmux_setup(*, apply: bool, remove: bool, file: str | None, jump_key: str, pick_key: str) -> int:
    from lookout.install import files

    path = Path(file).expanduser() if file else default_file()
    where = tilde(path)
    new_block = block(lookout_command(), jump_key, pick_key)
    if not apply and not remove:
        print(new_block, end="")
        print(f"\n# add it to {where}: lookout tmux-setup --apply (a backup is kept)")
        return 0
    if path.is_dir():
        raise LookoutError(f"{where} is a directory", hint="give the file with --file")
    text = files.read_text(path)
    loaded = files.Loaded(path, text, {})
    if remove:
        if not tmuxconf.remove_block(path, False, print):
            print(f"nothing to remove: {where} has no lookout block")
        return 0
    check_with_tmux(new_block)
    had_block = text is not None and find_block(text, where) is not None
    new_text = with_block(text, new_block, where)
    if new_text == text:
        print(f"already set up: {where}")
        return 0
    backup = files.write_settings(loaded, new_text)
    note = files.written_note([f"prefix {jump_key}: jump, prefix {pick_key}: pick"], backup, loaded)
    verb = "updated lookout's tmux block in" if had_block else "added lookout's tmux block to"
    print(f"{verb} {where}{note}")
    print(f"reload tmux: tmux source-file {where}")
    return 0
