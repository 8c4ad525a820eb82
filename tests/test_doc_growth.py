"""The figures of docs/growth.md that cost little, read off the page and recomputed from the code: the rules, the
curvature that is not growth, no frozen growth (the bounds in a parameter other than N, the growth twins, eta and
the sweeps' figures: tests/test_doc_growth_sweeps.py).

A paper's O(.) bound is decided over a sweep of sizes (ANNA's theorems here; Two Heads' and TinT's through the same
rules). The page gives the rules' constants, the toy sequences the growth test is tuned on, the formulas the
containments take their limits of, the sweeps' grids, the eta seeds, the growth twins by deciding evidence and a
few sweeps' figures. Sweeps that take more than a second or two a point (Thm 3.4's memory over N = 32 ... 512,
Thm 4.1 up to N = 16384, k-hop, Thm 4.2, Thm 5.4's letter sort) and the growth twins' outcomes (minutes) are not
run here.
"""

from __future__ import annotations

import math
from pathlib import Path

from growth_page import WORDS, said, same

from attnsim.paper_refs import get as get_claim
from attnsim.verify.growth import (
    CALIBRATION_HEADROOM,
    calibrate,
    evidence_of,
    judge,
)
from attnsim.verify.growth_rules import MIN_SIZES, MIN_SPAN, UPPER_SHARE, larger_half
from attnsim.verify.stats import LEVEL
from attnsim.verify.twins import all_twins

ROOT = Path(__file__).resolve().parents[1]
TOY = "anna.def_ema"  # its time has no exact count, formula or constant: the growth test alone decides


def toy(sizes, measured, bound) -> object:
    """The growth verdict of made-up points (measured, bound) at ``sizes``, decided by the growth test."""
    return judge(TOY, "time", [{"claim": TOY, "verdict": "pass", "size": {"var": "N", "value": n},
                                "bounds": {"time": {"measured": measured(n), "value": bound(n)}}} for n in sizes])


# -- the rules ---------------------------------------------------------------------------------------------------
def test_a_sweep_has_four_sizes_over_eight_times():
    sizes, span = said(r"at least (\d+) sizes spanning at least (\d+)x")
    assert (MIN_SIZES, MIN_SPAN) == (int(sizes), int(span))


def test_the_proofs_upper_formulas_of_the_lsh_memory():
    upper, bound = said(r"so `upper = ([^`]+)`, tight against `([^`]+)`")
    (alg_2,) = said(r"beside every query's running sum and count, `([^`]+)`")
    one, two = (get_claim(c).resources["memory_words"] for c in ("anna.alg_1", "anna.alg_2"))
    assert same(upper, one.upper) and same(bound, one.bound) and same(alg_2, two.upper)
    assert evidence_of("anna.alg_1", "memory_words") == evidence_of("anna.alg_2", "memory_words") == (
        "proof's inequality")


def test_the_growth_tests_rules():
    (level,) = said(r"with its (\d+)% Student-t interval")
    assert LEVEL == int(level) / 100
    four, five = said(r"the larger half of the sizes \(the top (\w+) of four, the top (\w+) of five\)")
    for n, top in ((4, four), (5, five)):
        assert len(larger_half([(s, 1.0) for s in range(1, n + 1)])) == WORDS[top]
    (share,) = said(r"the slope there is at least (\w+) the whole sweep's")
    assert {"half": 0.5}[share] == UPPER_SHARE
    (points,) = said(r"its interval lies above 0 where it has (\w+) or more points")
    for n in (4, 5):  # an interval needs the page's number of points in the larger half
        top = toy([2 ** k for k in range(2, 2 + n)], lambda x: x ** 1.5, lambda x: x)
        assert math.isnan(top.top_low) == (len(larger_half([(s, 1.0) for s in range(n)])) < WORDS[points])


def test_a_frozen_constant():
    (times,) = said(r"\(`attnsim\.verify\.growth\.calibrate`: (\w+) the largest measured / bound at the smallest size")
    (digits,) = said(r"at the smallest size of the claim's growth sweep, (\w+) significant digits\)")
    assert {"twice": 2}[times] == CALIBRATION_HEADROOM
    records = [{"claim": TOY, "verdict": "pass", "size": {"var": "N", "value": n},
                "bounds": {"time": {"measured": 1.2345 * n * (1 + n / 1e4), "value": float(n)}}} for n in (8, 16)]
    constant, size = calibrate(TOY, "time", records)
    assert size == 8 and constant == 2.5 and len(f"{constant:g}".replace(".", "")) == WORDS[digits]


# -- curvature is not growth -------------------------------------------------------------------------------------
def test_a_count_approaching_its_bound():
    """N r - r (r - 1)/2 scores against O(N r), r = 8, N = 56 ... 448 (docs: a toy claim)."""
    r, lo, hi, first, last, slope, low, high, top_lo, top_hi, top = said(
        r"evaluates `N r - r \(r - 1\)/2` scores against the bound O\(N r\), with r = (\d+)\. Over N = (\d+) \.\.\. "
        r"(\d+) measured / bound climbs ([\d.]+) → ([\d.]+) toward its limit 1: slope ([\d.]+), interval "
        r"\[([\d.]+), ([\d.]+)\], above 0\..*?over the larger half \(N = (\d+), (\d+)\) the slope is ([\d.]+)")
    r, lo, hi = int(r), int(lo), int(hi)
    sizes = [lo * 2 ** k for k in range(4)]
    assert sizes[-1] == hi and sizes[2:] == [int(top_lo), int(top_hi)]
    g = toy(sizes, lambda n: n * r - r * (r - 1) / 2, lambda n: n * r)
    assert (f"{g.ratios[0]:.3f}", f"{g.ratios[-1]:.3f}") == (first, last)
    assert (f"{g.slope:.3f}", f"{g.low:.3f}", f"{g.high:.3f}", f"{g.top_slope:.3f}") == (slope, low, high, top)
    assert g.verdict == "within" and g.top_slope < UPPER_SHARE * g.slope


def test_powers_and_logs_keep_their_slope():
    (ratio,) = said(r"A power of n on top of the bound keeps its slope over every part of the sweep \(ratio of the "
                    r"slopes (\d+)\)")
    lo, hi, whole, top = said(r"a log factor \(`1 \+ ln n` over n = (\d+) \.\.\. (\d+): ([\d.]+) over the sweep, "
                              r"([\d.]+) over its larger half\)")
    sizes = [int(lo) * 2 ** k for k in range(4)]
    assert sizes[-1] == int(hi)
    power = toy(sizes, lambda n: n ** 1.5, lambda n: n)
    assert round(power.top_slope / power.slope, 9) == int(ratio)
    log = toy(sizes, lambda n: n * (1 + math.log(n)), lambda n: n)
    assert (f"{log.slope:.2f}", f"{log.top_slope:.2f}") == (whole, top) and log.verdict == "exceeds"


def test_saturation_loses_its_slope():
    """1 - c n^-e: each doubling's slope is 2^-e of the last; over four sizes spanning 8x the larger half's slope
    falls below half the sweep's once e reaches the page's figure (to two decimals, whatever c)."""
    (e_at,) = said(r"below half over four sizes spanning 8x once e is about ([\d.]+) or more")
    (slower,) = said(r"Slower saturation \(e < ([\d.]+)\) cannot be told from a log factor")
    assert slower == e_at
    sizes = [56 * 2 ** k for k in range(4)]

    def share(e: float) -> float:
        g = toy(sizes, lambda n: n * (1 - 0.01 * n ** -e), lambda n: n)
        return g.top_slope / g.slope

    lo, hi = 0.5, 1.5
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if share(mid) >= UPPER_SHARE else (lo, mid)
    assert f"{lo:.2f}" == e_at
    slopes = [math.log((1 - 0.01 * (2 * n) ** -0.5) / (1 - 0.01 * n ** -0.5)) for n in sizes[:3]]
    assert abs(slopes[1] / slopes[0] - 2 ** -0.5) < 1e-3  # "loses its slope by 2^(-e) per doubling"


# -- no frozen growth --------------------------------------------------------------------------------------------
def test_the_relay_and_tree_depths_tend_to_the_pages_limits():
    P, D = said(r"the statement's `P = ([^`]+)` machines\. The limit of `D` is `([^`]+)`")
    claims = said(r"- (Thm 4\.1) / (Thm B\.10) / (Cor B\.14): the relay depth")
    ids = ["anna.thm_4_1", "anna.thm_b_10", "anna.cor_b_14"]
    assert [c.replace(" ", "_").replace(".", "_").lower() for c in claims] == [i.split(".")[1] for i in ids]
    for claim in ids:
        growth = get_claim(claim).extra["growth"]
        assert same(P, growth["P"]) and same(D, growth["D"], eps_gap="eps1 - eps"), claim
    (R,) = said(r"`R` tends to at most `([^`]+)`: the containment holds")
    for claim in ("anna.thm_4_4", "anna.cor_d_3", "anna.thm_d_1"):
        assert same(R.replace(" L ", " depth "), get_claim(claim).extra["growth"]["R"]), claim
    (twin,) = said(r"it is a broken twin, `(\w+)`")
    assert any(t.name == twin and t.claim == "anna.thm_4_4" for t in all_twins())
    assert (ROOT / said(r"`(tests/test_containment_symbols\.py)` walks every containment")[0]).is_file()
