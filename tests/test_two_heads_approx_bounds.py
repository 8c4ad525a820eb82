"""two_heads.thm_4_2 (the converse) and two_heads.lower_bound (the reduction, adversarial inputs, and
the information bound held against every registered checker)."""

from __future__ import annotations

import math
from itertools import combinations
from math import comb

import numpy as np
import pytest

import attnsim.sim.two_heads.converse as converse
import attnsim.sim.two_heads.hardness as hardness
from attnsim.paper_refs import get as get_claim
from attnsim.theory.lower_bound import information_bound
from attnsim.verify.approx_cases import needle_failure_rate
from attnsim.verify.check import run_check
from attnsim.verify.claims.two_heads_approx import run_converse, taus
from attnsim.verify.registry import UsageError, all_checkers


# -- Theorem 4.2 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", list(range(1, 80)))
def test_code_length_is_the_smallest_even_r(n):
    r = converse.code_length(n)
    assert r % 2 == 0 and comb(r, r // 2) >= n
    assert r == 2 or comb(r - 2, r // 2 - 1) < n


def test_codes_separate_instances():
    n, B = 20, 3.0
    r = converse.code_length(n)
    sets = converse.code_sets(n, r)
    assert len(set(sets)) == n
    u = [np.array([0.0 if c in Z else -B for c in range(r)]) for Z in sets]
    w = [B + x for x in u]
    for i, j in combinations(range(n), 2):
        assert u[i] @ w[i] == 0 and u[i] @ w[j] <= -B * B and u[j] @ w[i] <= -B * B


def test_issue_figure_mp200_below_2_to_the_minus_100():
    r = run_check("two_heads.thm_4_2", dict(N=32, M=4, d=2, B=12.0), "mp:200", min_bits=100)
    assert r["verdict"] == "pass", r["reasons"]
    assert r["error_bits"] > 100
    assert r["counts"]["calls"] == 1 and r["counts"]["small_products"] == r["predicted"]["small_products"] == 24
    assert r["counts"]["oracle_dim"] == 3 * (2 + 6) and r["counts"]["oracle_len"] == 32


def test_error_decays_like_exp_minus_B_squared():
    """error(B)·e^{B²} is the same constant while the error is above the mp:200 floor."""
    scaled = [run_converse(32, 4, 2, B, "mp:200", 0)["error"] * math.exp(B * B) for B in (3.0, 5.0, 7.0, 9.0)]
    assert max(scaled) / min(scaled) < 1.5


def test_error_within_the_papers_bound_and_float64_floor():
    for B in (2.0, 4.0, 6.0):
        res = run_converse(16, 4, 2, B, "mp:120", 1)
        assert res["error"] <= res["bound"]
    r = run_check("two_heads.thm_4_2", dict(N=32, M=4, d=2, B=12.0), "float64")
    assert r["verdict"] == "pass" and 40 < r["error_bits"] < 60


def test_thm_1_3_and_thm_4_2_agree_in_paper_refs():
    a, b = get_claim("two_heads.thm_1_3"), get_claim("two_heads.thm_4_2")
    for res in ("calls", "small_products"):
        assert a.resources[res].exact == b.resources[res].exact and a.resources[res].bound == b.resources[res].bound


def test_broken_codes_are_caught(monkeypatch):
    """Every instance given the same code: nothing separates them and the error is O(1)."""
    monkeypatch.setattr(converse, "code_sets", lambda n, r: [tuple(range(r // 2))] * n)
    r = run_check("two_heads.thm_4_2", dict(N=16, M=4, d=2, B=12.0), "mp:100")
    assert r["verdict"] == "fail" and r["extra"]["absolute_error"] > 1e-3


def test_converse_bad_input():
    from attnsim.verify.registry import UsageError

    with pytest.raises(UsageError, match="^N: "):
        run_check("two_heads.thm_4_2", dict(N=10, M=4), "mp:64")


# -- the reduction ----------------------------------------------------------------------------------
@pytest.mark.parametrize("yes", [True, False])
def test_generator_keeps_its_promise(yes):
    for s in range(20):
        inst = hardness.generate(8, 6, 1, np.random.default_rng(s), yes)
        truth = hardness.brute_force(inst)
        assert truth.any() == yes
        dist = (inst.A0[:, None, :] != inst.B0[None, :, :]).sum(-1).min(1)
        assert ((dist <= 1) == truth).all()


def test_reduction_decides_every_instance_over_many_seeds():
    r = run_check("two_heads.lower_bound", dict(input="reduction", N=16, M=8, d=4, radius=1, seeds=24), "float64")
    assert r["verdict"] == "pass", r["reasons"]
    assert r["extra"]["correct"] == r["extra"]["rows"] == 24 * 8
    assert 0 < r["extra"]["yes"] < 24
    assert r["calls"] == r["predicted_calls"] == 2 * (16 // 8) ** 2


def test_reduction_in_mp_on_the_harder_instances():
    r = run_check("two_heads.lower_bound", dict(input="reduction", N=16, M=8, d=6, radius=1, seeds=1), "mp:96")
    assert r["verdict"] == "pass", r["reasons"]
    assert r["error_bits"] > 40


def test_a_format_too_narrow_for_the_decode_is_refused_before_any_instance():
    """β/2 ≈ 41.6 at N = 16, d0 = 6: e^(β/2) needs 60 bits, and past float64's 53 Lemma 3.1's p/(1-p) decode divides
    by zero. That used to run and fail (38 of 160 rows decided wrongly, non-finite outputs); β depends on N, d0 and
    the radius alone, so it is a precision too narrow for the input, one line naming --numerics. Fuzzing found the
    same in mp:96 at N = 64, d0 = 7 (98 bits), where mpmath raised ZeroDivisionError."""
    for params, numerics, need in ((dict(N=16, M=8, d=6, seeds=2), "float64", "60.0 bits"),
                                   (dict(N=64, M=8, d=7, eps=0.5, seeds=1), "mp:96", "98.0 bits")):
        with pytest.raises(UsageError, match=need) as refused:
            run_check("two_heads.lower_bound", dict(input="reduction", radius=1, **params), numerics)
        assert refused.value.param == "numerics"
    # the first input runs once the format holds its 60 bits (an N = 64 run takes 10 CPU s whatever the format)
    params = dict(input="reduction", N=16, M=8, d=6, radius=1, seeds=2)
    assert run_check("two_heads.lower_bound", params, "mp:80")["verdict"] == "pass"


def test_broken_encoding_is_caught(monkeypatch):
    """Dummy keys that lose their β/2 score change every output: the decisions go wrong."""
    original = hardness.encode

    def no_dummy_score(inst, b):
        spec, weights, X = original(inst, b)
        X = X.copy()
        X[inst.n:, 2 * inst.d + 1] = 0.0
        return spec, weights, X

    monkeypatch.setattr(hardness, "encode", no_dummy_score)
    r = run_check("two_heads.lower_bound", dict(input="reduction", N=16, M=8, d=4, radius=1, seeds=4), "float64")
    assert r["verdict"] == "fail" and any("decided wrongly" in s for s in r["reasons"])


# -- adversarial inputs -----------------------------------------------------------------------------
def test_needle_average_fails_worst_case_exact():
    r = run_check("two_heads.lower_bound", dict(input="needle", N=64, M=8, d=2, seeds=40), "exact")
    assert r["verdict"] == "pass", r["reasons"]
    assert r["error_bits"] == math.inf
    assert r["extra"]["row_fail_rate"] == pytest.approx(1 - 8 / 64) and r["extra"]["all_rows_ok"] == 0


@pytest.mark.parametrize("N", [6, 13])
def test_needle_with_a_short_last_block_fails_at_the_rate_its_blocks_predict(N: int):
    """Found by fuzzing: with M not dividing N the last query block is shorter, and the needle's rate is 1 - the
    size of the block that drew it, over N; 1 - M/N made N = 6, M = 4 fail with the rate 1/2 of two seeds (one
    block of 4 rows, one of 2). The prediction now follows each permutation's block."""
    r = run_check("two_heads.lower_bound", dict(input="needle", N=N, M=4, d=2, seeds=12), "exact")
    assert r["verdict"] == "pass", r["reasons"]
    assert r["extra"]["row_fail_rate"] == pytest.approx(needle_failure_rate(N, 4, 0, taus(N, 0, 12)), abs=1e-12)
    assert r["extra"]["row_fail_rate"] != pytest.approx(1 - 4 / N)


def test_sqrtlog_average_errs_worst_case_agrees():
    r = run_check("two_heads.lower_bound", dict(input="sqrtlog", N=32, M=8, d=4, eps=0.1, seeds=40), "mp:96")
    assert r["verdict"] == "pass", r["reasons"]
    assert r["error_bits"] > 80 and r["extra"]["row_fail_rate"] > 0.05


# -- the information bound, for every claim that has a checker ---------------------------------------
def _quick_points():
    """Every quick point of a Two Heads claim (the other papers' constructions make no calls to a
    length-limited oracle over an input of length N)."""
    return [(claim, raw) for claim, chk in all_checkers().items() if claim.startswith("two_heads.")
            for raw in chk.grid(True)]


@pytest.mark.parametrize("claim, raw", _quick_points(), ids=lambda x: x if isinstance(x, str) else "")
def test_information_bound_holds_for_every_checker(claim, raw):
    """calls >= ceil(N / oracle length): each call returns at most its length in rows."""
    params = dict(raw)
    numerics, seed = params.pop("numerics", None), int(params.pop("seed", 0))
    r = run_check(claim, params, numerics, seed)
    calls, N = r["counts"].get("calls"), r["params"].get("N")
    if calls is None or N is None:
        pytest.skip(f"{claim} counts no oracle calls over a length N")
    length = r["counts"].get("oracle_len") or r["params"].get("M")
    assert calls >= information_bound(N, length) >= 1
