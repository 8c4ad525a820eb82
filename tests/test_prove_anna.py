"""``attnsim prove anna``: the relay's plan and Lemma B.4's code are proved on the functions that run, and
planted bugs give counterexamples whose replay fails the claim's exact check."""

from __future__ import annotations

import pytest

from attnsim.verify.prove import anna, beyond
from attnsim.verify.prove.anna_twins import TWINS

FAST = ("lemma.division", "arrival.start", "arrival.move", "arrival.end", "deal.share", "load.move", "capacity",
        "round trip", "isolation", "width", "unit tag")


@pytest.mark.parametrize("name", FAST)
def test_obligation_is_proved_by_z3(name: str) -> None:
    ob = next(o for o in anna.obligations() if o.name == name)
    row = beyond.prove_one(ob, second=False)
    assert row.status == "proved", row


def test_second_solver_confirms_the_arrival_step() -> None:
    ob = next(o for o in anna.obligations() if o.name == "arrival.move")
    assert beyond.prove_one(ob).cvc5 == "unsat"


@pytest.mark.parametrize("name,obligation", [("move_digit_off_by_one", "arrival.move"),
                                             ("rows_one_short", "isolation"),
                                             ("validity_ignores_squares", "collision")])
def test_twin_gives_a_counterexample(name: str, obligation: str) -> None:
    t = next(t for t in TWINS if t.name == name)
    ob = next(o for o in anna.obligations() if o.name == obligation)
    with t.breaks():
        row = beyond.prove_one(ob, second=False)
    assert row.status == "counterexample" and row.counterexample


def test_code_twin_replay_fails_the_check() -> None:
    t = next(t for t in TWINS if t.name == "rows_one_short")
    result = beyond.run_twin(t)
    assert result.caught, result.as_dict()


def test_capacity_twin_is_found_but_not_called_caught() -> None:
    t = next(t for t in TWINS if t.name == "capacity_plus_one")
    ob = next(o for o in anna.obligations() if o.name == "capacity")
    with t.breaks():
        row = beyond.prove_one(ob, second=False)
    assert row.status == "counterexample" and not t.observable
