"""Metamorphic properties, broken constructions that the checks catch, and bad input.

* permuting whole blocks of an unmasked model's input permutes the simulated output the same way
  (the key blocks are summed in a different order), exactly; the packed slot order does not matter;
* changing tokens outside window ∪ sinks leaves a windowed output row unchanged, exactly (and
  changing one inside changes it, so the test can fail);
* the call count depends only on the shapes.
"""

from __future__ import annotations

import random
import subprocess
import sys
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from limits import limit

import attnsim.sim.two_heads.blocks as blocks
import attnsim.sim.two_heads.causal as causal
import attnsim.sim.two_heads.multi_layer as multi_layer
import attnsim.sim.two_heads.packing as packing
import attnsim.sim.two_heads.window as window
from attnsim.sim.errors import AttnsimError
from attnsim.sim.masks import Full, Sink, SlidingWindow
from attnsim.sim.model import reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.verify.check import run_check
from attnsim.verify.claims.two_heads_exact import model_case, packed_spec
from attnsim.verify.registry import CheckContext


def _ctx(claim: str, **params) -> CheckContext:
    base = dict(scheme="paper", length="paper", psi="auto", input="random", input_file=None, Hp=2, Lp=2)
    return CheckContext(claim, {**base, **params}, "exact", 0)


def _run_full(case, p, X, runner=packing.run_packed):
    nm = get_numerics("exact", 0)
    oracle = Oracle(packed_spec(p, case.spec.m, causal=False), nm)
    return multi_layer.simulate_layers(case.spec, case.weights, nm.array(X), oracle, b=p["M"],
                                       build_head=multi_layer.full_head(p["M"], p["scheme"], uniform=True),
                                       runner=runner, tag="thm_3_4")


# -- metamorphic -----------------------------------------------------------------------------------
def test_permuting_key_blocks_permutes_output_exactly():
    ctx = _ctx("two_heads.thm_3_4", N=12, M=4, d=4, H=2, L=2)
    case = model_case(ctx, Full())
    Y = _run_full(case, ctx.params, case.X)
    order = [2, 0, 1]  # block permutation
    perm = np.concatenate([np.arange(4 * t, 4 * t + 4) for t in order])
    Yp = _run_full(case, ctx.params, case.X[perm])
    assert (Yp == Y[perm]).all()
    nm = get_numerics("exact", 0)
    assert (Yp == reference(case.spec, case.weights, nm.array(case.X[perm]), nm)).all()


def test_key_block_order_does_not_matter(monkeypatch):
    """Visit and sum the key blocks in reverse order (relabelled, re-packed): the same exact output."""
    ctx = _ctx("two_heads.thm_3_4", N=13, M=4, d=4, H=2, L=2)
    case = model_case(ctx, Full())
    Y = _run_full(case, ctx.params, case.X)
    original = multi_layer.head_jobs

    def reversed_keys(*args, **kwargs):
        jobs, plans = original(*args, **kwargs)
        n = max(p.t for p in plans) + 1
        relabelled = [replace(p, t=n - 1 - p.t) for p in plans]
        order = sorted(range(len(jobs)), key=lambda i: (relabelled[i].q0, relabelled[i].t, relabelled[i].kind))
        return [jobs[i] for i in order], [relabelled[i] for i in order]

    monkeypatch.setattr(multi_layer, "head_jobs", reversed_keys)
    assert (_run_full(case, ctx.params, case.X) == Y).all()


def test_packing_slot_order_does_not_matter():
    ctx = _ctx("two_heads.thm_3_4", N=9, M=4, d=4, H=2, L=1, Hp=3, Lp=2)
    case = model_case(ctx, Full())

    def shuffled(oracle, jobs):
        order = list(range(len(jobs)))
        random.Random(5).shuffle(order)
        outs = packing.run_packed(oracle, [jobs[i] for i in order])
        back = [None] * len(jobs)
        for k, i in enumerate(order):
            back[i] = outs[k]
        return back

    assert (_run_full(case, ctx.params, case.X) == _run_full(case, ctx.params, case.X, shuffled)).all()


@pytest.mark.parametrize("r, s", [(2, 0), (3, 1), (1, 2)])
def test_tokens_outside_window_and_sinks_do_not_matter(r, s):
    N, M = 14, 6
    ctx = _ctx("two_heads.thm_5_1", N=N, M=M, d=2, H=1, L=1, Hp=1, Lp=1, psi="identity")
    mask = Sink(s, r) if s else SlidingWindow(r)
    case = model_case(ctx, mask)
    nm = get_numerics("exact", 0)

    def run(X):
        oracle = Oracle(packed_spec(ctx.params, 2, causal=True), nm)
        return window.simulate(case.spec, case.weights, nm.array(X), oracle, b=M, M=M, runner=packing.run_packed)

    Y = run(case.X)
    rng = np.random.default_rng(1)
    for i in (N - 1, N // 2, s + r, s + r - 1):
        visible = mask.materialize(N)[i]
        X2 = case.X.copy()
        for j in np.flatnonzero(~visible):
            X2[j] = [Fraction(int(v), 2) for v in rng.integers(-2, 3, size=2)]
        assert (run(X2)[i] == Y[i]).all(), i
        X3 = case.X.copy()
        X3[i] = [Fraction(3), Fraction(-3)]
        assert not (run(X3)[i] == Y[i]).all(), i  # a visible token does change the row


@pytest.mark.parametrize("claim, params", [
    ("two_heads.thm_3_4", dict(N=9, M=4, d=2, H=1, L=2, Hp=2, Lp=1)),
    ("two_heads.thm_3_5", dict(N=9, M=4, d=2, H=1, L=2, Hp=2, Lp=1)),
    ("two_heads.thm_5_1", dict(N=13, M=6, d=2, H=1, L=2, Hp=2, Lp=1, window=2, sinks=1)),
])
def test_calls_depend_only_on_shapes(claim, params):
    a = run_check(claim, params, "float64", seed=1)
    b = run_check(claim, {**params, "input": "large", "psi": "affine"}, "exact", seed=9)
    assert a["verdict"] == b["verdict"] == "pass"
    assert a["calls_by_tag"] and {k: v for k, v in a["calls_by_tag"].items() if not k.startswith("processing")} == \
        {k: v for k, v in b["calls_by_tag"].items() if not k.startswith("processing")}


# -- broken constructions are caught ---------------------------------------------------------------
def _fails(claim, params):
    r = run_check(claim, params, "exact")
    assert r["verdict"] == "fail"
    return r


def test_reversed_layout_without_shift_is_caught(monkeypatch):
    """The paper's A(2)/B(2) display without the shift row would include offset = o(i)."""

    def unshifted(nm, Xk, Xq, b):
        Z = nm.zeros((b + 1, 2 * Xk.shape[1]))
        d = Xk.shape[1]
        for m in range(b):
            Z[m, :d], Z[m, d:] = Xk[b - 1 - m], Xq[b - 1 - m] if b - 1 - m < Xq.shape[0] else Z[m, d:]
        return Z

    monkeypatch.setattr(causal, "reversed_shifted", unshifted)
    assert _fails("two_heads.thm_3_5", dict(N=8, M=4, d=2, H=1, L=1, Hp=1, Lp=1))["agree"] is False


def test_synthetic_token_last_is_caught(monkeypatch):
    """Claim B.6 needs the synthetic token first: at the end the causal mask hides it."""
    first = causal.synthetic_first

    def last(nm, Zkq, bk):
        Z = first(nm, Zkq, bk)
        return np.concatenate([Z[1:], Z[:1]])

    monkeypatch.setattr(causal, "synthetic_first", last)
    # the first query then sees only its own key (value 1): p = 1 and the decode p/(1 - p) divides by 0
    with pytest.raises(ZeroDivisionError):
        run_check("two_heads.claim_b_6", dict(N=8, M=4, d=2), "exact")


def test_global_instead_of_local_prefix_is_caught(monkeypatch):
    """Subtracting a prefix shifted by r + 1 instead of r: the window is off by one."""
    original = window.window_head_jobs

    def off_by_one(nm, X, WQ, WK, WV, b, r, s, scheme, tag):
        return original(nm, X, WQ, WK, WV, b, r + 1, s, scheme, tag)

    monkeypatch.setattr(window, "window_head_jobs", off_by_one)
    assert _fails("two_heads.thm_5_1", dict(N=14, M=6, d=2, H=1, L=1, Hp=1, Lp=1, window=2))["agree"] is False


def test_reading_the_wrong_output_slot_is_caught(monkeypatch):
    original = packing._read_slot
    monkeypatch.setattr(
        packing, "_read_slot", lambda out, job, k, heads, layers, w, o: original(out, job, k ^ 1, heads, layers, w, o)
    )
    assert _fails("two_heads.thm_3_4", dict(N=8, M=4, d=4, H=2, L=1, Hp=2, Lp=1))["agree"] is False


def test_uncorrected_row_padding_is_caught(monkeypatch):
    """Padding a job to the call length without telling its decode changes A."""
    monkeypatch.setattr(blocks, "decode_A", lambda pad: causal.decode_A(0))
    assert _fails("two_heads.thm_3_4", dict(N=6, M=4, d=2, H=1, L=1, Hp=2, Lp=1))["agree"] is False


def test_skipping_a_job_is_caught(monkeypatch):
    original = causal.iter_causal_head_jobs

    def skip_high_ratio(*args, **kwargs):
        return (
            (job, plan) for job, plan in original(*args, **kwargs) if not (plan.part == "high" and plan.kind == "R")
        )

    monkeypatch.setattr(causal, "iter_causal_head_jobs", skip_high_ratio)
    with pytest.raises(KeyError):
        run_check("two_heads.thm_3_5", dict(N=8, M=4, d=2, H=1, L=1, Hp=1, Lp=1), "exact")


# -- bad input -------------------------------------------------------------------------------------
def test_window_too_large_is_refused_naming_r_s_M():
    with pytest.raises(AttnsimError) as e:
        run_check("two_heads.thm_5_1", dict(N=20, M=6, window=4, sinks=2))
    assert "r=4" in str(e.value) and "s=2" in str(e.value) and "M=6" in str(e.value)


def test_packing_needs_a_residual_stream():
    nm = get_numerics("exact", 0)
    oracle = Oracle(OracleSpec(4, 2, 2, 64), nm)
    job = packing.HeadJob("j", nm.ones((3, 2)), nm.ones((2, 1)), nm.ones((2, 1)), nm.ones((2, 1)))
    with pytest.raises(AttnsimError, match="residual"):
        packing.run_packed(oracle, [job])


def test_unmasked_jobs_of_different_lengths_are_refused():
    nm = get_numerics("exact", 0)
    oracle = Oracle(OracleSpec(4, 2, 1, 64, residual=True), nm)
    jobs = [packing.HeadJob(f"j{k}", nm.ones((k + 2, 2)), nm.ones((2, 1)), nm.ones((2, 1)), nm.ones((2, 1)))
            for k in range(2)]
    with pytest.raises(AttnsimError, match="rows"):
        packing.run_packed(oracle, jobs)


def test_cli_window_error_is_one_line():
    p = subprocess.run([sys.executable, "-m", "attnsim.verify.cli", "check", "two_heads.thm_5_1", "--M", "5",
                        "--window", "5"], capture_output=True, text=True, timeout=limit(300))
    assert p.returncode == 2
    assert p.stderr.startswith("error: --window:") and "M = 5" in p.stderr and "got 5" in p.stderr
    assert "Traceback" not in p.stderr


def test_large_model_with_residual_stream():
    """A residual large model (not the paper's) through the packed driver: still exact."""
    from attnsim.verify.cases import random_case

    case = random_case(9, 4, 2, 2, Full(), 3, residual=True)
    nm = get_numerics("exact", 3)
    p = dict(M=4, length="paper", Hp=2, Lp=2)
    oracle = Oracle(packed_spec(p, 2, causal=False), nm)
    Y = multi_layer.simulate_layers(case.spec, case.weights, nm.array(case.X), oracle, b=4,
                                    build_head=multi_layer.full_head(4, "paper", uniform=True),
                                    runner=packing.run_packed, tag="thm_3_4")
    assert (Y == reference(case.spec, case.weights, nm.array(case.X), nm)).all()
    assert oracle.ledger.total("processing", "residual") == 2


# -- report ----------------------------------------------------------------------------------------
def test_report_section_writes_table_and_plot(tmp_path):
    from attnsim.verify.report.sections.two_heads_masked import section

    records = [run_check("two_heads.claim_b_6", dict(N=N, M=4, d=2), "float64") for N in (4, 8, 16, 32)]
    md = section(records, tmp_path, True)
    assert "Claim B.6" in md and md.count("| float64 |") == 4
    assert "![two_heads.claim_b_6" in md
    assert (tmp_path / "plots" / "two_heads_claim_b_6.png").stat().st_size > 1000
