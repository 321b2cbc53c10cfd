"""lookout.install.codex: the text edit of Codex's top-level `notify` on hand-written config.toml
files (tests/fixtures/codex/config-*.toml): only that setting changes, everything else stays."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from lookout.agents import codex_config
from lookout.agents.codex_config import ConfigError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codex"
# The editable ones (config-broken and config-notify-string are refused, tested below).
CONFIGS = sorted(
    p
    for p in FIXTURES.glob("config-*.toml")
    if p.stem not in ("config-broken", "config-notify-string")
)
OURS = [
    "/home/dev/.local/share/lookout/venv/bin/python",
    "-I",
    "-S",
    "/home/dev/.local/share/lookout/hooks/codex_notify.py",
    "--",
]


def text_of(name: str) -> str:
    return (FIXTURES / f"config-{name}.toml").read_text()


def test_find_covers_the_multiline_notify_and_nothing_else() -> None:
    text = text_of("commented")
    start, end = codex_config.find(text) or (0, 0)
    assert text[start:end] == (
        'notify = [\n  "notify-send",   # libnotify\n  "--app-name=Codex",\n  \'Codex\',\n]\n'
    )
    assert text[:start].endswith("# Desktop popup when a turn ends.\n")


def test_find_skips_look_alikes_in_a_string_and_in_a_table() -> None:
    text = text_of("tricky")
    start, end = codex_config.find(text) or (0, 0)
    assert text[start:end] == '"notify" = ["say", "done"]   # quoted key\n'


def test_find_without_notify() -> None:
    assert codex_config.find(text_of("no-notify")) is None


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_set_changes_only_notify_and_keeps_every_other_line(path: Path) -> None:
    text = path.read_text()
    previous = codex_config.chained(codex_config.notify_value(tomllib.loads(text)))
    argv = [*OURS, *previous]
    new = codex_config.replace(text, codex_config.render(argv))
    codex_config.check(text, new, argv)
    old_snippet = codex_config.current_snippet(text)
    # Line for line: the old notify lines became one new line, nothing else moved or changed.
    assert new.replace(codex_config.render(argv), old_snippet, 1) == text


def test_replace_multiline_then_restore_byte_for_byte() -> None:
    text = text_of("commented")
    before = codex_config.current_snippet(text)
    argv = [*OURS, "notify-send", "--app-name=Codex", "Codex"]
    new = codex_config.replace(text, codex_config.render(argv))
    assert tomllib.loads(new)["notify"] == argv
    assert "# libnotify" not in new
    assert new.index("notify = [") < new.index("sandbox_mode")  # where it was, not moved
    assert codex_config.replace(new, before) == text


def test_insert_goes_before_the_first_table_and_its_comments_then_removes_cleanly() -> None:
    text = text_of("no-notify")
    line = codex_config.render(OURS)
    new = codex_config.replace(text, line)
    assert new == text.replace("# The fast profile.", line + "# The fast profile.", 1)
    codex_config.check(text, new, OURS)
    assert codex_config.replace(new, "") == text


def test_insert_into_a_file_without_tables_appends() -> None:
    text = text_of("no-tables")
    new = codex_config.replace(text, codex_config.render(OURS))
    assert new == text + codex_config.render(OURS)
    assert codex_config.replace(new, "") == text


def test_insert_after_a_last_line_without_newline() -> None:
    new = codex_config.replace('model = "x"', codex_config.render(OURS))
    assert tomllib.loads(new) == {"model": "x", "notify": OURS}


def test_insert_into_an_empty_file() -> None:
    assert codex_config.replace("", codex_config.render(OURS)) == codex_config.render(OURS)


def test_unparsable_file_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^invalid TOML: Unclosed array"):
        codex_config.replace(text_of("broken"), codex_config.render(OURS))


def test_notify_that_is_not_an_array_of_strings_is_refused() -> None:
    data = codex_config.parse(text_of("notify-string"))
    with pytest.raises(ConfigError) as exc:
        codex_config.notify_value(data)
    assert str(exc.value) == "notify: expected an array of strings, got a string"


@pytest.mark.parametrize(
    ("line", "got"),
    [
        ("notify = true", "a boolean"),
        ('notify = ["x", 1]', "an array with non-string items"),
        ("notify = { program = 'x' }", "a table"),
        ("notify = 3", "int"),
        ("notify = 1979-05-27", "date"),
    ],
)
def test_the_refusal_names_the_toml_type_it_got(line: str, got: str) -> None:
    with pytest.raises(ConfigError) as exc:
        codex_config.notify_value(codex_config.parse(line + "\n"))
    assert str(exc.value) == f"notify: expected an array of strings, got {got}"


@pytest.mark.parametrize(
    "value",
    ["plain", 'quo"te', "back\\slash", "new\nline", "tab\t", "del\x7f", "bell\x07", "ünï €"],
)
def test_render_round_trips_through_tomllib(value: str) -> None:
    assert tomllib.loads(codex_config.render([value, "x"]))["notify"] == [value, "x"]


def test_render_refuses_a_lone_surrogate() -> None:
    with pytest.raises(ConfigError, match="lone surrogate"):
        codex_config.render(["bad\udcff"])


def test_ours_and_the_chained_program() -> None:
    assert codex_config.is_ours([*OURS, "notify-send", "Codex"])
    assert codex_config.chained([*OURS, "notify-send", "Codex"]) == ["notify-send", "Codex"]
    assert codex_config.chained(OURS) == []
    assert not codex_config.is_ours(["notify-send", "Codex"])
    assert codex_config.chained(["notify-send", "Codex"]) == ["notify-send", "Codex"]
    assert codex_config.chained(None) == []
    # A script of the same name outside a hooks/ directory is someone else's.
    assert not codex_config.is_ours(["python3", "/opt/codex_notify.py"])


def test_check_catches_a_change_to_another_key() -> None:
    with pytest.raises(ConfigError, match="would change other settings"):
        codex_config.check('a = 1\nnotify = ["x"]\n', 'a = 2\nnotify = ["y"]\n', ["y"])
    with pytest.raises(ConfigError, match="does not hold the wanted value"):
        codex_config.check("a = 1\n", 'a = 1\nnotify = ["y"]\n', ["z"])
    with pytest.raises(ConfigError, match="not valid TOML"):
        codex_config.check("a = 1\n", "a = \n", None)
