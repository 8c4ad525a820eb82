"""The figures of docs/precision.md that a cheap, deterministic run gives, read off the page and recomputed: the
formats, the bits a check asks for, the ball certificates, the three rebuttal rows and Lemma 3.1's two decodes.

Two Heads (§1.1) asks for O(log N)-bit numbers and a row error of 2^-N but gives no rounding rule; the page says
what attnsim measures instead. Its "Agreement" cases and the precision study at its smaller N are read in
tests/test_doc_precision_agreement.py. Figures that cost more (N = 1024 and up, the seed sweeps, the float64 TinT
figures that vary with the CPU) are not here.
"""

from __future__ import annotations

import math
import re

import pytest
from precision_page import f1, num, record, refusal, said, table

from attnsim.sim.numerics import NumericsError, get_numerics
from attnsim.sim.numerics.fixed_formats import FLOAT_NAMES
from attnsim.verify.agreement import default_min_bits
from attnsim.verify.cost import estimate
from attnsim.verify.growth import growth_points, judge
from attnsim.verify.model_check import EXACT_SECONDS, exact_too_long
from attnsim.verify.precision.certified_study import certified_estimate
from attnsim.verify.precision.certify import EXACT_COMPANION
from attnsim.verify.registry import CheckContext, get_checker


# -- formats -----------------------------------------------------------------------------------------------------
def test_named_formats_are_the_tables():
    ieee = said(r"`float:fp32`, `float:bf16`, `float:fp16` \| IEEE-style binary floats (\S+), (\S+), (\S+) \|")
    assert ieee == (FLOAT_NAMES["fp32"], FLOAT_NAMES["bf16"], FLOAT_NAMES["fp16"])
    (e5m2,) = said(r"`float:fp8_e5m2` = `float:e5m2` \| (\S+), IEEE-style")
    assert e5m2 == FLOAT_NAMES["fp8_e5m2"] == FLOAT_NAMES["e5m2"]
    e4m3, top = said(r"`float:fp8_e4m3` = `float:e4m3` \| (\S+): .*?\(largest value (\d+)\)")
    assert e4m3 == FLOAT_NAMES["fp8_e4m3"] == FLOAT_NAMES["e4m3"]
    assert get_numerics("float:e4m3").fmt.max_value == int(top)


def test_format_limits():
    e_lo, e_hi, m_lo, m_hi = map(int, said(r"E exponent bits \((\d+)\.\.(\d+)\), M stored mantissa bits "
                                           r"\((\d+)\.\.(\d+)\)"))
    for ok in (f"float:{e_lo}.{m_lo}", f"float:{e_hi}.{m_hi}"):
        get_numerics(ok)
    for bad in (f"float:{e_lo - 1}.{m_lo}", f"float:{e_hi + 1}.{m_lo}", f"float:{e_lo}.{m_lo - 1}",
                f"float:{e_lo}.{m_hi + 1}"):
        with pytest.raises(NumericsError):
            get_numerics(bad)
    (top,) = said(r"F fraction bits .*?; I \+ F ≤ (\d+) \|")
    get_numerics(f"fixed:q{int(top) // 2}.{int(top) - int(top) // 2}")
    with pytest.raises(NumericsError):
        get_numerics(f"fixed:q{int(top) // 2 + 1}.{int(top) - int(top) // 2}")
    (spacing,) = said(r"2\^(\S+) for fp16;")
    assert get_numerics("float:fp16").fmt.spacing_floor == 2.0 ** num(spacing)


def test_default_bits_asked():
    fp32, bf16, q16 = said(r"requires `precision − min\(10, precision/2\)` bits of agreement: (\d+) for fp32 "
                           r"\(24-bit precision\), (\d+) for bf16, (\d+) for `q16\.16`")
    (f64,) = said(r"keep the foundation's margin of 10 bits \(float64: (\d+)\)")
    for name, figure in (("float:fp32", fp32), ("float:bf16", bf16), ("fixed:q16.16", q16), ("float64", f64)):
        assert default_min_bits(get_numerics(name)) == int(figure), name


# -- ball arithmetic ---------------------------------------------------------------------------------------------
def test_arb_precision_range():
    lo, hi = map(int, said(r"`--numerics arb:BITS` \((\d+) ≤ BITS ≤ (\d+)\)"))
    (words,) = said(r"`error: --numerics: (arb:4: BITS=4 is outside \d+\.\.\d+) \.\.\.`, exit 2")
    assert words in refusal("two_heads.lemma_3_1", "arb:4")
    for ok in (lo, hi):
        assert get_numerics(f"arb:{ok}").bits == ok
    for bad in (lo - 1, hi + 1):
        with pytest.raises(NumericsError):
            get_numerics(f"arb:{bad}")


def test_certificate_of_lemma_3_1_at_128_bits():
    bits, companion, inside, of = said(
        r"`attnsim check two_heads\.lemma_3_1 --N 64 --M 8 --d 4 --numerics arb:128` prints `certified: ([\d.]+) "
        r"bits \(\.\.\.\); reference inside every ball; exact output \((\S+)\) inside (\d+) of (\d+) companion balls`")
    cert = record("two_heads.lemma_3_1", "arb:128", N=64, M=8, d=4)["extra"]["certified"]
    assert f"{cert['certified_bits']:.2f}" == bits
    assert cert["reference_outside"] == 0
    ex = cert["exact"]
    assert (ex["exact_numerics"], ex["status"]) == (companion, "checked")
    assert ex["entries"] - ex["outside"] == int(inside) and ex["entries"] == int(of)


def test_companion_base():
    name, power = said(r"The check runs the construction in `(\S+)` \(z\^64 = e\^([\d.]+)\.\.\.,")
    (sharper,) = said(r"with the default z = 2 the softmax is (\d+)× sharper")
    assert name == EXACT_COMPANION
    D, z = 64, 65 / 64  # the companion's grid and base, as its name says
    assert name == "exact:64:65/64" and f"{D * math.log(z):.4f}".startswith(power)
    assert math.floor(D * math.log(2)) == int(sharper)  # 2^(64 s) = e^(44.4 s) against the real e^s


def test_exact_companion_is_skipped_where_the_page_says():
    d, N, est = said(r"\(d = (\d+) at N = (\d+), estimated at (\d+) s: certified bits only\)")
    d_run, N_run, est_run = said(r"d = (\d+) at N = (\d+) is estimated at ([\d.]+) s, so its exact run goes ahead")
    chk = get_checker("two_heads.lemma_3_1")

    def ctx(N: str, d: str) -> CheckContext:
        return CheckContext("two_heads.lemma_3_1", chk.resolve({"N": int(N), "M": 8, "d": int(d)}), "arb:128", 0)

    (limit,) = said(r"a check whose exact run the cost model estimates at more than (\d+) s")
    assert EXACT_SECONDS == int(limit)
    why = exact_too_long(ctx(N, d))
    assert why is not None and f"estimated at {est} s" in why
    assert exact_too_long(ctx(N_run, d_run)) is None
    assert f"{estimate('two_heads.lemma_3_1', ctx(N_run, d_run).params, EXACT_COMPANION).seconds:.1f}" == est_run


# -- the rebuttal's three rows -----------------------------------------------------------------------------------
QUICK = (32, 64, 128, 256)


def test_the_rows_sweeps():
    full = said(r"growth sweep N = (\d+), (\d+), (\d+), (\d+) \(16×, kept small for the report; the CLI takes any N\); "
                r"quick (\d+) … (\d+)\)")
    for claim in ("two_heads.rebuttal_log_bits", "two_heads.rebuttal_log_bits_tolerance",
                  "two_heads.rebuttal_log_bits_float"):
        assert [p.params["N"] for p in growth_points(claim, False)] == [int(n) for n in full[:4]]
        quick = [p.params["N"] for p in growth_points(claim, True)]
        assert (quick[0], quick[-1]) == (int(full[4]), int(full[5])) and quick == list(QUICK)


def rebuttal(claim: str, N: int, **extra) -> dict:
    """A record of the quick growth sweep's shape (M = 8, d = 4, the defaults otherwise)."""
    return record(claim, N=N, M=8, d=4, **extra)


def test_target_2_to_the_minus_N_row():
    ratios = said(r"`attnsim growth two_heads\.rebuttal_log_bits` \(N = 64 … 1024\): bits / N = ([\d.]+), ([\d.]+), "
                  r"([\d.]+), ([\d.]+)")
    for N, ratio in ((64, ratios[0]), (256, ratios[2])):  # N = 128 and the quick slope: 0.6 s; N = 1024: 3 s
        assert f"{rebuttal('two_heads.rebuttal_log_bits', N)['counts']['bits'] / N:.2f}" == ratio
    (loss,) = said(r"N plus the decode's loss \(about (\d+) bits at d = 4\)")
    assert round(rebuttal("two_heads.rebuttal_log_bits", 64)["extra"]["search"]["loss"]) == int(loss)


def test_fixed_target_row():
    (B,) = said(r"at a fixed target 2\^-B \(B = (\d+) by default\)")
    (more,) = said(r"the bits needed stay at B \+ (\d+) at every N")
    assert get_checker("two_heads.rebuttal_log_bits_tolerance").resolve({})["target_bits"] == int(B)
    assert rebuttal("two_heads.rebuttal_log_bits_tolerance", 64)["counts"]["bits"] == int(B) + int(more)


def test_float_row():
    (B,) = said(r"the same fixed target \(2\^-(\d+) by default\) for the fixed-width simulator")
    assert get_checker("two_heads.rebuttal_log_bits_float").resolve({})["target_bits"] == int(B)
    *widths, verdict = said(r"Quick sweep \(N = 32 … 256\): widths (\d+), (\d+), (\d+), (\d+), verdict `(\w+)`")
    records = [rebuttal("two_heads.rebuttal_log_bits_float", N) for N in QUICK]
    assert [r["counts"]["bits"] for r in records] == [int(w) for w in widths]
    assert judge("two_heads.rebuttal_log_bits_float", "bits", records).verdict == verdict


def test_float_row_refuses_a_target_past_float64():
    lost, give = said(r"`--N 69 --M 2 --d 8 --sample-blocks 0 --target-bits 19 --seed 184662` loses up to "
                      r"([\d.]+) bits, and float:8\.52 reached 2\^-[\d.]+; it is refused with \"([^\"]+)\"")
    text = refusal("two_heads.rebuttal_log_bits_float", None, 184662, "target_bits", N=69, M=2, d=8,
                   sample_blocks=0, target_bits=19)
    assert f"up to {lost} bits" in text and give in text
    (most,) = re.search(r"(\d+) or less", give).groups()
    assert math.floor(52 - 2 - float(lost)) == int(most)  # the page's 52 − 2 − log2(1 + A_max)


def test_certified_bits_table():
    """`attnsim precision two_heads.lemma_3_1 --certified --N 64,256,1024,4096 --M 8`: the N = 64 cells and the
    2^-N cell at N = 256 (seed 0, d = 4, 4 sampled blocks); the rest take from 0.4 s to minutes."""
    rows = {r[0]: r for r in table("| N | 64 | 256 | 1024 | 4096 |")}
    per_N = rows["target 2^-N: certified bits needed (bits lost)"]
    fixed = rows["target 2^-10"]
    for col, N in ((1, 64), (2, 256)):
        s = rebuttal("two_heads.rebuttal_log_bits", N)["extra"]["search"]
        assert per_N[col] == f"{s['bits']} ({s['loss']:.1f})"
    s = rebuttal("two_heads.rebuttal_log_bits_tolerance", 64, target_bits=10)["extra"]["search"]
    assert fixed[1] == f"{s['bits']} ({s['loss']:.1f})"


def test_certified_study_with_blocks_of_32():
    first, *_ = said(r"gave (\d+), (\d+), (\d+) and (\d+) bits for 2\^-N")
    (tol,) = said(r"and (\d+) at every N for 2\^-10")
    assert record("two_heads.rebuttal_log_bits", N=64, M=32, d=4)["counts"]["bits"] == int(first)
    tolerance = record("two_heads.rebuttal_log_bits_tolerance", N=64, M=32, d=4, target_bits=10)
    assert tolerance["counts"]["bits"] == int(tol)
    (minutes,) = said(r"\(`verify/cost_models\.py`; ([\d.]+) min for this one\)")
    est = certified_estimate([64, 256, 1024, 4096], 32, 4, 4, 10)
    assert f"{est.seconds / 60:.1f}" == minutes


# -- Lemma 3.1's decodes in float64 ------------------------------------------------------------------------------
def lemma(d: int, numerics: str = "float64", min_bits: float | None = None, **extra) -> dict:
    return record("two_heads.lemma_3_1", numerics, 0, min_bits, N=64, M=8, d=d, **extra)


def test_paper_decode_in_float64():
    at4, at8 = said(r"--d D --numerics float64` agrees to ([\d.]+) and ([\d.]+) bits at d = 4 and 8")
    assert (f1(lemma(4)["error_bits"]), f1(lemma(8)["error_bits"])) == (at4, at8)
    # the refusals at d = 16 and 32 (73.2 and 177.7 bits) cost 0.5 s and 1.1 s: not here
    (bits,) = said(r"Asked to run anyway \(`--min-bits 0`\), it agrees to (\d+) bits at both and fails")
    r = lemma(16, min_bits=0)
    assert r["error_bits"] == int(bits) and r["verdict"] == "fail"
    (non_finite,) = said(r"\(`extra\.non_finite`, e\.g\. `(\{[^}]*\})` for the paper's decode at d = 16\)")
    assert repr(r["extra"]["non_finite"]) == non_finite


def test_stable_decode_in_float64():
    bits = said(r"In float64 at d = 4, 8, 16, 32 it agrees to ([\d.]+), ([\d.]+), ([\d.]+) and ([\d.]+) bits "
                r"\(N = 64, M = 8, seed 0\)")
    assert f1(lemma(4, decode="stable")["error_bits"]) == bits[0]  # d = 8, 16 and 32 take 1.9 s more


def test_stable_decode_costs_what_the_paper_decode_costs():
    row = {r[0]: r[1] for r in table("| step | allowance |")}["everything else"]
    assert "the same calls (2n² paper, n² fused)" in row and "the same oracle width 2d + 2" in row
    n, d = 64 // 8, 4
    for scheme, calls in (("paper", 2 * n * n), ("fused", n * n)):
        r = lemma(d, "exact", scheme=scheme, decode="stable")
        assert r["error_bits"] == math.inf  # "Exact numerics show it equals attention"
        assert r["counts"]["calls"] == calls and r["counts"]["oracle_dim"] == 2 * d + 2
