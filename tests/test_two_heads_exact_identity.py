"""Every exact Two Heads construction agrees with the reference and spends exactly the
registry's count (named cases: multi-layer, partial blocks, both length conventions, several ψ,
exact / symbolic / mp / float64)."""

from __future__ import annotations

import math

import pytest
from named_cases import TWO_HEADS_EXACT_CASES

from attnsim.verify.check import run_check


@pytest.mark.parametrize("claim, case", TWO_HEADS_EXACT_CASES, ids=[c.name for _, c in TWO_HEADS_EXACT_CASES])
def test_named_case_passes(claim, case):
    r = run_check(claim, case.params, case.numerics, case.seed)
    assert r["verdict"] == "pass", r["reasons"]
    assert r["agree"] is True
    assert r["calls"] == r["predicted_calls"]
    for name, value in r["predicted"].items():
        assert r["counts"][name] == value, name
    if case.numerics in ("exact", "fraction") or case.numerics.startswith("symbolic"):
        assert r["error_bits"] == math.inf


def test_issue_example_thm_3_4():
    """The issue's figure: 3 layers, 4 heads, an oracle of 2 heads and 2 layers, exact."""
    r = run_check("two_heads.thm_3_4", dict(N=48, M=8, d=8, H=4, L=3, Hp=2, Lp=2), "exact")
    assert r["verdict"] == "pass" and r["error_bits"] == math.inf
    assert r["calls"] == r["predicted_calls"] == 3 * math.ceil(2 * 4 * 36 / 4) == 216
    assert r["counts"]["abstract_calls"] == 216 and r["counts"]["jobs"] == 864
    # the ledger's widest call: 4 slots of (2·2 + 2 input, 2 output) = 32 = O(d H'L'/H)
    assert r["counts"]["oracle_dim"] == 2 * 2 * (3 * 2 + 2) == 32
    assert r["counts"]["oracle_len"] == 9 and r["counts"]["rounds"] == 3


def test_causal_count_is_the_papers_2n2():
    """Thm 3.5, one head: 4·n(n−1)/2 + 2n = 2n² calls (fused: n²)."""
    for scheme, per in (("paper", 2), ("fused", 1)):
        r = run_check("two_heads.thm_3_5", dict(N=20, M=4, d=2, H=1, L=1, Hp=1, Lp=1, psi="identity",
                                                  scheme=scheme), "exact")
        assert r["verdict"] == "pass" and r["calls"] == per * 25


def test_window_count():
    """Thm 5.1, one head: 2 + 4·⌈(N − s − r)/(M − s − r)⌉ calls; O(N/M)."""
    r = run_check("two_heads.thm_5_1", dict(N=30, M=8, d=2, H=1, L=1, Hp=1, Lp=1, window=3, sinks=2,
                                              psi="identity"), "exact")
    assert r["verdict"] == "pass" and r["calls"] == 2 + 4 * math.ceil(25 / 3)


def test_dim_stays_within_bound():
    """The oracle width is H'L'(3d/H + 2 + fused): O(d·H'·L'/H), read off the ledger."""
    for Hp, Lp in ((1, 1), (2, 3), (4, 1)):
        r = run_check("two_heads.thm_3_4", dict(N=8, M=4, d=8, H=4, L=1, Hp=Hp, Lp=Lp, psi="identity"), "float64")
        assert r["counts"]["oracle_dim"] == Hp * Lp * (3 * 2 + 2)
        assert r["counts"]["oracle_dim"] <= 4 * 8 * Hp * Lp / 4
        assert r["containment"]["oracle_dim"]["verdict"] == "tight"
