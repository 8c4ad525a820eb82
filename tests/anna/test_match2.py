"""Match2 with one layer, one head, dimension 1 (anna.thm_5_2); SUM with one ANNA layer."""

from __future__ import annotations

import numpy as np
import pytest
from anna_cases import MATCH2_CASES
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.sim.anna.constructions import match2_mechanism, match2_transformer, sum_transformer
from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.tasks import match2_batch, match2_labels, sum_inputs
from attnsim.sim.anna.transformer import size_from_ledger
from attnsim.sim.ledger import Ledger


def test_labels_by_definition():
    assert match2_labels(np.array([1, 36, 5, 0, 74]), 37).tolist() == [1, 1, 0, 1, 1]
    assert match2_labels(np.array([5, 3]), 10).tolist() == [1, 0]  # 5 + 5 = 10 matches itself


@pytest.mark.parametrize("case", MATCH2_CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("kind", ["ema", "alg1"])
def test_match2_exact_with_one_head_of_dimension_one(case, kind):
    N, M = case.params["N"], case.params["modulus"]
    model = match2_transformer(M, match2_mechanism(kind, seed=case.seed))
    led = Ledger()
    rng = np.random.default_rng(case.seed)
    for _ in range(20):
        x = rng.integers(0, 3 * M, size=N)
        assert np.array_equal(model(x, ledger=led), match2_labels(x, M))
    assert size_from_ledger(led) == {"layers": 1, "heads": 1, "qk_dim": 1, "v_dim": 1,
                                     "embedding": 2}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 74), min_size=1, max_size=32))
def test_match2_exact_on_every_generated_input(x):
    x = np.array(x)
    for kind in ("ema", "alg1"):
        led = Ledger()
        assert np.array_equal(match2_transformer(37, match2_mechanism(kind))(x, ledger=led), match2_labels(x, 37))
        assert size_from_ledger(led) == {"layers": 1, "heads": 1, "qk_dim": 1, "v_dim": 1, "embedding": 2}


@pytest.mark.parametrize("N, M", [(32, 37), (64, 1009), (8, 5)])
def test_balanced_batches_fill_all_four_bins(N, M):
    xs, ys = match2_batch(np.random.default_rng(0), 32, N=N, modulus=M)
    bins = np.minimum(3, (4 * ys.mean(axis=1)).astype(int))
    assert xs.shape == (32, N) and np.bincount(bins, minlength=4).tolist() == [8, 8, 8, 8]
    assert xs.min() >= 1 and xs.max() <= M - 1


def test_sum_by_one_anna_layer():
    x = sum_inputs(np.random.default_rng(2), 50, 10**6)
    led = Ledger()
    assert sum_transformer(50)(x, ledger=led)[-1] == x.sum()
    assert size_from_ledger(led)["layers"] == 1


@pytest.mark.parametrize("call, param", [
    (lambda: match2_mechanism("softmax"), "mechanism"),
    (lambda: match2_transformer(1, match2_mechanism("ema")), "modulus"),
    (lambda: match2_batch(np.random.default_rng(0), 6), "batch"),
    (lambda: match2_batch(np.random.default_rng(0), 8, modulus=4), "modulus"),
])
def test_bad_parameters(call, param):
    with pytest.raises(AnnaInputError, match=f"^{param}"):
        call()
