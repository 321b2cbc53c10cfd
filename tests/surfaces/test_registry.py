"""lookout.surfaces.registry: every answer surface, found by its channel type's ANSWERS, each
implementing lookout.surfaces.base.Surface; every list of surface names is the registry's."""

from __future__ import annotations

import ast

import pytest

from lookout.channels import registry as channels
from lookout.remote import answers
from lookout.surfaces import home_assistant, registry
from tests.helpers import ROOT


def protocol_members() -> set[str]:
    """The members of base.Surface (a class for the type checker only: read from the source)."""
    tree = ast.parse((ROOT / "lookout" / "surfaces" / "base.py").read_text())
    (proto,) = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "Surface"]
    return {n.name for n in proto.body if isinstance(n, ast.FunctionDef)}


def test_each_channel_type_that_answers_has_its_surface_and_each_surface_a_type() -> None:
    named = {kind.ANSWERS for kind in channels.CHANNELS.values() if kind.ANSWERS is not None}
    assert named == set(registry.SURFACES) == set(channels.ANSWERING)
    for kind in channels.CHANNELS.values():
        ch = {"type": kind.NAME}
        surface = registry.of(ch)  # type: ignore[arg-type]
        assert (surface.NAME if surface is not None else None) == kind.ANSWERS


@pytest.mark.parametrize("name", sorted(registry.SURFACES))
def test_each_surface_implements_the_interface(name: str) -> None:
    surface = registry.SURFACES[name]
    members = protocol_members()
    assert members == {"NAME", "LABEL", "bind", "sent", "take", "late", "shows_outcome"}
    for member in members:
        assert hasattr(surface, member), f"{name} lacks {member}"
    assert name == surface.NAME and surface.LABEL


def test_every_list_of_surface_names_is_the_registrys() -> None:
    # What answers.answer and answers.mint accept, and what the installer names.
    assert answers.SURFACES == registry.NAMES == (*registry.SURFACES, home_assistant.NAME)
    assert set(registry.LABELS) == set(registry.NAMES)
    with pytest.raises(ValueError):
        answers.answer("/nonexistent", "r", "n", "allow", surface="nosuchsurface", by="x")
