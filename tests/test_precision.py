"""Precision sweeps: the batched runner and row sampling change nothing, the search finds a threshold,
guard rails become reasons, broken constructions are caught, and the CLI prints slope and R²."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from attnsim.sim.engine.runner import run_batched
from attnsim.sim.masks import Full
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights, reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads.jobs import run_one_per_call
from attnsim.sim.two_heads.worst_case import simulate
from attnsim.verify.cases import Case, random_case
from attnsim.verify.precision import constructions as precision_constructions
from attnsim.verify.precision.study import (
    Family,
    Setup,
    bits_needed,
    decode_study,
    error_bits,
    evaluate,
    fit_log2,
    make_setup,
    parse_target,
    run_construction,
)
from attnsim.verify.registry import UsageError
from attnsim.verify.report.build import run_point


@pytest.mark.parametrize("numerics", ["float:bf16:acc=fp32", "fixed:q12.12", "float64"])
@pytest.mark.parametrize("scheme", ["paper", "fused"])
def test_batched_runner_equals_one_call_at_a_time(numerics: str, scheme: str) -> None:
    case = random_case(13, 2, 1, 1, Full(), 3, layer_mlp="identity", exact_kind=False)  # a partial block
    outs, ledgers = [], []
    for runner in (run_one_per_call, run_batched):
        nm = get_numerics(numerics)
        oracle = Oracle(OracleSpec(5, 1, 1, 6), nm)
        outs.append(simulate(case.spec, case.weights, nm.array(case.X), oracle, b=4, scheme=scheme, runner=runner))
        led = oracle.ledger
        ledgers.append((led.by_tag("oracle"), led.rounds("oracle"), led.flops("oracle"), led.max_shape("oracle")))
    if numerics == "float64":
        assert np.allclose(outs[0], outs[1], rtol=1e-13, atol=0)
    else:
        assert np.array_equal(outs[0], outs[1])
    assert ledgers[0] == ledgers[1]


def test_batched_runner_enforces_the_oracle_spec() -> None:
    from attnsim.sim.errors import OracleSpecError
    from attnsim.sim.two_heads.blocks import head_jobs

    nm = get_numerics("float:fp16")
    X = nm.array(np.ones((8, 2)))
    W = nm.array(np.eye(2))
    jobs, _ = head_jobs(nm, X, W, W, W, 4, "paper", "t")
    with pytest.raises(OracleSpecError, match="sequence length 5 exceeds max_len 4"):
        run_batched(Oracle(OracleSpec(4, 1, 1, 6), nm), jobs)


def test_sampled_rows_are_the_rows_of_a_full_run() -> None:
    full = make_setup(48, 8, 3, seed=2, sample_blocks=None)
    part = make_setup(48, 8, 3, seed=2, sample_blocks=2)
    assert len(part.q_blocks) == 2 and len(full.rows) == 48
    nm = get_numerics("float:fp16")
    oracle = Oracle(OracleSpec(9, 1, 1, 8), nm)
    Y = simulate(full.case.spec, full.case.weights, nm.array(full.case.X), oracle, b=8)
    assert np.array_equal(run_construction("paper", get_numerics("float:fp16"), full), Y)
    assert np.array_equal(run_construction("paper", get_numerics("float:fp16"), part), Y[part.rows])
    R = reference(full.case.spec, full.case.weights, nm.array(full.case.X), nm)
    assert np.array_equal(run_construction("direct", get_numerics("float:fp16"), part), R[part.rows])


def test_search_returns_a_threshold() -> None:
    setup = make_setup(64, 8, 4, seed=0, sample_blocks=None)
    fam = Family("float", 8)
    need = bits_needed("paper", setup, fam, 2.0 ** -8, hint=4)
    p = need.precision
    assert p is not None and need.width == 1 + 8 + p
    assert evaluate("paper", fam.name(p), 0, setup).error_bits >= 8
    below = evaluate("paper", fam.name(p - 1), 0, setup)
    assert below.error_bits < 8 or below.reason


def test_a_broken_combination_is_caught(monkeypatch) -> None:
    setup = make_setup(64, 8, 4, seed=0, sample_blocks=None)
    good = evaluate("paper", "float:fp32", 0, setup)
    assert good.error_bits > 15
    real_combine = precision_constructions.combine

    def drop_one_block(nm, ledger, N, m, plans, results, tag, round):
        keep = [i for i, p in enumerate(plans) if p.t != 1]
        return real_combine(nm, ledger, N, m, [plans[i] for i in keep], [results[i] for i in keep], tag, round)

    monkeypatch.setattr(precision_constructions, "combine", drop_one_block)
    assert evaluate("paper", "float:fp32", 0, setup).error_bits < 8
    assert bits_needed("paper", setup, Family("float", 8), 2.0 ** -10).precision is None


def _underflow_setup() -> Setup:
    """Scores −x_i·x_j = −4 everywhere: in Step 1 every real weight is e^-4 relative to the synthetic token."""
    N, M = 8, 4
    spec = TransformerSpec(N, 1)
    one = np.array([[Fraction(1)]], dtype=object)
    weights = Weights((LayerWeights((HeadWeights(one, -one, one),)),))
    X = np.full((N, 1), Fraction(2), dtype=object)
    case = Case(spec, weights, X)
    s = Setup(N, M, case, (0, 4), np.arange(N), np.zeros(0))
    return Setup(N, M, case, (0, 4), np.arange(N), run_construction("direct", get_numerics("float64"), s))


def test_exp_underflow_of_every_block_is_a_reason() -> None:
    e = evaluate("paper", "fixed:q8.2", 0, _underflow_setup())
    assert e.reason and "exp underflow" in e.reason and "fixed:q8.2" in e.reason
    assert evaluate("direct", "fixed:q8.2", 0, _underflow_setup()).reason is None


def test_p_rounding_to_one_is_a_reason_and_a_clear_error() -> None:
    # the check refuses before it runs: the decode's loss on these scores is more than bf16 has
    rec = run_point("two_heads.lemma_3_1", {"N": 32, "M": 8, "input": "large"}, "float:bf16", 0)
    assert rec["verdict"] == "fail"
    assert any("float:bf16" in r and "decode may lose" in r and "p/(1 - p)" in r for r in rec["reasons"])
    cli = subprocess.run([sys.executable, "-m", "attnsim.verify.cli", "check", "two_heads.lemma_3_1", "--N", "32",
                          "--M", "8", "--input", "large", "--numerics", "float:bf16"], capture_output=True, text=True)
    assert cli.returncode == 2 and "error: --numerics: float:bf16" in cli.stderr and "Traceback" not in cli.stderr
    setup = make_setup(32, 8, 4, 0, None, "large")
    assert "p rounded to 1" in evaluate("paper", "float:bf16", 0, setup).reason


def test_check_passes_in_fp32_with_the_default_min_bits() -> None:
    rec = run_point("two_heads.lemma_3_1", {"N": 32, "M": 8}, "float:fp32", 0)
    assert rec["verdict"] == "pass" and rec["error_bits"] >= 14
    kept = rec["extra"]["direct_bits"]  # the bits the model itself keeps in fp32: the margin comes off the smaller
    assert rec["min_bits"] == pytest.approx(min(24, kept) - 10 - rec["extra"]["decode_allowance_bits"], abs=0.01)


def test_fit_and_target_parsing() -> None:
    f = fit_log2([64, 256, 1024], [10, 12, 14])
    assert math.isclose(f.slope, 1.0) and math.isclose(f.r2, 1.0)
    assert fit_log2([64, 256], [9, 9]).r2 == 1.0
    assert parse_target("2^-10") == 2.0 ** -10 and parse_target("1e-3") == 1e-3
    with pytest.raises(UsageError, match="^target: "):
        parse_target("tiny")
    assert error_bits(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]])) == math.inf


def test_decode_loses_about_a_bit_per_doubling_of_A() -> None:
    d = decode_study("float:fp32", max_log2_A=30)
    assert -1.3 < d["slope"] < -0.7
    assert 22 <= d["first_log2_A_failing"] <= 25  # p = A/(A+1) rounds to 1 once A ~ 2^precision


def test_cli_prints_slope_and_r2(capsys) -> None:
    from attnsim.verify.cli.app import app

    app(["precision", "two_heads.lemma_3_1", "--N", "16,32,64", "--M", "8", "--constructions", "fused,direct"],
        standalone_mode=False)
    out = capsys.readouterr().out
    assert "bits per doubling of N" in out and "R²" in out and "O(log N)" in out
    with pytest.raises(UsageError, match="^target: "):
        app(["precision", "two_heads.lemma_3_1", "--target", "2^-50"], standalone_mode=False)
    with pytest.raises(UsageError, match="CLAIM"):
        app(["precision", "two_heads.thm_4_1"], standalone_mode=False)


def test_verdict_reads_growth_per_doubling() -> None:
    from attnsim.verify.precision.study import Need, verdict

    Ns = [64, 256, 1024, 4096]
    log_like = [Need("x", N, 0, w) for N, w in zip(Ns, [10, 12, 14, 16])]
    assert verdict(log_like, fit_log2(Ns, [10, 12, 14, 16])).startswith("consistent with O(log N)")
    poly_like = [Need("x", N, 0, w) for N, w in zip(Ns, [10, 11, 15, 30])]
    assert verdict(poly_like, fit_log2(Ns, [10, 11, 15, 30])).startswith("faster than logarithmic")
    assert verdict(log_like[:1] + [Need("x", 256, None, None)], fit_log2([64], [10])).startswith("not established")


def test_simulation_pays_for_large_block_sums_and_direct_does_not() -> None:
    from attnsim.verify.precision.study import scale_study

    st = scale_study(32, 8, [Fraction(1), Fraction(4)], constructions=("paper", "direct"), sample_blocks=None)
    small, large = st["rows"]
    assert large["log2_A_max"] > small["log2_A_max"] + 10
    assert large["paper_precision"] >= small["paper_precision"] + 8
    assert abs(large["direct_precision"] - small["direct_precision"]) <= 2


def test_thm_5_1_prefix_differences_lose_bits_to_cancellation():
    """The window construction subtracts prefix sums; at fp32 it agrees to fewer bits than the causal one."""
    from attnsim.verify.report.sections.two_heads_precision import _cancellation_table

    rows = [r for r in _cancellation_table(True) if r.startswith("| 3") or r.startswith("| 1")]
    assert len(rows) == 2
    for row in rows:
        _, win, cau, lost = (float(x) for x in row.strip("| ").split(" | "))
        assert 8 < win < cau and lost > 0
