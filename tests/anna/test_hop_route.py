"""Induction heads and k-hop by the paper's route (anna.thm_5_4, anna.thm_5_6): the MPC protocol at s < N, directly
and inside Thm 4.1's transformer, exact; a broken twin is caught."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.sim.anna.hop_route import hop_route_protocol, radix_fan
from attnsim.sim.anna.tasks import hop_labels, hop_string
from attnsim.verify.check import run_check
from attnsim.verify.registry import UsageError
from attnsim.verify.teeth import run_twin
from attnsim.verify.twins import all_twins


@pytest.mark.parametrize("N, s, k", [(64, 32, 1), (128, 64, 6)])
def test_the_protocol_at_small_memory_equals_the_direct_answer(N, s, k):
    text = hop_string(np.random.default_rng(N), N, 5)
    run = hop_route_protocol(text, hops=k, memory=s)
    assert s < N and run.machines == N // (s // 16) and radix_fan(s) == 2
    assert run.vector() == [(int(v),) for v in hop_labels(text, k)]


def test_thm_5_6_by_the_route_passes_with_its_formulas():
    rec = run_check("anna.thm_5_6", {"N": 64, "eps": 0.84, "k": 3, "alphabet": 3}, None, 0)
    assert rec["verdict"] == "pass", rec["reasons"]
    assert rec["extra"]["s"] == 32 and rec["counts"]["layers"] == rec["extra"]["R"] * rec["extra"]["D"] ** 2 + 2


def test_memory_at_or_above_n_is_a_usage_error():
    with pytest.raises(UsageError, match="^--eps"):
        run_check("anna.thm_5_4", {"N": 64, "eps": 0.99}, None, 0)


def test_the_short_sort_twin_is_caught():
    twin = next(t for t in all_twins() if t.claim == "anna.thm_5_6" and t.name == "sort_pass_short")
    assert run_twin(twin).caught
