"""The shared masker against a corpus of credential shapes (tests/fixtures/secrets/)."""

from __future__ import annotations

import pytest

from lookout import mask
from tests.helpers import FIXTURES

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
    assert mask.MASK in out


@pytest.mark.parametrize("text", _benign())
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert mask.mask(text) == text


@pytest.mark.parametrize(("secret", "text"), _leaks(), ids=[t for _, t in _leaks()])
def test_a_cut_secret_leaves_no_prefix(secret: str, text: str) -> None:
    # The hook already cuts a summary to 200 characters (events.one_line, with …): masking a cut
    # text must still hide the part of the secret that is left.
    at = text.index(secret) + len(secret) // 2
    half = text[text.index(secret) : at]
    out = mask.mask(text[:at] + "…")
    assert out.count(half) < text[:at].count(half)  # the secret's own half is gone


def test_masking_is_idempotent_and_bounded() -> None:
    for secret, text in _leaks():
        once = mask.mask(text)
        assert mask.mask(once) == once
    assert mask.mask("") == ""
    assert len(mask.mask("a=" * 50_000)) <= 100_000
