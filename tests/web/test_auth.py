"""The dashboard's token file: made once, private, refused when anyone else could read it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lookout.errors import LookoutError
from lookout.web import auth


def test_the_token_is_made_once_private_and_random(state_dir: Path) -> None:
    token = auth.load_or_create(str(state_dir))
    path = state_dir / "serve.token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o700
    assert len(token) >= 43 and token.isascii()
    assert auth.load_or_create(str(state_dir)) == token
    path.unlink()
    assert auth.load_or_create(str(state_dir)) != token  # deleting it revokes every login


def test_a_token_file_others_can_read_is_refused(state_dir: Path) -> None:
    auth.load_or_create(str(state_dir))
    path = state_dir / "serve.token"
    path.chmod(0o644)
    with pytest.raises(LookoutError) as err:
        auth.load_or_create(str(state_dir))
    assert "is not a private file of yours (mode 644" in str(err.value)
    assert err.value.hint == f"remove it (`rm {path}`); `lookout serve` makes a new one"


def test_a_symlinked_token_file_is_refused(state_dir: Path, tmp_path: Path) -> None:
    state_dir.mkdir(mode=0o700)
    elsewhere = tmp_path / "planted"
    elsewhere.write_text("x" * 50)
    elsewhere.chmod(0o600)
    os.symlink(elsewhere, state_dir / "serve.token")
    with pytest.raises(LookoutError) as err:
        auth.load_or_create(str(state_dir))
    assert str(err.value).startswith("cannot read the dashboard token")


def test_a_short_token_is_refused(state_dir: Path) -> None:
    state_dir.mkdir(mode=0o700)
    (state_dir / "serve.token").write_text("short\n")
    (state_dir / "serve.token").chmod(0o600)
    with pytest.raises(LookoutError, match="too short"):
        auth.load_or_create(str(state_dir))


def test_matches_compares_whole_tokens() -> None:
    assert auth.matches("a" * 43, "a" * 43)
    assert not auth.matches("a" * 43, "a" * 42)
    assert not auth.matches("a" * 43, None)
    assert not auth.matches("a" * 43, "")
    assert not auth.matches("a" * 43, "é" * 43)
