"""Exact attention through flint matrices (``sim.engine.exact``) gives the very same rationals as the
generic per-entry path, with and without masks; off-grid scores still raise; and the bench's
plain-numpy baseline and table rows are right."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from attnsim.sim.masks import Causal, SlidingWindow
from attnsim.sim.numerics import NumericsError, get_numerics
from attnsim.sim.numerics.base import Numerics
from attnsim.verify.bench.engine import direct_attention
from attnsim.verify.cli.bench import rows

EX = get_numerics("exact", 7)
SEEDED = get_numerics("exact:64:seeded", 7)  # z = p/q with q > 1: the denominator powers are used too


def _qkv(rng, n, nk, dk, dv, den=4):
    f = lambda shape: EX.array(np.vectorize(lambda v: Fraction(int(v), den), otypes=[object])(  # noqa: E731
        rng.integers(-4, 5, size=shape)))
    return f((n, dk)), f((nk, dk)), f((nk, dv))


def generic(q, k, v, allowed=None, nm=EX):
    return Numerics.attention(nm, q, k, v, allowed)


@pytest.mark.parametrize("nm", [EX, SEEDED], ids=["z=2", "seeded"])
@pytest.mark.parametrize("n, nk, allowed", [
    (5, 5, None), (6, 9, None), (7, 7, Causal().materialize(7)), (8, 8, SlidingWindow(2).materialize(8)),
    (3, 4, np.array([[True, False, True, False], [False] * 4, [True] * 4])),  # a fully masked row -> 0
])
def test_flint_attention_equals_generic(nm, n, nk, allowed):
    rng = np.random.default_rng(n * nk)
    q, k, v = _qkv(rng, n, nk, 3, 2)
    fast = nm.attention(q, k, v, allowed)
    slow = generic(q, k, v, allowed, nm)
    assert fast.shape == slow.shape
    assert all(a == b for a, b in zip(fast.reshape(-1), slow.reshape(-1)))
    if allowed is not None and not allowed.all(axis=1).all() and not allowed.any(axis=1).all():
        assert all(x == 0 for x in fast[1])


@pytest.mark.parametrize("other", ["exact:64:3", "exact:64:seeded", "exact:32"])
def test_wrong_weights_would_be_caught(other):
    """Another base (or grid) gives different rationals: equality is a real test."""
    rng = np.random.default_rng(0)
    q, k, v = _qkv(rng, 4, 4, 2, 2)
    nm = get_numerics(other, 8)
    assert any(a != b for a, b in zip(EX.attention(q, k, v).reshape(-1), nm.attention(q, k, v).reshape(-1)))


def test_off_grid_scores_still_raise():
    q = EX.array([[Fraction(1, 3)]])
    with pytest.raises(NumericsError, match="grid"):
        EX.attention(q, EX.array([[Fraction(1, 5)]]), EX.array([[1]]))


def test_direct_attention_baseline_is_softmax():
    rng = np.random.default_rng(0)
    X, WQ, WK, WV = rng.standard_normal((20, 4)), *(rng.standard_normal((4, 4)) for _ in range(3))
    ref = get_numerics("float64", 0).attention(X @ WQ, X @ WK, X @ WV)
    assert np.allclose(direct_attention(X, WQ, WK, WV), ref, rtol=1e-12, atol=1e-14)


def test_bench_table_rows_show_each_ratio_or_a_stated_skip():
    f = {"N": 8, "M": 2, "d": 2, "fused/direct": 1.05, "paper/direct": 2.0, "fused/paper": 0.52, "runs": 15,
         "target": 1.2,
         "gflops": {"direct": 1.0, "fused": 1.0, "paper": 1.0}, "torch": {"skipped": "torch is not installed"}}
    rec = {"gemm_gflops": 10.0, "float64": [f],
           "exact": {"N": 128, "M": 16, "d": 4, "z": "2", "reference fraction/flint": 20.0,
                     "simulation fraction/flint": 15.0},
           "torch_oracle": {"N": 8192, "M": 512, "d": 64, "ratio": 1.234, "target": 1.5, "error_bits": 40.7},
           "dask": {"N": 8, "M": 2, "d": 2, "dask/serial": 1.3}}
    table = {r[0]: r for r in rows(rec)}
    assert (
        table["torch oracle, batched / torch SDPA (CPU)"][1] == "1.23"
        and "40.7 bits" in table["torch oracle, batched / torch SDPA (CPU)"][2]
        and "target <= 1.5" in table["torch oracle, batched / torch SDPA (CPU)"][2]
    )
    rec["torch_oracle"] = {"skipped": "torch is not installed"}
    assert rows(rec)[-2][1] == "skipped"
    assert table["fused / direct"][1] == "1.05" and table["paper / direct"][1] == "2.00"
    assert "target <= 1.2" in table["fused / direct"][2] and "median of 15" in table["fused / direct"][2]
    other = rows({**rec, "float64": [{**f, "M": 128, "target": None}]})  # the target is the quick size's only
    assert "target" not in next(r for r in other if r[0] == "fused / direct")[2]
    assert table["fused / torch SDPA (CPU)"][1] == "skipped" and "not installed" in table["fused / torch SDPA (CPU)"][2]
    assert table["exact: fraction / flint, attention"][1] == "20.0x"
    sim_row = table["exact: fraction / flint, simulation"]
    assert sim_row[1] == "15.0x" and "N=128" in sim_row[2]
    assert table["Dask (2 workers) / serial"][1] == "1.30"


def test_flint_to_grid_matches_fraction_rounding():
    vals = [Fraction(5, 2), Fraction(7, 2), Fraction(-5, 2), Fraction(1, 3), Fraction(-7, 6), Fraction(3, 4),
            Fraction(2**200 + 1, 2**199), Fraction(-1, 4), Fraction(0)]
    a = EX.array(np.array(vals, dtype=object))
    got = [EX.to_fraction_or_float(x) for x in EX.to_grid(a, 2)]
    assert got == [Fraction(round(v * 2), 2) for v in vals]


def test_bench_exact_figures_compare_the_same_rationals():
    """The bench's exact figures run both backends on one case (equality asserted inside); no timing asserted."""
    from attnsim.verify.bench.engine import exact_figures

    rec = exact_figures(12, 4, 2, 5)
    assert (rec["N"], rec["z"]) == (12, "2")
    assert rec["simulation fraction/flint"] > 0 and rec["reference fraction/flint"] > 0
