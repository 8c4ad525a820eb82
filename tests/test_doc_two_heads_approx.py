"""The figures of docs/two_heads_approx.md that a cheap, deterministic run gives, read off the page and recomputed.

Two Heads Thm 4.1 estimates each query block's attention from one sampled block of keys when the scores are
bounded (C) and the values do not cancel (D), with M above two minimums; Thm 4.2 packs N/M small instances into
one call; after Thm 1.1 the paper reduces Gap-ANN to attention. The page's constants, minimums, success counts,
intervals, the converse's error curve and the reduction's figures are recomputed here. The default run at
N = 32768 (30 s) and the sqrtlog row's seeds (15 s) are not.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from doc_page import Page, shown

from attnsim.paper_refs import get as get_claim
from attnsim.sim.two_heads.assumptions import measure
from attnsim.sim.two_heads.converse import code_length
from attnsim.sim.two_heads.hardness import beta_for
from attnsim.theory.average_case import minimum_M, smallest_eps
from attnsim.theory.lower_bound import information_bound
from attnsim.verify.approx_cases import approx_case, qkv_float
from attnsim.verify.check import run_check
from attnsim.verify.claims.two_heads_approx import run_converse
from attnsim.verify.reference_attention import relative_row_errors, softmax_attention
from attnsim.verify.registry import UsageError, get_checker
from attnsim.verify.stats import binomial_interval, fewest_trials_to_establish

_PAGE = Page("two_heads_approx.md")
PAGE = _PAGE.text
TEXT = _PAGE.flat
said = _PAGE.said
CLAIM = get_claim("two_heads.thm_4_1")


def num(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


@cache
def constants(kind: str, N: int, d: int) -> tuple[float, float]:
    """C and D measured on the input (seed 0)."""
    a = measure(*qkv_float(approx_case(kind, N, d, 0)))
    return a.C, a.D


def minimums(kind: str, N: int, M: int, d: int, eps: float) -> dict[str, float]:
    C, D = constants(kind, N, d)
    return minimum_M(CLAIM, dict(C=C, D=D, N=N, d=d, eps=eps, M=M))


@cache
def thm_4_1(**params) -> dict:
    """One record of Thm 4.1 (float64, seed 0; read-only)."""
    return run_check("two_heads.thm_4_1", params)


# -- Theorem 4.1 -------------------------------------------------------------------------------------------------
def test_fewest_seeds_that_can_establish_the_promise():
    (n,) = said(r"(\d+) successes in \d+ seeds are the fewest that can")
    assert fewest_trials_to_establish(float(CLAIM.extra["success_probability"])) == int(n)
    assert binomial_interval(int(n) - 1, int(n) - 1)[0] < 0.9 <= binomial_interval(int(n), int(n))[0]


def test_the_halves_default():
    (score,) = said(r"with scores ±([\d.]+)\.")
    C, D = said(r"Its constants are C = ([\d.]+) and D = ([\d.]+), so")
    eps, m1, m2, N, M, seeds = said(r"so at ε = ([\d.]+) the conditions need M ≥ ([\d,]+) and M ≥ ([\d,]+): the "
                                    r"default is N = (\d+), M = (\d+) \(two blocks\), (\d+) seeds")
    defaults = get_checker("two_heads.thm_4_1").resolve({})
    assert (defaults["input"], defaults["eps"], defaults["N"], defaults["M"], defaults["seeds"]) == \
        ("halves", float(eps), int(N), int(M), int(seeds)) and int(N) == 2 * int(M)
    c, dd = constants("halves", int(N), 2)
    assert shown(c, C) and shown(dd, D) and shown(math.log(c), score)
    need = minimums("halves", int(N), int(M), 2, float(eps))
    assert sorted(math.ceil(v) for v in need.values()) == [num(m1), num(m2)]
    calls, length = said(r"the oracle path's (\w+) calls of length (\d+)")
    assert {"four": 4}.get(calls) == 2 * math.ceil(int(N) / int(M)) and int(length) == int(M) + 1


def test_a_wrong_estimator_on_halves_is_off():
    """The truth against a block that averages its own half of the keys, and against half of every row."""
    wrong, half = said(r"averages the wrong keys \(a query block's own half\) is off by ≈ ([\d.]+) in relative terms, "
                       r"and one with a wrong normaliser \(half of every row\) by ([\d.]+)\.")
    q, k, v = qkv_float(approx_case("halves", 64, 2, 0))  # the ratios do not depend on N
    truth, _ = softmax_attention(q, k, v)
    own = np.concatenate([softmax_attention(q[:32], k[:32], v[:32])[0], softmax_attention(q[32:], k[32:], v[32:])[0]])
    assert f"{relative_row_errors(own, truth).max():.2f}" == wrong
    assert f"{relative_row_errors(truth / 2, truth).max():.1f}" == half


def test_intervals_of_all_and_none():
    lo, hi = said(r"Every seed succeeds \(interval \[([\d.]+), (\d+)\]\)")
    a, b = binomial_interval(100, 100)
    assert (f"{a:.3f}", f"{b:g}") == (lo, hi)
    ok, of, lo, hi = said(r"fails on its success rate: (\d+)/(\d+), interval \[(\d+), ([\d.]+)\]")
    a, b = binomial_interval(int(ok), int(of))
    assert (f"{a:g}", f"{b:.3f}") == (lo, hi)


def test_which_eps_can_hold():
    N, M, d, eps = said(r"At N = (\d+), M = (\d+), d = (\d+) that is \*\*ε ≥ ([\d.]+)\*\*")
    at_best = dict(C=1.0, D=1.0, N=int(N), d=int(d), M=int(M))  # D ≤ 1 always; C does not enter this condition
    assert shown(smallest_eps(CLAIM, at_best)["values"], eps)
    (low,) = said(r"At N = 4096 no M ≤ N allows ε below ([\d.]+)\.")
    assert shown(smallest_eps(CLAIM, dict(at_best, M=int(N)))["values"], low)


def test_the_bounded_input():
    C, D, m1, m2 = said(r"scores in \[−1/16, 1/16\], so C = ([\d.]+); - values \[1, u/4\], so D = ([\d.]+)\. Both "
                        r"conditions then hold: M ≥ ([\d.]+) and M ≥ ([\d.]+)\.")
    c, dd = constants("bounded", 4096, 2)
    assert shown(c, C) and shown(math.exp(1 / 16), C) and shown(dd, D)
    need = minimums("bounded", 4096, 512, 2, 2.0)
    assert sorted(f"{v:.1f}" for v in need.values()) == sorted((m1, m2))
    at200, at100 = said(r"For `bounded` that is ([\d.]+) over 200 seeds \(([\d.]+) over the default 100\)")
    assert f"{thm_4_1(N=4096, M=512, d=2, eps=2.0, input='bounded', seeds=200)['extra']['eps_at_promised']:.4f}" \
        == at200
    assert f"{thm_4_1(N=4096, M=512, d=2, eps=2.0, input='bounded', seeds=100)['extra']['eps_at_promised']:.4f}" \
        == at100


def test_more_heads_and_layers():
    N, M, eps, ok, of, calls, rounds = said(r"The full sweep runs H = L = 2 at N = (\d+), M = (\d+), ε = ([\d.]+): "
                                            r"(\d+)/(\d+) seeds, (\d+) calls in (\d+) rounds")
    r = thm_4_1(N=int(N), M=int(M), eps=float(eps), H=2, L=2, seeds=int(of))
    assert (r["extra"]["successes"], r["counts"]["calls"], r["counts"]["rounds"]) == (int(ok), int(calls), int(rounds))
    blocks = math.ceil(int(N) / int(M))
    assert r["counts"]["calls"] == 2 * blocks * 2 * 2  # 2⌈N/M⌉·H·L
    assert r["counts"]["calls_with_permutation"] - r["counts"]["calls"] == blocks * 2 * 2  # ⌈N/M⌉·H·L lookups


def figures_rows() -> dict[str, list[str]]:
    return {cells[0]: cells for cells in _PAGE.table("| input | C | D | conditions |")}


def test_figures_at_eps_2():
    """`attnsim check two_heads.thm_4_1 --N 4096 --M 512 --eps 2 --input KIND --seeds 200` (d = 2, sqrtlog d = 8):
    every cell but the sqrtlog row's success count and its note (15 s)."""
    said(r"### Figures at ε = 2 \(`attnsim check two_heads\.thm_4_1 --N 4096 --M 512 --eps 2 --input bounded "
         r"--seeds 200`\)")
    rows = figures_rows()
    assert list(rows) == ["bounded", "random", "needle", "sqrtlog (d = 8)"]
    for label, (_, C, D, conditions, within, interval, failing) in rows.items():
        kind, d = label.split()[0], (8 if "d = 8" in label else 2)
        c, dd = constants(kind, 4096, d)
        assert shown(c, C) and shown(dd, D), label
        holds = [512 >= m for m in minimums(kind, 4096, 512, d, 2.0).values()]
        assert conditions == ("both hold" if all(holds) else "both fail" if not any(holds) else "one fails"), label
        if kind == "sqrtlog":
            continue
        r = thm_4_1(N=4096, M=512, d=d, eps=2.0, input=kind, seeds=200)["extra"]
        assert within == f"{r['successes']}/200", label
        lo, hi = r["clopper_pearson95"]
        assert interval == (f"[{lo:.3f}, {hi:.3f}]" if all(holds) else "—"), label
        assert failing.split(" = ")[0] == (f"{r['row_fail_rate']:.3f}" if 0 < r["row_fail_rate"] else "0"), label
    assert rows["needle"][6] == f"{1 - 512 / 4096:.3f} = 1 − M/N"


def test_calls_of_thm_4_1():
    calls, with_perm = said(r"The counts are `calls` = (\d)·⌈N/M⌉ \(oracle\) and `calls_with_permutation` = "
                            r"(\d)·⌈N/M⌉ \(the paper's 3N/M\)")
    r = thm_4_1(N=4096, M=512, d=2, eps=2.0, input="bounded", seeds=200)
    blocks = 4096 // 512
    assert r["counts"]["calls"] == int(calls) * blocks
    assert r["counts"]["calls_with_permutation"] == int(with_perm) * blocks
    assert r["counts"]["calls"] >= information_bound(4096, r["counts"]["oracle_len"])


# -- Theorem 4.2 -------------------------------------------------------------------------------------------------
def test_converse_codes_and_width():
    (rule,) = said(r"- (r is the smallest even number [^.]*?)\.")
    assert rule == "r is the smallest even number r ≥ 2 with C(r, r/2) ≥ n"
    for n in range(1, 200):
        r = code_length(n)
        assert r >= 2 and r % 2 == 0 and math.comb(r, r // 2) >= n
        assert r == 2 or math.comb(r - 2, r // 2 - 1) < n
    said(r"inside one call of length N and width 3\(d \+ r\)")
    res = run_converse(32, 4, 2, 12.0, "float64", 0)
    assert (res["oracle_len"], res["oracle_dim"], res["small_products"]) == (32, 3 * (2 + res["r"]), 3 * res["n"])


def test_converse_error_curve():
    n, M, d, scaled, B0, B1 = said(r"With (\d+) instances \(M = (\d+), d = (\d+), seed 0\) at mp:200, "
                                   r"error\(B\)·e\^\{B²\} ≈ ([\d.]+) for B = (\d+)…(\d+)")
    below, at12 = said(r"It falls below 2\^-100 from B = (\d+) on\. At B = 12 it is 2\^-(\d+), the precision floor")
    N = int(n) * int(M)
    bits = {}
    for B in range(int(B0), 13):
        res = run_converse(N, int(M), int(d), float(B), "mp:200", 0)
        bits[B] = res["error_bits"]
        if B <= int(B1):
            assert f"{res['error'] * math.exp(B * B):.1f}" == scaled, B
    assert min(B for B, b in bits.items() if all(bits[c] > 100 for c in range(B, 13))) == int(below)
    assert round(bits[12]) == int(at12)
    (floor,) = said(r"In float64 the floor is about 2\^-(\d+)\.")
    f64 = run_converse(N, int(M), int(d), 12.0, "float64", 0)["error_bits"]
    assert int(floor) - 3 < f64 <= int(floor)  # a few float64 ulps


# -- the lower bound ---------------------------------------------------------------------------------------------
def test_the_reduction_in_float64():
    count, n, d0, ok, rows = said(r"(\d+) instances \(n = (\d+), d0 = (\d+)\) in float64: (\d+)/(\d+) rows correct")
    r = run_check("two_heads.lower_bound", dict(N=2 * int(n), M=8, d=int(d0), seeds=int(count)), "float64")
    e = r["extra"]
    assert (e["instances"], e["correct"], e["rows"], r["verdict"]) == (int(count), int(ok), int(rows), "pass")
    calls = r["counts"]["calls"]
    said(r"so the width is 2d \+ 3 instead of 2d̃ \+ 1")
    width = 2 * (2 * int(d0)) + 3  # d: the doubled vectors' length
    assert (e["cost_oracle"], e["cost_brute"], e["cost_direct"]) == \
        (calls * 9 ** 2, int(n) ** 2 * int(d0), (2 * int(n)) ** 2 * width)


def test_beta_and_the_float64_refusal():
    said(r"with t = 2r and ε = 1/r")
    said(r"β = 4·d·ln\(4n\)/\(εt\)")
    n, d0, half = said(r"n = (\d+), d0 = (\d+) in float64: β/2 = ([\d.]+) and e\^\{β/2\} > 2\^53")
    beta = beta_for(int(n), 2 * int(d0), 1)  # the vectors doubled, radius 1
    assert f"{beta / 2:.1f}" == half and beta / 2 / math.log(2) > 53
    assert beta == 4 * (2 * int(d0)) * math.log(4 * int(n)) / ((1 / 1) * 2)
    words, bits = said(r"divides by zero\. (The check is refused before it runs, in one line naming `--numerics`) "
                       r"\(it asks for mp:(\d+) or more\)")
    try:
        run_check("two_heads.lower_bound", dict(N=2 * int(n), M=8, d=int(d0)), "float64")
    except UsageError as e:
        assert e.param == "numerics" and "1 - p rounds to 0" in str(e) and f"BITS >= {bits}" in str(e)
    else:
        raise AssertionError(f"not refused: the page says {words!r}")


def test_needle_worst_case_is_exact():
    said(r"The worst-case construction is \*exact\* \(`--numerics exact`, with integer needle scores\)")
    r = run_check("two_heads.lower_bound", dict(input="needle", N=64, M=8, d=2, seeds=50), "exact")
    assert r["extra"]["worst_case_bits"] == math.inf and f"{r['extra']['row_fail_rate']:.4f}" == f"{1 - 8 / 64:.4f}"
