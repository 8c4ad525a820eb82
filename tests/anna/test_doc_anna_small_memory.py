"""The figures of docs/anna_small_memory.md that a cheap, deterministic run or formula gives, read off the page and
recomputed.

The page covers Thm 4.2 (= Thm C.3) and Thm C.1 on the small-memory MPC machine, k-hop (Thm F.4) with Lemma C.2's
splitter sort, exact-match attention's O(d N log N) time (App. B) and the cross-polytope family of Thm 3.4. Held
here: memories, machines and rounds of the protocols' plans (the counts every run must equal), the splitter
sort's fans and levels, the grids' and sweeps' points, the refused-draw rules, the Clopper-Pearson figures of the
page's own counts, the k-hop letter sort's runs, the comparison count of EMA and the cross-polytope bounds.
Not held: wall-clock times, the largest loads of the Thm 4.2 / C.1 runs (a run takes 9 to 157 s), the width
measured at s = 2048 (a run of about 2.5 s), and the refusals counted over tens to thousands of draws.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import cache
from itertools import groupby

import numpy as np
from doc_page import Page

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna.attention import ema
from attnsim.sim.anna.khop import ITEM_WORDS, KEY_WORDS, MIN_MEMORY, TOKEN_WORDS
from attnsim.sim.anna.lsh import FAMILIES, draw_tables
from attnsim.sim.anna.mpc_small import SORT_KEY_WORDS, SmallMemoryPlan
from attnsim.sim.anna.mpc_splitter_sort import Level, SortShape
from attnsim.sim.anna.mpc_tree import levels
from attnsim.sim.ledger import Ledger
from attnsim.theory.formulas import as_number, evaluate
from attnsim.theory.lsh import proof_parameters
from attnsim.verify.claims import anna_mpc_small as small
from attnsim.verify.growth import growth_points, judge
from attnsim.verify.lsh_sensitivity import MC_ALPHA, MC_SAMPLES, cross_polytope_sensitivity, sensitivity
from attnsim.verify.refusals import REFUSAL_DRAWS, fewest_refusals_above, refusal_target
from attnsim.verify.registry import CheckContext, get_checker
from attnsim.verify.stats import binomial_interval, rate_upper

_PAGE = Page("anna_small_memory.md")
PAGE = _PAGE.text
TEXT = _PAGE.flat
said = _PAGE.said
table = _PAGE.table


def num(text: str) -> int:
    """A count as the page writes it (14,887)."""
    return int(text.replace(",", ""))


def nums(text: str) -> list[int]:
    return [num(x) for x in re.findall(r"\d[\d,]*", text)]


def shown(x: float, text: str) -> bool:
    """Whether ``x`` is ``text`` to the significant digits the page gives."""
    digits = len(text.lstrip("0.").replace(".", ""))
    return float(f"{x:.{digits}g}") == float(text)


def percent(x: float, text: str) -> bool:
    """Whether the fraction ``x`` is ``text`` percent to the decimals the page gives."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return round(100 * x, decimals) == float(text)


WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "nine": 9}


def scientific(text: str) -> tuple[float, int]:
    """A figure written as −7·10⁻⁵ (or plain), and its significant digits."""
    plain = text.replace("−", "-").translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-"))
    mantissa, _, exponent = plain.partition("·10")
    digits = len(mantissa.lstrip("-").lstrip("0.").replace(".", ""))
    return float(f"{mantissa}e{exponent or 0}"), digits


def defaults(claim: str) -> dict:
    return {p.name: p.default for p in get_checker(claim).params}


def memory(claim: str, **params) -> int:
    """s = ceil(s_scale N^eps') from the claim's definitions."""
    return int(as_number(evaluate("s", get_claim(claim).definitions, {**defaults(claim), **params})))


@cache
def plan_4_2(**given) -> SmallMemoryPlan:
    """The plan anna.thm_4_2's checker builds at these parameters (its counts are the ones every run must show)."""
    p = {**defaults("anna.thm_4_2"), **given}
    m = int(as_number(evaluate("m", get_claim("anna.thm_4_2").definitions, p)))
    sens = sensitivity(p["lsh"], p["r"], p["c"], m)
    pp = proof_parameters(p["N"], sens.p1, sens.p2)
    alphabet = draw_tables(FAMILIES[p["lsh"]](m), 1, pp.z, np.random.default_rng(0))[0].alphabet
    return SmallMemoryPlan(p["N"], pp.ell, pp.z, alphabet, m, memory("anna.thm_4_2", **given), p["heads"], p["sort"])


def plan_c_1(**given) -> SmallMemoryPlan:
    """The plan of anna.thm_c_1's checker: one exact-code table of d entries."""
    p = {**defaults("anna.thm_c_1"), **given}
    return SmallMemoryPlan(p["N"], 1, p["d"], p["alphabet"], p["mv"], memory("anna.thm_c_1", **given), 1, p["sort"])


def machines(plan: SmallMemoryPlan) -> int:
    return plan.token_machines + plan.sort_machines


# -- Thm 4.2 / C.1: the splitter sort's memory ------------------------------------------------------------------
def runs_of(values: list[int], keep) -> list[tuple[int, int]]:
    """The maximal runs of consecutive ``values`` for which ``keep`` holds, as (first, last)."""
    kept = [v for v in values if keep(v)]
    return [(g[0][1], g[-1][1]) for g in (list(x) for _, x in groupby(enumerate(kept), lambda t: t[1] - t[0]))]


def test_the_splitter_sorts_fans_at_the_default_memory():
    """The multicast fans of Lemma C.2's sort with 3-word keys: about 256 (kw + 2) words; the memories where they
    fit, and the N where s = N^0.95 first reaches them."""
    kw, about, lo, s_a, s_b, n_from, n_a, n_b = said(
        r"multicast fans need about 256\(κ \+ 2\) words \(κ = (\d) key words: code, token, side\), (\d+): they fit "
        r"at every s ≥ (\d+) \(and at s = (\d+) … (\d+)\), so at ε' = 0\.95 its runs reach s < N from N = (\d+) on "
        r"\(and at N = (\d+) … (\d+);")
    assert int(kw) == SORT_KEY_WORDS and int(about) == 256 * (SORT_KEY_WORDS + 2)
    fits = runs_of(list(range(500, 20000)), lambda s: SortShape(s, SORT_KEY_WORDS, 8).fans_fit)
    assert fits == [(int(s_a), int(s_b)), (int(lo), 19999)]

    def s(n: int) -> int:  # s = N^0.95 grows with N, so the windows of N follow from those of s
        return memory("anna.thm_4_2", N=n)

    n_a, n_b, n_from = int(n_a), int(n_b), int(n_from)
    assert s(n_a - 1) < int(s_a) <= s(n_a) and s(n_b) <= int(s_b) < s(n_b + 1) and s(n_from - 1) < int(lo) <= s(n_from)
    assert plan_c_1(N=n_from - 1).reasons() and plan_c_1(N=n_from).reasons() == []


def test_the_default_memory_and_the_grids():
    """Thm 4.2 and Thm C.1: the default memory s = N^0.95 at N = 2048 ... 16384, the quick grids' s >= N, and the
    radix points' s < N."""
    (n_default,) = said(r"run below N by default: N = (\d+) tokens")
    (s_default,) = said(r"the splitter sort at s = ⌈N\^0\.95⌉ = (\d+) words")
    s_sizes, lo, hi = said(r"s = ⌈N\^0\.95⌉ \(([\d, ]+) words at N = (\d+) … (\d+)\)")
    assert defaults("anna.thm_4_2")["N"] == defaults("anna.thm_c_1")["N"] == int(n_default) == small.SUBLINEAR_SIZES[0]
    assert memory("anna.thm_4_2") == memory("anna.thm_c_1") == int(s_default)
    assert (small.SUBLINEAR_SIZES[0], small.SUBLINEAR_SIZES[-1]) == (int(lo), int(hi))
    assert [memory("anna.thm_4_2", N=n) for n in small.SUBLINEAR_SIZES] == nums(s_sizes)
    scale_4_2, eps_4_2, scale_c_1, eps_c_1 = said(r"N: s = ⌈(\d+) N\^\((\S+)\)⌉ \(Thm 4\.2\) and ⌈(\d+) N\^\((\S+)\)⌉ "
                                                  r"\(Thm C\.1\), at or above N there")
    assert small.LARGE_MEMORY_4_2 == {"eps1": float(Fraction(eps_4_2)), "s_scale": float(scale_4_2)}
    assert small.LARGE_MEMORY_C_1 == {"eps1": float(Fraction(eps_c_1)), "s_scale": float(scale_c_1)}
    for claim in ("anna.thm_4_2", "anna.thm_c_1"):
        for p in get_checker(claim).grid(True):
            s = memory(claim, **p)
            if p["N"] < int(n_default):  # the quick grids' smaller N
                assert (s >= p["N"]) == (p.get("sort", "splitter") == "splitter"), p
    lo32, hi35, twelve, n_a, n_b = said(r"the radix points \(`--sort radix`, s = (\S+)–(\S+) N\^\(3/4\) and (\d+) "
                                        r"N\^\(1/2\)\) lie below N from N = (\d+) and (\d+) on")
    assert [small.SMALL_MEMORY[1]["s_scale"], small.RADIX_MEMORY_4_2["s_scale"]] == [float(lo32), float(hi35)]
    assert small.SMALL_MEMORY[0] == {"eps1": 0.5, "s_scale": float(twelve)}
    first = [next(n for n in (2**k for k in range(4, 12)) if memory("anna.thm_c_1", N=n, **mem) < n)
             for mem in (small.SMALL_MEMORY[1], small.SMALL_MEMORY[0])]
    assert first == [int(n_a), int(n_b)]
    for claim in ("anna.thm_4_2", "anna.thm_c_1"):
        radix = [p for q in (True, False) for p in get_checker(claim).grid(q) if p.get("sort") == "radix"]
        assert radix and all(memory(claim, **p) < p["N"] for p in radix)


def test_the_default_runs_counts():
    """Thm 4.2 at its defaults (2 heads of m = 6) and Thm C.1 at its defaults (2 layers): machines and rounds."""
    H, m, mach, rounds = said(r"Thm 4\.2 by default: N = 2048, H = (\d+) heads of m = (\d+): ([\d,]+) machines, "
                              r"(\d+) rounds")
    mach_c, rounds_c, layers_c = said(r"Thm C\.1: ([\d,]+) machines, (\d+) rounds for (\d+) layers")
    plan = plan_4_2()
    assert (plan.heads, plan.mv) == (int(H), int(m)) and defaults("anna.thm_4_2")["layers"] == 1
    assert (machines(plan), plan.layer_rounds) == (num(mach), int(rounds))
    c1 = plan_c_1()
    assert defaults("anna.thm_c_1")["layers"] == int(layers_c)
    assert (machines(c1), int(layers_c) * c1.layer_rounds) == (num(mach_c), int(rounds_c))


def test_the_growth_sweeps_of_thm_4_2_and_c_1():
    """Thm 4.2's full sweep (rounds, the sort's share and machines from N = 2048 to 16384), its quick sweep at
    s >= N, and Thm C.1's sweep, the same in both reports."""
    r_lo, r_hi, s_lo, s_hi, m_lo, m_hi = said(
        r"rounds from (\d+) at N = 2048 to (\d+) at N = 16384 \(exact count at every point, tight\), the sort's "
        r"share from (\d+) to (\d+) \(under its closed formula at every point\), ([\d,]+) to ([\d,]+) machines")
    full = [p.params for p in growth_points("anna.thm_4_2")]
    assert [p["N"] for p in full] == list(small.SUBLINEAR_SIZES)
    first, last = plan_4_2(**full[0]), plan_4_2(**full[-1])
    assert (first.layer_rounds, last.layer_rounds) == (int(r_lo), int(r_hi))
    assert (first.sort_rounds, last.sort_rounds) == (int(s_lo), int(s_hi))
    assert (machines(first), machines(last)) == (num(m_lo), num(m_hi))
    q_lo, q_hi = said(r"\(its quick sweep, N = (\d+) … (\d+), runs at s = ⌈40 N\^\(3/4\)⌉ ≥ N")
    quick = [p.params for p in growth_points("anna.thm_4_2", quick=True)]
    assert (quick[0]["N"], quick[-1]["N"]) == (int(q_lo), int(q_hi))
    assert all(memory("anna.thm_4_2", **p) >= p["N"] and p["s_scale"] == 40.0 for p in quick)
    for q in (True, False):
        assert [p.params["N"] for p in growth_points("anna.thm_c_1", quick=q)] == list(small.SUBLINEAR_SIZES)


def test_the_gap_sweeps():
    """The full gap sweeps at N = 8192 (eps = 1/16, eps' - eps from 1/4 to 1/16), their memories, Thm 4.2's one
    head and the machines two heads would take at the smallest memory; the quick sweeps at s >= N."""
    gap_hi, gap_lo, N, scale, s_lo, s_hi = said(r"the gap sweeps \(ε = 1/16, ε' − ε from (\S+) to (\S+)\) run at "
                                                r"N = (\d+), s = ⌈(\d+) N\^ε'⌉ = (\d+) … (\d+) words")
    (two_heads,) = said(r"its smallest memory puts two heads on ([\d,]+) machines")
    q_a, q_b = said(r"the quick sweeps run at N = (\d+) and (\d+) with s ≥ N")
    assert (small.GAPS[0], small.GAPS[-1]) == (float(Fraction(gap_hi)), float(Fraction(gap_lo)))
    assert small.GAP_BELOW_N == {"N": int(N), "s_scale": float(scale)}
    points = [small._gap_point_4_2(False, g) for g in small.GAPS]
    mems = [memory("anna.thm_4_2", **p) for p in points]
    assert (min(mems), max(mems)) == (int(s_lo), int(s_hi)) and all(s < int(N) for s in mems)
    assert all(p["heads"] == 1 and p["eps"] == 1 / 16 for p in points)
    smallest = points[small.GAPS.index(min(small.GAPS))]
    assert machines(plan_4_2(**{**smallest, "heads": 2})) == num(two_heads)
    quick = [("anna.thm_4_2", small._gap_point_4_2(True, g)) for g in small.GAPS]
    quick += [("anna.thm_c_1", small._gap_point_c_1(True, g)) for g in small.GAPS]
    assert {p["N"] for _, p in quick} == {int(q_a), int(q_b)}
    assert all(memory(claim, **p) >= p["N"] for claim, p in quick)


def test_the_default_hash_of_thm_4_2():
    """Thm 4.2's hyperplanes at r = 0.02, c = 70 against r = 0.1, c = 14: rho, and ell at the default N."""
    rho, n, ell, ell_other, rho_other = said(
        r"random hyperplanes at r = 0\.02, c = 70 \(ρ ≈ (\S+)\), whose ℓ at N = (\d+) is (\d+) tables, against (\d+) "
        r"at r = 0\.1, c = 14 \(ρ ≈ (\S+)\)")
    p = defaults("anna.thm_4_2")
    assert (p["r"], p["c"], p["N"]) == (0.02, 70.0, int(n))
    ours, other = (proof_parameters(int(n), sens.p1, sens.p2)
                   for sens in (sensitivity("hyperplane", r, c, 6) for r, c in ((0.02, 70.0), (0.1, 14.0))))
    assert shown(ours.rho, rho) and shown(other.rho, rho_other)
    assert (ours.ell, other.ell) == (int(ell), int(ell_other))


# -- refused draws ----------------------------------------------------------------------------------------------
def test_the_seed_runs_clopper_pearson_bounds():
    """Thm 4.2, Thm C.1 and Lemma C.2 with no refusal in 13, 31 and 41 runs: the one-sided 95% bounds the page
    gives; Lemma C.2's records run 36 draws against the target 1/10."""
    ranges = said(r"`anna\.thm_4_2` for k = 0 … (\d+), `anna\.thm_c_1` for k = 0 … (\d+) and `anna\.lemma_c_2` for "
                  r"k = 0 … (\d+) all pass, exact, with their plans' rounds \((\d+), (\d+) and (\d+) runs\)")
    bounds = said(r"bound on the refusal rate is (\S+) %, (\S+) % and (\S+) % for the three defaults")
    draws, target = said(r"each record of its grid runs (\d+) draws and reports the bound as its resource `refusal`, "
                         r"held against a target of (\S+)\.")
    runs = [int(k) + 1 for k in ranges[:3]]
    assert runs == [int(x) for x in ranges[3:]]
    assert all(percent(rate_upper(0, n), b) for n, b in zip(runs, bounds, strict=True))
    assert defaults("anna.lemma_c_2")["draws"] == int(draws) and refusal_target() == float(Fraction(target))


def test_a_refused_draws_batch():
    """A refused draw of Lemma C.2's sort starts a batch of 36 redraws: the fewest whose interval, with none
    refused, lies below 1/10; it stops at 8 refused, or after 29 draws with none."""
    target, draws = said(r"\(`refusal_target` of `anna\.lemma_c_2`, (\S+)\): the record runs a batch of `--redraws` "
                         r"fresh draws of the sort's choices on the same input \((\d+) by default")
    enough, of, ran, left = (int(x) for x in said(r"once (\d+) of (\d+) are refused .*? or once (\d+) have run with "
                                                  r"none refused \(the (\d+) left could not reach"))
    assert refusal_target() == float(Fraction(target)) and REFUSAL_DRAWS == int(draws) == of
    for claim in ("anna.thm_4_2", "anna.thm_c_1", "anna.khop", "anna.thm_5_4", "anna.thm_5_6"):
        assert defaults(claim)["redraws"] == REFUSAL_DRAWS
    shows = [n for n in range(1, 100) if binomial_interval(0, n)[1] <= refusal_target()]
    assert shows[0] == REFUSAL_DRAWS
    assert fewest_refusals_above(REFUSAL_DRAWS, refusal_target()) == enough
    assert left == REFUSAL_DRAWS - ran == enough - 1


def test_the_fuzzed_draw_of_thm_4_2():
    """Thm 4.2's fuzzed point: its memory, and the six heads' padded answers of 51 queries against it."""
    cmd = said(r"`attnsim check anna\.thm_4_2 --N (\d+) --heads (\d+) --m-scale (\S+) --r \S+ --c \S+ --layers 1 "
               r"--eps (\S+) --eps1 (\S+) --s-scale (\S+) --sort splitter --seed 0`")
    s, queries, each, total = said(r"with s = (\d+)\) turned its (\d+) query items into answers padded to all six "
                                  r"heads, (\d+) words each, (\d+) words in all")
    N, H, m_scale, eps, eps1, scale = int(cmd[0]), int(cmd[1]), *(float(x) for x in cmd[2:])
    p = {**defaults("anna.thm_4_2"), "N": N, "heads": H, "m_scale": m_scale, "eps": eps, "eps1": eps1,
         "s_scale": scale}
    m = int(as_number(evaluate("m", get_claim("anna.thm_4_2").definitions, p)))
    assert memory("anna.thm_4_2", **p) == int(s) and H == 6
    assert H * (m + 1) + 3 == int(each)  # every head's (sum, count) with token, leaf and tag; its own is m + 4
    assert int(queries) * int(each) == int(total) > int(s)


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
