"""Lemma B.13's transformer (anna.lemma_b_13): one layer of k heads a round, Lemma B.4's code at alpha = k."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.mpc_capacity import run_capacity
from attnsim.sim.anna.mpc_scan import scan_memory, scan_protocol
from attnsim.sim.anna.transformer import EMA, size_from_ledger
from attnsim.sim.ledger import Ledger
from attnsim.verify.teeth import run_twin
from attnsim.verify.twins import all_twins

TWINS = [t for t in all_twins() if t.claim == "anna.lemma_b_13" and t.kind != "growth"]


def _scan(N: int, P: int, fan: int):
    x = np.random.default_rng(N + P + fan).integers(-99, 99, size=N)
    return x, partial(scan_protocol, x, machines=P, fan=fan, split=True)


@pytest.mark.parametrize("N,P,fan", [(64, 16, 3), (96, 12, 4)])
def test_bundles_of_k_destinations_route_the_scan_exactly(N, P, fan):
    x, protocol = _scan(N, P, fan)
    direct = protocol(ledger=Ledger())
    assert direct.memory == scan_memory(N // P, fan, split=True)
    ledger = Ledger()
    run, contacts = run_capacity(lambda **hooks: protocol(ledger=Ledger(), **hooks), inputs=N, machines=P,
                                 block=N // P, memory=direct.memory, capacity=fan, mechanism=EMA(), ledger=ledger)
    assert run.outputs == direct.vector() == [(int(v),) for v in np.cumsum(x)]
    size = size_from_ledger(ledger)
    assert size["layers"] == direct.rounds + 2 and size["heads"] == fan == contacts
    assert run.max_alpha >= 2 and run.code.alpha == fan  # the code's averaging is used


@pytest.mark.parametrize("N,P,fan", [(66, 2, 2), (130, 2, 2)])
def test_the_widest_layer_is_the_routing_code_even_with_two_machines(N, P, fan):
    # the scan once placed a machine's whole block as one input record: the input layer then took b slots of b + 2
    # numbers, O(s^2), wider than the code (1155 > 1140 at N = 66), which the fuzzer found
    _, protocol = _scan(N, P, fan)
    direct = protocol(ledger=Ledger())
    ledger = Ledger()
    run, _ = run_capacity(lambda **hooks: protocol(ledger=Ledger(), **hooks), inputs=N, machines=P, block=N // P,
                          memory=direct.memory, capacity=fan, mechanism=EMA(), ledger=ledger)
    size = size_from_ledger(ledger)
    assert max(size["qk_dim"], size["v_dim"]) == run.code.width


def test_a_protocol_past_the_capacity_is_refused():
    _, protocol = _scan(64, 16, 4)
    with pytest.raises(AnnaInputError, match="^k:"):
        run_capacity(lambda **hooks: protocol(ledger=Ledger(), **hooks), inputs=64, machines=16, block=4,
                     memory=scan_memory(4, 4, split=True), capacity=3, mechanism=EMA(), ledger=Ledger())


@pytest.mark.parametrize("twin", TWINS, ids=[t.name for t in TWINS])
def test_twin_is_caught(twin):
    result = run_twin(twin)
    assert result.bites, result.reason
