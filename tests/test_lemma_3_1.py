"""two_heads.lemma_3_1 end to end: exact identity, counts equal to the registry's formula, and a
broken construction that the check catches."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from named_cases import LEMMA_3_1_CASES

import attnsim.sim.two_heads.worst_case as worst_case
from attnsim.verify.check import run_check


@pytest.mark.parametrize("case", LEMMA_3_1_CASES, ids=lambda c: c.name)
def test_named_case_passes(case):
    r = run_check("two_heads.lemma_3_1", case.params, case.numerics, case.seed)
    assert r["verdict"] == "pass", r["reasons"]
    assert r["calls"] == r["predicted_calls"]
    assert r["agree"] is True
    if case.numerics in ("exact", "fraction") or case.numerics.startswith("symbolic"):
        assert r["error_bits"] == math.inf


def test_issue_figures_exact_and_fused():
    paper = run_check("two_heads.lemma_3_1", dict(N=64, M=8, d=4), "exact")
    fused = run_check("two_heads.lemma_3_1", dict(N=64, M=8, d=4, scheme="fused"), "exact")
    assert paper["calls"] == paper["predicted_calls"] == 2 * 8**2
    assert fused["calls"] == fused["predicted_calls"] == 8**2
    assert paper["verdict"] == fused["verdict"] == "pass"


def test_precision_figures():
    assert run_check("two_heads.lemma_3_1", dict(N=32, M=8, d=4), "mp:200")["error_bits"] >= 190
    assert run_check("two_heads.lemma_3_1", dict(N=64, M=8, d=4), "float64")["error_bits"] >= 45


def test_broken_construction_is_caught(monkeypatch):
    """Skip the last block pair: the outputs differ and the call count no longer matches."""
    original = worst_case.head_jobs

    def skip_one(*args, **kwargs):
        jobs, plans = original(*args, **kwargs)
        keep = [i for i, p in enumerate(plans) if not (p.q0 == 0 and p.t == 1)]
        return [jobs[i] for i in keep], [plans[i] for i in keep]

    monkeypatch.setattr(worst_case, "head_jobs", skip_one)
    r = run_check("two_heads.lemma_3_1", dict(N=16, M=4, d=2), "exact")
    assert r["verdict"] == "fail"
    assert r["agree"] is False
    assert any("calls" in reason for reason in r["reasons"])


def test_wrong_decode_is_caught(monkeypatch):
    """A decode that forgets the padding correction breaks agreement on a partial block."""
    import attnsim.sim.two_heads.blocks as blocks

    monkeypatch.setattr(blocks, "decode_A", lambda pad: _plain_decode)
    r = run_check("two_heads.lemma_3_1", dict(N=13, M=4, d=2), "exact")
    assert r["verdict"] == "fail" and r["agree"] is False


def _plain_decode(nm, H):
    p = H[:, :1]
    return nm.div(p, nm.sub(nm.ones(p.shape), p))


@given(N=st.integers(1, 12), M=st.integers(2, 5), d=st.integers(1, 3), seed=st.integers(0, 10**6),
       scheme=st.sampled_from(["paper", "fused"]), length=st.sampled_from(["paper", "strict"]))
def test_property_exact_identity(N, M, d, seed, scheme, length):
    r = run_check("two_heads.lemma_3_1", dict(N=N, M=M, d=d, scheme=scheme, length=length), "exact", seed)
    assert r["verdict"] == "pass", r["reasons"]


def test_calls_depend_only_on_shapes():
    a = run_check("two_heads.lemma_3_1", dict(N=10, M=3, d=2), "exact", seed=1)
    b = run_check("two_heads.lemma_3_1", dict(N=10, M=3, d=2, input="large"), "exact", seed=7)
    assert a["calls_by_tag"] == b["calls_by_tag"]


@pytest.mark.parametrize("numerics", ["exact", "mp:64"])
def test_an_output_wrong_by_its_whole_size_agrees_to_zero_bits_not_minus_zero(numerics):
    import numpy as np

    from attnsim.sim.numerics import get_numerics
    from attnsim.verify.agreement import compare

    nm = get_numerics(numerics, 0)
    ref = nm.array(np.array([[1.0, 0.0]]), "ref")
    a = compare(nm.array(np.array([[0.0, 0.0]]), "y"), ref, nm, nm, None)
    assert a.error_bits == 0.0 and math.copysign(1.0, a.error_bits) == 1.0  # printed "0", never "-0"
