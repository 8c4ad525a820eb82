"""The figures of docs/anna_mpc_to_anna.md that a cheap, deterministic run or formula gives, read off the page and
recomputed.

The page describes Thm 4.1 (ANNA simulates MPC, by our relay for Lemma B.12), Thm 5.4 / 5.6 by the paper's route,
Cor B.9 and Lemma B.13. Held here: the Thm 4.1 table at N = 1024, the widths of its growth sweep, the rho sweep of
Lemma B.12, the memory of the sample sort, the Thm 5.4 / 5.6 layer counts, the memories of the Cor B.9 and
Lemma B.13 sweeps and two of Cor B.9's max_alpha figures. tests/anna/test_lemma_b_12.py holds the relay's rounds.
Not held: max_alpha 3 of the scan at N = 2048 (about 5 s).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import cache

import pytest
from doc_page import Page

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna.khop import TOKEN_WORDS, splitter_sort_rounds
from attnsim.sim.anna.mpc_protocols import power_of_two_at_least
from attnsim.sim.anna.mpc_radix import radix_passes
from attnsim.sim.anna.mpc_scan import scan_memory
from attnsim.sim.anna.mpc_sort import sort_memory_needed
from attnsim.sim.anna.mpc_tree import levels
from attnsim.theory.formulas import as_number, evaluate
from attnsim.verify.claims.anna_capacity import GROWTH
from attnsim.verify.claims.anna_direct import REGIME_SIZES, widest_scan_fan
from attnsim.verify.claims.anna_mpc_to_anna import sort_point
from attnsim.verify.claims.anna_relay import CAPACITIES, RHO_SWEEP
from attnsim.verify.growth import growth_points
from attnsim.verify.registry import CheckContext, Measurement, get_checker

_PAGE = Page("anna_mpc_to_anna.md")
PAGE = _PAGE.text
TEXT = _PAGE.flat
said = _PAGE.said
table = _PAGE.table


def ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", text)]


WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}


@cache
def measured(claim: str, **params) -> Measurement:
    """What the claim's checker measures at seed 0, once per file (read-only). The checker is called without
    run_check's symbolic containments, which cost seconds the first time; the exact formulas are held here."""
    chk = get_checker(claim)
    m = chk.fn(CheckContext(claim, chk.resolve(params), "exact", 0))
    assert m.agree is True and not m.reasons, m.reasons
    return m


# -- Thm 4.1 ---------------------------------------------------------------------------------------------------
PROTOCOLS = {"sort (bitonic)": "sort", "sum (prefix sums, 4-ary tree)": "sum", "k-hop (k = 5)": "khop"}


def test_the_thm_4_1_table_is_the_runs():
    """Thm 4.1 at N = 1024, P = 64, eps' = 0.95, seed 0: each row is the record of its protocol."""
    rows = table("| protocol | s | eps | rounds R |")
    assert [r[0] for r in rows] == list(PROTOCOLS)
    claim = get_claim("anna.thm_4_1")
    for name, s, eps, R, D, layers, heads, width, n_eps1, load in rows:
        m = measured("anna.thm_4_1", protocol=PROTOCOLS[name], N=1024, P=64, eps1=0.95)
        x, c = m.extra, m.counts
        values = {**m.derived, "N": 1024, "eps1": 0.95, "heads_scale": 1.0}
        assert (x["s"], x["R"], x["D"], x["k"]) == (int(s), int(R), int(D), 3)
        assert round(x["eps"], 2) == float(eps)
        assert c["layers"] == int(layers) == as_number(evaluate(claim.resources["layers"].exact, claim.definitions,
                                                                values))
        assert c["heads"] == int(heads) == as_number(evaluate("H", claim.definitions, values))
        assert [x["width_measured"], x["width_declared"]] == ints(width)
        assert x["width_declared"] == as_number(evaluate("3*B + 4", claim.definitions, values))
        assert round(1024**0.95) == int(n_eps1)
        assert [x["max_token_units"], x["B"]] == ints(load)


def test_bitonic_rounds_and_the_sample_sorts_memory():
    """Item 8: p(p+1)/2 rounds of the bitonic sort on 2^p machines; the one-level sample sort needs about 3 P^2
    words, more than N at P = 64 up to N = 4096, but s < N at N = 4096 on 16 machines."""
    (sort_row,) = [r for r in table("| protocol | s | eps | rounds R |") if r[0].startswith("sort")]
    assert int(sort_row[3]) == 6 * 7 // 2
    P, top = (int(x) for x in said(r"with P = (\d+) that is s > N for N <= (\d+)"))
    assert sort_memory_needed(P, top // P, 3, 1) > top and sort_memory_needed(P, 0, 3, 1) == 3 * P * (P - 1)
    n, p = (int(x) for x in said(r"`samplesort` remains available where its memory fits \(e\.g\. N = (\d+), "
                                 r"P = (\d+)\)"))
    assert power_of_two_at_least(sort_memory_needed(p, n // p, 3, 1)) < n  # the protocol's s


def test_the_growth_sweeps_widths():
    """The widths 3 B + 4 (B = s + 2 k D) over Thm 4.1's full growth sweep, and N / width."""
    widths = ints(said(r"the width is at most ([\d, ]+) \(")[0])
    ratios = re.findall(r"N/([\d.]+)", said(r"\((N/[\d.]+(?:, N/[\d.]+)+)\)")[0])
    points = growth_points("anna.thm_4_1")
    assert [p.params for p in points] == [sort_point(n) for n in (256, 1024, 4096, 16384)]
    claim = get_claim("anna.thm_4_1")
    for p, width, ratio in zip(points, widths, ratios, strict=True):
        N, P, eps = p.params["N"], p.params["P"], p.params["eps"]
        got = as_number(evaluate(claim.resources["embedding_dim"].upper, claim.definitions,
                                 {"N": N, "P": P, "eps": eps, "eps1": p.params["eps1"], "heads_scale": 1.0}))
        assert got == width
        digits = len(ratio.split(".")[1]) if "." in ratio else 0
        assert round(N / width, digits) == float(ratio)


def test_the_rho_sweep_of_lemma_b_12():
    """Item 3: the rho sweep runs k = 2 .. 16 at N = 1024, rho = log k / log N from 1/10 to 2/5, 1/rho over 4x."""
    k_lo, k_hi, n, r_lo, r_hi, span = said(r"sweeps k = (\d+) \.\. (\d+) at N = (\d+) \(rho = (\S+) \.\. (\S+), "
                                           r"1/rho spanning (\d+)x\)")
    assert (CAPACITIES[0], CAPACITIES[-1]) == (int(k_lo), int(k_hi))
    assert {p["N"] for p in RHO_SWEEP.grid(False)} == {int(n)}
    rho = [math.log(k) / math.log(int(n)) for k in (int(k_lo), int(k_hi))]
    assert rho == pytest.approx([float(Fraction(r_lo)), float(Fraction(r_hi))])
    assert rho[1] / rho[0] == pytest.approx(int(span))


# -- Thm 5.4 and 5.6 by the paper's route -----------------------------------------------------------------------
def hop_layers(claim: str, N: int, eps: float, sigma: float, sort: str, k: int | None = None) -> dict:
    """R, layers and Lemma F.3's (Thm F.4's) bound from paper_refs at the run's memory s = 2^round(eps log2 N) and
    machines P = ceil(N / (s/16)), at eps' = 0.95 and heads_scale 1 (the defaults)."""
    log2n = N.bit_length() - 1
    s = 1 << round(eps * log2n)
    values = {"N": N, "eps": Fraction(s.bit_length() - 1, log2n), "eps1": 0.95, "heads_scale": 1.0, "sigma": sigma,
              "sort_letter": int(sort == "letter"), "s": s, "P": -(-N // (s // TOKEN_WORDS)), "k": k,
              "sort_rounds": splitter_sort_rounds(s, N) if sort == "splitter" else 0}
    c = get_claim(claim)
    R, layers, bound = (as_number(evaluate(f, c.definitions, values))
                        for f in ("R", c.resources["layers"].exact, c.resources["layers"].bound))
    return {"s": s, "R": int(R), "layers": int(layers), "ratio": float(layers / bound), "eps": values["eps"]}


def test_thm_5_4_at_n_64_is_the_run():
    """Thm 5.4 with the letter sort at N = 64: s, machines, passes, R, D, layers, heads, width, and the ratio to
    Lemma F.3's bound."""
    cmd = said(r"Measured \(`attnsim check anna\.thm_5_4 --N (\d+) --eps (\S+) --sigma (\S+) --sort letter`")
    *figures, passes, per, R, D, layers, heads, width = said(
        r"s = (\d+) < N = (\d+) on (\d+) machines, f = (\d+), (\w+) passes of the letter sort of (\d+) rounds each, "
        r"R = (\d+) protocol rounds, relay D = (\d+), layers (\d+) = R D\^2 \+ 2, heads (\d+), width (\d+)")
    s, n, machines, f = (int(x) for x in figures)
    passes = WORDS[passes]
    per, R, D, layers, heads, width = (int(x) for x in (per, R, D, layers, heads, width))
    bound, ratio = said(r"Lemma F\.3's bound with constant 1 is (\d+), so the ratio \((\S+)\)")
    N, eps, sigma = int(cmd[0]), float(cmd[1]), float(cmd[2])
    m = measured("anna.thm_5_4", N=N, eps=eps, sigma=sigma, sort="letter")
    x, c = m.extra, m.counts
    assert n == N and (x["s"], x["P"], max(2, math.isqrt(s) // 3)) == (s, machines, f)
    assert c["sorting_rounds"] == passes * per and x["R"] == R and x["D"] == D
    assert (c["layers"], c["heads"], c["embedding_dim"]) == (layers, heads, width) and layers == R * D**2 + 2
    formula = hop_layers("anna.thm_5_4", N, eps, sigma, "letter")
    assert formula["layers"] == layers and round(formula["layers"] / formula["ratio"]) == int(bound)
    assert round(formula["ratio"], 2) == float(ratio)


def test_the_defaults_layers():
    """At the defaults (N = 4096, |Sigma| = N^(1/2), the splitter sort, s = 1024): R, layers and the ratio to the
    bound at the realised eps, for Thm 5.4 and Thm 5.6 with k = 32."""
    R4, L4, r4, eps = said(r"R = (\d+) and layers (\d+), ratio (\S+) against the bound at the realised eps = (\S+);")
    R6, L6, r6 = said(r"`attnsim check anna\.thm_5_6 --k 32` \(same N and alphabet\) takes R = (\d+) and (\d+) "
                      r"layers, ratio (\S+)\.")
    five_four = hop_layers("anna.thm_5_4", 4096, 0.84, 0.5, "splitter")
    five_six = hop_layers("anna.thm_5_6", 4096, 0.84, 0.5, "splitter", k=32)
    assert five_four["s"] == 1024 and round(float(five_four["eps"]), 3) == float(eps)
    assert (five_four["R"], five_four["layers"], round(five_four["ratio"], 2)) == (int(R4), int(L4), float(r4))
    assert (five_six["R"], five_six["layers"], round(five_six["ratio"], 2)) == (int(R6), int(L6), float(r6))


def test_the_letter_sort_cut_the_layers():
    """At N = 1024, s = 256, 4 letters: the whole key took 6 passes of 7 rounds, the letter sort one; the layers
    before and now, for Thm 5.4 and Thm 5.6 with k = 32."""
    passes, per, n, s, f, n_cmd, eps, sigma = said(
        r"(\d+) passes of (\d+) rounds at N = (\d+) \(s = (\d+), f = (\d+); "
        r"`attnsim check anna\.thm_5_4 --N (\d+) --eps (\S+) --sigma (\S+) --sort letter`")
    old4, new4, old6, new6 = (int(x) for x in said(r"the layers fell from (\d+) to (\d+) \(Thm 5\.4\) and from (\d+) "
                                                   r"to (\d+) \(Thm 5\.6, k = 32\)"))
    N, s, f = int(n), int(s), int(f)
    assert n_cmd == n
    alphabet = round(N ** float(sigma))
    said(rf"--sort letter`, \|Sigma\| = {alphabet}\)")
    assert f == max(2, math.isqrt(s) // 3) and radix_passes(alphabet * N, f) == int(passes)
    assert radix_passes(alphabet, f) == 1 and int(per) == 2 * levels(-(-N // (s // TOKEN_WORDS)), f) + 1
    now4 = hop_layers("anna.thm_5_4", N, float(eps), float(sigma), "letter")
    now6 = hop_layers("anna.thm_5_6", N, float(eps), float(sigma), "letter", k=32)
    assert now4["s"] == s and (now4["layers"], now6["layers"]) == (new4, new6)
    D2 = (now4["layers"] - 2) // now4["R"]  # the relay's D^2 does not depend on the sort
    grown = (int(passes) - 1) * int(per)
    assert ((now4["R"] + grown) * D2 + 2, (now6["R"] + grown) * D2 + 2) == (old4, old6)


# -- Cor B.9 and Lemma B.13 -------------------------------------------------------------------------------------
def test_cor_b_9_memory_grows_over_its_sweep():
    """Cor B.9's growth sweep: one token a machine and the widest scan fan with s^5 < N."""
    s_text, n_text = said(r"s grows with N over the growth sweep \(s = ([\d, ]+) at N = ([\d, ]+)\)")
    assert tuple(ints(n_text)) == REGIME_SIZES
    assert [scan_memory(1, widest_scan_fan(n, 1)) for n in REGIME_SIZES] == ints(s_text)
    assert all(s**5 < n for s, n in zip(ints(s_text), REGIME_SIZES))


def test_cor_b_9_averages_several_messages():
    """Cor B.9: max_alpha, the most messages one head brought one receiver, for k-hop and for the prefix sums."""
    khop, sums = (int(x) for x in said(r"which is (\d+) for k-hop .*? and (\d+) for the prefix sums"))
    assert measured("anna.cor_b_9", protocol="khop", N=128, P=128).extra["max_alpha"] == khop
    assert measured("anna.cor_b_9", protocol="sum", N=256, P=64).extra["max_alpha"] == sums


def test_lemma_b_13_growth_sweep():
    """Lemma B.13's sweep: s = N/P + 2 f - 1 and k = f grow with N."""
    n_lo, n_hi, s_lo, s_hi, k_lo, k_hi = (int(x) for x in said(
        r"the growth sweep has s and k growing together \(N = (\d+) \.\. (\d+), s = (\d+) \.\. (\d+), "
        r"k = (\d+) \.\. (\d+)\)"))
    assert (GROWTH[0][0], GROWTH[-1][0]) == (n_lo, n_hi)
    memory = [scan_memory(b, f, split=True) for _, b, f in GROWTH]
    assert (memory[0], memory[-1]) == (s_lo, s_hi) and memory == sorted(memory)
    assert (GROWTH[0][2], GROWTH[-1][2]) == (k_lo, k_hi)
