"""The figures of docs/anna_small_memory.md on Thm 4.2 (= Thm C.3) and Thm C.1 that a cheap, deterministic run or
formula gives, read off the page and recomputed (tests/anna/test_doc_anna_small_memory_hop.py holds the rest of the
page: k-hop with Lemma C.2's splitter sort, EMA and the cross-polytope family).

Held here: memories, machines and rounds of the protocols' plans (the counts every run must equal), the splitter
sort's fans, the grids' and sweeps' points, the refused-draw rules and the Clopper-Pearson figures of the page's
own counts. Not held: wall-clock times, the largest loads of the Thm 4.2 / C.1 runs (a run takes 9 to 157 s), the
width measured at s = 2048 (a run of about 2.5 s), and the refusals counted over tens to thousands of draws.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from itertools import groupby

import numpy as np
from doc_page import shown
from small_memory_page import defaults, memory, num, nums, percent, said

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna.lsh import FAMILIES, draw_tables
from attnsim.sim.anna.mpc_small import SORT_KEY_WORDS, SmallMemoryPlan
from attnsim.sim.anna.mpc_splitter_sort import SortShape
from attnsim.theory.formulas import as_number, evaluate
from attnsim.theory.lsh import proof_parameters
from attnsim.verify.claims import anna_mpc_small as small
from attnsim.verify.growth import growth_points
from attnsim.verify.lsh_sensitivity import sensitivity
from attnsim.verify.refusals import REFUSAL_DRAWS, fewest_refusals_above, refusal_target
from attnsim.verify.registry import get_checker
from attnsim.verify.stats import binomial_interval, rate_upper


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
