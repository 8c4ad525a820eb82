"""tint.size's three parameter counts and the stream's width split, on the tiny network."""

from __future__ import annotations

import numpy as np

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.cases import CASES
from attnsim.sim.tint.network import build_tint, forward
from attnsim.sim.tint.network_effective import effective_marks
from attnsim.sim.tint.network_io import input_embedding
from attnsim.sim.tint.network_size import arrays, count, width_split
from attnsim.verify.tint_size import three_counts

F64 = get_arith("float64")
C = CASES["tiny-relu"]


def _net():
    w = am.init_weights(C.aux, F64, C.seed)
    net = build_tint(C.aux, C.tint, F64, wte=w["wte"], wpe=w["wpe"])
    return net, input_embedding(net, w, C.tokens, C.n_train)


def test_three_counts_are_ordered_and_the_prefix_is_read_off_the_stream() -> None:
    net, _ = _net()
    t = three_counts(net, count(net))
    assert t["effective"] < t["distinct_arrays"] < t["as_instantiated"]
    assert t["prefix_from_stream"] == t["prefix_counted"] == net.geo.K * net.prefix_width


def test_width_split_adds_up_to_the_stream() -> None:
    net, _ = _net()
    w = width_split(net)
    parts = ("prefix_area", "positions_and_prefix_mask", "targets_and_loss_mask", "logits", "hidden_states",
             "carried_activations", "gradients")
    assert sum(w[p] for p in parts) == w["stream_width"] == net.width
    assert w["prefix_area"] == w["prefix_sets"] * w["D_sim"]


def test_an_entry_the_structure_calls_ineffective_changes_no_output_and_effective_ones_do() -> None:
    """Soundness of the structural count on a sample (both kinds of entry, perturbed by 1)."""
    net, x0 = _net()
    base = forward(net, x0)
    marks = effective_marks(net)
    weights = {id(a): a for lay in net.module_layers() for a in arrays(lay.op) if a.dtype != object}
    rng = np.random.default_rng(1)
    changed = {True: 0, False: 0}
    tried = {True: 0, False: 0}
    ids = sorted(weights)
    while min(tried.values()) < 6:
        a = weights[ids[rng.integers(len(ids))]]
        mask = marks.get(id(a), (a, np.zeros(a.shape, dtype=bool)))[1].reshape(-1)
        want = bool(rng.integers(2))
        idx = np.flatnonzero(mask == want)
        if not len(idx) or tried[want] >= 6:
            continue
        i = idx[rng.integers(len(idx))]
        old = a.flat[i]
        a.flat[i] = old + 1.0
        try:
            changed[want] += bool(np.max(np.abs(forward(net, x0) - base)) > 0)
        finally:
            a.flat[i] = old
        tried[want] += 1
    assert changed[False] == 0
    assert changed[True] >= 3


def test_structure_and_perturbation_agree_entry_by_entry_on_the_small_modules() -> None:
    """Every module object of the tiny network with fewer than 3,000 entries (layer norms, activations, the
    softmax attention forward and backward), each entry changed by one alone: no entry the structure calls
    ineffective changes an output, and each one it calls effective does (the linear modules, whose residue is
    explained in docs/tint_network.md, run in ``python -m attnsim.verify.tint_effective``)."""
    from attnsim.verify.tint_effective import compare, network_and_windows, perturbation_marks

    net, uses, ctx = network_and_windows(C, F64, n_train=4)
    structure = effective_marks(net)
    small = {id(lay.op): lay.tag for lay, _ in uses if sum(a.size for a in arrays(lay.op)) < 3000}
    assert len(small) >= 5
    # ln_f's backward (tag Grad) reads the loss gradient, zero on the test rows and the last row for every input
    # (the loss mask), which the structure does not know: there it may count more, never less
    grad = compare(structure, perturbation_marks(net, uses, ctx, {k for k, t in small.items() if t == "Grad"}))
    rest = compare(structure, perturbation_marks(net, uses, ctx, {k for k, t in small.items() if t != "Grad"}))
    assert grad["perturbation_only"] == rest["perturbation_only"] == 0 and rest["entries"] > 5000
    assert rest["structure_only"] == 0, rest
