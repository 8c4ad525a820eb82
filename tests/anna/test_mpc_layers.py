"""MPC simulating an ANNA layer (anna.thm_4_2) and low-rank attention by tree sums (anna.lemma_d_2)."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.sim.anna.attention import anna_tables
from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.lsh import HyperplaneLSH, draw_tables
from attnsim.sim.anna.mpc_anna import anna_layer_mpc
from attnsim.sim.anna.mpc_lowrank import lowrank_mpc
from attnsim.sim.ledger import Ledger


@pytest.mark.parametrize("N, ell, z, s", [(8, 2, 2, 600), (40, 6, 4, 3000), (64, 10, 5, 8000)])
def test_mpc_layer_equals_algorithm_1(N, ell, z, s):
    rng = np.random.default_rng(N)
    q = rng.standard_normal((N, 3))
    k = q + 0.1 * rng.standard_normal((N, 3))
    v = rng.integers(-99, 100, size=(N, 2))
    tables = draw_tables(HyperplaneLSH(3), ell, z, rng)
    led = Ledger()
    run = anna_layer_mpc(q, k, v, tables, memory=s, ledger=led)
    assert run.retrieval.same_as(anna_tables(q, k, v, tables))
    assert run.rounds == 10 == led.rounds("mpc_round")
    assert run.machines == led.total("mpc_machine") <= run.token_machines + run.sort_machines


def test_mpc_layer_refuses_too_small_memory():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((10, 2))
    tables = draw_tables(HyperplaneLSH(2), 4, 3, rng)
    with pytest.raises(AnnaInputError, match="^s:"):
        anna_layer_mpc(q, q, np.ones((10, 1)), tables, memory=20)


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
