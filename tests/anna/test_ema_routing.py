"""EMA layers deliver MPC messages exactly (anna.thm_b_2, Lemma B.3 with a block encoding)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.sim.anna.ema_routing import EMARouter
from attnsim.sim.anna.khop import khop_mpc
from attnsim.sim.anna.mpc import direct_delivery
from attnsim.sim.anna.tasks import hop_labels, hop_string
from attnsim.sim.anna.transformer import size_from_ledger
from attnsim.sim.ledger import Ledger

word = st.one_of(st.integers(-10**9, 10**9), st.sampled_from(["item", "tok", "x"]))
message = st.tuples(st.integers(0, 3), st.lists(word, min_size=1, max_size=4).map(tuple))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(message, max_size=5), min_size=4, max_size=4))
def test_router_inboxes_equal_direct_delivery(outboxes):
    led = Ledger()
    assert EMARouter(ledger=led)(outboxes, 0) == direct_delivery(outboxes, 0)
    size = size_from_ledger(led)
    assert size["heads"] == max(len(o) for o in outboxes) and size["layers"] == (1 if size["heads"] else 0)


def test_khop_through_ema_layers_one_layer_per_round():
    s = hop_string(np.random.default_rng(3), 30)
    led = Ledger()
    run = khop_mpc(s, 3, memory=256, ledger=led, deliver=EMARouter(ledger=led))
    assert np.array_equal(run.labels, hop_labels(s, 3))
    assert size_from_ledger(Ledger([e for e in led.entries if e.tag.startswith("route")]))["layers"] == run.rounds
