"""A refused draw of the randomized sort is decided by its probability, in every check that runs the sort once.

The checks of Thm 4.2, Thm C.1, the k-hop protocol and Thm 5.4 / 5.6 run our splitter sort on one draw of its
random choices. When the referee refuses that draw they run a batch of fresh draws on the same input and fail only
when the batch's refusals lie above the target (or every draw of it is refused); a sort with exact loads (radix,
letter) fails on its first refusal.
"""

from __future__ import annotations

from unittest import mock

import pytest

from attnsim.sim.anna.mpc import MPCLimitError, MPCLoadError
from attnsim.verify.check import run_check
from attnsim.verify.refusals import (
    REFUSAL_DRAWS,
    Refusals,
    Refused,
    draw_seed,
    fewest_refusals_above,
    redraw,
    refusal_target,
    runs_deciding_refusals,
)
from attnsim.verify.stats import interval_above


def test_the_fewest_refusals_above_the_target_is_the_boundary_of_the_interval():
    """k refusals of 36 lie above 1/10 from 8 on, and 7 do not: an off-by-one either way is caught."""
    k = fewest_refusals_above(REFUSAL_DRAWS, refusal_target())
    assert interval_above(k, REFUSAL_DRAWS, refusal_target()) is not None
    assert interval_above(k - 1, REFUSAL_DRAWS, refusal_target()) is None
    assert fewest_refusals_above(1, refusal_target()) == 2  # one draw never shows a refusal rate above 1/10


def test_a_batch_stops_once_its_refusals_lie_above_the_target():
    calls: list[int] = []

    def refuse(t: int) -> Refused:
        calls.append(t)
        return Refused(f"draw {t}")

    got = redraw(refuse, REFUSAL_DRAWS, "draw 0")
    enough = fewest_refusals_above(REFUSAL_DRAWS, refusal_target())
    assert calls == list(range(1, enough + 1)) and not got.runs
    assert got.refusals.refused == enough and got.refusals.run == enough
    assert got.refusals.above is not None and got.refusals.decision.startswith("above the target (settled after")
    assert got.refusals.reasons()[0].startswith(f"refusal: the referee refused {enough} of the first {enough} of 36")


def test_a_batch_with_no_refusal_stops_once_the_rest_cannot_put_it_above_the_target():
    got = redraw(lambda t: t, REFUSAL_DRAWS, "draw 0")
    enough = fewest_refusals_above(REFUSAL_DRAWS, refusal_target())
    assert got.runs == list(range(1, REFUSAL_DRAWS - enough + 2))  # enough - 1 refusals left could not reach it
    assert got.refusals.above is None and not got.refusals.reasons()
    assert got.refusals.decision.startswith("not above the target (settled after")
    assert got.refusals.upper is None  # a batch stopped early claims no upper bound of its own


def test_a_full_batch_decides_as_the_interval_does():
    assert Refusals(0, 36, 0.1).decision == "shown below the target"
    assert Refusals(3, 36, 0.1).decision.startswith("consistent with the target")
    assert Refusals(8, 36, 0.1).decision == "above the target"
    assert Refusals(12, 12, 0.1).reasons()[0].startswith("the referee refused a round of every one of 12 draws")


def test_draw_seeds_keep_the_records_own_draw_and_give_fresh_ones_after_it():
    seeds = [draw_seed(7, t) for t in range(40)]
    assert seeds[0] == 7 and len(set(seeds)) == 40 and all(s >= 0 for s in seeds)


C_1 = {"N": 64, "layers": 1, "eps1": 0.5, "s_scale": 200.0, "redraws": 3}


def _refusing_stack(first_only: bool):
    """anna_stack_mpc with the referee refusing the record's own draw (``first_only``) or every draw."""
    from attnsim.verify.claims import anna_mpc_small

    real = anna_mpc_small.anna_stack_mpc
    seen: list[int] = []

    def stack(*args, seed, **kwargs):
        seen.append(seed)
        if len(seen) == 1 or not first_only:
            raise MPCLoadError("mpc_small local step: machine 1 would hold 99 words > s = 98")
        return real(*args, seed=seed, **kwargs)

    return mock.patch.object(anna_mpc_small, "anna_stack_mpc", stack), seen


def test_thm_c_1_passes_when_only_its_own_draw_is_refused_and_compares_the_redraws():
    patch, seen = _refusing_stack(first_only=True)
    with patch:
        rec = run_check("anna.thm_c_1", C_1, None, 0)
    assert rec["verdict"] == "pass" and rec["agree"] is True
    assert rec["extra"]["first_draw_refused"].startswith("mpc_small local step")
    assert rec["extra"]["redraws"]["draws_run"] == 1 and len(seen) == 2 and seen[1] != seen[0]


def test_thm_c_1_fails_when_every_redraw_is_refused():
    patch, _ = _refusing_stack(first_only=False)
    with patch:
        rec = run_check("anna.thm_c_1", C_1, None, 0)
    assert rec["verdict"] == "fail" and rec["agree"] is None
    assert any(r.startswith("the referee refused a round of every one of 3 redraws") for r in rec["reasons"])


def test_a_refusal_of_the_radix_sort_fails_at_once():
    patch, seen = _refusing_stack(first_only=True)
    with patch:
        rec = run_check("anna.thm_c_1", {**C_1, "s_scale": 40.0, "sort": "radix"}, None, 0)
    assert rec["verdict"] == "fail" and len(seen) == 1
    assert any("sorted by the radix sort, which draws nothing" in r for r in rec["reasons"])


@pytest.mark.parametrize("first_only", [True, False])
def test_khop_redraws_a_refused_string(first_only: bool):
    from attnsim.verify.claims import anna

    real = anna.khop_mpc
    calls: list[int] = []

    def khop(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1 or not first_only:
            raise MPCLoadError("khop: machine 2 would hold 999 words > s")
        return real(*args, **kwargs)

    with mock.patch.object(anna, "khop_mpc", khop):
        rec = run_check("anna.khop", {"N": 2048, "k": 3, "strings": 2, "redraws": 3}, None, 0)
    if first_only:
        assert rec["verdict"] == "pass" and rec["extra"]["runs_compared"] == 2
        assert list(rec["extra"]["refused_first_draws"]) == ["string 0"]
    else:
        assert rec["verdict"] == "fail" and rec["agree"] is None and len(calls) == 2 * (1 + 3)


def test_thm_5_4_redraws_a_refused_draw_and_compares_every_run():
    """The transformer route's refusal is the protocol's input error naming a machine that receives too much."""
    from attnsim.verify.claims import anna_hop_route
    from attnsim.verify.registry import Measurement

    seeds: list[int] = []

    def fake(ctx, protocol, labels, **kwargs):
        seeds.append(protocol.keywords["seed"])
        if len(seeds) == 1:
            raise MPCLoadError("khop round 3 (sort.walk): machine 4 receives 2000 words > s = 1024")
        return Measurement(evidence="independent", reference="fake", agree=len(seeds) != 3, error_bits=None)

    with mock.patch.object(anna_hop_route, "run_in_transformer", fake):
        m = anna_hop_route._check(_ctx("anna.thm_5_4", {}), 1)
    enough = fewest_refusals_above(REFUSAL_DRAWS, refusal_target())
    assert seeds[0] == 0 and len(seeds) == 1 + REFUSAL_DRAWS - enough + 1  # the batch stops once settled
    assert m.agree is False and any("differ" in r and "on 1 of the 29" in r for r in m.reasons)
    assert m.extra["redraws"]["refusal_decision"].startswith("not above the target")


def _ctx(claim: str, params: dict):
    from attnsim.verify.registry import CheckContext, all_checkers

    chk = all_checkers()[claim]
    full = {p.name: p.default for p in chk.params} | params
    return CheckContext(claim=claim, params=full, numerics="exact", seed=0)


def test_a_refusal_for_a_fault_fails_at_once_and_stops_a_batch():
    """A message to a machine that does not exist is a fault on any draw: no batch excuses it."""
    fault = Refused("round 4: machine 1 sends to machine 55, which does not exist (P = 45)", load=False)
    runs, reasons, account = runs_deciding_refusals(fault, lambda t: t, REFUSAL_DRAWS)
    assert not runs and reasons[0].startswith("the referee refused a round for a fault, not a load")
    calls: list[int] = []

    def later_fault(t: int) -> int | Refused:
        calls.append(t)
        return fault if t == 3 else t

    again = redraw(later_fault, REFUSAL_DRAWS, "draw 0")
    assert calls == [1, 2, 3] and again.fault and again.reasons()[0].startswith("the referee refused a round of a "
                                                                                "redraw for a fault")


def test_the_referee_tells_a_load_from_a_fault():
    from attnsim.sim.anna.mpc import MPC

    mpc = MPC(2, 4)
    mpc.load({0: [(1, 2)], 1: [(3,)]})
    with pytest.raises(MPCLoadError):
        mpc.round(lambda m, mem: [(1, (m, m, m))] * 2)  # machine 1 would receive 12 words > s = 4
    with pytest.raises(MPCLimitError) as bad:
        mpc.round(lambda m, mem: [(5, (m,))])  # no machine 5
    assert not isinstance(bad.value, MPCLoadError)


def test_a_refusal_no_checker_expected_fails_the_record_instead_of_ending_the_check():
    """Lemma D.2's tree sums never meet the referee's limits on valid input; if they did, the construction would
    have broken the MPC model, which is a failing record (exit 1), not bad input (exit 2)."""
    from attnsim.verify.claims import anna

    def broken(*args, **kwargs):
        raise MPCLimitError("mpc round 2 (sum): machine 3 sends to machine 9, which does not exist (P = 8)")

    with mock.patch.object(anna, "lowrank_mpc", broken):
        rec = run_check("anna.lemma_d_2", {"N": 100}, None, 0)
    assert rec["verdict"] == "fail" and rec["agree"] is None
    assert rec["reasons"][0] == ("the referee MPC machine refused a round of the construction: mpc round 2 (sum): "
                                 "machine 3 sends to machine 9, which does not exist (P = 8)")
