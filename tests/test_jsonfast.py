"""lookout._jsonfast must read and write exactly what the json module does, on both of its
implementations (CPython's C accelerator and the json fallback)."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from lookout import _jsonfast
from tests.helpers import PAYLOADS, ROOT


def _fallback_module() -> ModuleType:
    """A private copy of _jsonfast loaded while `_json` cannot be imported."""
    saved = sys.modules.get("_json")
    sys.modules["_json"] = None  # type: ignore[assignment]
    try:
        spec = importlib.util.spec_from_file_location(
            "_jsonfast_fallback", ROOT / "lookout" / "_jsonfast.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del sys.modules["_json"]
        else:
            sys.modules["_json"] = saved
    return module


_FALLBACK = _fallback_module()


@pytest.fixture(params=["c", "fallback"])
def impl(request: pytest.FixtureRequest) -> ModuleType:
    return _jsonfast if request.param == "c" else _FALLBACK


def test_the_c_path_is_the_one_in_use() -> None:
    # If the probe failed silently, every hook would import `json` (and pay for it).
    assert _jsonfast._loads is _jsonfast._c_loads
    assert _FALLBACK._loads is json.loads


def _texts() -> Iterator[tuple[str, str]]:
    for path in sorted(PAYLOADS.glob("*.json")):
        yield path.stem, path.read_text(encoding="utf-8")
    yield "unicode", '{"s": "h\\u00e9llo \\u2603 \u00e9 \u4e2d\u6587 \\ud83d\\ude00 \U0001f600"}'
    yield "lone-surrogate", '["\\ud800", "\\udfff", "a\\udc80b"]'
    yield "escapes", '"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0000 \\u001f"'
    yield "big-ints", "[12345678901234567890123456789, -98765432109876543210, 0, -0]"
    yield "floats", "[0.1, -0.0, 1e308, 5e-324, 1.5E-10, 2.5e+3, 3.0, 1e400, -1e400]"
    yield "constants", "[true, false, null]"
    yield "nested", "[" * 200 + "{}" + "]" * 200
    yield "deep-objects", '{"a": {"b": {"c": [1, {"d": [null, [], {}]}]}}}'
    yield "duplicate-keys", '{"a": 1, "a": 2}'
    yield "whitespace", ' \t\n\r {"a" : [ 1 , 2 ] } \n\t '
    yield "scalar-string", '"just a string"'
    yield "scalar-number", "42"
    yield "empty-containers", '[{}, [], "", {"": ""}]'


TEXTS = list(_texts())


@pytest.mark.parametrize(("name", "text"), TEXTS, ids=[t[0] for t in TEXTS])
def test_loads_agrees_with_json(impl: ModuleType, name: str, text: str) -> None:
    assert impl.loads(text) == json.loads(text)


@pytest.mark.parametrize(("name", "text"), TEXTS, ids=[t[0] for t in TEXTS])
def test_dumps_is_compact_json(impl: ModuleType, name: str, text: str) -> None:
    value = json.loads(text)
    if _has_inf(value):
        with pytest.raises(ValueError):
            impl.dumps(value)
        return
    out = impl.dumps(value)
    assert out == json.dumps(value, separators=(",", ":"), allow_nan=False)
    assert "\n" not in out  # one record, one line
    assert json.loads(out) == value


def _has_inf(value: object) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, list):
        return any(_has_inf(v) for v in value)
    if isinstance(value, dict):
        return any(_has_inf(v) for v in value.values())
    return False


def test_surrogates_round_trip_through_surrogatepass(impl: ModuleType) -> None:
    # store.append encodes with surrogatepass: a lone surrogate from a payload must not crash it.
    value = {"s": "a\udc80b\ud800"}
    data = impl.dumps(value).encode("utf-8", "surrogatepass")
    assert impl.loads(data.decode("utf-8", "surrogatepass")) == value


def test_non_string_keys_match_json(impl: ModuleType) -> None:
    value = {1: "a", 2.5: "b", False: "c", None: "d"}
    assert impl.dumps(value) == json.dumps(value, separators=(",", ":"))


def test_tuples_are_lists(impl: ModuleType) -> None:
    assert impl.dumps({"t": (1, "x")}) == '{"t":[1,"x"]}'


def test_output_is_ascii_so_lone_surrogates_stay_escapes(impl: ModuleType) -> None:
    assert impl.dumps("é☃") == '"\\u00e9\\u2603"'
    assert impl.dumps("\udc80") == '"\\udc80"'
    assert impl.loads(impl.dumps("\udc80 é")) == "\udc80 é"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "\n",
        "{not json",
        "{} x",
        "{}{}",
        "[1] [2]",
        "1 2",
        "[1,]",
        '{"a":1,}',
        "{'a': 1}",
        "nul",
        "tru",
        '"unterminated',
        '"control \x01 char"',
        "\x00",
        "[" * 50,
        "\ufeff{}",
        "01",
    ],
    ids=repr,
)
def test_loads_rejects_what_is_not_exactly_one_document(impl: ModuleType, text: str) -> None:
    with pytest.raises(ValueError):
        impl.loads(text)
    with pytest.raises(ValueError):
        json.loads(text)  # the reference agrees


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [1.0, math.nan], {"x": math.inf}])
def test_dumps_refuses_nan_and_infinity(impl: ModuleType, value: object) -> None:
    with pytest.raises(ValueError):
        impl.dumps(value)


def test_dumps_refuses_unknown_types(impl: ModuleType) -> None:
    with pytest.raises(TypeError):
        impl.dumps({"x": object()})
    with pytest.raises(TypeError):
        impl.dumps({"x": b"bytes"})


def test_every_payload_fixture_round_trips(impl: ModuleType) -> None:
    paths = sorted(Path(PAYLOADS).glob("*.json"))
    assert paths, "payload fixtures are missing"
    for path in paths:
        value = impl.loads(path.read_text(encoding="utf-8"))
        assert impl.loads(impl.dumps(value)) == value, path.name


_MALFORMED = ["{not json", "[1 2]", '"abc', '{"a" 1}', "[1,]", "x", "{} x", ""]


def test_loads_raises_valueerror_without_json_imported() -> None:
    # The hook's situation: `python -I -S`, nothing but lookout imported.
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from lookout import _jsonfast\n"
        "assert 'json.decoder' not in sys.modules\n"
        "for text in sys.argv[1:]:\n"
        "    try:\n"
        "        _jsonfast.loads(text)\n"
        "    except ValueError:\n"
        "        continue\n"
        "    except BaseException as exc:\n"
        "        print(repr(text), type(exc).__name__)\n"
        "    else:\n"
        "        print(repr(text), 'accepted')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, *_MALFORMED],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == ""
