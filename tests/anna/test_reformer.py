"""Fixed-chunk Reformer: receptive fields grow as B^L, and an input defeats O(1) layers (anna.prop_e_3)."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.reformer import (
    adversarial_pair,
    butterfly_patterns,
    receptive_fields,
    reformer_sum_model,
    validate_pattern,
)
from attnsim.sim.ledger import Ledger


@pytest.mark.parametrize("N, B", [(64, 2), (81, 3), (16, 4)])
def test_receptive_field_grows_as_B_to_the_L(N, B):
    L = round(np.log(N) / np.log(B))
    led = Ledger()
    dep = receptive_fields(butterfly_patterns(N, B, L), B, ledger=led)
    assert [e.amount for e in led.entries] == [B ** (layer + 1) for layer in range(L)]
    assert dep.all()


def test_any_fixed_pattern_stays_within_B_to_the_L():
    rng = np.random.default_rng(0)
    N, B, L = 24, 3, 2
    patterns = [rng.permutation(N) // B for _ in range(L)]
    dep = receptive_fields(patterns, B)
    assert dep.sum(axis=1).max() <= B ** L
    want = np.eye(N, dtype=bool)  # D^l(i): the tokens of i's chunk's fields, layer by layer
    for labels in patterns:
        want = ((labels[:, None] == labels[None, :]).astype(np.int64) @ want.astype(np.int64)) > 0
    assert (dep == want).all()


def test_a_failing_input_for_too_few_layers():
    N, B, L = 64, 2, 4
    patterns = butterfly_patterns(N, B, L)
    x = np.arange(1, N + 1)
    x2, j = adversarial_pair(patterns, B, x, delta=1000)
    assert reformer_sum_model(patterns, B, x)[-1] == reformer_sum_model(patterns, B, x2)[-1]
    assert x2.sum() - x.sum() == 1000
    # so at least one of the two inputs is answered with an error >= 500 = M/2
    assert max(abs(reformer_sum_model(patterns, B, y)[-1] - y.sum()) for y in (x, x2)) >= 500


def test_enough_layers_compute_sum():
    patterns = butterfly_patterns(27, 3, 3)
    x = np.random.default_rng(1).integers(1, 100, 27)
    assert adversarial_pair(patterns, 3, x, 5) is None
    assert reformer_sum_model(patterns, 3, x)[-1] == x.sum()


@pytest.mark.parametrize("call, param", [
    (lambda: validate_pattern(np.array([0, 0, 1]), 2), "patterns"),
    (lambda: butterfly_patterns(10, 3, 1), "N"),
    (lambda: butterfly_patterns(8, 1, 1), "B"),
])
def test_bad_patterns(call, param):
    with pytest.raises(AnnaInputError, match=f"^{param}"):
        call()
