"""The manifest's fields (lookout/sound/manifest.py), CESP 1.0 section 2 and its JSON schema: the
shapes of names, versions, tags, authors and file paths, each problem said with its key path."""

from __future__ import annotations

from typing import Any

import pytest

from lookout.sound import manifest

BASE: dict[str, Any] = {
    "cesp_version": "1.0",
    "name": "p",
    "display_name": "P",
    "version": "1.0.0",
    "categories": {},
}


def found(**fields: Any) -> list[str]:
    return manifest.check({**BASE, **fields})[1]


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("1.0.0", True),
        ("0.0.1", True),
        ("10.20.30", True),
        ("1.0.0-alpha", True),
        ("1.0.0-alpha.1", True),
        ("1.0.0-0.3.7", True),
        ("1.0.0-x.7.z.92", True),
        ("1.0.0+20130313144700", True),
        ("1.0.0-beta+exp.sha.5114f85", True),
        ("1.0.0+21AF26D3---117B344092BD", True),
        ("1.0", False),
        ("01.0.0", False),
        ("1.0.0-01", False),
        ("1.0.0-", False),
        ("1.0.0+", False),
        ("1.0.0-al..pha", False),
        ("v1.0.0", False),
        ("1.0.0.0", False),
        ("1.O.0", False),
        ("\uff11.0.0", False),  # a full-width 1: a digit to str.isdigit, not to semver
    ],
)
def test_semantic_versions(text: str, ok: bool) -> None:
    assert manifest.is_semver(text) is ok


@pytest.mark.parametrize(
    ("text", "ok"),
    [("en", True), ("fra", True), ("pt-BR", True), ("zh-Hant", True), ("zh-Hant-TW", True),
     ("EN", False), ("en-us", False), ("en-", False), ("english", False), ("zh-hant", False),
     ("en-BR-x", False)],
)  # fmt: skip
def test_language_tags(text: str, ok: bool) -> None:
    assert manifest.is_language(text) is ok


@pytest.mark.parametrize(
    ("text", "ok"),
    [("octocat", True), ("a-b-c", True), ("a" * 39, True), ("a" * 40, False), ("-a", False),
     ("a-", False), ("a--b", False), ("a_b", False), ("", False)],
)  # fmt: skip
def test_github_user_names(text: str, ok: bool) -> None:
    assert manifest.is_github_user(text) is ok


@pytest.mark.parametrize(
    ("text", "ok"),
    [("peon", True), ("glados-2", True), ("a_b", True), ("0", True), ("a" * 64, True),
     ("a" * 65, False), ("", False), ("-a", False), ("_a", False), ("Peon", False),
     ("pe on", False), ("péon", False)],
)  # fmt: skip
def test_pack_names(text: str, ok: bool) -> None:
    assert manifest.is_pack_name(text) is ok


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("sounds/a.wav", None),
        ("a.WAV", None),
        ("deep/er/b.mp3", None),
        ("c.ogg", None),
        ("..wav", None),  # a name of dots is a name
        ("../a.wav", "leaves the pack directory (no ../)"),
        ("a/../../b.wav", "leaves the pack directory (no ../)"),
        ("/abs.wav", "must be relative to the manifest (no leading /)"),
        ("a\\b.wav", "uses a backslash (paths use forward slashes)"),
        ("a b.wav", "file names use letters, digits, '.', '_' and '-' only (CESP 4.3)"),
        ("a\x00.wav", "file names use letters, digits, '.', '_' and '-' only (CESP 4.3)"),
        ("a//b.wav", "has an empty or '.' path component"),
        ("./a.wav", "has an empty or '.' path component"),
        ("sounds/", "has an empty or '.' path component"),
        ("a.flac", "is not .wav, .mp3 or .ogg (the audio formats of CESP 4.1)"),
        ("wav", "is not .wav, .mp3 or .ogg (the audio formats of CESP 4.1)"),
    ],
)
def test_file_paths(path: str, problem: str | None) -> None:
    assert manifest.file_problem(path) == problem


def test_a_manifest_with_only_its_required_fields_is_valid() -> None:
    checked, problems = manifest.check(BASE)
    assert problems == []
    assert checked == {**BASE, "categories": {}, "aliases": {}, "preview": None}


def test_the_optional_fields_shapes() -> None:
    assert found(
        description="d" * 257,
        author={"github": "-x", "email": "a@b"},
        language="english",
        tags=["a", "a", "b" * 33] + ["t"] * 8,
        license=3,
        category_aliases={"greeting": "session.begin"},
        preview="../p.wav",
    ) == [
        "category_aliases['greeting']: expected a CESP category, got 'session.begin'",
        "preview: '../p.wav' leaves the pack directory (no ../)",
        "description: at most 256 characters, got 257",
        "license: expected a string, got a number",
        "language: expected a BCP 47 tag such as en or pt-BR, got 'english'",
        "author: missing field 'name'",
        "author: unknown field 'email'",
        "author.github: expected a GitHub user name, got '-x'",
        "tags: at most 10 tags, got 11",
        "tags: a tag is listed twice",
        "tags[2]: at most 32 characters, got 33",
    ]


def test_a_text_from_the_pack_is_quoted_without_its_control_characters() -> None:
    # An error line reaches a terminal: a pack's escape sequence is shown as \x1b, never sent.
    problems = found(name="\x1b[31mred", display_name="", version="1.0.0\n")
    assert problems == [
        "name: expected 1-64 characters of a-z, 0-9, '_' and '-', starting with a letter or"
        " digit, got '\\x1b[31mred'",
        "display_name: expected 1-128 characters, got an empty string",
        "version: expected a semantic version (1.0.0), got '1.0.0\\n'",
    ]
    assert all(ch.isprintable() for p in problems for ch in p)


def test_sound_entries_of_the_wrong_shape() -> None:
    problems = found(
        categories={
            "task.complete": [],
            "task.error": {"sounds": [3, {"file": 3, "label": "x" * 257, "gain": 1}]},
            "input.required": {"sounds": [], "loop": True},
        }
    )
    assert problems == [
        "categories['task.complete']: expected an object with a \"sounds\" array",
        'categories[\'task.error\'].sounds[0]: expected an object with "file" and "label",'
        " got a number",
        "categories['task.error'].sounds[1]: unknown field 'gain'",
        "categories['task.error'].sounds[1].file: expected a string, got a number",
        "categories['task.error'].sounds[1].label: at most 256 characters, got 257",
        "categories['input.required']: unknown field 'loop'",
    ]
