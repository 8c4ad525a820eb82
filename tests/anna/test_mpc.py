"""The referee MPC machine refuses over-budget rounds; the sample sort sorts (Lemma C.2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.mpc import MPC, MPCLimitError
from attnsim.sim.anna.mpc_sort import sample_sort
from attnsim.sim.errors import AttnsimError
from attnsim.sim.ledger import Ledger


def test_a_round_within_budget_is_delivered_and_counted():
    led = Ledger()
    mpc = MPC(3, 4, ledger=led)
    mpc.load({0: [(1, 2)], 1: [(3,)]})
    mpc.round(lambda m, mem: [((m + 1) % 3, r) for r in mem], label="shift")
    assert mpc.memory == [[], [(1, 2)], [(3,)]]
    assert led.rounds("mpc_round") == 1 and led.total("mpc_message") == 3 and led.total("mpc_machine") == 3


def test_a_local_step_on_a_range_computes_there_only_and_is_held_to_s():
    mpc = MPC(4, 3)
    mpc.load({0: [(1,)], 1: [(2,)], 2: [(3,)], 3: [(4,)]})
    seen: list[int] = []
    mpc.local(lambda m, mem: seen.append(m) or [(r[0] * 10,) for r in mem], machines=range(1, 3))
    assert seen == [1, 2] and mpc.memory == [[(1,)], [(20,)], [(30,)], [(4,)]]
    with pytest.raises(MPCLimitError, match="local step: machine 2 would hold 4 words > s = 3"):
        mpc.local(lambda m, mem: [(1, 2, 3, 4)], machines=range(2, 3))
    with pytest.raises(MPCLimitError, match="local step on machine 4, which does not exist"):
        mpc.local(lambda m, mem: mem, machines=range(3, 5))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**16))
def test_a_kept_memory_counts_as_it_did_when_delivered(seed):
    """Keeping the memory as delivered (reusing its counted words) spends what keeping a copy of it (counted
    afresh) spends: the same memories and ledger, round after round, with local steps in between."""
    rng = np.random.default_rng(seed)
    P, s = 4, 12
    start = {m: [tuple(int(x) for x in rng.integers(0, 9, size=int(rng.integers(1, 4))))] for m in range(P)}
    runs = []
    for copy in (False, True):
        led = Ledger()
        mpc = MPC(P, s, ledger=led)
        mpc.load(start)
        for t in range(6):
            mpc.round(lambda m, mem, t=t: [((m + t) % P, mem[-1][:1])] if mem and m == t % P else [],
                      keep=(lambda m, mem: list(mem)) if copy else (lambda m, mem: mem), label=f"r{t}")
            if t == 2:
                mpc.local(lambda m, mem: [list(r) for r in mem])  # lists, not tuples: the next keep normalises
        runs.append((mpc.memory, [(e.kind, e.tag, e.round, e.amount) for e in led.entries]))
    assert runs[0] == runs[1]


def test_rounds_thaw_the_heap_they_froze_and_keep_a_callers_freeze():
    import gc

    mpc = MPC(2, 4)
    mpc.load({0: [(1, 2)]})
    mpc.round(lambda m, mem: [(1 - m, r) for r in mem])
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        mpc.local(lambda m, mem: mem)
        assert gc.get_freeze_count() > 0  # the caller's freeze is still in force
    finally:
        gc.unfreeze()


def test_refuses_a_machine_that_sends_too_much():
    mpc = MPC(2, 4)
    mpc.load({0: [(1, 2, 3, 4)]})
    with pytest.raises(MPCLimitError, match=r"round 0 \(dup\): machine 0 sends 8 words > s = 4"):
        mpc.round(lambda m, mem: [(1, r) for r in mem] * 2, label="dup")
    assert mpc.memory[0] == [(1, 2, 3, 4)] and mpc.rounds == 0  # nothing delivered


def test_refuses_a_machine_that_receives_too_much():
    mpc = MPC(3, 3)
    mpc.load({0: [(1, 2)], 1: [(3, 4)]})
    with pytest.raises(MPCLimitError, match="machine 2 receives 4 words > s = 3"):
        mpc.round(lambda m, mem: [(2, r) for r in mem])


def _kept_round(keep: bool, deliver) -> tuple[list, list]:
    led = Ledger()
    mpc = MPC(3, 6, ledger=led, deliver=deliver)
    mpc.load({0: [(1, 2), [3]], 1: [(4,)], 2: [(5, 6, 7)]})
    mine = lambda m, mem: mem[:1]  # noqa: E731
    moves = lambda m, mem: [((m + 1) % 3, r) for r in mem[1:]]  # noqa: E731
    if keep:
        mpc.round(moves, label="k", keep=mine)
    else:
        mpc.round(lambda m, mem: [(m, r) for r in mine(m, mem)] + moves(m, mem), label="k")
    return mpc.memory, [(e.kind, e.amount) for e in led.entries]


@pytest.mark.parametrize("deliver", [None, lambda outboxes, r: MPC(3, 6).deliver(outboxes, r)])
def test_records_a_machine_keeps_are_messages_to_itself_sent_first(deliver):
    assert _kept_round(True, deliver) == _kept_round(False, deliver)
    mpc = MPC(2, 4)
    mpc.load({0: [(1, 2, 3)]})
    with pytest.raises(MPCLimitError, match="machine 0 sends 5 words > s = 4"):  # kept words count as sent
        mpc.round(lambda m, mem: [(1, (9, 9))], keep=lambda m, mem: mem)


def test_refuses_unknown_destinations_and_oversized_loads():
    mpc = MPC(2, 3)
    with pytest.raises(MPCLimitError, match="load: machine 0 would hold 4 words"):
        mpc.load({0: [(1, 2, 3, 4)]})
    mpc.load({0: [(1,)]})
    with pytest.raises(MPCLimitError, match="does not exist"):
        mpc.round(lambda m, mem: [(5, r) for r in mem])
    assert issubclass(MPCLimitError, AttnsimError)


@pytest.mark.parametrize("machines, memory, param", [(0, 4, "machines"), (2, 0, "s")])
def test_bad_machine_parameters(machines, memory, param):
    with pytest.raises(AnnaInputError, match=f"^{param}"):
        MPC(machines, memory)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=120, unique=True))
def test_sample_sort_sorts_into_blocks(keys):
    block, s = 8, 1000  # P <= 15 machines: the root holds P(P-1) samples of 3 words
    P = -(-len(keys) // block)
    mpc = MPC(P, s)
    mpc.load({m: [("x", x) for x in keys[m * block:(m + 1) * block]] for m in range(P)})
    sample_sort(mpc, range(P), key=lambda r: (r[1],), block=block, record_words=2, key_words=1)
    assert [r[1] for mem in mpc.memory for r in mem] == sorted(keys)
    assert all(len(mem) == block for mem in mpc.memory[:-1])
    assert mpc.rounds == 6


def test_sample_sort_refuses_too_little_memory_up_front():
    mpc = MPC(20, 40)
    mpc.load({m: [("x", int(x))] for m, x in enumerate(np.arange(20))})
    with pytest.raises(AnnaInputError, match="^s: local memory 40 is too small"):
        sample_sort(mpc, range(20), key=lambda r: (r[1],), block=1, record_words=2, key_words=1)
