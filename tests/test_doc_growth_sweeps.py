"""The figures of docs/growth.md on bounds in a parameter other than N, the growth twins by deciding evidence, the
eta seeds and what the cheap sweeps show, read off the page and recomputed (the rest: tests/test_doc_growth.py).
"""

from __future__ import annotations

import math
import re
from functools import cache

import sympy as sp
from growth_page import WORDS, expr, said, same

from attnsim.paper_refs import get as get_claim
from attnsim.verify.check import run_check
from attnsim.verify.claims.anna_lsh import ETA_TARGET, eta_upper
from attnsim.verify.growth import (
    MIN_PARAM_SPAN,
    evidence_of,
    growth_points,
    judge_claim,
    param_sweeps,
    sweep_points,
)
from attnsim.verify.growth_rules import _slope
from attnsim.verify.twins import all_twins
from attnsim.verify.twins.growth import CONSTANT, resource_of


# -- bounds in a parameter other than N --------------------------------------------------------------------------
def gaps(points) -> list[float]:
    return [round(p.params["eps1"] - p.params["eps"], 6) for p in points]


def sweep(claim: str, quick: bool) -> list:
    ((_, ps),) = param_sweeps(claim)
    return sweep_points(claim, ps, quick)


def test_parameter_sweeps():
    (span,) = said(r"with a span of (\d+)× \(`MIN_PARAM_SPAN`\)")
    assert MIN_PARAM_SPAN == int(span)
    (name,) = said(r"that multiplies it by the sweep's variable \(`([\w:@]+)`\)")
    assert any(t.name == name and t.claim == "anna.lemma_c_2" for t in all_twins())
    eps, wide, narrow, quick_N, full_N = said(r"`anna\.lemma_c_2` is the first claim with one \(ε = 1/(\d+), ε' − ε "
                                              r"from 1/(\d+) to 1/(\d+), N = (\d+) quick, (\d+) full\)")
    for quick, N in ((True, quick_N), (False, full_N)):
        points = sweep("anna.lemma_c_2", quick)
        assert {p.params["N"] for p in points} == {int(N)} and {p.params["eps"] for p in points} == {1 / int(eps)}
        assert (max(gaps(points)), min(gaps(points))) == (1 / int(wide), 1 / int(narrow))
    layers, *on, rounds, on_4_2 = said(r"The formula twins `(\w+)` of `(anna\.\w+)` / `(anna\.\w+)` and `(\w+)` of "
                                       r"`(anna\.\w+)` drop that power")
    named = {(t.claim, t.name) for t in all_twins() if t.kind == "formula"}
    assert {(c, layers) for c in on} | {(on_4_2, rounds)} <= named


def test_the_gap_sweeps_of_thm_5_4_and_5_6():
    (k,) = said(r"`anna\.thm_5_4` and `anna\.thm_5_6` \(k = (\d+)\) sweep")
    widths = [float(x) for x in said(r"sweep ε' − ε over ([\d.]+), ([\d.]+), ([\d.]+), ([\d.]+) at N")]
    quick_N, quick_s, eps_num, eps_den, full_N, full_s, eps_full = said(
        r"at N = (\d+) \(quick; s = (\d+), ε = (\d+)/(\d+) exactly\) or (\d+) \(s = (\d+), ε = ([\d/]+)\)")
    power, scale = said(r"the letter sort over ⌈N\^([\d.]+)⌉ letters, heads_scale (\d+)")
    lo, hi, wide_heads, heads = said(r"N\^\(\(ε' − ε\)/4\) stays between ([\d.]+) and ([\d.]+), so the heads "
                                     r"⌈4 N\^\(\(ε' − ε\)/4\)⌉ move only from (\d+) at the widest gap to (\d+) at "
                                     r"the others")
    H = expr(get_claim("anna.thm_5_4").definitions["H"])  # heads as the claim defines them
    values = []
    for claim in ("anna.thm_5_4", "anna.thm_5_6"):
        for quick, N, s, eps in ((True, quick_N, quick_s, int(eps_num) / int(eps_den)),
                                 (False, full_N, full_s, float(sp.Rational(eps_full)))):
            points = sweep(claim, quick)
            assert gaps(points) == widths, (claim, quick)
            for p in points:
                q = p.params
                assert (q["N"], q["sort"], q["sigma"], q["heads_scale"]) == (int(N), "letter", float(power), int(scale))
                assert math.isclose(q["eps"], eps) and round(int(N) ** eps) == int(s)
                assert claim == "anna.thm_5_4" or q["k"] == int(k)
                values.append(int(N) ** ((q["eps1"] - q["eps"]) / 4))
            got = [int(H.subs({sp.Symbol(n, positive=True): p.params[n] for n in ("N", "eps", "eps1", "heads_scale")}))
                   for p in points]
            assert got == [int(wide_heads)] + [int(heads)] * (len(points) - 1), (claim, quick)
    assert (f"{min(values):.2f}", f"{max(values):.2f}") == (lo, hi)


def test_thm_5_6s_constant_as_the_gap_closes():
    from attnsim.theory.bounds import contained_as

    (limit,) = said(r"for Thm 5\.6, whose limit variable is k, (.+?)\)\.")
    ((_, ps),) = param_sweeps("anna.thm_5_6")
    c = contained_as(get_claim("anna.thm_5_6"), "layers", ps.var, ps.varied())
    assert sp.simplify(expr(limit) - expr(c.limit)) == 0


# -- growth twins and eta ----------------------------------------------------------------------------------------
def test_growth_twins_inflate_by_sqrt_n_and_contrast_with_seven():
    (factor,) = said(r"the resource's own measurement reported times `(\w+\(n\))`")
    (seven,) = said(r"runs the same measurement times the constant (\d+):")
    assert factor == "sqrt(n)" and CONSTANT == int(seven)
    assert all("measured x sqrt(n)" in t.what for t in all_twins() if t.kind == "growth" and "@" not in t.name)


def test_growth_twins_by_deciding_evidence():
    """Every bounded resource has a growth twin; which evidence can catch each (the pass itself takes minutes)."""
    total, caught, by_point, constants, by_test, named = said(
        r"every growth twin is caught: (\d+) of (\d+), (\d+) by a failing point .*?; for (\w+) resources the growth "
        r"test would decide, a constant frozen in `paper_refs/`\) and (\d+) by the growth test \(([^:]*):")
    twins = [t for t in all_twins() if t.kind == "growth"]
    assert len(twins) == int(total) == int(caught) == int(by_point) + int(by_test)
    inflated = {(t.claim, resource_of(t.name)) for t in twins}
    tested = {(c, r) for c, r in inflated if evidence_of(c, r) == "growth test"}
    frozen = {(c, r) for c, r in tested if get_claim(c).resources[r].constant is not None}
    assert len(frozen) == WORDS[constants] and len(tested - frozen) == int(by_test)
    claims, last = set(), ""
    for x in re.findall(r"`([\w.]+)`", named):  # claim ids, a variant's suffix after the claim it varies
        last = x if x.startswith(("anna.", "two_heads.", "tint.")) else last
        claims.add(x if x == last else last + x)
    assert claims == {c for c, _ in tested - frozen}


def test_eta_seeds():
    quick = said(r"\(`eta_runs`: (\d+), (\d+), (\d+), (\d+) seeds at N = (\d+) \.\.\. (\d+);")
    full = said(r"; (\d+) \.\.\. (\d+) at N = (\d+) \.\.\. (\d+)\)")
    (target,) = said(r"the fewest seeds whose zero-failure upper bound is at most (\d+) x `N\^\(3 rho - 1\)`")
    assert ETA_TARGET == int(target)
    q = growth_points("anna.alg_1", True)
    assert [p.params["seeds"] for p in q] == [int(x) for x in quick[:4]]
    assert (q[0].params["N"], q[-1].params["N"]) == (int(quick[4]), int(quick[5]))
    full_points = growth_points("anna.alg_1", False)
    assert [(full_points[i].params["seeds"], full_points[i].params["N"]) for i in (0, -1)] == [
        (int(full[0]), int(full[2])), (int(full[1]), int(full[3]))]
    assert growth_points("anna.alg_2", True) == [p.__class__("anna.alg_2", p.params, p.numerics, p.seed) for p in q]


@cache
def lsh(N: int):
    """The proof's parameters of anna.alg_1's default family (hyperplanes, r = 0.2, c = 7, m = 8) at N."""
    from attnsim.theory.lsh import proof_parameters
    from attnsim.verify.claims.anna_lsh import sensitivity

    s = sensitivity("hyperplane", 0.2, 7.0, 8)
    return proof_parameters(N, s.p1, s.p2)


def test_eta_at_zero_failures_over_the_quick_sweep():
    """The quick sweep's records see no failure at any seed (5 s to run), so eta is eta_upper(0, seeds) at each N:
    the ratios to N^(3 rho - 1), their slope, and its growth twins' slopes (x sqrt N) for eta and eta_proof."""
    ratios = said(r"What is fitted is that upper bound / bound: ([\d.]+), ([\d.]+), ([\d.]+), ([\d.]+) on the quick "
                  r"sweep \(slope ([\d.]+), interval \[(-?[\d.]+), ([\d.]+)\], `within`\)")
    eta, eta_proof = said(r"are caught \(`eta` slope ([\d.]+), `eta_proof` ([\d.]+), intervals above 0\)")
    points = growth_points("anna.alg_1", True)
    Ns = [p.params["N"] for p in points]
    upper = [eta_upper(0, p.params["seeds"]) for p in points]
    got = [u / N ** (3 * lsh(N).rho - 1) for u, N in zip(upper, Ns)]
    assert [f"{x:.2f}" for x in got] == list(ratios[:4])
    slope, low, high = _slope(Ns, got)
    assert (f"{slope:.3f}", f"{low:.3f}", f"{high:.3f}") == ratios[4:]
    proof = [u / lsh(N).eta_bound for u, N in zip(upper, Ns)]  # eta_proof's bound: the proof's union bound at N
    for twin, figure in ((got, eta), (proof, eta_proof)):
        bits = _slope(Ns, [x * math.sqrt(N) for x, N in zip(twin, Ns)])
        assert f"{bits[0]:.2f}" == figure and bits[1] > 0


def test_zero_failure_bound_climbs_towards_three_over_runs():
    (approx,) = said(r"the upper bound at zero failures climbs towards (\d+)/runs as runs grow")
    assert round(-math.log(0.05)) == int(approx)
    climb = [runs * eta_upper(0, runs) for runs in (10, 20, 40, 80, 160)]
    assert climb == sorted(climb) and climb[-1] < int(approx)
    slope, lo, hi = said(r"would fit that climb \(slope \+([\d.]+) over N = (\d+) \.\.\. (\d+)\)")
    Ns = [int(lo) * 2 ** k for k in range(5)]
    assert Ns[-1] == int(hi) and Ns == [p.params["N"] for p in growth_points("anna.alg_1", False)]
    seeds = [math.ceil(N ** (1 - 3 * lsh(N).rho)) for N in Ns]
    got = [eta_upper(0, s) / N ** (3 * lsh(N).rho - 1) for s, N in zip(seeds, Ns)]
    assert f"{_slope(Ns, got)[0]:.2f}" == slope


# -- what the sweeps show ----------------------------------------------------------------------------------------
@cache
def swept(claim: str, quick: bool = True, first: int | None = None) -> list[dict]:
    return [run_check(claim, p.params, p.numerics, p.seed) for p in growth_points(claim, quick)[:first]]


def test_thm_4_4_and_its_corollaries():
    lo, hi, fan_lo, fan_hi, R_hi, R_lo, ratio_hi, ratio_lo, D = said(
        r"\(eps = 1/2 exactly, N = (\d+) \.\.\. (\d+) powers of 4, P = 8 sqrt N, heads_scale 3\): the tree's fan-in "
        r"grows from (\d+) to (\d+), so R falls from (\d+) to (\d+) and layers / bound from ([\d.]+) to ([\d.]+); the "
        r"relay depth stays at D = (\d+)\. Heads and width are `within`\.")
    points = growth_points("anna.thm_4_4", True)
    assert [p.params for p in points] == [p.params for p in growth_points("anna.thm_4_4", False)]
    for claim in ("anna.cor_d_3", "anna.thm_d_1"):
        assert [p.params for p in growth_points(claim, True)] == [p.params for p in points]
    Ns = [p.params["N"] for p in points]
    assert Ns == [int(lo) * 4 ** k for k in range(len(Ns))] and Ns[-1] == int(hi)
    assert all(p.params["P"] == 8 * math.isqrt(p.params["N"]) and p.params["eps"] == 0.5 for p in points)
    records = swept("anna.thm_4_4")
    assert (records[0]["extra"]["R"], records[-1]["extra"]["R"]) == (int(R_hi), int(R_lo))
    assert {r["extra"]["D"] for r in records} == {int(D)}
    verdicts = {g.resource: g for g in judge_claim("anna.thm_4_4", records)}
    ratios = verdicts["layers"].ratios
    assert (f"{ratios[0]:.0f}", f"{ratios[-1]:.1f}") == (ratio_hi, ratio_lo)
    assert verdicts["heads"].verdict == verdicts["embedding_dim"].verdict == "within"


def test_thm_5_4_direct_at_its_smallest_size():
    """The fan 2 and the heads ratio 4.2 at N = 16 (N = 1024, the far end, takes 1.6 s)."""
    eps, eps1, lo, hi, fan, depth, ratio = said(
        r"`anna\.thm_5_4_direct` \(eps = ([\d.]+), eps' = ([\d.]+), N = (\d+) \.\.\. (\d+)\): the trie's fan grows "
        r"from (\d+) to \d+ at depth (\d+), heads / N\^\(\(eps'-eps\)/4\) ([\d.]+)-[\d.]+")
    points = growth_points("anna.thm_5_4_direct", False)
    assert (points[0].params["N"], points[-1].params["N"]) == (int(lo), int(hi))
    assert all((p.params["eps"], p.params["eps1"]) == (float(eps), float(eps1)) for p in points)
    p = points[0]
    r = run_check("anna.thm_5_4_direct", p.params, p.numerics, p.seed)
    assert r["extra"]["fan"] == int(fan) and r["counts"]["layers"] == int(depth) + 1  # layers D + 1
    assert f"{r['bounds']['heads']['ratio']:.1f}" == ratio


def test_cor_b_9_at_its_smallest_size():
    """Layers, heads and width at N = 256 (N = 512, 2048 and 4096 take 0.4 s, 4 s and 14 s)."""
    lo, hi, s, layers, widths = said(r"the f-ary scan with s\^5 < N, N = (\d+) \.\.\. (\d+), s = ([\d, ]+)\): "
                                     r"layers equal R \+ 2 \(([\d, ]+)\), heads equal s, the width T B \(s \+ 4\) "
                                     r"\(([\d, ]+)\)")
    full = growth_points("anna.cor_b_9", False)
    assert (full[0].params["N"], full[-1].params["N"]) == (int(lo), int(hi))
    records = [run_check("anna.cor_b_9", p.params, p.numerics, p.seed) for p in full[:1]]
    split = [[int(x) for x in v.split(", ")] for v in (s, layers, widths)]
    for i, r in enumerate(records):
        got = (r["counts"]["heads"], r["counts"]["layers"], r["counts"]["embedding_dim"])
        assert got == tuple(v[i] for v in split) and r["counts"] == r["predicted"]


def test_the_hash_tables_union_bound():
    (far,) = said(r"\(`p2\^z <= 1/\(([^`]*)\)`, docs/anna_eta\.md\)")
    assert same(far, get_claim("anna.rebuttal_hash_tables").definitions["far_odds"])
    (proof,) = said(r"with the proof's own `z` \(`p2\^z <= 1/\(([^)]*)\)`\)")
    defs = get_claim("anna.alg_1").definitions
    assert same(proof, defs["far_odds"])
    (term,) = said(r"the far-pair term is `([^`]+)` with")
    far = expr(defs["eta_union"]).args  # the union bound's two terms: far pairs over all tables, near pairs
    q2, z = sp.Symbol("q2", positive=True), sp.Symbol("z", positive=True)
    at_proof_z = [t.subs((1 + q2) ** (-z), 1 / expr(proof)) for t in far if t.has(z) and not t.has(sp.exp)]
    assert len(at_proof_z) == 1 and sp.simplify(at_proof_z[0] - expr(term)) == 0


def test_the_grids_of_the_sweeps_not_run_here():
    """Thm 4.1, k-hop and Thm 4.2: the grids the page describes (their figures take from 4 s to a minute)."""
    eps, eps1, lo, hi = said(r"\(`attnsim growth anna\.thm_4_1`: the bitonic sort at eps = 1/(\d+), eps' = ([\d.]+), "
                             r"N = (\d+) \.\.\. (\d+)\)")
    p41 = growth_points("anna.thm_4_1", False)
    assert (p41[0].params["N"], p41[-1].params["N"]) == (int(lo), int(hi))
    assert all((p.params["eps"], p.params["eps1"]) == (1 / int(eps), float(eps1)) for p in p41)
    scale, lo, hi, k = said(r"`anna\.khop` \(Lemma C\.2's splitter sort, s = ceil\((\d+) N\^\(3/4\)\), "
                            r"N = (\d+) \.\.\. (\d+), k = (\d+)\)")
    khop = growth_points("anna.khop", True)
    assert (khop[0].params["N"], khop[-1].params["N"]) == (int(lo), int(hi))
    assert all((p.params["s_scale"], p.params["eps1"], p.params["k"]) == (int(scale), 0.75, int(k)) for p in khop)
    heads, m_lo, m_hi, scale, lo, hi = said(
        r"`attnsim growth anna\.thm_4_2 --quick`: H = (\d+), m = floor\(2 N\^\(1/4\) / 2\) = (\d+) \.\.\. (\d+), "
        r"s = ceil\((\d+) N\^\(3/4\)\), the splitter sort, N = (\d+) \.\.\. (\d+)\)")
    p42 = growth_points("anna.thm_4_2", True)
    assert (p42[0].params["N"], p42[-1].params["N"]) == (int(lo), int(hi))
    assert all((p.params["s_scale"], p.params["eps1"]) == (int(scale), 0.75) for p in p42)
    assert [math.floor(2 * p.params["N"] ** 0.25 / int(heads)) for p in (p42[0], p42[-1])] == [int(m_lo), int(m_hi)]
    N, eps, wide, narrow, s_scale = said(r"Its quick gap sweep \(N = (\d+), eps = 1/(\d+), eps' - eps from 1/(\d+) to "
                                         r"1/(\d+), s_scale (\d+)\)")
    gap = sweep("anna.thm_4_2", True)
    assert {(p.params["N"], p.params["eps"], p.params["s_scale"]) for p in gap} == {(int(N), 1 / int(eps),
                                                                                      float(s_scale))}
    assert (max(gaps(gap)), min(gaps(gap))) == (1 / int(wide), 1 / int(narrow))
