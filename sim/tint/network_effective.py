"""Which module weights can change an output, found from the network's structure (tint.size, effective count).

A weight entry of a linear map (a block-diagonal map BD, a channel mixer MX, a positional projection) can change
an output only if it multiplies an input coordinate that can be non-zero and writes an output coordinate that
something reads. Both are found from the zero pattern of the fixed TinT weights, never from their values and
never by perturbing them, separately for the three kinds of row a window holds (prefix rows, training-token rows,
test-token rows: :data:`~attnsim.sim.tint.network_live.ROWS`), which the routing, the masks and the
position-keyed gates treat apart:

* **live** coordinates per kind of row, forward: what a module layer's routing writes into its window (the
  content registers at [0, w) and the memory registers at the tail on token rows, the prefix slot's non-zero
  columns on prefix rows), pushed through every primitive by its non-zero pattern (an activation or a layer
  norm keeps zero at zero); a gate passes a branch to a kind of row only where its weight at that kind's
  positions is non-zero; an attention head's output on one kind of row reads the kinds of row its mask lets it
  see (:mod:`attnsim.sim.tint.network_live`);
* **needed** coordinates per kind of row, backward: what the layer's routing reads out ([0, D) of the token
  rows; the whole window on the prefix rows for a descent, nothing there otherwise), pulled back the same way; a
  query or key coordinate counts where its head's output is read and the same coordinate of the partner (key
  or query) is live on a kind of row the mask pairs it with.

An entry is marked when it counts for some kind of row; a positional entry (a gate's or a positional projection's
row p) only for the kinds of row whose position can be p (token positions are both training and test positions,
by the split). Upstream of a query or key, needed coordinates drop the partner condition (one changed entry
can make both partners live together). Anything this analysis does not know is counted whole.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnsim.sim.tint.layers import (
    BlockDiag,
    CoordGated,
    Gate,
    Mixer,
    Module,
    Parallel,
    PartialLayerNorm,
    PosProj,
    TinTAttention,
    TinTMLP,
)
from attnsim.sim.tint.modules import diag_matrix, pack
from attnsim.sim.tint.network import Network
from attnsim.sim.tint.network_live import (
    Kinds,
    as_counts,
    forward,
    gate_on,
    heads_live,
    kind_masks,
    nonzero,
    pair_matrix,
    pos_base,
    qkv_live,
    scores_live,
)
from attnsim.sim.tint.network_size import arrays

Marks = dict[Any, tuple[np.ndarray, np.ndarray]]  # id(array) -> (array, effective entries)


def _mark(marks: Marks, a: np.ndarray, mask: np.ndarray) -> None:
    old = marks.get(id(a), (a, np.zeros(a.shape, dtype=bool)))[1]
    marks[id(a)] = (a, old | mask)


def _whole(marks: Marks, obj: Any) -> None:
    """Every entry of ``obj`` (a scalar weight is wrapped in a fresh array: it is kept under its owner's id)."""
    for i, a in enumerate(arrays(obj)):
        if a.dtype == object and a.shape == (1,) and not isinstance(a[0], np.ndarray):
            marks[(id(obj), i)] = (a, np.ones(1, dtype=bool))
        else:
            _mark(marks, a, np.ones(a.shape, dtype=bool))


# ------------------------------------------------------------------------------------------------ backward
def _mixer_bwd(layer: Mixer, live: np.ndarray, need: np.ndarray, marks: Marks) -> np.ndarray:
    c, nc, _ = layer.M.shape
    xs = as_counts(live.reshape(-1, nc, c).transpose(2, 0, 1))                 # (c, n, nc): [u, row, k]
    ns = as_counts(need.reshape(-1, nc, c).transpose(2, 0, 1))                 # (c, n, nc): [u, row, i]
    _mark(marks, layer.M, (xs.transpose(0, 2, 1) @ ns) > 0)            # [u, k, i]: live and read on some row
    _mark(marks, layer.b, need.any(axis=0))
    back = (ns @ as_counts(nonzero(layer.M)).transpose(0, 2, 1)) > 0              # (c, n, nc): [u, row, k]
    return back.transpose(1, 2, 0).reshape(live.shape)


def _bd_bwd(layer: BlockDiag, live: np.ndarray, need: np.ndarray, marks: Marks) -> np.ndarray:
    nb, c, _ = layer.W.shape
    xb = as_counts(live.reshape(-1, nb, c).transpose(1, 0, 2))                 # (nb, n, c): [block, row, a]
    nb_ = as_counts(need.reshape(-1, nb, c).transpose(1, 0, 2))                # (nb, n, c): [block, row, j]
    _mark(marks, layer.W, (xb.transpose(0, 2, 1) @ nb_) > 0)           # [block, a, j]
    _mark(marks, layer.b, need.any(axis=0))
    back = (nb_ @ as_counts(nonzero(layer.W)).transpose(0, 2, 1)) > 0             # (nb, n, c): [block, row, a]
    return back.transpose(1, 0, 2).reshape(live.shape)


def backward(layer: Any, live: np.ndarray, need: np.ndarray, marks: Marks, kinds: Kinds) -> np.ndarray:
    """Mark the entries of ``layer`` that can change a needed output; return the needed input coordinates
    (both per kind of row)."""
    if not need.any():
        return np.zeros_like(live)
    if isinstance(layer, Mixer):
        return _mixer_bwd(layer, live, need, marks)
    if isinstance(layer, BlockDiag):
        return _bd_bwd(layer, live, need, marks)
    if isinstance(layer, TinTAttention):
        return _attention_backward(layer, live, need, marks, kinds)
    if isinstance(layer, TinTMLP):
        mid = forward(layer.first, live, kinds)
        return backward(layer.first, live, backward(layer.second, mid, need, marks, kinds), marks, kinds)
    if isinstance(layer, PartialLayerNorm):
        out = need.copy()
        out[:, :layer.D] = need[:, :layer.D].any(axis=1, keepdims=True)  # the mean and variance read all of [0, D)
        return out
    if isinstance(layer, CoordGated):
        out = backward(layer.inner, live, need, marks, kinds)
        out[:, :layer.D] |= need[:, :layer.D]
        return out
    if isinstance(layer, Module):
        return _module_backward(layer, live, need, marks, kinds)
    if isinstance(layer, Parallel):
        return (backward(layer.branches[0], live, need, marks, kinds)
                | backward(layer.branches[1], live, need, marks, kinds))
    _whole(marks, layer)
    return live.copy()


def _module_backward(mod: Module, live: np.ndarray, need: np.ndarray, marks: Marks, kinds: Kinds) -> np.ndarray:
    lives = [live]
    for sub in mod.layers:
        lives.append(forward(sub, lives[-1], kinds))
    if mod.gate is None:
        n = need
    else:
        old, new = gate_on(mod.gate, kinds)
        n = need & new[:, None]
        _gate_marks(mod.gate, lives[0], lives[-1], need, marks, kinds)
    for sub, lv in zip(reversed(mod.layers), reversed(lives[:-1])):
        n = backward(sub, lv, n, marks, kinds)
    return n if mod.gate is None else n | (need & old[:, None])


def _gate_marks(gate: Gate, live: np.ndarray, f: np.ndarray, need: np.ndarray, marks: Marks, kinds: Kinds) -> None:
    """A gate's weight at position p counts where its term (input or branch) is live and read on a kind of row
    whose position can be p; its offsets where that holds on some kind."""
    for a, off, term in ((gate.a_old, gate.a0, live), (gate.a_new, gate.a1, f)):
        read = (term & need).any(axis=1)                              # (3,)
        mask = (kinds.positions & read[:, None]).any(axis=0)          # (P,)
        _mark(marks, a, mask)
        if read.any():
            marks[(id(gate), id(a))] = (np.array([off], dtype=object), np.ones(1, dtype=bool))


def _attention_backward(att: TinTAttention, live: np.ndarray, need: np.ndarray, marks: Marks,
                        kinds: Kinds) -> np.ndarray:
    """Marks: a query (key) map entry counts on a kind of row where its head's output is read on the kind the term
    lands on and the same coordinate of the key (query) is live on the partner kind; a value map entry where its
    output coordinate is read on a kind from a scored term. Upstream, the needed inputs drop the partner
    condition (a change further up can make partner coordinates live together)."""
    q, k, v = (qkv_live(att, live, name, kinds) for name in "qkv")
    nk, heads, hd = q.shape
    out_live = heads_live(att, q, k, v, kinds).reshape(nk, -1)
    need_cat = backward(att.out, out_live, need, marks, kinds).reshape(nk, heads, hd)
    used = need_cat.any(axis=2)                                          # (n, heads)
    pairs = pair_matrix(att, kinds)
    own = {name: np.zeros((nk, heads, hd), dtype=bool) for name in "qkv"}
    up = {name: np.zeros((nk, heads, hd), dtype=bool) for name in "qkv"}
    t = att.transpose_probs
    for h in range(heads):
        if not used[:, h].any():
            continue
        scored = pairs & scores_live(att, q[:, h], k[:, h])
        own["v"][:, h] = (as_counts(scored).T @ as_counts(need_cat[:, h])) > 0
        m = used[:, h][:, None] & pairs & v[:, h].any(axis=1)[None, :]   # [c, j]: a read term with a live value
        own["q"][:, h] = ((as_counts(m).T if t else as_counts(m)) @ as_counts(k[:, h])) > 0
        own["k"][:, h] = ((as_counts(m) if t else as_counts(m).T) @ as_counts(q[:, h])) > 0
        up["v"][:, h] = (as_counts(pairs).T @ as_counts(need_cat[:, h])) > 0
        rows, cols = (used[:, h] & pairs.any(axis=1)), (used[:, h][:, None] & pairs).any(axis=0)
        up["q"][cols if t else rows, h] = True
        up["k"][rows if t else cols, h] = True
    out = np.zeros_like(live)
    for var, name in enumerate("qkv"):
        mx, bd = att.maps[name]
        mid = forward(mx, live, kinds)
        backward(mx, live, backward(bd, mid, own[name].reshape(nk, -1), marks, kinds), marks, kinds)
        scratch: Marks = {}
        out |= backward(mx, live, backward(bd, mid, up[name].reshape(nk, -1), scratch, kinds), scratch, kinds)
        _positional_marks(att.pos, var, own[name], marks, kinds)
    return out


def _positional_marks(pos: PosProj, var: int, need: np.ndarray, marks: Marks, kinds: Kinds) -> None:
    """POS: row p, column j of ``var`` counts where a switched-on head needs coordinate j on a kind of row whose
    position can be p; the bias column where some kind needs it; a head's switches where it needs any."""
    b = pos.W.shape[1] // 3
    on = nonzero(pos.s[var])                                                 # (heads,)
    cols = (on[None, :, None] & need).any(axis=1)                        # (3, b)
    w_mask = np.zeros(pos.W.shape, dtype=bool)
    # [p, j]: some kind of row at position p needs coordinate j
    w_mask[:, var * b:(var + 1) * b] = (as_counts(kinds.positions).T @ as_counts(cols)) > 0
    c_mask = np.zeros(pos.c.shape, dtype=bool)
    c_mask[var * b:(var + 1) * b] = cols.any(axis=0)
    _mark(marks, pos.W, w_mask)
    _mark(marks, pos.c, c_mask)
    s_mask = np.zeros(pos.s.shape, dtype=bool)
    s_mask[var] = (need & pos_base(pos, var, kinds)[:, None, :]).any(axis=(0, 2))  # a switch scales its base
    _mark(marks, pos.s, s_mask)
    _mark(marks, pos.s0, need.any(axis=(0, 2)))


# -------------------------------------------------------------------------------------------- the network
def _slot_rows(net: Network) -> dict[str, np.ndarray]:
    """Per prefix-set kind: (K, H), the slot's entries that hold an auxiliary weight, prefix row by prefix row."""
    ar, geo, D = net.ar, net.geo, net.aux.D
    ones = lambda *s: ar.array(np.ones(s, dtype=int))  # noqa: E731
    full = nonzero(pack(ar, geo, ones(D, D), ones(D)))
    diag = nonzero(pack(ar, geo, diag_matrix(ar, ones(D)), ones(D)))
    return {kind: (np.zeros((geo.K, geo.H), dtype=bool) if kind.startswith("act") else diag if kind.startswith("ln")
                   else full) for kind in set(net.set_kinds.values())}


def effective_modules(net: Network) -> int:
    """Entries of the network's module weights (each module object once) that can change an output."""
    return int(sum(int(mask.sum()) for _, mask in effective_marks(net).values()))


def effective_marks(net: Network) -> Marks:
    """Per weight array of the network's modules: the entries that can change an output."""
    slots = _slot_rows(net)
    kinds = kind_masks(net)
    marks: Marks = {}
    done: set[tuple] = set()  # a module object with the same live and needed coordinates marks the same entries
    for lay in net.module_layers():
        live, need = window(net, lay, slots)
        key = (id(lay.op), live.tobytes(), need.tobytes())
        if key not in done:
            done.add(key)
            backward(lay.op, live, need, marks, kinds)
    return marks


def window(net: Network, lay: Any, slots: dict[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(live, needed) coordinates of a module layer's window per kind of row, as its routing writes and reads it:
    the prefix slot's non-zero columns on prefix rows, the content and memory registers on token rows; read back
    [0, D) of the token rows, and the whole window of the prefix rows for a layer that writes its slot."""
    H, D, K = net.geo.H, net.aux.D, net.geo.K
    slots = _slot_rows(net) if slots is None else slots
    live = np.zeros((K + 2, H), dtype=bool)
    if lay.prefix is not None:
        live[:K] = slots[net.set_kinds[lay.prefix]]
    width = sum(net.registers[r][1] for r in lay.content)
    live[K:, :width] = True
    if lay.memory:
        live[K:, H - sum(net.registers[r][1] for r in lay.memory):] = True
    need = np.zeros((K + 2, H), dtype=bool)
    need[K:, :D] = True
    if lay.prefix_out:
        need[:K] = True
    return live, need



def effective_prefix(net: Network) -> int:
    """Prefix-area entries a module reads: the columns of each set's slot that its module reads on any prefix row
    (every stacked weight row; the bias block of prefix 0 only; nothing of the all-zero activation sets)."""
    ar, geo, D = net.ar, net.geo, net.aux.D
    ones = lambda *s: ar.array(np.ones(s, dtype=int))  # noqa: E731
    read = int(nonzero(pack(ar, geo, ones(D, D), ones(D))).sum())
    return sum(0 if net.set_kinds[s].startswith("act") else read for s in net.sets)
