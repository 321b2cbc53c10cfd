"""JSON for the hook's hot path without importing `json` (which pulls in re, enum and functools:
about as long as the interpreter's own start). Uses CPython's C accelerator directly and falls
back to the json module wherever that is unavailable. Never use it for pretty output."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_WS = " \t\n\r"

_loads: Callable[[str], object]
_dumps: Callable[[object], str]

try:
    import _json

    class _Context:
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = {
            "NaN": float("nan"),
            "Infinity": float("inf"),
            "-Infinity": float("-inf"),
        }.__getitem__
        memo: dict[str, str] = {}  # noqa: RUF012 - the scanner wants a plain dict attribute

    _scan = _json.make_scanner(_Context())  # type: ignore[arg-type]
    _encode = _json.make_encoder(
        None,
        None,  # type: ignore[arg-type]
        # ASCII output: a lone surrogate (valid as a JSON escape in a payload) stays an escape
        # instead of becoming bytes that are not UTF-8.
        _json.encode_basestring_ascii,
        None,
        ":",
        ",",
        False,
        False,
        False,
    )

    def _c_loads(text: str) -> object:
        start = len(text) - len(text.lstrip(_WS))
        try:
            value, end = _scan(text, start)
        except StopIteration as exc:
            raise ValueError(f"invalid JSON at offset {exc.value}") from None
        except ValueError:
            raise
        except Exception as exc:
            # 3.11's scanner reports nested errors through json.decoder, which the hot path
            # never imports: it surfaces as SystemError. It is still just bad input.
            raise ValueError(f"invalid JSON ({type(exc).__name__})") from None
        if text[end:].strip(_WS):
            raise ValueError(f"extra data at offset {end}")
        return value

    def _c_dumps(value: object) -> str:
        return "".join(_encode(value, 0))

    _c_dumps({"probe": [1, 2.5, None, True, "\u00e9"]})
    _loads, _dumps = _c_loads, _c_dumps
except Exception:  # pragma: no cover - other interpreters
    import json

    def _py_dumps(value: object) -> str:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)

    _loads, _dumps = json.loads, _py_dumps


def loads(text: str) -> object:
    """Parse one JSON document; ValueError on anything that is not exactly one."""
    return _loads(text)


def dumps(value: object) -> str:
    """Compact JSON on one line, ASCII only (non-ASCII as \\u escapes), no NaN."""
    return _dumps(value)
