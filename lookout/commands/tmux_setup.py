"""`lookout tmux-setup`: the tmux key bindings (prefix a: jump, prefix A: pick) and the status-right
snippet, printed, or kept in one marked block of ~/.tmux.conf (--apply) and taken out again
(--remove). The file is the user's: every byte outside the block stays, a backup comes first, the
write is atomic and goes through a symlink; what lookout cannot read safely it refuses."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lookout import paths
from lookout.errors import LookoutError
from lookout.paths import tilde

BEGIN = "# >>> lookout >>>"
END = "# <<< lookout <<<"
ABOUT = "# Added by `lookout tmux-setup --apply`; `lookout tmux-setup --remove` takes it out."
# Notes on the first line, so that --remove restores the file exactly: a final newline lookout
# had to add, or a file lookout created.
NEWLINE_NOTE = " (lookout ended the line above)"
CREATED_NOTE = " (lookout created this file)"
NOTHING_CHANGED = "lookout changed nothing"


def default_file() -> Path:
    """~/.tmux.conf, or tmux's XDG location when only that one exists."""
    home = Path(os.path.expanduser("~"))
    classic = home / ".tmux.conf"
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "tmux" / "tmux.conf"
    return xdg if not classic.exists() and not classic.is_symlink() and xdg.exists() else classic


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
            END,
            "",
        )
    )


def _key(key: str) -> str:
    if not key or not key.isprintable() or any(c in key for c in " \"'#;\\{}$~"):
        raise LookoutError(f"invalid key {key!r}", hint="a tmux key name such as a, A, C-j or F5")
    return key


# -- the file ----------------------------------------------------------------------------------


def find_block(text: str, where: str) -> tuple[int, int, str] | None:
    """(start, end) character offsets of lookout's block (end after its END line) and the note
    on its first line; None when there is none. Refuses a damaged block."""
    lines = text.splitlines(keepends=True)
    begins = [i for i, line in enumerate(lines) if line.rstrip("\r\n").startswith(BEGIN)]
    ends = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == END]
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise LookoutError(
            f"{where}: lookout's block is damaged ({len(begins)} start and {len(ends)} end"
            " marker(s))",
            hint=f"fix or delete the lines between {BEGIN!r} and {END!r} by hand;"
            f" {NOTHING_CHANGED}",
        )
    start = sum(len(line) for line in lines[: begins[0]])
    end = sum(len(line) for line in lines[: ends[0] + 1])
    return start, end, lines[begins[0]].rstrip("\r\n")[len(BEGIN) :]


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
    with tempfile.TemporaryDirectory(prefix="lookout-tmux-") as tmp:
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


def without_block(text: str, where: str) -> str | None:
    """The text without lookout's block, exactly as it was before; "" for a file lookout created
    and nobody wrote to since; None when there is no block."""
    found = find_block(text, where)
    if found is None:
        return None
    start, end, note = found
    before = text[:start]
    if note == NEWLINE_NOTE and before.endswith("\n"):
        before = before[:-1]  # the newline lookout added to end the user's last line
    return before + text[end:]


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
        new_text = without_block(text, where) if text is not None else None
        if new_text is None:
            print(f"nothing to remove: {where} has no lookout block")
            return 0
        found = find_block(text or "", where)
        created = found is not None and found[2] == CREATED_NOTE
        if new_text == "" and created and not path.is_symlink():
            backup = files.write_settings(loaded, new_text)  # the same backup as any removal
            path.unlink()
            print(f"removed {where}, which lookout had created{files.suffix(backup)}")
            return 0
        backup = files.write_settings(loaded, new_text)
        print(f"removed lookout's tmux block from {where}{files.suffix(backup)}")
        print(f"reload tmux: tmux source-file {where}")
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
