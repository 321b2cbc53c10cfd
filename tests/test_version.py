"""lookout.version: the version is written once, in pyproject.toml. A checkout reads it there;
an installed copy (a runtime, a pip install) from its package metadata; the plugin manifest says
the same; no hook looks it up."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lookout import version
from lookout.install import runtime, runtimes
from tests.helpers import ROOT, VERSION


def bumped_checkout(tmp_path: Path, number: str) -> Path:
    """A copy of this checkout whose pyproject.toml says `number`, and nothing else does."""
    checkout = tmp_path / "checkout"
    for sub in ("lookout", "hooks"):
        shutil.copytree(ROOT / sub, checkout / sub, ignore=shutil.ignore_patterns("__py*"))
    shutil.copy(ROOT / "install.py", checkout / "install.py")
    text = (ROOT / "pyproject.toml").read_text()
    assert text.count(f'version = "{VERSION}"') == 1
    (checkout / "pyproject.toml").write_text(text.replace(VERSION, number, 1))
    return checkout


def said(argv: list[str], cwd: Path) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def test_pyproject_is_the_one_place_the_version_is_written(tmp_path: Path) -> None:
    checkout = bumped_checkout(tmp_path, "9.8.7")
    # -S: no site-packages, so no editable install of this checkout: the copy's own package.
    python = [sys.executable, "-S"]
    assert said([*python, "-m", "lookout", "--version"], checkout) == "lookout 9.8.7\n"
    assert said([*python, "install.py", "--version"], checkout) == "lookout 9.8.7\n"
    assert said([*python, "-m", "lookout", "--version"], ROOT) == f"lookout {VERSION}\n"


def test_the_plugin_manifest_says_the_same() -> None:
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert plugin["version"] == VERSION


def test_a_checkout_reads_pyproject_before_metadata_an_old_install_left(tmp_path: Path) -> None:
    # `pip install -e .` leaves lookout.egg-info in the checkout; a later bump of pyproject.toml
    # is the truth until the next pip install.
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "lookout"\nversion = "2.0.0"\n')
    info = tmp_path / "lookout.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: lookout\nVersion: 1.0.0\n")
    assert version.of(str(tmp_path)) == "2.0.0"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\nversion = "3.0.0"\n')
    assert version.of(str(tmp_path)) == "1.0.0"  # another project's pyproject says nothing
    shutil.rmtree(info)
    rel, data = version.metadata("4.5.6")  # what a runtime holds
    (tmp_path / rel).parent.mkdir()
    (tmp_path / rel).write_bytes(data)
    assert version.of(str(tmp_path)) == "4.5.6"
    assert version.of(str(tmp_path / "nowhere")) == version.UNKNOWN  # said as it is


@pytest.mark.real
def test_a_runtime_carries_the_version_of_the_checkout_it_was_built_from(
    tmp_path: Path, isolated_env: Path
) -> None:
    checkout = bumped_checkout(tmp_path, "9.8.7")
    home = tmp_path / "rt"
    runtime.install_code(home, sys.executable, checkout)
    built = runtimes.current(home)
    assert built is not None and built.name.startswith("9.8.7-")
    manifest = runtimes.read_manifest(built)
    assert manifest is not None and manifest["lookout"] == "9.8.7"
    assert runtimes.intact(built)
    # The runtime has no pyproject.toml: its `lookout --version` reads the metadata beside it.
    entry = str(home / runtimes.ENTRY)
    assert said([sys.executable, "-I", entry, "--version"], tmp_path) == "lookout 9.8.7\n"
