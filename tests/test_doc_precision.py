"""The figures of docs/precision.md that a cheap, deterministic run gives, read off the page and recomputed.

Two Heads (§1.1) asks for O(log N)-bit numbers and a row error of 2^-N but gives no rounding rule; the page says
what attnsim measures instead: the formats, the bits a check asks for, the ball certificates, the three rebuttal
rows, Lemma 3.1's two decodes, the fuzz cases of "Agreement" and the precision study at its smaller N. Figures
that cost more (N = 1024 and up, the seed sweeps, the float64 TinT figures that vary with the CPU) are not here.
"""

from __future__ import annotations

import math
import re
from functools import cache

import pytest
from doc_page import Page

from attnsim.sim.numerics import NumericsError, get_numerics
from attnsim.sim.numerics.fixed_formats import FLOAT_NAMES
from attnsim.verify.agreement import default_min_bits
from attnsim.verify.check import run_check
from attnsim.verify.cost import estimate
from attnsim.verify.growth import growth_points, judge
from attnsim.verify.model_check import EXACT_SECONDS, exact_too_long
from attnsim.verify.precision.certified_study import certified_estimate
from attnsim.verify.precision.certify import EXACT_COMPANION
from attnsim.verify.precision.study import bits_study, blocks_study, decode_study
from attnsim.verify.registry import CheckContext, UsageError, get_checker
from attnsim.verify.tint_bits import asked_bits, finite_difference_bits

_PAGE = Page("precision.md")
PAGE = _PAGE.text
TEXT = _PAGE.flat
said = _PAGE.said
table = _PAGE.table


def f1(x: float) -> str:
    return f"{x:.1f}"


def num(text: str) -> float:
    """A figure as the page writes it (a minus sign as −)."""
    return float(text.replace("−", "-"))


@cache
def record(claim: str, numerics: str | None = None, seed: int = 0, min_bits: float | None = None,
           **params) -> dict:
    """One check's record, run once per file (read-only)."""
    return run_check(claim, params, numerics, seed, min_bits)


def refusal(claim: str, numerics: str | None, seed: int = 0, param: str = "numerics", **params) -> str:
    """The one line a check is refused with, which must name ``param``."""
    with pytest.raises(UsageError) as e:
        run_check(claim, params, numerics, seed)
    assert e.value.param == param
    return str(e.value)


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


# -- "Agreement": the cases fuzzing found ------------------------------------------------------------------------
TWO_LAYERS = dict(N=12, M=4, d=1, psi="identity", H=1, L=2, Hp=2, Lp=2, causal=False)


def test_a_model_that_keeps_few_bits_itself():
    bf16, fp32, f64 = said(r"--causal false --seed 1032`\) keeps ([\d.]+) bits of bf16 evaluated directly, "
                           r"([\d.]+) of fp32 and ([\d.]+) of float64")
    asked, got = said(r"in fp32 it asks for ([\d.]+) bits and gets ([\d.]+)\.")
    assert f"keeps {bf16} bits evaluated directly" in refusal("two_heads.thm_1_1", "float:bf16", 1032, **TWO_LAYERS)
    r = record("two_heads.thm_1_1", "float:fp32", 1032, **TWO_LAYERS)
    assert (f1(r["extra"]["direct_bits"]), f1(r["min_bits"]), f1(r["error_bits"])) == (fp32, asked, got)
    assert f1(record("two_heads.thm_1_1", "float64", 1032, **TWO_LAYERS)["extra"]["direct_bits"]) == f64
    lo, hi = map(int, said(r"a loss of (\d+) to (\d+) bits at every precision"))
    assert all(lo <= bits - float(kept) <= hi for bits, kept in ((8, bf16), (24, fp32), (53, f64)))


def test_packed_jobs_held_to_what_each_keeps_alone():
    (kept,) = said(r"which kept ([\d.]+) bits of fp16 packed and alone alike")
    text = refusal("two_heads.lemma_3_3", "float:fp16", 629520, M=8, d=8, H=4, Hp=2, Lp=2, causal=False)
    assert f"keep {kept} bits" in text


def test_claim_b_6_cases():
    kept, allowed = said(r"`two_heads\.claim_b_6 --N 8 --M 4 --d 5 --numerics float:fp32` keeping ([\d.]+) bits "
                         r"against 14 asked, with sums up to 2\^13 \(allowed ([\d.]+) bits; it passes\)")
    r = record("two_heads.claim_b_6", "float:fp32", N=8, M=4, d=5)
    assert (f1(r["error_bits"]), f1(r["extra"]["decode_allowance_bits"]), r["verdict"]) == (kept, allowed, "pass")
    (bits,) = said(r"in bf16, one token of large input kept ([\d.]+) bits that way")
    text = refusal("two_heads.claim_b_6", "float:bf16", 10246375, N=1, M=2, d=4, input="large")
    assert f"keep {bits} bits" in text


def test_tint_bits_asked_below_float64():
    (asks,) = said(r"it now asks (\d+) and passes, and mp:20 is refused")
    text = refusal("tint.attn_backward", "mp:20", case="tiny-relu")
    at_float64 = float(re.search(r"this check asks ([\d.]+) bits of float64's 53", text).group(1))
    ctx = CheckContext("tint.attn_backward", get_checker("tint.attn_backward").resolve({"case": "tiny-relu"}),
                       "mp:30", 0)
    assert asked_bits(ctx, at_float64) == int(asks) == at_float64 - (53 - 30)


def test_tint_finite_differences():
    room, same, log_n, asked, halvings, top = said(
        r"ask at most float64's default \((\d+) bits\) less log2 N at their largest N: the same (\d+) up to N = "
        r"2\^(\d+), and ([\d.]+) at `--halvings (\d+)` \(N up to ([\d,]+)\)")
    assert default_min_bits(get_numerics("float64")) == int(room) and int(room) - int(log_n) == int(same)
    params = get_checker("tint.ln_backward").resolve({"halvings": int(halvings)})
    largest = params["fd_scale"] << (int(halvings) - 1)
    assert f"{largest:,}" == top
    ctx = CheckContext("tint.ln_backward", params, "float64", 0)
    assert f1(finite_difference_bits(ctx, 30.0, largest)) == asked


NORM = dict(N=12, M=4, d=4, H=1, norm="pre")


def test_pre_norm_example():
    bits, asked, allowed, direct = said(
        r"--norm pre --numerics mp:200 --seed 3`: `agreement: yes \(([\d.]+) bits; ([\d.]+) asked, ([\d.]+) allowed "
        r"for Lemma 3\.1's decode \.\.\.; the model itself keeps ([\d.]+) evaluated directly\)`")
    r = record("two_heads.rebuttal_norm", "mp:200", 3, L=2, **NORM)
    got = (r["error_bits"], r["min_bits"], r["extra"]["decode_allowance_bits"], r["extra"]["direct_bits"])
    assert tuple(map(f1, got)) == (bits, asked, allowed, direct)


def test_pre_norm_seeds():
    lo, hi, *seeds, fixed, dlo, dhi = said(
        r"at mp:200 agreed to ([\d.]+)–([\d.]+) bits on seeds (\d+), (\d+) and (\d+), under the fixed (\d+), while "
        r"the model evaluated directly in mp:200 agreed to (\d+)–(\d+)")
    rs = [record("two_heads.rebuttal_norm", "mp:200", int(s), L=2, **NORM) for s in seeds]
    bits = [r["error_bits"] for r in rs]
    assert (f1(min(bits)), f1(max(bits))) == (lo, hi) and max(bits) < int(fixed)
    assert all(int(dlo) <= r["extra"]["direct_bits"] <= int(dhi) for r in rs)
    pairs = said(r"\(([\d.]+) of ([\d.]+) bits on seed 0; ([\d.]+) of ([\d.]+) on seed 1; ([\d.]+) of ([\d.]+) on "
                 r"seed 3, with L = 1\)")
    for i, seed in enumerate((0, 1, 3)):
        r = record("two_heads.rebuttal_norm", "mp:200", seed, L=1, **NORM)
        assert (f1(200 - r["error_bits"]), f1(r["extra"]["decode_allowance_bits"])) == pairs[2 * i:2 * i + 2]


WINDOW = dict(N=20, M=6, d=4, input="large", H=2, Hp=2, Lp=1, window=2, sinks=1)


def test_window_differences():
    lost, f64, mp, allowance, asked, lost1, allowance1 = said(
        r"--window 2 --sinks 1` losing (\d+) bits at every precision \(([\d.]+) bits left in float64, ([\d.]+) of 200 "
        r"at mp:200\); its allowance is ([\d.]+) bits, so float64 is refused naming `--numerics` and mp:200 passes "
        r"\(([\d.]+) asked\)\. With L = 1 the loss is (\d+) bits against an allowance of ([\d.]+)\.")
    assert f"may lose {allowance} bits" in refusal("two_heads.thm_1_4", "float64", L=2, **WINDOW)
    at_f64 = record("two_heads.thm_1_4", "float64", 0, 0, L=2, **WINDOW)["error_bits"]
    r = record("two_heads.thm_1_4", "mp:200", L=2, **WINDOW)
    assert (f1(at_f64), f1(r["error_bits"]), f1(r["min_bits"]), r["verdict"]) == (f64, mp, asked, "pass")
    assert round(200 - r["error_bits"]) == int(lost) and abs(53 - at_f64 - int(lost)) < 1
    r1 = record("two_heads.thm_1_4", "mp:200", L=1, **WINDOW)
    assert (round(200 - r1["error_bits"]), f1(r1["extra"]["decode_allowance_bits"])) == (int(lost1), allowance1)


def test_fused_subtraction_at_seed_0():
    fused, fused64, paper, cor = said(
        r"at seed 0 the same commands keep ([\d.]+) bits fused at mp:200 \(([\d.]+) in float64\), ([\d.]+) with "
        r"`--scheme paper`, and ([\d.]+) for `two_heads\.cor_3_2`")
    model = dict(N=1, M=2, d=3, input="large", H=1, L=2, psi="affine")
    win = dict(model, Hp=1, Lp=1, window=1, sinks=0)
    got = (record("two_heads.thm_1_4", "mp:200", scheme="fused", **win)["error_bits"],
           record("two_heads.thm_1_4", "float64", scheme="fused", **win)["error_bits"],
           record("two_heads.thm_1_4", "mp:200", scheme="paper", **win)["error_bits"],
           record("two_heads.cor_3_2", "mp:200", scheme="fused", **model)["error_bits"])
    assert tuple(map(f1, got)) == (fused, fused64, paper, cor)


FLOOR = dict(N=11, M=2, d=5, H=1, L=2, decode="stable")
FLOOR_FORMATS = ("float:fp16", "float:5.16", "fixed:q16.16", "fixed:q16.32", "float:fp32")


def test_smallest_numbers():
    assert record("two_heads.lemma_3_1", "float:fp16", 0, 0, N=1, M=2, d=5, input="large")["error_bits"] == 0
    refusal("two_heads.lemma_3_1", "float:fp16", N=1, M=2, d=5, input="large")
    figures = said(r"kept ([\d.]+) of fp16's (\d+) bits \(a second-layer row at A = 2\^-[\d.]+\), ([\d.]+) of "
                   r"float:5\.16's (\d+), ([\d.]+) of q16\.16's (\d+) and ([\d.]+) of q16\.32's (\d+), and ([\d.]+) of "
                   r"fp32's (\d+)")
    kept = {}
    for i, fmt in enumerate(FLOOR_FORMATS):
        bits = record("two_heads.cor_3_2", fmt, 18733449, 0, **FLOOR)["error_bits"]
        assert (f1(bits), get_numerics(fmt).bits) == (figures[2 * i], int(figures[2 * i + 1])), fmt
        kept[fmt] = bits
    floats, fixed, *losses = said(r"The allowance is ([\d.]+) bits for the float formats and ([\d.]+) for the fixed "
                                  r"ones, above each loss \(([\d.]+), ([\d.]+), ([\d.]+), ([\d.]+)\)")
    for fmt, figure in (("float:fp16", floats), ("fixed:q16.16", fixed)):  # one of each family
        text = refusal("two_heads.cor_3_2", fmt, 18733449, **FLOOR)
        assert f"may lose {figure} bits" in text, fmt
    for fmt, loss in zip(FLOOR_FORMATS, losses):
        allowance = float(floats if fmt.startswith("float") else fixed)
        assert f1(get_numerics(fmt).bits - kept[fmt]) == loss and allowance > float(loss)


# -- the precision study at its smaller N ------------------------------------------------------------------------
@cache
def study(claim: str, N: int) -> dict:
    """`attnsim precision CLAIM --N N --M 32`: float family, E = 8, target 2^-10, 16 sampled groups, seed 0."""
    return bits_study([N], 32, claim=claim)["constructions"]


def test_lemma_3_1_widths_at_small_N():
    rows = table("| N | n | paper: width (mantissa) | fused | direct attention |")
    assert [r[0] for r in rows] == ["64", "256", "1024", "4096"]
    for N, n, paper, fused, direct in rows[:2]:  # N = 1024 and 4096 take 7 s
        c = study("two_heads.lemma_3_1", int(N))
        assert int(n) == int(N) // 32
        for cell, name in ((paper, "paper"), (fused, "fused"), (direct, "direct")):
            assert cell == f"{c[name]['width'][0]} ({c[name]['precision'][0]})", (N, name)


CONSTRUCTIONS = {"Lemma 3.1 (paper, fused)": ("two_heads.lemma_3_1", ("paper", "fused")),
                 "Thm 3.4 (paper, fused)": ("two_heads.thm_3_4", ("paper", "fused")),
                 "Thm 3.5 (paper, fused)": ("two_heads.thm_3_5", ("paper", "fused")),
                 "Thm 5.1 (paper, fused)": ("two_heads.thm_5_1", ("paper", "fused"))}
DIRECT = {"none": "two_heads.lemma_3_1", "causal": "two_heads.thm_3_5", "window 8 + 1 sink": "two_heads.thm_5_1"}


def test_every_construction_at_small_N():
    rows = table("| construction | mask | N=64 | 256 | 1024 | 4096 |")
    assert len(rows) == 7
    for label, mask, at64, at256, *_ in rows:
        claim, names = CONSTRUCTIONS[label] if label in CONSTRUCTIONS else (DIRECT[mask], ("direct",))
        cells = ((64, at64), (256, at256)) if claim == "two_heads.lemma_3_1" else ((64, at64),)  # the rest: 0.6 s
        for N, cell in cells:
            for name in names:
                assert study(claim, N)[name]["width"] == [int(cell)], (label, N, name)


def test_decode_conditioning():
    slopes = said(r"\(bf16 (−[\d.]+), fp16 (−[\d.]+), fp32 (−[\d.]+)\)")
    first = said(r"rounds to 1 once log2 A reaches the format's precision \(bf16: (\d+), fp16: (\d+), fp32: (\d+)\)")
    for fmt, slope, fail in zip(("float:bf16", "float:fp16", "float:fp32"), slopes, first):
        r = decode_study(fmt)
        assert (f"{r['slope']:.2f}", r["first_log2_A_failing"]) == (f"{num(slope):.2f}", int(fail)), fmt


def test_error_against_merged_blocks_at_their_start():
    """`--blocks-format float:fp32`: the n = 2 ends of the page's figures (the far ends take seconds)."""
    lemma_lo, lemma_hi = said(r"Error against merged blocks at fp32 \(n = 2 … 128\): the simulation stays at "
                              r"(\d+)–(\d+) bits")
    (direct,) = said(r"Direct attention falls from ([\d.]+) to [\d.]+ bits")
    (window,) = said(r"At float:fp32 the error falls from ([\d.]+) to [\d.]+ bits over n = 2 … 128 merged chunks")
    rows = blocks_study([64], 32, "float:fp32")["rows"]
    assert int(lemma_lo) <= rows["paper"][0]["error_bits"] <= int(lemma_hi)
    assert f1(rows["direct"][0]["error_bits"]) == direct
    assert f1(blocks_study([64], 32, "float:fp32", ("paper",), claim="two_heads.thm_5_1")["rows"]["paper"][0]
              ["error_bits"]) == window
    thm_5_1 = said(r"Thm 5\.1 agrees to ([\d.]+), ([\d.]+) and [\d.]+ bits at N = 32, 128 and 512")
    thm_3_5 = said(r"against ([\d.]+), ([\d.]+) and [\d.]+ for Thm 3\.5, which only adds \(every row")
    for claim, figures, extra in (("two_heads.thm_5_1", thm_5_1, dict(window=4, sinks=0)),
                                  ("two_heads.thm_3_5", thm_3_5, {})):
        rows = blocks_study([32, 128], 16, "float:fp32", ("paper",), sample_blocks=None, claim=claim, **extra)["rows"]
        assert tuple(f1(r["error_bits"]) for r in rows["paper"]) == figures, claim  # N = 512 takes a second
