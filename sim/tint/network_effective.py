"""Which module weights can change an output, found from the network's structure (tint.size, effective count).

A weight entry of a linear map (a block-diagonal map BD, a channel mixer MX, a positional projection) can change
an output only if it multiplies an input coordinate that can be non-zero and writes an output coordinate that
something reads. Both are found here from the zero pattern of the fixed TinT weights, never from their values
and never by perturbing them, separately for the three kinds of row a window holds (:data:`ROWS`: prefix rows,
training-token rows, test-token rows), which the routing, the masks and the position-keyed gates treat apart:

* **live** coordinates per kind of row, forward: what a module layer's routing writes into its window (the
  content registers at [0, w) and the memory registers at the tail on token rows, the prefix slot's non-zero
  columns on prefix rows), pushed through every primitive by its non-zero pattern (an activation or a layer
  norm keeps zero at zero); a gate passes a branch to a kind of row only where its weight at that kind's
  positions is non-zero; an attention head's output on one kind of row reads the kinds of row its mask lets it
  see (:func:`kind_masks`);
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

from dataclasses import dataclass
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
from attnsim.sim.tint.network import Network, context_of
from attnsim.sim.tint.network_size import arrays

Marks = dict[Any, tuple[np.ndarray, np.ndarray]]  # id(array) -> (array, effective entries)
ROWS = ("prefix j", "train", "test")
"""The kinds of row of a window: each prefix row on its own (K of them), the training-token rows, the test-token
rows; every array of coordinates below is (K + 2, width), one row per kind."""


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


# ----------------------------------------------------------------------------------------------- the kinds
@dataclass(frozen=True)
class Kinds:
    """Per kind of row: its positions (a bool mask over the P one-hot positions), and per named attention mask
    which kinds of row (keys) a kind of row (queries) may see."""

    positions: np.ndarray           # (3, P)
    masks: dict[str, np.ndarray]    # name -> (K + 2, K + 2)

    @property
    def n(self) -> int:
        """The number of kinds of row."""
        return len(self.positions)


def kind_masks(net: Network) -> Kinds:
    """The kinds' positions and masks, read off the network's own masks on a stream with every kind of row (two
    training and two test tokens), reduced to kinds (a kind sees another where some row of it sees some row)."""
    geo, ar = net.geo, net.ar
    K, n = geo.K, 4
    pos = np.zeros((K + n, geo.P), dtype=int)
    pos[np.arange(K), geo.T + np.arange(K)] = 1
    pos[K + np.arange(n), np.arange(n)] = 1
    train = np.zeros(K + n, dtype=int)
    train[K:K + 2] = 1
    ctx = context_of(net, ar.array(pos), ar.array(train))
    kind_of_row = np.concatenate([np.arange(K), [K, K], [K + 1, K + 1]])
    member = _f(kind_of_row[None, :] == np.arange(K + 2)[:, None])      # (kinds, rows): row r is of kind c
    masks = {name: (member @ _f(_nz(np.asarray(m))) @ member.T) > 0 for name, m in ctx.masks.items()}
    positions = np.zeros((K + 2, geo.P), dtype=bool)
    positions[np.arange(K), geo.T + np.arange(K)] = True
    positions[K:, :geo.T] = True   # any token position can be a training or a test position
    return Kinds(positions, masks)


# ------------------------------------------------------------------------------------------------- forward
def _f(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32)


def _mixer_fwd(layer: Mixer, live: np.ndarray) -> np.ndarray:
    """(n, H) -> (n, H): y[chunk i, coord u] reads x[chunk k, coord u] through M[u, k, i] (counts by matmul)."""
    c, nc, _ = layer.M.shape
    xs = _f(live.reshape(-1, nc, c).transpose(2, 0, 1))                 # (c, n, nc): [u, row, k]
    out = (xs @ _f(_nz(layer.M))) > 0                                   # (c, n, nc): [u, row, i]
    return out.transpose(1, 2, 0).reshape(live.shape) | _nz(layer.b)


def _bd_fwd(layer: BlockDiag, live: np.ndarray) -> np.ndarray:
    """(n, H) -> (n, H): block i's output coordinate j reads its input coordinate a through W[i, a, j]."""
    nb, c, _ = layer.W.shape
    xb = _f(live.reshape(-1, nb, c).transpose(1, 0, 2))                 # (nb, n, c)
    out = (xb @ _f(_nz(layer.W))) > 0                                   # (nb, n, c)
    return out.transpose(1, 0, 2).reshape(live.shape) | _nz(layer.b)


def _gate_on(gate: Gate, kinds: Kinds) -> tuple[np.ndarray, np.ndarray]:
    """(old, new): per kind of row, whether the gate can pass the input, the branch (phi(0) = 0 for tanh too)."""
    def on(a: np.ndarray, a0: Any) -> np.ndarray:
        nz = _nz(a + a0)
        return np.array([bool(nz[kinds.positions[k]].any()) for k in range(kinds.n)])
    return on(gate.a_old, gate.a0), on(gate.a_new, gate.a1)


def _pair_matrix(att: TinTAttention, kinds: Kinds) -> np.ndarray:
    """(n, n) bool: [c, j] where an output row of kind c sums a term whose value row is of kind j, as the mask (and
    the post-mask) allow. The query row of that term is of kind c and its key row of kind j; with transposed
    probabilities (the stop-gradient backward: output row i sums w[j, i] v[j]) the query row is of kind j and the
    key row of kind c."""
    allowed = kinds.masks[att.mask]
    if not att.transpose_probs:
        return allowed.copy()
    post = kinds.masks[att.post_mask] if att.post_mask is not None else np.ones_like(allowed)
    return allowed.T & post


def _scores(att: TinTAttention, q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """(n, n) bool per [c, j] of :func:`_pair_matrix`: whether the term's weight can be non-zero for a linear head
    (the same coordinate live in its query and key); every allowed term for softmax."""
    n = q.shape[0]
    if att.kind != "linear":
        return np.ones((n, n), dtype=bool)
    s = (_f(q) @ _f(k).T) > 0                                           # [query kind, key kind]
    return s.T if att.transpose_probs else s


def forward(layer: Any, live: np.ndarray, kinds: Kinds) -> np.ndarray:
    """Per kind of row, the coordinates of ``layer``'s output that can be non-zero, given those of its input."""
    if isinstance(layer, Mixer):
        return _mixer_fwd(layer, live)
    if isinstance(layer, BlockDiag):
        return _bd_fwd(layer, live)
    if isinstance(layer, TinTAttention):
        q, k, v = (_qkv(layer, live, name, kinds) for name in "qkv")
        return forward(layer.out, _heads_live(layer, q, k, v, kinds).reshape(kinds.n, -1), kinds)
    if isinstance(layer, TinTMLP):
        return forward(layer.second, forward(layer.first, live, kinds), kinds)
    if isinstance(layer, PartialLayerNorm):
        out = live.copy()
        out[:, :layer.D] = live[:, :layer.D].any(axis=1, keepdims=True)
        return out
    if isinstance(layer, CoordGated):
        out = forward(layer.inner, live, kinds)
        out[:, :layer.D] |= live[:, :layer.D]
        return out
    if isinstance(layer, Module):
        f = live
        for sub in layer.layers:
            f = forward(sub, f, kinds)
        if layer.gate is None:
            return f
        old, new = _gate_on(layer.gate, kinds)
        return (live & old[:, None]) | (f & new[:, None])
    if isinstance(layer, Parallel):
        return forward(layer.branches[0], live, kinds) | forward(layer.branches[1], live, kinds)
    return np.ones_like(live)


def _heads_live(att: TinTAttention, q: np.ndarray, k: np.ndarray, v: np.ndarray, kinds: Kinds) -> np.ndarray:
    """(n, heads, hd): the heads' outputs that can be non-zero on each kind of row, from the query, key and value
    coordinates that can be non-zero there."""
    pairs = _pair_matrix(att, kinds)
    out = np.zeros(q.shape, dtype=bool)
    for h in range(att.heads):
        out[:, h] = (_f(pairs & _scores(att, q[:, h], k[:, h])) @ _f(v[:, h])) > 0
    return out


def _pos_base(pos: PosProj, var: int, kinds: Kinds) -> np.ndarray:
    """(3, b): the shared positional part p W + c of ``var`` that can be non-zero on each kind of row."""
    b = pos.W.shape[1] // 3
    W = _nz(pos.W[:, var * b:(var + 1) * b])
    return ((_f(kinds.positions) @ _f(W)) > 0) | _nz(pos.c[var * b:(var + 1) * b])[None, :]


def _pos_live(pos: PosProj, var: int, heads: int, kinds: Kinds) -> np.ndarray:
    """(3, heads, b): positional terms of ``var`` that can be non-zero on each kind of row."""
    base = _pos_base(pos, var, kinds)
    return (_nz(pos.s[var])[None, :, None] & base[:, None, :]) | _nz(pos.s0)[None, :, None]


def _qkv(att: TinTAttention, live: np.ndarray, name: str, kinds: Kinds) -> np.ndarray:
    mx, bd = att.maps[name]
    content = forward(bd, forward(mx, live, kinds), kinds).reshape(kinds.n, att.heads, -1)
    return content | _pos_live(att.pos, "qkv".index(name), att.heads, kinds)


# ------------------------------------------------------------------------------------------------ backward
def _mixer_bwd(layer: Mixer, live: np.ndarray, need: np.ndarray, marks: Marks) -> np.ndarray:
    c, nc, _ = layer.M.shape
    xs = _f(live.reshape(-1, nc, c).transpose(2, 0, 1))                 # (c, n, nc): [u, row, k]
    ns = _f(need.reshape(-1, nc, c).transpose(2, 0, 1))                 # (c, n, nc): [u, row, i]
    _mark(marks, layer.M, (xs.transpose(0, 2, 1) @ ns) > 0)            # [u, k, i]: live and read on some row
    _mark(marks, layer.b, need.any(axis=0))
    back = (ns @ _f(_nz(layer.M)).transpose(0, 2, 1)) > 0              # (c, n, nc): [u, row, k]
    return back.transpose(1, 2, 0).reshape(live.shape)


def _bd_bwd(layer: BlockDiag, live: np.ndarray, need: np.ndarray, marks: Marks) -> np.ndarray:
    nb, c, _ = layer.W.shape
    xb = _f(live.reshape(-1, nb, c).transpose(1, 0, 2))                 # (nb, n, c): [block, row, a]
    nb_ = _f(need.reshape(-1, nb, c).transpose(1, 0, 2))                # (nb, n, c): [block, row, j]
    _mark(marks, layer.W, (xb.transpose(0, 2, 1) @ nb_) > 0)           # [block, a, j]
    _mark(marks, layer.b, need.any(axis=0))
    back = (nb_ @ _f(_nz(layer.W)).transpose(0, 2, 1)) > 0             # (nb, n, c): [block, row, a]
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
        old, new = _gate_on(mod.gate, kinds)
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
    q, k, v = (_qkv(att, live, name, kinds) for name in "qkv")
    nk, heads, hd = q.shape
    heads_live = _heads_live(att, q, k, v, kinds).reshape(nk, -1)
    need_cat = backward(att.out, heads_live, need, marks, kinds).reshape(nk, heads, hd)
    used = need_cat.any(axis=2)                                          # (n, heads)
    pairs = _pair_matrix(att, kinds)
    own = {name: np.zeros((nk, heads, hd), dtype=bool) for name in "qkv"}
    up = {name: np.zeros((nk, heads, hd), dtype=bool) for name in "qkv"}
    t = att.transpose_probs
    for h in range(heads):
        if not used[:, h].any():
            continue
        scored = pairs & _scores(att, q[:, h], k[:, h])
        own["v"][:, h] = (_f(scored).T @ _f(need_cat[:, h])) > 0
        m = used[:, h][:, None] & pairs & v[:, h].any(axis=1)[None, :]   # [c, j]: a read term with a live value
        own["q"][:, h] = ((_f(m).T if t else _f(m)) @ _f(k[:, h])) > 0
        own["k"][:, h] = ((_f(m) if t else _f(m).T) @ _f(q[:, h])) > 0
        up["v"][:, h] = (_f(pairs).T @ _f(need_cat[:, h])) > 0
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
    on = _nz(pos.s[var])                                                 # (heads,)
    cols = (on[None, :, None] & need).any(axis=1)                        # (3, b)
    w_mask = np.zeros(pos.W.shape, dtype=bool)
    w_mask[:, var * b:(var + 1) * b] = (_f(kinds.positions).T @ _f(cols)) > 0  # [p, j]: some kind at p needs j
    c_mask = np.zeros(pos.c.shape, dtype=bool)
    c_mask[var * b:(var + 1) * b] = cols.any(axis=0)
    _mark(marks, pos.W, w_mask)
    _mark(marks, pos.c, c_mask)
    s_mask = np.zeros(pos.s.shape, dtype=bool)
    s_mask[var] = (need & _pos_base(pos, var, kinds)[:, None, :]).any(axis=(0, 2))  # a switch scales its base
    _mark(marks, pos.s, s_mask)
    _mark(marks, pos.s0, need.any(axis=(0, 2)))


# -------------------------------------------------------------------------------------------- the network
def _slot_rows(net: Network) -> dict[str, np.ndarray]:
    """Per prefix-set kind: (K, H), the slot's entries that hold an auxiliary weight, prefix row by prefix row."""
    ar, geo, D = net.ar, net.geo, net.aux.D
    ones = lambda *s: ar.array(np.ones(s, dtype=int))  # noqa: E731
    full = _nz(pack(ar, geo, ones(D, D), ones(D)))
    diag = _nz(pack(ar, geo, diag_matrix(ar, ones(D)), ones(D)))
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
    read = int(_nz(pack(ar, geo, ones(D, D), ones(D))).sum())
    return sum(0 if net.set_kinds[s].startswith("act") else read for s in net.sets)
