"""The ANNA definition checker (anna.def_anna) returns reasons and catches broken mechanisms."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.sim.anna.attention import collision_counts
from attnsim.sim.anna.constraints import RationalWeights, check_anna
from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.lsh import HyperplaneLSH, PStableLSH, draw_tables

# one query at the origin; keys at distances 0.5 (near), 2 (inside c r = 3) and 10 (far)
Q = np.array([[0.0, 0.0]])
K = np.array([[0.5, 0.0], [0.0, 2.0], [10.0, 0.0]])
R, C, ELL = 1.0, 3.0, 4


def rules(w) -> set[str]:
    return {v.rule for v in check_anna(w, Q, K, r=R, c=C, ell=ELL)}


def test_a_valid_row_passes():
    assert rules(np.array([[0.5, 0.5, 0.0]])) == set()
    assert rules(RationalWeights(np.array([[1, 1, 0]]), np.array([2]))) == set()


def test_worst_case_weight_is_allowed_exactly():
    # n = 2 keys within c r: the near key may get as little as 1/((2-1)*4+1) = 1/5
    assert rules(RationalWeights(np.array([[1, 4, 0]]), np.array([5]))) == set()
    assert rules(RationalWeights(np.array([[1, 5, 0]]), np.array([6]))) == {"coverage"}


@pytest.mark.parametrize("w, broken", [
    (np.array([[0.5, 0.0, 0.5]]), {"locality"}),
    (np.array([[0.0, 1.0, 0.0]]), {"coverage"}),
    (np.array([[0.5, 0.3, 0.0]]), {"normalized"}),
    (np.array([[1.2, -0.2, 0.0]]), {"nonnegative"}),
    (np.array([[0.0, 0.0, 0.0]]), {"coverage"}),
])
def test_broken_mechanisms_are_caught(w, broken):
    assert rules(w) == broken


def test_softmax_attention_breaks_locality():
    """Plain softmax gives every key positive weight, so far keys break the definition."""
    scores = Q @ K.T
    w = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    assert "locality" in rules(w)


def test_a_mechanism_that_adds_a_far_key_is_caught():
    rng = np.random.default_rng(0)
    tables = draw_tables(PStableLSH(2, 0.5), 8, 2, rng)
    counts = collision_counts(Q, K, tables)
    counts[0, 2] += 1  # the broken mechanism: also retrieves the far key
    found = check_anna(RationalWeights.from_counts(counts), Q, K, r=R, c=C, ell=8)
    assert [str(v).split(":")[0] for v in found if v.rule == "locality"] == ["locality (row 0, key 2)"]


def test_algorithm_1_with_many_tables_satisfies_the_definition():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((12, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    k = q + 0.01 * rng.standard_normal(q.shape)
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    tables = draw_tables(HyperplaneLSH(4), 30, 12, rng)
    w = RationalWeights.from_counts(collision_counts(q, k, tables))
    assert check_anna(w, q, k, r=0.1, c=14.0, ell=30) == []


@pytest.mark.parametrize("kwargs, param", [(dict(r=-1.0), "r"), (dict(c=0.5), "c"), (dict(ell=0), "ell")])
def test_bad_parameters(kwargs, param):
    args = dict(r=R, c=C, ell=ELL) | kwargs
    with pytest.raises(AnnaInputError, match=f"^{param}"):
        check_anna(np.array([[1.0, 0.0, 0.0]]), Q, K, **args)


def test_wrong_weight_shape():
    with pytest.raises(AnnaInputError, match="^weights"):
        check_anna(np.ones((1, 2)), Q, K, r=R, c=C, ell=ELL)
