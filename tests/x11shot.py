"""What an X screen shows, for tests that look at a real notification daemon's popup: the pixels
of a rectangle of the root window, read with libX11 through ctypes (no imaging library), and
where ink (dark pixels) lies in them."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

_ZPIXMAP = 2
_ALL_PLANES = 0xFFFFFFFF


class _XImage(ctypes.Structure):
    _fields_ = [
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("xoffset", ctypes.c_int),
        ("format", ctypes.c_int),
        ("data", ctypes.POINTER(ctypes.c_ubyte)),
        ("byte_order", ctypes.c_int),
        ("bitmap_unit", ctypes.c_int),
        ("bitmap_bit_order", ctypes.c_int),
        ("bitmap_pad", ctypes.c_int),
        ("depth", ctypes.c_int),
        ("bytes_per_line", ctypes.c_int),
        ("bits_per_pixel", ctypes.c_int),
    ]


def _lib() -> ctypes.CDLL:
    x11 = ctypes.CDLL("libX11.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x11.XGetImage.restype = ctypes.POINTER(_XImage)
    x11.XGetImage.argtypes = [
        ctypes.c_void_p,
        ctypes.c_ulong,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.c_uint,
        ctypes.c_ulong,
        ctypes.c_int,
    ]
    x11.XDestroyImage.argtypes = [ctypes.POINTER(_XImage)]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    return x11


@dataclass
class Ink:
    """The dark pixels of a rectangle: `rows[y]` holds the x of each one on row y."""

    width: int
    height: int
    rows: list[list[int]]

    def bands(self) -> list[tuple[int, int]]:
        """(top, bottom) of each horizontal band of ink: one per line of text."""
        out: list[tuple[int, int]] = []
        for y, xs in enumerate(self.rows):
            if not xs:
                continue
            if out and out[-1][1] == y - 1:
                out[-1] = (out[-1][0], y)
            else:
                out.append((y, y))
        return out

    def right(self, top: int = 0, bottom: int | None = None) -> int:
        """The rightmost ink between rows `top` and `bottom` (-1: none)."""
        rows = self.rows[top : (self.height if bottom is None else bottom + 1)]
        return max((max(xs) for xs in rows if xs), default=-1)


def ink(display: str, x: int, y: int, width: int, height: int, dark: int = 300) -> Ink:
    """Where the screen `display` is dark (R+G+B below `dark`) in the rectangle given."""
    x11 = _lib()
    conn = x11.XOpenDisplay(display.encode())
    if not conn:
        raise RuntimeError(f"cannot open display {display}")
    try:
        image = x11.XGetImage(
            conn, x11.XDefaultRootWindow(conn), x, y, width, height, _ALL_PLANES, _ZPIXMAP
        )
        if not image:
            raise RuntimeError("XGetImage failed")
        try:
            img = image.contents
            stride = img.bytes_per_line
            raw = ctypes.string_at(img.data, stride * height)
        finally:
            x11.XDestroyImage(image)
    finally:
        x11.XCloseDisplay(conn)
    rows = []
    for r in range(height):
        line = raw[r * stride : r * stride + width * 4]
        rows.append([c for c in range(width) if sum(line[4 * c : 4 * c + 3]) < dark])
    return Ink(width, height, rows)
