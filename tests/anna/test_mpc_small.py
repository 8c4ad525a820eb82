"""The small-memory MPC protocol (anna.thm_4_2, anna.thm_c_1): scan trees, the radix sort, L layers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.sim.anna.anna_stack import clustered_stack, exact_match_stack, run_stack
from attnsim.sim.anna.attention import ema
from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.lsh import CrossPolytopeLSH, HyperplaneLSH, PStableLSH, draw_tables
from attnsim.sim.anna.mpc import MPC
from attnsim.sim.anna.mpc_radix import radix_passes, radix_sort
from attnsim.sim.anna.mpc_small import anna_stack_mpc
from attnsim.sim.anna.mpc_tree import Monoid, TreeLayout, levels, tree_scan
from attnsim.sim.ledger import Ledger

SUM = Monoid((0,), lambda a, b: (a[0] + b[0],))


@pytest.mark.parametrize("P, fan", [(1, 2), (2, 2), (7, 2), (9, 3), (30, 4), (64, 4)])
def test_tree_scan_gives_every_leaf_its_left_and_right_sums(P, fan):
    mpc = MPC(P + 1, 64)
    mpc.load({m: [("x", m * m + 1)] for m in range(1, P + 1)})
    got = {}

    def keep(m, mem, pre, suf):
        got[m] = (pre[0], suf[0])
        return mem

    tree_scan(mpc, range(1, P + 1), fan, SUM, lambda m, mem: (sum(r[1] for r in mem),), keep, label="t")
    vals = [m * m + 1 for m in range(1, P + 1)]
    assert got == {m: (sum(vals[:m - 1]), sum(vals[m:])) for m in range(1, P + 1)}
    assert mpc.rounds == 2 * levels(P, fan) == 2 * TreeLayout(P, fan).depth
    assert all(mem == [("x", m * m + 1)] for m, mem in enumerate(mpc.memory) if m)


def test_tree_hosts_stay_inside_their_ranges():
    lay = TreeLayout(50, 3)
    for h in range(1, lay.depth + 1):
        for j in range(lay.width(h)):
            assert j * 3**h <= lay.host(h, j) < min((j + 1) * 3**h, 50)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=120), st.integers(2, 7), st.integers(1, 9))
def test_radix_sort_sorts_with_exact_loads(keys, base, per):
    P = -(-len(keys) // per)
    mpc = MPC(P, per * 3 + 2 * base * 4 * (levels(P, base) + 2) + 16)
    mpc.load({m: [("k", k) for k in keys[m * per:(m + 1) * per]] for m in range(P)})
    passes = radix_sort(mpc, range(P), key=lambda r: r[1], key_bound=10**6 + 1, base=base, fan=base, per_machine=per)
    flat = [r[1] for mem in mpc.memory for r in mem]
    assert flat == sorted(keys)
    assert [len(mem) for mem in mpc.memory[:-1]] == [per] * (P - 1)
    assert passes == radix_passes(10**6 + 1, base) and mpc.rounds == passes * (2 * levels(P, base) + 1)


def _stack(N, L, family, rng, ell=5, z=6, r=0.2, heads=1):
    tables = [draw_tables(family, heads * ell, z, rng) for _ in range(L)]
    return clustered_stack(rng, N, family.dim, r, tables, heads=heads)


@pytest.mark.parametrize("N, L, family, s", [
    (16, 1, HyperplaneLSH(4), 140), (24, 2, HyperplaneLSH(3), 200), (20, 3, CrossPolytopeLSH(4), 300),
    (40, 2, HyperplaneLSH(4), 180),
])
def test_every_layer_equals_algorithm_1_within_memory(N, L, family, s):
    rng = np.random.default_rng(N + L)
    stack, states = _stack(N, L, family, rng)
    want_states, want = run_stack(stack, states)
    led = Ledger()
    run = anna_stack_mpc(stack, states, memory=s, ledger=led, sort="radix")
    assert all(a.same_as(b) for a, b in zip(run.layers, want)) and run.states == want_states
    p = run.plan
    assert led.total("mpc_machine") == p.token_machines + p.sort_machines
    per_layer = 2 * (p.fanout_depth + 1) + p.passes * (2 * p.tree_depth + 1) + 2 * p.tree_depth
    assert led.rounds("mpc_round") == L * per_layer == L * p.layer_rounds
    assert max(e.amount for e in led.entries if e.kind == "mpc_load") <= s
    assert sum(int(w.counts.sum()) for w in want) > 0


@pytest.mark.parametrize("heads, sort", [(1, "splitter"), (2, "splitter"), (3, "radix")])
def test_every_head_equals_algorithm_1_with_either_sort(heads, sort):
    rng = np.random.default_rng(heads)
    stack, states = _stack(24, 2, HyperplaneLSH(3), rng, heads=heads)
    want_states, want = run_stack(stack, states)
    led = Ledger()
    run = anna_stack_mpc(stack, states, memory=1400, ledger=led, sort=sort)
    assert len(run.layers) == len(want) == 2 * heads
    assert all(a.same_as(b) for a, b in zip(run.layers, want)) and run.states == want_states
    assert led.rounds("mpc_round") == 2 * run.plan.layer_rounds
    assert led.total("mpc_machine") == run.plan.token_machines + run.plan.sort_machines


@pytest.mark.parametrize("N, L, s", [(32, 1, 140), (64, 3, 200)])
def test_exact_match_layers_equal_sorted_ema(N, L, s):
    stack, states = exact_match_stack(np.random.default_rng(N), N, 2, 8, L)
    want_states, want = run_stack(stack, states, attend=ema)
    run = anna_stack_mpc(stack, states, memory=s, sort="radix")
    assert all(a.same_as(b) for a, b in zip(run.layers, want)) and run.states == want_states
    assert run.plan.fanout_depth == 0 and sum(int(w.counts.sum()) for w in want) > 0


@pytest.mark.parametrize("s, why", [(30, "below 36 words"), (100, "scan-tree node")])
def test_too_small_memory_is_refused_naming_s(s, why):
    stack, states = _stack(16, 1, HyperplaneLSH(3), np.random.default_rng(0))
    with pytest.raises(AnnaInputError, match=f"^s:.*{why}"):
        anna_stack_mpc(stack, states, memory=s, sort="radix")


def test_unbounded_pstable_codes_are_refused_naming_hashes():
    stack, states = _stack(16, 1, PStableLSH(3), np.random.default_rng(0))
    with pytest.raises(AnnaInputError, match="^hashes:"):
        anna_stack_mpc(stack, states, memory=300)


def test_cross_polytope_codes_are_in_range_and_identical_points_agree():
    rng = np.random.default_rng(3)
    g = CrossPolytopeLSH(5).draw(rng, 4)
    x = rng.standard_normal((30, 5))
    codes = g.codes(np.vstack([x, x]))
    assert codes.shape == (60, 4) and codes.min() >= 0 and codes.max() < 10 and g.alphabet == 10
    assert np.array_equal(codes[:30], codes[30:])
    assert g.packed(x) == [sum(int(c) * 10**t for t, c in enumerate(row)) for row in codes[:30]]
    assert math.isclose(float(np.mean(g.codes(-x) == (codes[:30] + 5) % 10)), 1.0)


@pytest.mark.parametrize("sort", ["radix", "splitter"])
def test_many_heads_fit_the_memory_the_plan_accepts(sort):
    # A query's answer goes up its token's fan-in tree in its own head's mv + 1 words. Padded to all H heads'
    # H (mv + 1), a machine of query items held 2805 words here after the run sums, over s = 2600, although the
    # plan accepted the memory and the radix sort's loads are exact.
    rng = np.random.default_rng(16)
    stack, states = _stack(16, 1, HyperplaneLSH(3), rng, heads=16)
    want_states, want = run_stack(stack, states)
    led = Ledger()
    run = anna_stack_mpc(stack, states, memory=2600, ledger=led, sort=sort)
    assert all(a.same_as(b) for a, b in zip(run.layers, want)) and run.states == want_states
    assert led.rounds("mpc_round") == run.plan.layer_rounds
    assert max(e.amount for e in led.entries if e.kind == "mpc_load") <= 2600
