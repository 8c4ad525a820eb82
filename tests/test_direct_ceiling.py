"""A model check never asks for more bits than the model itself keeps when it is evaluated directly in the format.

Fuzzing the narrow formats found correct simulations failing the agreement check because the model, not the
construction, lost the bits: a two-layer model keeps 2.8 bits of bf16 evaluated directly, 16.9 of fp32 and 51.6 of
float64, a loss of about 6 bits at every precision. The default margin now comes off the smaller of the format's
precision and those bits (``model_check.direct_bits``), and a format that leaves under 1 bit is refused naming
``--numerics``. These tests replay what fuzzing found and hold that a wrong output still fails.
"""

from __future__ import annotations

import pytest

from attnsim.sim.model import reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import OracleSpec
from attnsim.verify.agreement import default_min_bits
from attnsim.verify.check import run_check
from attnsim.verify.claims.two_heads_exact import model_case
from attnsim.verify.model_check import measure_model
from attnsim.verify.registry import CheckContext, UsageError

TWO_LAYERS = dict(N=12, M=4, d=1, psi="identity", input="random", H=1, L=2, Hp=2, Lp=2, causal=False)
"""The model fuzzing shrank ``two_heads.thm_1_1`` in bf16 to (seed 1032): it loses about 6 bits at every precision."""


def test_the_default_comes_off_the_bits_the_model_keeps() -> None:
    r = run_check("two_heads.thm_1_1", TWO_LAYERS, "float:fp32", 1032)
    kept = r["extra"]["direct_bits"]
    assert r["verdict"] == "pass" and kept < 24
    want = default_min_bits(get_numerics("float:fp32"), kept) - r["extra"]["decode_allowance_bits"]
    assert r["min_bits"] == pytest.approx(want, abs=0.01)


def test_a_format_the_model_itself_loses_is_refused_naming_numerics() -> None:
    with pytest.raises(UsageError, match="the model itself keeps 2.8 bits") as err:
        run_check("two_heads.thm_1_1", TWO_LAYERS, "float:bf16", 1032)
    assert err.value.param == "numerics"
    window = dict(N=24, M=6, d=1, psi="auto", input="random", H=1, L=1, Hp=2, Lp=1, window=5, sinks=0)
    with pytest.raises(UsageError, match="the model itself keeps"):  # found by fuzzing Thm 5.1 in q16.16
        run_check("two_heads.thm_5_1", window, "fixed:q16.16", 32)


def test_a_stable_decode_in_fp16_passes_within_what_the_model_keeps() -> None:
    """Found by fuzzing Cor 3.2 in fp16: 5.7 bits against 6 asked; the model itself keeps 6.7."""
    params = dict(N=15, M=4, d=4, psi="identity", input="large", H=4, L=3, decode="stable")
    r = run_check("two_heads.cor_3_2", params, "float:fp16", 84111)
    assert r["verdict"] == "pass" and r["error_bits"] < 6 and r["extra"]["direct_bits"] < 11


def test_a_wrong_output_still_fails_below_the_ceiling() -> None:
    ctx = CheckContext("two_heads.thm_1_1", {**TWO_LAYERS, "scheme": "paper", "length": "paper",
                                             "input_file": None}, "float:fp32", 1032)
    from attnsim.sim.masks import Full

    case = model_case(ctx, Full())
    nm = get_numerics("float:fp32")

    def off_by(rel: float):
        return lambda oracle, X: reference(case.spec, case.weights, X, nm) * (nm.scalar(1) + nm.scalar(rel))

    spec = OracleSpec(case.spec.N, case.spec.d, 1, case.spec.N)
    assert measure_model(ctx, case, spec, off_by(0.0), {}).agree
    wrong = measure_model(ctx, case, spec, off_by(2.0 ** -3), {})
    assert not wrong.agree and wrong.extra["direct_bits"] > wrong.extra["min_bits"] > 3


def test_lemma_3_3_asks_no_more_than_the_jobs_keep_computed_alone() -> None:
    """Found by fuzzing Lemma 3.3 in fp16: the packed jobs kept 3.4 bits, exactly what each job computed alone keeps
    (a random head whose output rows nearly cancel); fp32 keeps 16.5 both ways."""
    params = dict(M=8, d=8, H=4, Hp=2, Lp=2, causal=False)
    with pytest.raises(UsageError, match="the jobs computed alone keep 3.4 bits") as err:
        run_check("two_heads.lemma_3_3", params, "float:fp16", 629520)
    assert err.value.param == "numerics"
    r = run_check("two_heads.lemma_3_3", params, "float:fp32", 629520)
    kept = r["extra"]["direct_bits"]
    assert r["verdict"] == "pass" and r["min_bits"] == pytest.approx(min(24, kept) - 10)


def test_claim_b_6_is_allowed_its_decode_and_floor() -> None:
    """Found by fuzzing Claim B.6 in fp32: the decoded sums A_i kept 11.8 bits against 14 asked; p/(1 - p) on sums up
    to A = 2^13 loses 13 bits, and the check now allows them (read off the reference's own A_i)."""
    r = run_check("two_heads.claim_b_6", dict(N=8, M=4, d=5), "float:fp32", 0)
    extra = r["extra"]
    assert r["verdict"] == "pass" and r["error_bits"] < 14 and 12 < extra["decode_allowance_bits"] < 14
    with pytest.raises(UsageError, match="Claim B.6's decode p/\\(1 - p\\) may lose") as err:
        run_check("two_heads.claim_b_6", dict(N=4, M=4, d=1, input="large"), "float:bf16", 0)
    assert err.value.param == "numerics"


def test_claim_b_6_asks_no_more_than_its_rounded_scores_keep() -> None:
    """Found by fuzzing Claim B.6 in bf16: one token of large input, whose score exp amplifies: bf16 rounds the score,
    and the exact exp of the rounded score keeps 2.9 bits, as the construction did. Refused naming --numerics."""
    with pytest.raises(UsageError, match="as the format rounds them keep 2.9 bits") as err:
        run_check("two_heads.claim_b_6", dict(N=1, M=2, d=4, input="large"), "float:bf16", 10246375)
    assert err.value.param == "numerics"


def test_a_saturated_output_is_refused_naming_the_format() -> None:
    """Found by fuzzing Lemma 3.1 in q16.16 with 'sat': large inputs push nine sums past 32768, they are clipped, and
    the output kept 1.8 bits. Without 'sat' the first one raises; with it the check now says the same, after the run."""
    params = dict(N=27, M=2, d=2, input="large", decode="stable")
    with pytest.raises(UsageError, match="9 values were clipped to the format's range") as err:
        run_check("two_heads.lemma_3_1", params, "fixed:q16.16:sat", 6505)
    assert err.value.param == "numerics"
    nm = get_numerics("fixed:q16.16:sat")
    assert nm.array([40000.0, 1.0]).tolist() == [nm.fmt.max_value, 1.0] and nm.saturated == 1
