"""lookout's marked block in the user's tmux config (~/.tmux.conf): where the file is, where the
block is, and taking it out exactly (`lookout tmux-setup --remove`, and `lookout uninstall
--purge`). The file is the user's: every byte outside the block stays, a backup comes first,
the write is atomic and goes through a symlink; a damaged block is refused."""

from __future__ import annotations

import os
from pathlib import Path

from lookout.errors import LookoutError
from lookout.install import files
from lookout.install.files import Out
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


def has_block(path: Path) -> bool:
    """Whether `path` holds lookout's block; LookoutError for a damaged one (read only)."""
    if path.is_dir():
        return False
    text = files.read_text(path)
    return text is not None and find_block(text, tilde(path)) is not None


def remove_block(path: Path, dry_run: bool, out: Out) -> bool:
    """Take lookout's block out of `path`, giving back the file as it was before (no file, when
    lookout created it); False when there is no block. Raises LookoutError for a damaged one."""
    where = tilde(path)
    if path.is_dir():
        raise LookoutError(f"{where} is a directory", hint="give the file with --file")
    text = files.read_text(path)
    new_text = without_block(text, where) if text is not None else None
    if new_text is None:
        return False
    found = find_block(text or "", where)
    created = found is not None and found[2] == CREATED_NOTE
    if dry_run:
        out(f"would remove lookout's tmux block from {where}")
        return True
    loaded = files.Loaded(path, text, {})
    if new_text == "" and created and not path.is_symlink():
        backup = files.write_settings(loaded, new_text)  # the same backup as any removal
        path.unlink()
        out(f"removed {where}, which lookout had created{files.suffix(backup)}")
        return True
    backup = files.write_settings(loaded, new_text)
    out(f"removed lookout's tmux block from {where}{files.suffix(backup)}")
    out(f"reload tmux: tmux source-file {where}")
    return True
