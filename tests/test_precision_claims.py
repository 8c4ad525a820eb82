"""Precision sweeps of every Two Heads construction: the sweep runs the real construction
(packing and row sampling change no rounded value), the truth is the mp reference, the bisection
returns a real threshold, a broken construction is caught, the verdict can say no, and the CLI
names what it refuses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsim.sim.masks import Sink
from attnsim.sim.model import reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads import causal, window
from attnsim.sim.two_heads.multi_layer import full_head, simulate_layers
from attnsim.sim.two_heads.packing import run_packed
from attnsim.verify.precision import constructions as pc
from attnsim.verify.precision.study import (
    Family,
    Need,
    bits_needed,
    bits_study,
    evaluate,
    fit_log2,
    make_family,
    make_setup,
    run_construction,
    verdict,
)
from attnsim.verify.precision.truth import attention_truth
from attnsim.verify.registry import UsageError

CLAIMS = ("two_heads.lemma_3_1", "two_heads.thm_3_4", "two_heads.thm_3_5", "two_heads.thm_5_1")


def _packed_run(claim: str, setup: pc.Setup, nm, scheme: str) -> np.ndarray:
    """The construction as its checker runs it: H' = L' = 2 jobs per packed call, residual oracle."""
    spec = setup.case.spec
    M = setup.M
    oracle = Oracle(OracleSpec(M + 1, 2, 2, 4 * (3 * spec.m + 3), causal=claim != "two_heads.thm_3_4",
                               residual=True), nm)
    X = nm.array(setup.case.X)
    if claim == "two_heads.thm_3_4":
        return simulate_layers(spec, setup.case.weights, X, oracle, b=M, build_head=full_head(M, scheme, uniform=True),
                               runner=run_packed, tag="thm_3_4")
    if claim == "two_heads.thm_3_5":
        return causal.simulate(spec, setup.case.weights, X, oracle, b=M, scheme=scheme, runner=run_packed)
    return window.simulate(spec, setup.case.weights, X, oracle, b=M, M=M, scheme=scheme, runner=run_packed)


@pytest.mark.parametrize("numerics", ["float:fp16", "fixed:q14.12"])
@pytest.mark.parametrize("claim", CLAIMS[1:])
def test_sweep_rows_equal_the_packed_construction_bit_for_bit(claim: str, numerics: str) -> None:
    full = make_setup(45, 8, 3, seed=4, sample_blocks=None, claim=claim)  # a partial last group
    part = make_setup(45, 8, 3, seed=4, sample_blocks=2, claim=claim)
    assert len(part.q_blocks) == 2 and len(full.rows) == 45
    for scheme in ("paper", "fused"):
        Y = _packed_run(claim, full, get_numerics(numerics), scheme)
        assert np.array_equal(run_construction(scheme, get_numerics(numerics), full), Y)
        assert np.array_equal(run_construction(scheme, get_numerics(numerics), part), Y[part.rows])
    R = reference(full.case.spec, full.case.weights, get_numerics(numerics).array(full.case.X), get_numerics(numerics))
    assert np.array_equal(run_construction("direct", get_numerics(numerics), part), R[part.rows])


@pytest.mark.parametrize("claim", CLAIMS)
def test_truth_is_the_mp_reference_under_the_claims_mask(claim: str) -> None:
    setup = make_setup(40, 8, 4, seed=1, sample_blocks=None, claim=claim, window=3, sinks=2) \
        if claim == "two_heads.thm_5_1" else make_setup(40, 8, 4, seed=1, sample_blocks=None, claim=claim)
    mp = get_numerics("mp:192")
    R = reference(setup.case.spec, setup.case.weights, mp.array(setup.case.X), mp)
    ref = np.vectorize(float, otypes=[float])(R)
    rel = np.linalg.norm(setup.truth - ref, axis=1) / np.linalg.norm(ref, axis=1)
    assert rel.max() <= 2.0 ** -52
    if claim == "two_heads.thm_5_1":
        assert setup.mask == Sink(2, 3)


def test_truth_refuses_a_case_off_the_exact_grid() -> None:
    setup = make_setup(8, 4, 2, seed=0, sample_blocks=None)
    X = setup.case.X.copy()
    X[0, 0] = 2 ** 30
    with pytest.raises(UsageError, match="precision truth"):
        attention_truth(X, setup.case.weights.layers[0].heads[0], setup.rows, None)


@pytest.mark.parametrize("kind", ["float", "fixed"])
@pytest.mark.parametrize("claim", CLAIMS)
def test_bits_needed_is_a_threshold(claim: str, kind: str) -> None:
    """The width returned meets the target and one bit less really fails (bisection correctness)."""
    setup = make_setup(64, 8, 4, seed=0, sample_blocks=4, claim=claim)
    fam = make_family(kind, setup)
    for name in ("paper", "direct"):
        need = bits_needed(name, setup, fam, 2.0 ** -9, hint=30)
        p = need.precision
        assert p is not None and need.width == fam.width(p)
        at = evaluate(name, fam.name(p), 0, setup)
        assert at.reason is None and at.error_bits >= 9
        below = evaluate(name, fam.name(p - 1), 0, setup)
        assert below.reason or below.error_bits < 9


def _drop_high_part(monkeypatch) -> None:
    """Thm 3.5 with the A(2)/B(2) terms (keys of a larger offset) dropped from the combination."""
    real = pc.causal_combine

    def broken(nm, ledger, N, m, b, plans, results, tag, round):
        keep = [i for i, p in enumerate(plans) if p.part != "high"]
        return real(nm, ledger, N, m, b, [plans[i] for i in keep], [results[i] for i in keep], tag, round)

    monkeypatch.setattr(pc, "causal_combine", broken)


def _drop_sink_shift(monkeypatch) -> None:
    """Thm 5.1 with the shifted prefix S never subtracted: a causal prefix instead of a window."""
    real = pc.window_combine

    def broken(nm, ledger, N, m, plans, results, tag, round):
        results = [nm.zeros(r.shape) if p.part == "S" else r for p, r in zip(plans, results)]
        return real(nm, ledger, N, m, plans, results, tag, round)

    monkeypatch.setattr(pc, "window_combine", broken)


@pytest.mark.parametrize("claim, breaker", [("two_heads.thm_3_5", _drop_high_part),
                                            ("two_heads.thm_5_1", _drop_sink_shift)])
def test_a_broken_construction_needs_more_bits_than_any_format_has(claim: str, breaker, monkeypatch) -> None:
    setup = make_setup(64, 8, 4, seed=0, sample_blocks=None, claim=claim)
    assert evaluate("paper", "float:fp32", 0, setup).error_bits > 10
    breaker(monkeypatch)
    assert evaluate("paper", "float:fp32", 0, setup).error_bits < 4
    assert bits_needed("paper", setup, Family("float", 8), 2.0 ** -10).precision is None
    assert evaluate("direct", "float:fp32", 0, setup).error_bits > 15  # the comparison row is untouched


def test_verdict_says_no_to_growth_linear_in_N() -> None:
    Ns = [64, 128, 256, 512, 1024]
    for widths in ([12 + N // 64 for N in Ns], [10 + N // 256 for N in Ns]):  # steep and gentle linear growth
        needs = [Need("x", N, w, w) for N, w in zip(Ns, widths)]
        v = verdict(needs, fit_log2(Ns, widths))
        assert v.startswith("faster than logarithmic"), (widths, v)
    logs = [10 + round(1.5 * math.log2(N)) for N in Ns]
    assert verdict([Need("x", N, w, w) for N, w in zip(Ns, logs)], fit_log2(Ns, logs)).startswith("consistent")


def test_study_of_every_claim_reports_slope_r2_and_verdict() -> None:
    for claim in CLAIMS:
        st = bits_study([16, 32, 64], 8, "float", 2.0 ** -8, ("paper", "direct"), sample_blocks=4, claim=claim)
        assert st["claim"] == claim
        for v in st["constructions"].values():
            assert all(w is not None for w in v["width"]) and math.isfinite(v["slope"])
            assert v["verdict"].startswith(("consistent", "faster"))


def test_window_and_unknown_claims_are_refused_by_name() -> None:
    with pytest.raises(UsageError, match="^window: "):
        make_setup(32, 8, claim="two_heads.thm_3_5", window=2)
    with pytest.raises(UsageError, match="CLAIM"):
        make_setup(32, 8, claim="two_heads.thm_4_1")
    with pytest.raises(UsageError, match="^window: window r=6 plus sinks s=2 leave no query"):
        make_setup(32, 8, claim="two_heads.thm_5_1", window=6, sinks=2)


def test_cli_runs_every_claim_and_names_what_it_refuses(capsys) -> None:
    from attnsim.verify.cli.app import app

    app(["precision", "two_heads.thm_5_1", "--N", "16,32,64", "--M", "8", "--window", "2", "--sinks", "1",
         "--constructions", "paper,direct"], standalone_mode=False)
    out = " ".join(capsys.readouterr().out.split())
    assert "two_heads.thm_5_1" in out and "window r=2, sinks s=1" in out and "bits per doubling of N, R²" in out
    assert "O(log N)" in out or "faster than logarithmic" in out
    with pytest.raises(UsageError, match="^window: "):
        app(["precision", "two_heads.lemma_3_1", "--N", "16", "--M", "8", "--window", "2"], standalone_mode=False)
    with pytest.raises(UsageError, match="^scales: "):
        app(["precision", "two_heads.thm_3_5", "--N", "16", "--M", "8", "--scales", "1,2"], standalone_mode=False)


def test_report_table_has_every_construction_and_its_direct_comparison(tmp_path) -> None:
    from attnsim.verify.precision.claims_study import blocks_lines, claims_study, claims_table, plot_claims
    from attnsim.verify.precision.study import blocks_study

    Ns, M = [16, 32], 8
    lemma = bits_study(Ns, M, "float", 2.0 ** -10, sample_blocks=2)
    study = claims_study(Ns, M, 2, lemma, blocks_study(Ns, M, "float:fp32", sample_blocks=2))
    table = claims_table(study)
    body = [r for r in table[2:]]
    assert len(body) == 8 and sum("direct attention" in r for r in body) == 3
    for label in ("Lemma 3.1, paper", "Lemma 3.1, fused", "Thm 3.4", "Thm 3.5", "Thm 5.1"):
        row = next(r for r in body if label in r)
        assert "consistent with O(log N)" in row or "faster than logarithmic" in row
    assert len(blocks_lines(study)) == 8
    plot_claims(study, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 0
