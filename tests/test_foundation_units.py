"""Numerics, masks, ledger, oracle limits, the claims registry and theory: unit tests."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnsim.paper_refs import SchemaError, _claim, all_claims, load
from attnsim.sim.errors import OracleSpecError
from attnsim.sim.ledger import Ledger
from attnsim.sim.masks import Causal, Full, Sink, SlidingWindow
from attnsim.sim.numerics import NumericsError, get_numerics
from attnsim.sim.oracle import Oracle, OracleCall, OracleHead, OracleLayer, OracleSpec
from attnsim.theory.bounds import contained


@pytest.mark.parametrize("name", ["exact", "fraction", "symbolic:4", "mp:80", "float64"])
def test_fully_masked_row_outputs_zero(name):
    nm = get_numerics(name, seed=1)
    q, k, v = nm.array([[1], [1]]), nm.array([[1], [0]]), nm.array([[2], [3]])
    allowed = np.array([[False, False], [True, True]])
    out = nm.attention(q, k, v, allowed)
    assert out[0, 0] == 0
    assert out[1, 0] != 0


def test_exact_weights_are_multiplicative():
    nm = get_numerics("exact", seed=5)
    s = nm.array([[Fraction(3, 64), Fraction(5, 64), Fraction(8, 64)]])
    w = nm.weights(s, None)
    assert w[0, 0] * w[0, 1] == w[0, 2]


def test_exact_refuses_off_grid_scores():
    nm = get_numerics("exact:4")
    with pytest.raises(NumericsError, match="grid"):
        nm.weights(nm.array([[Fraction(1, 3)]]), None)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_inputs_are_refused(bad):
    for name in ("exact", "mp:64", "float64"):
        with pytest.raises(NumericsError, match="non-finite"):
            get_numerics(name).array(np.array([[1.0, bad]]), "X")


def test_unknown_numerics_names_the_parameter():
    with pytest.raises(NumericsError, match="^numerics: "):
        get_numerics("quad")
    with pytest.raises(NumericsError, match="mp"):
        get_numerics("mp")


def test_mp_contexts_are_independent():
    lo, hi = get_numerics("mp:30"), get_numerics("mp:300")
    third_lo = lo.div(lo.array([[1]]), lo.array([[3]]))[0, 0]
    third_hi = hi.div(hi.array([[1]]), hi.array([[3]]))[0, 0]
    assert abs(float(third_hi) - 1 / 3) < 1e-15
    assert third_lo != third_hi  # 30-bit rounding is visible against 300 bits


@pytest.mark.parametrize("density", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_mp_masked_attention_row_by_row_is_the_dense_evaluation(density):
    from attnsim.sim.numerics.base import Numerics

    nm, rng = get_numerics("mp:192"), np.random.default_rng(7)
    q, k, v = (nm.array(rng.normal(size=shape) * 3) for shape in ((9, 2), (11, 2), (11, 3)))
    allowed = rng.random((9, 11)) < density
    dense, rows = Numerics.attention(nm, q, k, v, allowed), nm.attention(q, k, v, allowed)
    assert [x._mpf_ for x in rows.reshape(-1)] == [x._mpf_ for x in dense.reshape(-1)]


def test_masks_match_definitions():
    n = 7
    for mask in (Full(), Causal(), SlidingWindow(3), Sink(2, 2)):
        mat = mask.materialize(n)
        for i in range(n):
            for j in range(n):
                assert mat[i, j] == mask.allowed(i, j)
    assert Causal().block_count(8, 4) == 3
    assert Full().block_count(8, 4) == 4


def test_ledger_summaries():
    led = Ledger()
    led.record("oracle", "a.step1", round=1, shape=(5, 3), flops=10)
    led.record("oracle", "a.step2", round=1, shape=(4, 7), flops=5)
    led.record("processing", "combine", round=1, amount=3)
    assert led.total("oracle") == 2 and led.total("oracle", "a.step1") == 1
    assert led.by_kind() == {"oracle": 2, "processing": 3}
    assert led.max_shape() == (5, 7) and led.rounds() == 1 and led.flops("oracle") == 15
    led.record("oracle", "b.step1", round=2, shape=(1, 1))
    led.record("oracle", "c.step1", round=3, shape=(1, 1))
    assert led.rounds("oracle", "a.") == 1 and led.rounds("oracle", ("a.", "b.")) == 2 and led.rounds("oracle") == 3
    with pytest.raises(ValueError):
        led.record("oracle", "x", amount=-1)


def _call(nm, n, width, heads=1, layers=1, tag="t"):
    X = nm.ones((n, width))
    w = width // heads
    head = OracleHead(nm.ones((w, 1)), nm.ones((w, 1)), nm.ones((w, 1)))
    return OracleCall(tag, X, tuple(OracleLayer(tuple([head] * heads)) for _ in range(layers)))


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=6, width=2), "sequence length 6 exceeds max_len 5"),
    (dict(n=3, width=8), "width 8 exceeds dim 4"),
    (dict(n=3, width=4, heads=2), "2 heads"),
    (dict(n=3, width=4, layers=2), "2 layers"),
])
def test_oracle_refuses_calls_outside_its_spec(kwargs, match):
    nm = get_numerics("exact")
    oracle = Oracle(OracleSpec(max_len=5, heads=1, layers=1, dim=4), nm)
    with pytest.raises(OracleSpecError, match=match):
        oracle.run([_call(nm, **kwargs)])
    assert oracle.ledger.total() == 0  # a refused call is not counted


def test_oracle_counts_each_call_and_round():
    nm = get_numerics("exact")
    oracle = Oracle(OracleSpec(max_len=5, dim=4), nm)
    oracle.run([_call(nm, 3, 2), _call(nm, 4, 2)])
    oracle.run([_call(nm, 2, 2)])
    assert oracle.ledger.total("oracle") == 3 and oracle.ledger.rounds() == 2


def test_registry_loads_every_paper_and_validates():
    assert len(load("two_heads").claims) >= 14
    assert "two_heads.lemma_3_1" in all_claims()
    with pytest.raises(SchemaError, match="kind"):
        _claim("two_heads", dict(id="two_heads.x", label="X", kind="guess", statement="s"), "test")
    with pytest.raises(SchemaError, match="start with"):
        _claim("two_heads", dict(id="anna.x", label="X", kind="lemma", statement="s"), "test")
    with pytest.raises(SchemaError, match="bound or an exact"):
        _claim("two_heads", dict(id="two_heads.x", label="X", kind="lemma", statement="s",
                                 resources={"calls": {"note": "x"}}), "test")


def test_theory_containment_can_fail():
    ok = _claim("two_heads", dict(id="two_heads.x", label="X", kind="lemma", statement="s",
                                  resources={"calls": {"bound": "n**2", "exact": "2*n**2 + n"}}), "t")
    bad = _claim("two_heads", dict(id="two_heads.y", label="Y", kind="lemma", statement="s",
                                   resources={"calls": {"bound": "n", "exact": "n**2"}}), "t")
    assert contained(ok, "calls").finite and contained(ok, "calls").leading_constant == "2"
    assert not contained(bad, "calls").finite


@given(st.lists(st.integers(-64, 64), min_size=1, max_size=6), st.integers(0, 1000))
def test_exact_softmax_rows_sum_to_one(scores, seed):
    nm = get_numerics("exact", seed)
    s = nm.array([[Fraction(x, 64) for x in scores]])
    w = nm.weights(s, None)
    total = sum(w[0])
    assert sum(x / total for x in w[0]) == 1
