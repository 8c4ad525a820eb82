"""Induction heads and k-hop by the paper's route (anna.thm_5_4, anna.thm_5_6): the MPC protocol at s < N, sorted by
Lemma C.2's splitter sort or the stable letter sort, directly and inside Thm 4.1's transformer, exact; its layer
count is the design's formula; broken twins are caught."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.paper_refs import get
from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.hop_route import hop_route_protocol
from attnsim.sim.anna.khop import SORT_TAGS, radix_fan, splitter_sort_rounds
from attnsim.sim.anna.tasks import hop_labels, hop_string
from attnsim.sim.ledger import Ledger
from attnsim.theory.formulas import as_number, evaluate
from attnsim.verify.check import run_check
from attnsim.verify.registry import UsageError
from attnsim.verify.teeth import run_twin
from attnsim.verify.twins import all_twins


@pytest.mark.parametrize("N, s, k", [(64, 32, 1), (128, 64, 6)])
def test_the_protocol_at_small_memory_equals_the_direct_answer(N, s, k):
    text = hop_string(np.random.default_rng(N), N, 5)
    run = hop_route_protocol(text, hops=k, memory=s, sort="letter")
    assert s < N and run.machines == N // (s // 16) and radix_fan(s) == 2
    assert run.vector() == [(int(v),) for v in hop_labels(text, k)]


@pytest.mark.parametrize("letters, k", [(46, 32), (2048, 3)])
def test_the_splitter_sort_route_is_exact_in_its_plans_rounds(letters, k):
    text = hop_string(np.random.default_rng(letters), 2048, letters)
    ledger = Ledger()
    run = hop_route_protocol(text, hops=k, memory=1024, alphabet=letters, ledger=ledger)
    assert run.vector() == [(int(v),) for v in hop_labels(text, k)]
    assert run.rounds == 4 + splitter_sort_rounds(1024, 2048) + k.bit_length() - 1
    assert ledger.rounds("mpc_round", SORT_TAGS) == splitter_sort_rounds(1024, 2048)


@pytest.mark.parametrize("claim", ["anna.thm_5_4", "anna.thm_5_6"])
def test_the_hop_routes_hold_the_sorts_rounds_under_lemma_c_2s_formula_at_their_own_memory(claim):
    """The upper formula takes the run's s and P (measured), not anna.khop's formulas for them; at N = 2048,
    s = 1024 (P = 32) it lies above the splitter sort's plan, and below the plan times 4, so a twin that multiplies
    the sort's rounds by the limit variable's growth is not hidden by a loose formula."""
    c = get(claim)
    assert c.measured == ("s", "P") and "s" not in c.definitions and "P" not in c.definitions
    values = {"s": 1024, "P": 32, "sort_letter": 0, "sigma": 0.5, "N": 2048}
    upper = as_number(evaluate(c.resources["sorting_rounds"].upper, c.definitions, values))
    assert splitter_sort_rounds(1024, 2048) <= upper < 4 * splitter_sort_rounds(1024, 2048)


def test_the_letter_sort_takes_one_pass_per_digit_of_the_letter():
    # N = 64, s = 32: P = 32 machines, f = 2, histogram trees of depth 5; 3 letters take 2 passes of 11 rounds:
    # 4 + 2 * 11 = 26 rounds for 1-hop, where a sort of the key letter * N + position (< 192) takes 8 passes
    text = hop_string(np.random.default_rng(0), 64, 3)
    assert hop_route_protocol(text, hops=1, memory=32, sort="letter").rounds == 26
    assert hop_route_protocol(text, hops=1, memory=32, alphabet=64, sort="letter").rounds == 4 + 6 * 11


def test_a_letter_outside_the_alphabet_is_refused():
    with pytest.raises(AnnaInputError, match="^alphabet"):
        hop_route_protocol(np.array([0, 1, 2, 3] * 16), hops=1, memory=32, alphabet=3)


def test_thm_5_6_by_the_route_passes_with_its_formulas():
    rec = run_check("anna.thm_5_6", {"N": 64, "eps": 0.84, "k": 3, "sigma": 0.25, "sort": "letter"}, None, 0)
    assert rec["verdict"] == "pass", rec["reasons"]
    assert rec["extra"]["s"] == 32 and rec["extra"]["R"] == 4 + 2 * 11 + 1
    assert rec["counts"]["layers"] == rec["predicted"]["layers"] == rec["extra"]["R"] * rec["extra"]["D"] ** 2 + 2
    sorting = rec["bounds"]["sorting_rounds"]
    assert sorting["measured"] == sorting["upper"]["value"] == 2 * 11 and sorting["upper"]["held"]


def test_memory_at_or_above_n_is_a_usage_error():
    with pytest.raises(UsageError, match="^eps: "):
        run_check("anna.thm_5_4", {"N": 64, "eps": 0.99, "sort": "letter"}, None, 0)


@pytest.mark.parametrize("name", ["letter_sort_unstable", "whole_key_passes"])
def test_the_letter_sort_twins_are_caught(name):
    twin = next(t for t in all_twins() if t.claim == "anna.thm_5_6" and t.name == name)
    assert run_twin(twin).caught
