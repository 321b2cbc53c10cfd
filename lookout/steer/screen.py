"""What a screen captured with its escapes (`capture-pane -e`) shows: each line's text, and the
part of it not drawn dim (an input box's placeholder is dim, a draft of the user's is not).
Pure; what an agent's input box reader (its STEER's read_input) stands on."""

from __future__ import annotations

# -- what a screen with escapes shows (capture-pane -e) -----------------------------------------

_ESC = "\x1b"
# SGR parameters that take more: 38/48/58 (a colour) then 5;N or 2;R;G;B.
_COLOUR = ("38", "48", "58")


class _Pen:
    """The attributes a `capture-pane -e` screen draws with (tmux carries them across lines)."""

    def __init__(self) -> None:
        self.dim = False
        self.reverse = False

    def sgr(self, params: str) -> None:
        parts = params.split(";") if params else ["0"]
        i = 0
        while i < len(parts):
            p = parts[i]
            if p in _COLOUR and i + 1 < len(parts):
                i += 3 if parts[i + 1] == "5" else 5 if parts[i + 1] == "2" else 1
                continue
            if p in ("", "0"):
                self.dim = self.reverse = False
            elif p == "2":
                self.dim = True
            elif p == "22":
                self.dim = False
            elif p == "7":
                self.reverse = True
            elif p == "27":
                self.reverse = False
            i += 1  # anything else (a colour, bold, "38:2::r:g:b") leaves dim and reverse as is


def _escape(screen: str, i: int, pen: _Pen) -> int:
    """Past the escape sequence at `i` (CSI, OSC, or a two-character one); SGR moves the pen."""
    kind = screen[i + 1 : i + 2]
    if kind == "[":
        j = i + 2
        while j < len(screen) and not "\x40" <= screen[j] <= "\x7e":
            j += 1
        if j < len(screen) and screen[j] == "m":
            pen.sgr(screen[i + 2 : j])
        return j + 1
    if kind == "]":  # OSC (a hyperlink): up to BEL or ST
        bel, st = screen.find("\x07", i), screen.find(_ESC + "\\", i)
        ends = [e + 1 for e in (bel,) if e >= 0] + [e + 2 for e in (st,) if e >= 0]
        return min(ends) if ends else len(screen)
    return i + 2


def styled_lines(screen: str) -> list[tuple[str, str]]:
    """Each line of a screen as (all of its text, the text without what is drawn dim). A cell
    drawn reverse (the cursor) right before dim text is the placeholder's first letter under
    the cursor, and dropped with it. A screen with no escapes is all kept."""
    pen = _Pen()
    out: list[tuple[str, str]] = []
    cells: list[tuple[str, bool, bool]] = []
    i = 0
    while i <= len(screen):
        ch = screen[i] if i < len(screen) else "\n"
        if ch == _ESC:
            i = _escape(screen, i, pen)
            continue
        if ch == "\n":
            text = "".join(c for c, _, _ in cells)
            kept = [
                c
                for n, (c, dim, rev) in enumerate(cells)
                if not dim and not (rev and n + 1 < len(cells) and cells[n + 1][1])
            ]
            out.append((text, "".join(kept)))
            cells = []
        else:
            cells.append((ch, pen.dim, pen.reverse))
        i += 1
    return out
