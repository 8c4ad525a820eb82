"""Which coordinates of a TinT window can be non-zero, per kind of row, found from the zero pattern of the fixed
weights (the forward half of the effective count, :mod:`attnsim.sim.tint.network_effective`).

A module layer's routing writes some coordinates of its window; each primitive passes a coordinate on only
through a non-zero entry (an activation or a layer norm keeps zero at zero); a gate passes a branch to a kind of
row only where its weight at that kind's positions is non-zero; an attention head's output on one kind of row
reads the kinds of row its mask lets it see (:func:`kind_masks`). Kinds of row: :data:`ROWS`.
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
from attnsim.sim.tint.network import Network, context_of

ROWS = ("prefix j", "train", "test")
"""The kinds of row of a window: each prefix row on its own (K of them), the training-token rows, the test-token
rows; every array of coordinates below is (K + 2, width), one row per kind."""


def nonzero(a: np.ndarray) -> np.ndarray:
    """Where ``a`` is non-zero."""
    return np.asarray(a != 0, dtype=bool)


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
    member = as_counts(kind_of_row[None, :] == np.arange(K + 2)[:, None])      # (kinds, rows): row r is of kind c
    masks = {name: (member @ as_counts(nonzero(np.asarray(m))) @ member.T) > 0 for name, m in ctx.masks.items()}
    positions = np.zeros((K + 2, geo.P), dtype=bool)
    positions[np.arange(K), geo.T + np.arange(K)] = True
    positions[K:, :geo.T] = True   # any token position can be a training or a test position
    return Kinds(positions, masks)


# ------------------------------------------------------------------------------------------------- forward
def as_counts(a: np.ndarray) -> np.ndarray:
    """A bool pattern as float32, so that a matmul counts the paths between coordinates."""
    return a.astype(np.float32)


def _mixer_fwd(layer: Mixer, live: np.ndarray) -> np.ndarray:
    """(n, H) -> (n, H): y[chunk i, coord u] reads x[chunk k, coord u] through M[u, k, i] (counts by matmul)."""
    c, nc, _ = layer.M.shape
    xs = as_counts(live.reshape(-1, nc, c).transpose(2, 0, 1))                 # (c, n, nc): [u, row, k]
    out = (xs @ as_counts(nonzero(layer.M))) > 0                                   # (c, n, nc): [u, row, i]
    return out.transpose(1, 2, 0).reshape(live.shape) | nonzero(layer.b)


def _bd_fwd(layer: BlockDiag, live: np.ndarray) -> np.ndarray:
    """(n, H) -> (n, H): block i's output coordinate j reads its input coordinate a through W[i, a, j]."""
    nb, c, _ = layer.W.shape
    xb = as_counts(live.reshape(-1, nb, c).transpose(1, 0, 2))                 # (nb, n, c)
    out = (xb @ as_counts(nonzero(layer.W))) > 0                                   # (nb, n, c)
    return out.transpose(1, 0, 2).reshape(live.shape) | nonzero(layer.b)


def gate_on(gate: Gate, kinds: Kinds) -> tuple[np.ndarray, np.ndarray]:
    """(old, new): per kind of row, whether the gate can pass the input, the branch (phi(0) = 0 for tanh too)."""
    def on(a: np.ndarray, a0: Any) -> np.ndarray:
        nz = nonzero(a + a0)
        return np.array([bool(nz[kinds.positions[k]].any()) for k in range(kinds.n)])
    return on(gate.a_old, gate.a0), on(gate.a_new, gate.a1)


def pair_matrix(att: TinTAttention, kinds: Kinds) -> np.ndarray:
    """(n, n) bool: [c, j] where an output row of kind c sums a term whose value row is of kind j, as the mask (and
    the post-mask) allow. The query row of that term is of kind c and its key row of kind j; with transposed
    probabilities (the stop-gradient backward: output row i sums w[j, i] v[j]) the query row is of kind j and the
    key row of kind c."""
    allowed = kinds.masks[att.mask]
    if not att.transpose_probs:
        return allowed.copy()
    post = kinds.masks[att.post_mask] if att.post_mask is not None else np.ones_like(allowed)
    return allowed.T & post


def scores_live(att: TinTAttention, q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """(n, n) bool per [c, j] of :func:`_pair_matrix`: whether the term's weight can be non-zero for a linear head
    (the same coordinate live in its query and key); every allowed term for softmax."""
    n = q.shape[0]
    if att.kind != "linear":
        return np.ones((n, n), dtype=bool)
    s = (as_counts(q) @ as_counts(k).T) > 0                                           # [query kind, key kind]
    return s.T if att.transpose_probs else s


def forward(layer: Any, live: np.ndarray, kinds: Kinds) -> np.ndarray:
    """Per kind of row, the coordinates of ``layer``'s output that can be non-zero, given those of its input."""
    if isinstance(layer, Mixer):
        return _mixer_fwd(layer, live)
    if isinstance(layer, BlockDiag):
        return _bd_fwd(layer, live)
    if isinstance(layer, TinTAttention):
        q, k, v = (qkv_live(layer, live, name, kinds) for name in "qkv")
        return forward(layer.out, heads_live(layer, q, k, v, kinds).reshape(kinds.n, -1), kinds)
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
        old, new = gate_on(layer.gate, kinds)
        return (live & old[:, None]) | (f & new[:, None])
    if isinstance(layer, Parallel):
        return forward(layer.branches[0], live, kinds) | forward(layer.branches[1], live, kinds)
    return np.ones_like(live)


def heads_live(att: TinTAttention, q: np.ndarray, k: np.ndarray, v: np.ndarray, kinds: Kinds) -> np.ndarray:
    """(n, heads, hd): the heads' outputs that can be non-zero on each kind of row, from the query, key and value
    coordinates that can be non-zero there."""
    pairs = pair_matrix(att, kinds)
    out = np.zeros(q.shape, dtype=bool)
    for h in range(att.heads):
        out[:, h] = (as_counts(pairs & scores_live(att, q[:, h], k[:, h])) @ as_counts(v[:, h])) > 0
    return out


def pos_base(pos: PosProj, var: int, kinds: Kinds) -> np.ndarray:
    """(3, b): the shared positional part p W + c of ``var`` that can be non-zero on each kind of row."""
    b = pos.W.shape[1] // 3
    W = nonzero(pos.W[:, var * b:(var + 1) * b])
    return ((as_counts(kinds.positions) @ as_counts(W)) > 0) | nonzero(pos.c[var * b:(var + 1) * b])[None, :]


def _pos_live(pos: PosProj, var: int, heads: int, kinds: Kinds) -> np.ndarray:
    """(3, heads, b): positional terms of ``var`` that can be non-zero on each kind of row."""
    base = pos_base(pos, var, kinds)
    return (nonzero(pos.s[var])[None, :, None] & base[:, None, :]) | nonzero(pos.s0)[None, :, None]


def qkv_live(att: TinTAttention, live: np.ndarray, name: str, kinds: Kinds) -> np.ndarray:
    """(n, heads, hd): the query, key or value (``name``) coordinates that can be non-zero on each kind of row."""
    mx, bd = att.maps[name]
    content = forward(bd, forward(mx, live, kinds), kinds).reshape(kinds.n, att.heads, -1)
    return content | _pos_live(att.pos, "qkv".index(name), att.heads, kinds)
