"""The one checker every config section uses: it collects every problem as
`file: key.path: expectation`, blaming the project file for what it set, and raises ConfigError
once. Pure: no I/O."""

from __future__ import annotations

from lookout.errors import ConfigError as ConfigError  # its home: errors (light to import)
from lookout.words import KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    KeyPath = tuple[str | int, ...]


def type_name(value: object) -> str:
    names = {bool: "bool", int: "int", float: "float", str: "string", list: "array", dict: "table"}
    return names.get(type(value), type(value).__name__)


def choices(values: tuple[str, ...]) -> str:
    return ", ".join(values)


class Checker:
    def __init__(
        self, base_name: str, over: dict[str, Any] | None = None, over_name: str = ""
    ) -> None:
        self.base_name = base_name
        self.over = over or {}
        self.over_name = over_name
        self.errors: list[str] = []

    def origin(self, path: KeyPath) -> str:
        # The project file is to blame for a key it sets, or for an array it replaced.
        if not self.over_name:
            return self.base_name
        node: object = self.over
        for part in path:
            if isinstance(part, int):
                return self.over_name
            if not isinstance(node, dict) or part not in node:
                return self.base_name
            node = node[part]
        return self.over_name

    def error(self, path: KeyPath, text: str) -> None:
        self.errors.append(f"{self.origin(path)}: {_dotted(path)}: {text}")

    def done(self) -> None:
        """Raise ConfigError listing every problem found, if any."""
        if self.errors:
            raise ConfigError(self.errors)

    def expect(
        self, path: KeyPath, value: object, kind: type | tuple[type, ...], what: str
    ) -> bool:
        ok = isinstance(value, kind) and not (
            isinstance(value, bool) and bool not in _as_tuple(kind)
        )
        if not ok:
            self.error(path, f"expected {what}, got {type_name(value)}")
        return ok

    def string_list(
        self,
        path: KeyPath,
        value: object,
        allowed: tuple[str, ...] | None = None,
        nonempty: bool = False,
    ) -> list[str]:
        if not self.expect(path, value, list, "an array of strings"):
            return []
        assert isinstance(value, list)
        out: list[str] = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.error((*path, i), f"expected a string, got {type_name(item)}")
            elif allowed is not None and item not in allowed:
                self.error(
                    (*path, i),
                    f"expected one of {choices(allowed)}, got {item!r}"
                    + did_you_mean(item, allowed),
                )
            else:
                out.append(item)
        if nonempty and not value:
            self.error(path, "expected a non-empty array")
        return out

    def number(
        self, path: KeyPath, value: object, minimum: float, positive: bool = False
    ) -> float | None:
        if not self.expect(path, value, (int, float), "a number"):
            return None
        assert isinstance(value, (int, float))
        if value < minimum or (positive and value <= 0):
            self.error(
                path, f"expected a number {'>' if positive else '>='} {minimum:g}, got {value:g}"
            )
            return None
        return float(value)

    def get(
        self,
        path: KeyPath,
        raw: dict[str, Any],
        key: str,
        kinds: type | tuple[type, ...],
        what: str,
    ) -> Any:
        """raw[key] when present and of the expected type; else None (an error when of another)."""
        if key not in raw:
            return None
        value = raw[key]
        return value if self.expect((*path, key), value, kinds, what) else None

    def unknown_keys(self, path: KeyPath, table: dict[str, Any], allowed: tuple[str, ...]) -> None:
        for key in table:
            if key not in allowed:
                self.error(
                    (*path, key),
                    f"unknown key{did_you_mean(key, allowed)} (expected one of {choices(allowed)})",
                )

    def own_table(
        self, name: str, raw: object, allowed: tuple[str, ...], project_file: str
    ) -> dict[str, Any] | None:
        """The table [name], which only the user's own file may hold: None (after an error)
        where a project file (`project_file` says which and why not) names it or it is not a
        table."""
        path = (name,)
        if name in self.over:
            self.error(
                path,
                f"is read only from your own config file, never from a project's {project_file}",
            )
            return None
        if not self.expect(path, raw, dict, "a table"):
            return None
        assert isinstance(raw, dict)
        self.unknown_keys(path, raw, allowed)
        return raw

    def by_kind(
        self, path: KeyPath, value: object, check: Callable[[KeyPath, object], object]
    ) -> object:
        """A value, or a table of values by notification kind (`default` for the rest), each
        checked by `check` (its checked value, or None when it is wrong)."""
        if not isinstance(value, dict):
            return check(path, value)
        known = (*KINDS, "default")
        out: dict[str, object] = {}
        for kind, item in value.items():
            if kind not in known:
                self.error(
                    (*path, kind),
                    f"unknown kind{did_you_mean(kind, known)} (expected one of {choices(KINDS)},"
                    " default)",
                )
                continue
            checked = check((*path, kind), item)
            if checked is not None:
                out[kind] = checked
        return out

    def choice(self, values: tuple[str, ...]) -> Callable[[KeyPath, object], object]:
        """A check of one value against `values` (for by_kind and the like)."""

        def check(p: KeyPath, v: object) -> object:
            if not isinstance(v, str) or v not in values:
                self.error(
                    p, f"expected one of {choices(values)}, got {v!r}{did_you_mean(v, values)}"
                )
                return None
            return v

        return check


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _dotted(path: KeyPath) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def did_you_mean(word: object, choices: tuple[str, ...]) -> str:
    """` (did you mean 'urgency'?)` for a near miss, else nothing."""
    if not isinstance(word, str):
        return ""
    import difflib

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""
