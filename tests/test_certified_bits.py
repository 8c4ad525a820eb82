"""The certified bits-needed search (``verify/precision/certified.py``) and the rebuttal's precision rows."""

from __future__ import annotations

import pytest

from attnsim.verify.check import run_check
from attnsim.verify.precision.certified import Target, certified_need
from attnsim.verify.precision.constructions import make_setup
from attnsim.verify.registry import UsageError


def test_target_parses_the_per_N_form_and_refuses_others():
    assert Target.parse("2^-N").bits(64) == 64 and Target.parse("2^-20").bits(64) == 20
    with pytest.raises(UsageError, match="target: expected 2"):
        Target.parse("0.001")


def test_the_answer_certifies_and_one_bit_less_does_not():
    need = certified_need(make_setup(16, 4, d=2, sample_blocks=2), "paper", 24.0)
    assert need.probes[need.bits] >= 24 > need.probes[need.bits - 1]


def test_the_per_N_row_needs_more_than_N_bits_and_the_midpoints_agree_with_the_truth():
    r = run_check("two_heads.rebuttal_log_bits", {"N": 16, "M": 4, "d": 2, "sample_blocks": 2})
    assert r["verdict"] == "pass", r["reasons"]
    assert r["counts"]["bits"] > 16 and r["extra"]["midpoint_bits_vs_truth"] >= 16


def test_the_per_N_finding_states_the_bits_beyond_N_that_the_records_measured():
    from attnsim.verify.findings.two_heads import per_N_bits_beyond_N
    from attnsim.verify.registry import get_checker

    chk = get_checker("two_heads.rebuttal_log_bits")
    points = [chk.resolve(dict(p)) for p in chk.growth_grid(False)]
    records = [{"claim": chk.claim, "params": p, "numerics": "none", "seed": 0,
                "counts": {"bits": p["N"] + 12 - (i == 0)}} for i, p in enumerate(points)]
    (f,) = per_N_bits_beyond_N(records)
    assert "needs N + 11 … N + 12 certified bits" in f.text and "cannot reach it" in f.text
    assert f.records == tuple(records) and f.commands[-1] == f"attnsim check {chk.claim} --N {points[-1]['N']}"


def test_a_seeded_case_whose_exact_output_is_0_is_refused_naming_the_seed():
    # N=34, d=1, seed 833 draws W^K = 0 and values summing to 0: every row's exact output is 0, where no BITS
    # certifies a relative error (the balls straddle 0 up to MAX_BITS); a fail there would not be real.
    params = {"N": 34, "M": 2, "d": 1, "sample_blocks": 0}
    with pytest.raises(UsageError, match="exact output is 0 on 34 of the 34") as err:
        run_check("two_heads.rebuttal_log_bits", params, seed=833)
    assert err.value.param == "seed"
    assert run_check("two_heads.rebuttal_log_bits", params, seed=2)["verdict"] == "pass"


def test_a_float_target_past_what_the_decode_leaves_is_refused_naming_target_bits():
    """Found by fuzzing: at d = 8 and blocks of 2 this input's decode loses up to 40.8 bits, so no float:8.M
    (M <= 52, on a float64 carrier) meets 2^-19; that is the instrument's limit, refused naming --target-bits with
    the most it can measure, which then passes."""
    case = dict(N=69, M=2, d=8, decode="paper", sample_blocks=0)
    with pytest.raises(UsageError, match=r"^target_bits: .*loses up to 40\.8 bits.*give --target-bits 9 or less"):
        run_check("two_heads.rebuttal_log_bits_float", {**case, "target_bits": 19}, None, 184662)
    assert run_check("two_heads.rebuttal_log_bits_float", {**case, "target_bits": 9}, None, 184662)["verdict"] == "pass"


def test_a_certified_study_too_long_is_refused_whole_before_its_first_record(capfd, monkeypatch):
    """The study's estimate is its records' own: refused in one line naming --N before any record runs, where it
    used to run the cheap points and then refuse the largest one, losing them."""
    from cli_run import invoke

    import attnsim.verify.precision.certified_study as study

    ran: list[dict] = []
    monkeypatch.setattr(study, "run_check", lambda claim, params, seed: ran.append(params))
    rc, _, err = invoke(["precision", "two_heads.lemma_3_1", "--certified", "--N", "64,256,1024,4096",
                         "--max-time", "100s"], capfd)
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and ran == [] and len(lines) == 1, err
    assert lines[0].startswith("error: --N: this run would take about") and "8 records" in lines[0]


def test_a_certified_study_within_its_limit_refuses_none_of_its_records():
    """Each record's estimate is a term of the study's, so a study let through is never refused half-way."""
    from attnsim.verify.cost import estimate
    from attnsim.verify.precision.certified_study import PER_N, TOLERANCE, certified_estimate

    Ns, M, d, blocks = [64, 256, 1024, 4096], 32, 4, 4
    whole = certified_estimate(Ns, M, d, blocks, 10)
    parts = [estimate(c, {"N": N, "M": M, "d": d, "sample_blocks": blocks}, None) for c in (PER_N, TOLERANCE)
             for N in Ns]
    assert whole.seconds == pytest.approx(sum(p.seconds for p in parts))
    assert all(p.seconds <= whole.seconds and p.bytes <= whole.bytes for p in parts)
    assert 60 < whole.seconds < 600  # measured: 190 s for this study (126 s of it the 2^-N record at N = 4096)
