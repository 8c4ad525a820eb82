"""The ANNA and TinT strategies draw what they say, and drive the papers' own code."""

from __future__ import annotations

from hypothesis import given

from attnsim.sim.anna.mpc_protocols import sort_protocol
from attnsim.sim.tint.configs import TINY_TINT, validate
from attnsim.verify.strategies import aux_inputs, khop_inputs, mpc_inputs


@given(khop_inputs())
def test_khop_strings_have_their_edge_cases(h):
    assert 1 <= h.k and ((h.s >= 0) & (h.s < h.alphabet)).all()
    if h.kind == "sink":  # every letter once: no hop finds an earlier occurrence
        assert len(set(h.s.tolist())) == len(h.s)
    if h.kind == "one_letter":
        assert len(set(h.s.tolist())) == 1


@given(mpc_inputs(max_N=16))
def test_the_mpc_sort_sorts_every_drawn_input(m):
    run = sort_protocol(m.x, machines=m.machines)
    out = {i: words[0] for machine in run.outputs.values() for i, words in machine.items()}
    assert [out[i] for i in range(len(m.x))] == sorted(m.x.tolist())


@given(aux_inputs())
def test_aux_models_are_valid_and_inputs_fit(a):
    # every reason about the model itself is absent (K and H_sim are the TinT config's fit to this width)
    assert [r for r in validate(a.cfg, TINY_TINT) if r[0] not in ("K", "H_sim")] == []
    assert 2 <= len(a.ids) <= a.cfg.positions and 1 <= a.n_train <= len(a.ids)
    assert ((a.ids >= 0) & (a.ids < a.cfg.vocab)).all()
