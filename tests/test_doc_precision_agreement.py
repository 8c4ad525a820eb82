"""The figures of docs/precision.md's "Agreement" section (the cases fuzzing found: models that keep few bits
themselves, packed jobs, layer norms, windows, the smallest numbers) and of the precision study at its smaller N,
read off the page and recomputed. The rest of the page: tests/test_doc_precision.py.
"""

from __future__ import annotations

import re
from functools import cache

from precision_page import f1, num, record, refusal, said, table

from attnsim.sim.numerics import get_numerics
from attnsim.verify.agreement import default_min_bits
from attnsim.verify.precision.study import bits_study, blocks_study, decode_study
from attnsim.verify.registry import CheckContext, get_checker
from attnsim.verify.tint_bits import asked_bits, finite_difference_bits

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
