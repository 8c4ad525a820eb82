"""The figures of docs/anna_small_memory.md on k-hop (Thm F.4) and the paper's route for Thm 5.4 / 5.6 with Lemma
C.2's splitter sort, exact-match attention's O(d N log N) time (App. B) and the cross-polytope family of Thm 3.4,
read off the page and recomputed: the k-hop grid, sweep and letter sort's runs, the sort's levels, the items' words
and the refusal tables' rates and bounds from their own counts, the comparison count of EMA and its growth verdict,
and the cross-polytope bounds.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import cache

import numpy as np
from doc_page import shown
from small_memory_page import WORDS, defaults, memory, num, nums, percent, said, scientific, table

from attnsim.sim.anna.attention import ema
from attnsim.sim.anna.khop import ITEM_WORDS, KEY_WORDS, MIN_MEMORY, TOKEN_WORDS
from attnsim.sim.anna.mpc_splitter_sort import Level, SortShape
from attnsim.sim.anna.mpc_tree import levels
from attnsim.sim.ledger import Ledger
from attnsim.theory.lsh import proof_parameters
from attnsim.verify.growth import growth_points, judge
from attnsim.verify.lsh_sensitivity import MC_ALPHA, MC_SAMPLES, cross_polytope_sensitivity
from attnsim.verify.registry import CheckContext, get_checker
from attnsim.verify.stats import binomial_interval, rate_upper


# -- k-hop and the paper's route for Thm 5.4 / 5.6 --------------------------------------------------------------
@cache
def khop(**params) -> dict:
    """anna.khop's checker at seed 0 on one string (its counts are the same for every string)."""
    chk = get_checker("anna.khop")
    m = chk.fn(CheckContext("anna.khop", chk.resolve({"strings": 1, **params}), "exact", 0))
    assert m.agree is True and not m.reasons, m.reasons
    return {**m.counts, **m.extra}


def test_the_khop_grid_and_sweep():
    """Thm F.4 on the MPC machine (anna.khop): defaults, memories, grid points and the wide letter-sort point."""
    eps1, scale, s_lo, s_hi, n_lo, n_hi = said(r"at ε' = (\S+), s_scale = (\d+) \(s = (\d+) … (\d+) words for "
                                               r"N = (\d+) … (\d+), the growth sweep\)")
    p = defaults("anna.khop")
    assert (p["eps1"], p["s_scale"], p["sort"]) == (float(Fraction(eps1)), float(scale), "splitter")
    sweep = [q.params for q in growth_points("anna.khop")]
    assert (sweep[0]["N"], sweep[-1]["N"]) == (int(n_lo), int(n_hi))
    assert [memory("anna.khop", **sweep[i]) for i in (0, -1)] == [int(s_lo), int(s_hi)]
    grid = get_checker("anna.khop").grid(False)
    ks = set(nums(said(r"k ∈ \{([\d, ]+)\}, and \|Σ\| = N\^\{1/2\} and N at N = 4096 in the grid")[0]))
    assert {q["k"] for q in grid if q.get("sort", "splitter") == "splitter"} == ks
    assert {q.get("alphabet") for q in grid if q["N"] == 4096} - {None} == {math.isqrt(4096), 4096}
    letter = [q for q in grid if q.get("sort") == "letter" and q["N"] > 100]
    kept = {(Fraction(q["eps1"]), q["s_scale"]) for q in letter}
    pairs = said(r"keep \(ε', s_scale\) = \((\S+), (\d+)\) and \((\S+), (\d+)\), N = (\d+) … (\d+), one point with "
                 r"\|Σ\| = N/8 = (\d+) letters at N = (\d+) \((\w+) passes, (\d+) rounds\), and two large-memory "
                 r"points \(N = (\d+), s = (\d+)\)")
    assert kept == {(Fraction(pairs[0]), float(pairs[1])), (Fraction(pairs[2]), float(pairs[3]))}
    assert (min(q["N"] for q in letter), max(q["N"] for q in letter)) == (int(pairs[4]), int(pairs[5]))
    wide = [q for q in letter if q.get("alphabet")]
    assert [(q["alphabet"], q["N"]) for q in wide] == [(int(pairs[6]), int(pairs[7]))]
    assert int(pairs[7]) // 8 == int(pairs[6])
    rec = khop(**wide[0])
    assert rec["sorting_rounds"] == WORDS[pairs[8]] * (2 * levels(rec["machines"], rec["fan"]) + 1)
    assert rec["rounds"] == int(pairs[9])
    large = [q for q in grid if q["N"] == int(pairs[10])]
    assert len(large) == 2 and all(memory("anna.khop", **q) == int(pairs[11]) for q in large)


def test_the_letter_sorts_measured_rounds():
    """Lemma F.3's sort by the letter at eps' = 1/2: two passes at N = 256 (f = 3), one at N = 1024 on 86
    machines of 192 words."""
    r256, n256, f256, r1024, n1024, k, mach, s = said(
        r"measured at ε' = 1/2: (\d+) rounds at N = (\d+), where f = (\d+) takes two passes, and (\d+) at N = (\d+), "
        r"k = (\d+), on (\d+) machines with s = (\d+)\.\)")
    at = {"eps1": 0.5, "s_scale": 6.0, "sort": "letter", "k": int(k)}
    small_n, large_n = khop(N=int(n256), **at), khop(N=int(n1024), **at)
    assert (small_n["rounds"], small_n["fan"]) == (int(r256), int(f256))
    assert small_n["sorting_rounds"] == 2 * (2 * levels(small_n["machines"], small_n["fan"]) + 1)
    assert (large_n["rounds"], large_n["machines"], large_n["s"]) == (int(r1024), int(mach), int(s))
    (least,) = said(r"and runs at any s ≥ (\d+) words")
    assert MIN_MEMORY == int(least)


def test_the_refusal_table_of_khop():
    """Thm F.4 with Lemma C.2's sort: the memories of the refusal table, its one rate, and the bound that 0 of 300
    gives."""
    rows = table("| N | letters | s_scale | s | draws refused by the referee |")
    for N, _, scale, s, refused in rows:
        assert memory("anna.khop", N=int(N), s_scale=float(scale)) == int(s)
        share = re.search(r"(\d+) of (\d+) \((\S+) %\)", refused)
        if share:
            assert percent(int(share[1]) / int(share[2]), share[3])
    n, bound = said(r"With 0 of (\d+), the one-sided 95 % Clopper–Pearson bound on the refusal rate is (\S+) %")
    assert percent(rate_upper(0, int(n)), bound)
    (then,) = said(r"`anna\.khop` once ran at s_scale = 2\.6 \(s = (\d+) at N = 4096\)")
    assert memory("anna.khop", N=4096, s_scale=2.6) == int(then)
    (fans,) = said(r"The splitter sort needs about (\d+) words for its multicast fans")
    assert int(fans) == 256 * (KEY_WORDS + 2)


def test_the_items_of_three_words():
    """Thm 5.4 / 5.6 by the paper's route: s = 1024 at their default points, items of 3 of 16 words, and the
    table's rates and one-sided bounds from its own counts."""
    s, n_a, eps_a, n_b, eps_b = said(r"Their defaults give s = (\d+) at N = (\d+) \(ε = (\S+)\) and at N = (\d+) "
                                     r"\(ε = (\S+)\)")
    for n, eps in ((n_a, eps_a), (n_b, eps_b)):
        assert 1 << round(float(eps) * (int(n).bit_length() - 1)) == int(s)
    assert defaults("anna.thm_5_4")["eps"] == float(eps_b) and defaults("anna.thm_5_4")["N"] == int(n_b)
    assert {"N": int(n_a), "eps": float(eps_a)} in get_checker("anna.thm_5_4").grid(True)
    (share,) = said(r"An item is now \(tag, letter · N \+ i, next letter\), (\d+/\d+) of a machine")
    assert Fraction(share) == Fraction(ITEM_WORDS, TOKEN_WORDS)
    rows = table("| N | s | item words | draws refused | one-sided 95 % upper bound |")
    seeds = {}
    for N, s_row, words, refused, upper in rows:
        k, n = (int(x) for x in re.match(r"(\d+) of (\d+)", refused).groups())
        assert int(s_row) == int(s) and int(words) in (ITEM_WORDS, 5)
        rate = re.search(r"\((\S+) %\)", refused)
        if rate:
            assert percent(k / n, rate[1])
        if upper:
            assert percent(rate_upper(k, n), upper.rstrip(" %"))
        if "seeds 0–59" in refused:
            seeds[int(words)] = k
    (nine,) = said(r"The (\w+) draws among seeds 0–59 that 5-word items overflowed and 3-word items do not")
    assert WORDS[nine] == seeds[5] - seeds[3]


def test_the_sorts_levels_at_s_1024():
    """Lemma C.2's plan at s = 1024 on the route's machines: every level splits in two at the median of its
    sample, 9 to 18 keys, about sqrt(K s / 3) / 8 of them, three levels at N = 4096."""
    lo, hi, kw, how_many = said(r"splits its range in two at the median of (\d+) to (\d+) sample keys \(the sample a "
                                r"level can rank is about √\(K s/(\d)\)/8 keys\), and the errors of (\w+) such medians")
    shape, N = SortShape(1024, KEY_WORDS, ITEM_WORDS), 4096
    K, E, plan = -(-N // (1024 // TOKEN_WORDS)), N, []
    while K > 1 and not shape.direct(K):
        lvl = Level(shape, K, E)
        plan.append(lvl)
        K, E = max(len(lvl.bucket_range(0, b)) for b in range(lvl.buckets)), max(1, E // lvl.buckets)
    assert len(plan) == WORDS[how_many] and all(lvl.buckets == 2 for lvl in plan)
    assert (min(lvl.sample_target for lvl in plan), max(lvl.sample_target for lvl in plan)) == (int(lo), int(hi))
    assert int(kw) == KEY_WORDS + 2
    for lvl in plan:
        assert 0.8 < lvl.sample_target / (math.sqrt(lvl.K * 1024 / int(kw)) / 8) <= 1


def test_the_splitter_route_starts_at_n_2048():
    """Lemma F.3 with Lemma C.2's sort: s = 2^round(eps log2 N) must hold the fans (about 768 words) and lie
    below N."""
    (least,) = said(r"it needs s ≥ (\d+) words \(its multicast fans\), so these runs start at N = 2048")
    assert int(least) == 256 * (KEY_WORDS + 2)
    first = next(1 << k for k in range(5, 16) if SortShape(1 << k, KEY_WORDS, ITEM_WORDS).fans_fit)
    assert 2 * first == 2048


# -- EMA and the cross-polytope family --------------------------------------------------------------------------
def ema_comparisons(N: int) -> int:
    """Key comparisons of anna.def_ema's run at N, seed 0 (its input, without its O(N^2) reference)."""
    d, A, mv = 2, 1 << 20, 2
    rng = np.random.default_rng(0)
    k, v = rng.integers(0, A, size=(N, d)), rng.integers(-99, 100, size=(N, mv))
    q = np.where(rng.random((N, 1)) < 0.5, k[rng.integers(0, N, size=N)], rng.integers(0, A, size=(N, d)))
    ledger = Ledger()
    ema(q, k, v, ledger=ledger, count_sort=True)
    return ledger.total("compare")


def test_ema_compares_2_16_d_n_ln_n():
    """App. B: EMA by sorting and binary search, d N log N comparisons times 2.16 at every size of its sweep, and
    the growth verdict over that sweep."""
    lo, hi, d, ratio, verdict, slope, low, high = said(
        r"Over N = (\d+) … (\d+) \(d = (\d)\) the count is (\S+) d N ln N at every size and the growth verdict is "
        r"`(\w+)` \(slope (\S+), 95% interval \[(\S+), (\S+)\]\)")
    points = [p.params for p in growth_points("anna.def_ema")]
    sizes = [p["N"] for p in points]
    assert (sizes[0], sizes[-1]) == (int(lo), int(hi)) and defaults("anna.def_ema")["d"] == int(d)
    chk = get_checker("anna.def_ema")
    for n in sizes[:2]:  # this file's input is the checker's
        got = chk.fn(CheckContext("anna.def_ema", chk.resolve({"N": n}), "exact", 0))
        assert got.agree and got.counts["time"] == ema_comparisons(n)
    counts = {n: ema_comparisons(n) for n in sizes}
    assert all(round(c / (int(d) * n * math.log(n)), 2) == float(ratio) for n, c in counts.items())
    records = [{"claim": "anna.def_ema", "verdict": "pass", "size": {"value": n},
                "bounds": {"time": {"measured": c, "value": int(d) * n * math.log(n)}}} for n, c in counts.items()]
    g = judge("anna.def_ema", "time", records)
    assert g.verdict == verdict
    for got, text in zip((g.slope, g.low, g.high), (slope, low, high)):
        value, digits = scientific(text)
        assert float(f"{got:.{digits}g}") == value, (got, text)


def test_the_cross_polytope_family():
    """The cross-polytope family at m = 8, r = 0.2, c = 7: the leading term's p1, p2 against the measured ones,
    the Monte Carlo's size and level, the proof's z, ell and eta at N = 64, and the leading-term twin's ell and
    eta; the twin's interval from its own 13 of 200."""
    lead1, lead2, est1, est2 = said(r"at m = 8, r = 0\.2, c = 7 it gives p1 = (\S+) and p2 = (\S+); the family has "
                                    r"about (\S+) and (\S+)\)")
    pairs, level = said(r"it draws ([\d,]+) pairs per distance .*? takes one-sided (\S+)% Clopper-Pearson bounds")
    p1, p2, rho, z, ell, was, eta = said(r"N = 64: p1 = (\S+), p2 = (\S+), ρ = (\S+), z = (\d+), ℓ = (\d+) \(was "
                                         r"(\d+)\), proof's η = ([\d.]+)")
    bad, runs, lo, hi, eta_twin = said(r"(\d+) of (\d+) runs, interval \[(\S+), (\S+)\] above the proof's "
                                       r"η = ([\d.]+)\)")
    m, r, c = 8, 0.2, 7.0
    leading = [m ** (-u * u / (4 - u * u)) for u in (r, c * r)]
    assert shown(leading[0], lead1) and shown(leading[1], lead2)
    assert num(pairs) == MC_SAMPLES and round(100 * (1 - MC_ALPHA), 6) == float(level)
    sens = cross_polytope_sensitivity(r, c, m)
    assert shown(sens.p1_estimate, est1) and shown(sens.p2_estimate, est2)
    assert shown(sens.p1, p1) and shown(sens.p2, p2)
    pp, pl = proof_parameters(64, sens.p1, sens.p2), proof_parameters(64, *leading)
    assert shown(pp.rho, rho) and (pp.z, pp.ell, pl.ell) == (int(z), int(ell), int(was)) and shown(pp.eta_bound, eta)
    said(r"With the leading term, ℓ came out three times too small")
    assert round(pp.ell / pl.ell) == 3
    assert shown(pl.eta_bound, eta_twin)
    ci = binomial_interval(int(bad), int(runs))
    assert shown(ci[0], lo) and shown(ci[1], hi) and ci[0] > pl.eta_bound
