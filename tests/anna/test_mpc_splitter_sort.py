"""Lemma C.2's splitter-tree sort (sim/anna/mpc_splitter_sort.py), its multicast trees and the growth judged in a
parameter other than N (verify/growth.py's parameter sweeps)."""

from __future__ import annotations

import random
from unittest import mock

import pytest

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna.mpc import MPC
from attnsim.sim.anna.mpc_lockstep import run
from attnsim.sim.anna.mpc_multicast import heap_depth, multicast, sum_up
from attnsim.sim.anna.mpc_splitter_sort import SortShape, sort_rounds, splitter_sort
from attnsim.sim.ledger import Ledger
from attnsim.theory.formulas import as_number, evaluate
from attnsim.verify.growth import judge
from attnsim.verify.refusals import Refused
from attnsim.verify.stats import fewest_trials_to_establish, rate_upper


@pytest.mark.parametrize("N, s, per, seed", [(600, 400, 6, 0), (600, 400, 6, 1), (300, 2000, 50, 2)])
def test_sorts_random_keys_in_the_plans_rounds(N, s, per, seed):
    rng = random.Random(seed)
    keys = [rng.randrange(N * N) for _ in range(N)]
    P = -(-N // per)
    ledger = Ledger()
    mpc = MPC(P, s, ledger=ledger)
    mpc.load({m: [(keys[i], i, 0) for i in range(m * per, min(N, (m + 1) * per))] for m in range(P)})
    splitter_sort(mpc, range(P), key=lambda r: r[:2], key_words=2, record_words=3, seed=seed)
    assert [r[0] for mem in mpc.memory for r in mem] == sorted(keys)
    assert ledger.rounds("mpc_round") == sort_rounds(SortShape(s, 2, 3), P, N)


def test_multicast_reaches_every_member_and_sums_come_back():
    ledger = Ledger()
    mpc = MPC(10, 50, ledger=ledger)
    mpc.load({0: [("x", 0, 7)], 5: [("x", 1, 9)]})
    groups = {("x", 0): list(range(0, 5)), ("x", 1): list(range(5, 10))}
    run(mpc, multicast(range(10), groups, 2, label="t"))
    assert all(mpc.memory[m] == [("x", m // 5, 7 if m < 5 else 9)] for m in range(10))
    assert ledger.rounds("mpc_round") == heap_depth(5, 2) == 2
    mpc.local(lambda m, mem: [("y", m // 5, m, 1)])
    run(mpc, sum_up(range(10), {("y", 0): list(range(5)), ("y", 1): list(range(5, 10))}, 2, label="t"))
    assert mpc.memory[0] == [("y", 0, 10, 5)] and mpc.memory[5] == [("y", 1, 35, 5)]


def _record(gap: float, rounds: float) -> dict:
    """A gap-sweep record as the checker writes it: the rounds beside the proof's upper formula at its point."""
    params = {"N": 4096, "eps": 0.0625, "eps1": 0.0625 + gap, "s_scale": 128.0}
    claim = get_claim("anna.lemma_c_2")
    upper = float(as_number(evaluate(claim.resources["rounds"].upper or "", claim.definitions, params)))
    return {"claim": "anna.lemma_c_2", "params": params, "size": {"var": "N", "value": 4096.0}, "verdict": "pass",
            "bounds": {"rounds": {"measured": rounds, "value": 1 / gap, "upper": {"value": upper}}},
            "predicted": {}}


def test_a_parameter_sweep_judges_growth_in_its_variable():
    gaps = (1 / 4, 3 / 16, 1 / 8, 3 / 32, 1 / 16)
    fine = judge("anna.lemma_c_2", "rounds", [_record(g, 3 / g) for g in gaps], "1/(eps1 - eps)")
    squared = judge("anna.lemma_c_2", "rounds", [_record(g, 3 / g**2) for g in gaps], "1/(eps1 - eps)")
    assert fine.size_var == "1/(eps1 - eps)" and fine.sizes == (4.0, 5.333333333333333, 8.0, 10.666666666666666, 16.0)
    assert fine.verdict == "within" and squared.verdict == "exceeds"
    assert fine.evidence == squared.evidence == "proof's inequality"
    assert "fails at 1/(eps1 - eps) = " in squared.why  # the squared rounds break the closed formula, not a fit
    few = judge("anna.lemma_c_2", "rounds", [_record(g, 3 / g) for g in gaps[:3]], "1/(eps1 - eps)")
    assert few.verdict == "within"  # a formula held at each point needs no span of sizes, unlike a growth test


def test_a_record_whose_every_draw_is_refused_fails_with_no_output_compared():
    """At s = 16 words every draw overloads a machine (docs/anna_lemma_c_2.md): the record fails for the refusals
    and says that no output was compared, not that a wrong one was."""
    from attnsim.verify.check import run_check

    record = run_check("anna.lemma_c_2", {"N": 16, "eps1": 0.5, "s_scale": 4.0, "draws": 3}, None, 0)
    assert record["verdict"] == "fail" and (record["agree"], record["error_bits"]) == (None, None)
    assert record["reasons"][0].startswith("the referee refused a round of every one of 3 draws: no output was "
                                           "compared (mpc_sort round")
    assert not any("not the sorted keys" in r for r in record["reasons"])
    assert record["extra"]["refused_draws"] == 3 and "machine" in record["extra"]["first_refusal"]


def _refusing(draws: set[int]):
    """The checker's draws, with the referee refusing those in ``draws`` (before anything is sorted)."""
    from attnsim.verify.claims import anna_sort

    real = anna_sort._sort_one

    def one(ctx, draw, shape):
        keys, mpc, ledger, plan, refusal = real(ctx, draw, shape)
        return (keys, mpc, ledger, 0, Refused("refused here")) if draw in draws else (keys, mpc, ledger, plan, refusal)

    return mock.patch.object(anna_sort, "_sort_one", one)


SMALL = {"N": 256, "eps1": 0.75, "s_scale": 16.0, "draws": 12}


def test_a_few_refused_draws_pass_and_many_fail_by_the_refusals_interval():
    """The chance of a refusal is decided by its probability: 1 refused draw of 12 is consistent with the target
    of 1/10, 6 of 12 are not; the record reports the one-sided upper bound either way and compares the rest."""
    from attnsim.verify.check import run_check

    with _refusing({0}):
        few = run_check("anna.lemma_c_2", SMALL, None, 0)
    with _refusing(set(range(6))):
        many = run_check("anna.lemma_c_2", SMALL, None, 0)
    assert few["verdict"] == "pass" and few["agree"] is True and few["extra"]["refused_draws"] == 1
    assert few["counts"]["refusal"] == pytest.approx(rate_upper(1, 12))
    assert many["verdict"] == "fail" and many["agree"] is True
    assert [r for r in many["reasons"] if r.startswith("refusal: the referee refused 6 of 12 draws")]
    assert many["counts"]["refusal"] == pytest.approx(rate_upper(6, 12))


def test_the_grids_draws_are_the_fewest_that_show_the_refusal_target():
    """A grid point runs the fewest draws whose interval, with none refused, lies at or below the target."""
    from attnsim.verify.refusals import REFUSAL_DRAWS
    from attnsim.verify.registry import all_checkers

    target = float(as_number(evaluate("refusal_target", get_claim("anna.lemma_c_2").definitions, {})))
    assert REFUSAL_DRAWS == fewest_trials_to_establish(1 - target)
    chk = all_checkers()["anna.lemma_c_2"]
    assert {p.name: p.default for p in chk.params}["draws"] == REFUSAL_DRAWS
    assert all(pt.get("draws", REFUSAL_DRAWS) == REFUSAL_DRAWS for quick in (True, False) for pt in chk.grid(quick))


def test_a_sort_whose_placements_favour_half_of_each_range_is_caught_by_its_chance_of_refusal():
    """The twin overloads machines on most draws but not all: the draws that run still sort exactly, so only the
    refusals' interval, above the target, catches it."""
    from attnsim.verify.check import run_check
    from attnsim.verify.twins import all_twins

    (twin,) = [t for t in all_twins() if (t.claim, t.name) == ("anna.lemma_c_2", "placement_skewed_to_half")]
    with twin.breaks():
        record = run_check("anna.lemma_c_2", dict(twin.params), None, 0)
    assert record["verdict"] == "fail" and record["agree"] is True
    assert 0 < record["extra"]["refused_draws"] < record["extra"]["draws"]
    assert [r.split(":")[0] for r in record["reasons"]] == ["refusal"]
