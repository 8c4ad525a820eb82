"""Twins are declared with a typed kind and checked when registered: one clear line, never a KeyError later."""

from __future__ import annotations

import typing

import pytest

from attnsim.verify.twins import KINDS, TwinError, TwinKind, all_twins, twin


def test_the_kind_type_names_every_kind_and_every_registered_twin_passes() -> None:
    assert set(typing.get_args(TwinKind)) == set(KINDS)
    assert all(t.kind in KINDS for t in all_twins())


@pytest.mark.parametrize(("name", "kind", "says"), [
    ("calls", "growth", "a growth twin is named growth:<resource>"),
    ("growth:no_such_resource", "growth", "growth:calls"),
    ("x", "bogus", "kind must be one of construction"),
])
def test_a_wrong_declaration_is_one_line_at_registration(name, kind, says) -> None:
    with pytest.raises(TwinError) as err:
        twin("two_heads.lemma_3_1", name, "a badly declared twin", kind=kind)
    assert says in str(err.value) and "\n" not in str(err.value)
