"""Low-rank attention by tree sums on the MPC machine (anna.lemma_d_2)."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.mpc_lowrank import lowrank_mpc
from attnsim.sim.ledger import Ledger


@pytest.mark.parametrize("N, s", [(1, 50), (37, 40), (500, 120), (2000, 400)])
def test_lowrank_tree_sum_is_exact_on_at_most_N_machines(N, s):
    rng = np.random.default_rng(N)
    Q, K, V = rng.integers(-5, 6, (N, 2)), rng.integers(-5, 6, (N, 2)), rng.integers(-5, 6, (N, 3))
    led = Ledger()
    run = lowrank_mpc(Q, K, V, memory=s, ledger=led)
    assert np.array_equal(run.output, Q @ (K.T @ V))
    assert run.machines <= N and led.total("mpc_machine") == run.machines
    depth = 0
    while run.fan_in ** depth < run.machines:
        depth += 1
    assert run.rounds == 2 * depth


def test_lowrank_refuses_tiny_memory():
    with pytest.raises(AnnaInputError, match="^s:"):
        lowrank_mpc(np.ones((4, 3)), np.ones((4, 3)), np.ones((4, 3)), memory=10)
