"""Which module weights can change an output, found from the network's structure (tint.size, effective count).

A weight entry of a linear map (a block-diagonal map BD, a channel mixer MX, a positional projection) can change
an output only if it multiplies an input coordinate that can be non-zero and writes an output coordinate that
something reads. Both are found here from the zero pattern of the fixed TinT weights, never from their values
and never by perturbing them:

* **live** coordinates, forward: what a module layer's routing writes into its window (the content registers at
  [0, w), the memory registers at the tail, the prefix slot's non-zero columns on the prefix rows), pushed through
  every primitive by its non-zero pattern (an activation or a layer norm keeps zero at zero);
* **needed** coordinates, backward: what the layer's routing reads out ([0, D) of the token rows, the whole slot
  for a descent), pulled back the same way; a query or key coordinate is needed where its head's output is
  and its partner (key or query) coordinate is live.

Rows are not told apart (a coordinate live on any row is live), so the count is an upper bound of the entries
that change an output for some input, tight up to that union. Gates and the positional switches of a head are
counted whole when their module's output is needed. Anything this analysis does not know is counted whole.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnsim.sim.tint.layers import (
    BlockDiag,
    CoordGated,
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
from attnsim.sim.tint.network_size import arrays

Marks = dict[Any, tuple[np.ndarray, np.ndarray]]  # id(array) -> (array, effective entries)


def _nz(a: np.ndarray) -> np.ndarray:
    return np.asarray(a != 0, dtype=bool)


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


# ------------------------------------------------------------------------------------------------- forward
def forward(layer: Any, live: np.ndarray) -> np.ndarray:
    """The coordinates of ``layer``'s output that can be non-zero, given those of its input."""
    if isinstance(layer, Mixer):
        c, nc, _ = layer.M.shape
        xs = live.reshape(nc, c).T                                  # (c, nc): [u, k]
        out = (xs[:, :, None] & _nz(layer.M)).any(axis=1)           # (c, nc): [u, i]
        return out.T.reshape(-1) | _nz(layer.b)
    if isinstance(layer, BlockDiag):
        nb, c, _ = layer.W.shape
        xb = live.reshape(nb, c)
        return (xb[:, :, None] & _nz(layer.W)).any(axis=1).reshape(-1) | _nz(layer.b)
    if isinstance(layer, TinTAttention):
        q, k, v = (_qkv(layer, live, name) for name in "qkv")
        heads = []
        for h in range(layer.heads):
            scored = layer.kind != "linear" or (q[h].any() and k[h].any())
            heads.append(v[h] & scored)
        return forward(layer.out, np.concatenate(heads))
    if isinstance(layer, TinTMLP):
        return forward(layer.second, forward(layer.first, live))
    if isinstance(layer, PartialLayerNorm):
        out = live.copy()
        out[:layer.D] = live[:layer.D].any()
        return out
    if isinstance(layer, CoordGated):
        out = forward(layer.inner, live)
        out[:layer.D] |= live[:layer.D]
        return out
    if isinstance(layer, Module):
        f = live
        for sub in layer.layers:
            f = forward(sub, f)
        return f if layer.gate is None else f | live
    if isinstance(layer, Parallel):
        return forward(layer.branches[0], live) | forward(layer.branches[1], live)
    return np.ones_like(live)


def _pos_live(pos: PosProj, var: int, heads: int) -> np.ndarray:
    """(heads, b): positional terms of ``var`` that can be non-zero (every position occurs in some input)."""
    b = pos.W.shape[1] // 3
    base = _nz(pos.W[:, var * b:(var + 1) * b]).any(axis=0) | _nz(pos.c[var * b:(var + 1) * b])
    return (_nz(pos.s[var])[:, None] & base[None, :]) | _nz(pos.s0)[:, None]


def _qkv(att: TinTAttention, live: np.ndarray, name: str) -> np.ndarray:
    mx, bd = att.maps[name]
    content = forward(bd, forward(mx, live)).reshape(att.heads, -1)
    return content | _pos_live(att.pos, "qkv".index(name), att.heads)


# ------------------------------------------------------------------------------------------------ backward
def backward(layer: Any, live: np.ndarray, need: np.ndarray, marks: Marks) -> np.ndarray:
    """Mark the entries of ``layer`` that can change a needed output; return the needed input coordinates."""
    if not need.any():
        return np.zeros_like(live)
    if isinstance(layer, Mixer):
        c, nc, _ = layer.M.shape
        xs, ns = live.reshape(nc, c).T, need.reshape(nc, c).T       # (c, nc)
        _mark(marks, layer.M, xs[:, :, None] & ns[:, None, :])
        _mark(marks, layer.b, need)
        return (_nz(layer.M) & ns[:, None, :]).any(axis=2).T.reshape(-1)
    if isinstance(layer, BlockDiag):
        nb, c, _ = layer.W.shape
        xb, nb_ = live.reshape(nb, c), need.reshape(nb, c)
        _mark(marks, layer.W, xb[:, :, None] & nb_[:, None, :])
        _mark(marks, layer.b, need)
        return (_nz(layer.W) & nb_[:, None, :]).any(axis=2).reshape(-1)
    if isinstance(layer, TinTAttention):
        return _attention_backward(layer, live, need, marks)
    if isinstance(layer, TinTMLP):
        mid = forward(layer.first, live)
        return backward(layer.first, live, backward(layer.second, mid, need, marks), marks)
    if isinstance(layer, PartialLayerNorm):
        out = need.copy()
        out[:layer.D] = need[:layer.D].any()  # the mean and variance read every coordinate of [0, D)
        return out
    if isinstance(layer, CoordGated):
        out = backward(layer.inner, live, need, marks)
        out[:layer.D] |= need[:layer.D]
        return out
    if isinstance(layer, Module):
        return _module_backward(layer, live, need, marks)
    if isinstance(layer, Parallel):
        return backward(layer.branches[0], live, need, marks) | backward(layer.branches[1], live, need, marks)
    _whole(marks, layer)
    return live.copy()


def _module_backward(mod: Module, live: np.ndarray, need: np.ndarray, marks: Marks) -> np.ndarray:
    lives = [live]
    for sub in mod.layers:
        lives.append(forward(sub, lives[-1]))
    n = need
    for sub, lv in zip(reversed(mod.layers), reversed(lives[:-1])):
        n = backward(sub, lv, n, marks)
    if mod.gate is None:
        return n
    _whole(marks, mod.gate)
    return n | need


def _attention_backward(att: TinTAttention, live: np.ndarray, need: np.ndarray, marks: Marks) -> np.ndarray:
    """Marks: a query (key) map entry counts where its head's output is read and the partner key (query)
    coordinate is live; a value map entry where its output coordinate is read from a scored head. The needed
    inputs drop those conditions: a change further up can make partner coordinates live together."""
    q, k, v = (_qkv(att, live, name) for name in "qkv")
    heads = att.heads
    scored = np.array([att.kind != "linear" or (q[h].any() and k[h].any()) for h in range(heads)])
    cat = np.concatenate([v[h] & scored[h] for h in range(heads)])
    need_cat = backward(att.out, cat, need, marks).reshape(heads, -1)
    used = need_cat.any(axis=1)
    own = {"q": used[:, None] & k, "k": used[:, None] & q, "v": need_cat & scored[:, None]}
    upstream = {"q": np.repeat(used[:, None], q.shape[1], axis=1), "v": need_cat}
    upstream["k"] = upstream["q"]
    out = np.zeros_like(live)
    for var, name in enumerate("qkv"):
        mx, bd = att.maps[name]
        mid = forward(mx, live)
        backward(mx, live, backward(bd, mid, own[name].reshape(-1), marks), marks)
        scratch: Marks = {}
        out |= backward(mx, live, backward(bd, mid, upstream[name].reshape(-1), scratch), scratch)
        _positional_marks(att.pos, var, own[name], marks)
    return out


def _positional_marks(pos: PosProj, var: int, need: np.ndarray, marks: Marks) -> None:
    """POS: column j of ``var`` counts where some switched-on head needs coordinate j; switches whole per head."""
    b = pos.W.shape[1] // 3
    cols = (_nz(pos.s[var])[:, None] & need).any(axis=0)
    w_mask = np.zeros(pos.W.shape, dtype=bool)
    w_mask[:, var * b:(var + 1) * b] = cols[None, :]
    c_mask = np.zeros(pos.c.shape, dtype=bool)
    c_mask[var * b:(var + 1) * b] = cols
    _mark(marks, pos.W, w_mask)
    _mark(marks, pos.c, c_mask)
    s_mask = np.zeros(pos.s.shape, dtype=bool)
    s_mask[var] = need.any(axis=1)
    _mark(marks, pos.s, s_mask)
    _mark(marks, pos.s0, need.any(axis=1))


# -------------------------------------------------------------------------------------------- the network
def _slot_columns(net: Network) -> dict[str, np.ndarray]:
    """Per prefix-set kind: the slot's columns that hold an auxiliary weight on some prefix row."""
    ar, geo, D = net.ar, net.geo, net.aux.D
    ones = lambda *s: ar.array(np.ones(s, dtype=int))  # noqa: E731
    full = _nz(pack(ar, geo, ones(D, D), ones(D))).any(axis=0)
    diag = _nz(pack(ar, geo, diag_matrix(ar, ones(D)), ones(D))).any(axis=0)
    return {kind: (np.zeros(geo.H, dtype=bool) if kind.startswith("act") else diag if kind.startswith("ln")
                   else full) for kind in set(net.set_kinds.values())}


def effective_modules(net: Network) -> int:
    """Entries of the network's module weights (each module object once) that can change an output."""
    return int(sum(int(mask.sum()) for _, mask in effective_marks(net).values()))


def effective_marks(net: Network) -> Marks:
    """Per weight array of the network's modules: the entries that can change an output."""
    H, D = net.geo.H, net.aux.D
    slots = _slot_columns(net)
    marks: Marks = {}
    done: set[tuple] = set()  # a module object with the same live and needed coordinates marks the same entries
    for lay in net.module_layers():
        live = np.zeros(H, dtype=bool)
        if lay.prefix is not None:
            live |= slots[net.set_kinds[lay.prefix]]
        width = lambda names: sum(net.registers[r][1] for r in names)  # noqa: E731
        live[:width(lay.content)] = True
        if lay.memory:
            live[H - width(lay.memory):] = True
        need = np.zeros(H, dtype=bool)
        need[:D] = True
        if lay.prefix_out:
            need[:] = True
        key = (id(lay.op), live.tobytes(), need.tobytes())
        if key not in done:
            done.add(key)
            backward(lay.op, live, need, marks)
    return marks



def effective_prefix(net: Network) -> int:
    """Prefix-area entries a module reads: the columns of each set's slot that its module reads on any prefix row
    (every stacked weight row; the bias block of prefix 0 only; nothing of the all-zero activation sets)."""
    ar, geo, D = net.ar, net.geo, net.aux.D
    ones = lambda *s: ar.array(np.ones(s, dtype=int))  # noqa: E731
    read = int(_nz(pack(ar, geo, ones(D, D), ones(D))).sum())
    return sum(0 if net.set_kinds[s].startswith("act") else read for s in net.sets)
