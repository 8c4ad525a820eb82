"""Fixed-chunk Reformer and why it cannot compute SUM in O(1) layers (anna.prop_e_3; Def E.1, Prop E.3).

A fixed chunk pattern assigns each position a chunk label per layer; every chunk has exactly B
members (Def. E.1: f_l(i) is a set of B indices containing i, and chunks partition [N]). A token
attends (softmax) only inside its chunk, so after L layers output i depends on the inputs in its
receptive field D^L(i), with D^0(i) = {i} and D^l(i) = union of D^(l-1)(j) over j in i's chunk:
|D^L(i)| <= B^L. If B^L < N, some x_j lies outside D^L(N) and changing it changes SUM but not
T(X)_N -- the adversary of Prop. E.3.

:func:`butterfly_patterns` reaches the bound: layer l groups positions that differ only in base-B
digit l (mod the number of digits), so |D^l(i)| = min(B^l, N) when N is a power of B.
"""

from __future__ import annotations

import numpy as np

from attnsim.sim.anna.errors import require
from attnsim.sim.ledger import Ledger


def validate_pattern(labels: np.ndarray, B: int) -> np.ndarray:
    """Chunk labels for one layer; every chunk must have exactly B members."""
    labels = np.asarray(labels, dtype=np.int64)
    require(labels.ndim == 1, "patterns", f"each layer's labels must be 1-D, got shape {labels.shape}")
    _, sizes = np.unique(labels, return_counts=True)
    require(
        bool(np.all(sizes == B)),
        "patterns",
        f"every chunk must have exactly B = {B} members, got sizes {sorted(set(sizes.tolist()))}",
    )
    return labels


def butterfly_patterns(N: int, B: int, L: int) -> list[np.ndarray]:
    """L layers of chunk labels; layer l chunks the positions that differ only in base-B digit l."""
    require(B >= 2, "B", f"chunk size must be >= 2, got {B}")
    require(L >= 1, "L", f"must be >= 1, got {L}")
    digits = 0
    while B ** digits < N:
        digits += 1
    require(B ** digits == N, "N", f"must be a power of B = {B} for the butterfly pattern, got {N}")
    i = np.arange(N)
    out = []
    for layer in range(L):
        d = layer % digits
        out.append((i // B ** (d + 1)) * B ** d + i % B ** d)
    return out


def receptive_fields(patterns: list[np.ndarray], B: int, *, ledger: Ledger | None = None) -> np.ndarray:
    """Boolean matrix dep[i, j] = (x_j is in D^L(i)); records the largest field per layer."""
    require(len(patterns) >= 1, "patterns", "need at least one layer")
    N = len(patterns[0])
    dep = np.eye(N, dtype=bool)
    for layer, labels in enumerate(patterns):
        labels = validate_pattern(labels, B)
        require(len(labels) == N, "patterns", f"layer {layer} has {len(labels)} labels, expected {N}")
        _, chunk = np.unique(labels, return_inverse=True)  # a token's field: the union of its chunk-mates' fields
        chunk = chunk.reshape(-1)
        order = np.argsort(chunk, kind="stable")
        starts = np.flatnonzero(np.concatenate(([True], np.diff(chunk[order]) != 0)))
        dep = np.logical_or.reduceat(dep[order], starts, axis=0)[chunk]
        if ledger is not None:
            ledger.record("receptive_field", f"reformer.layer{layer}", round=layer, amount=int(dep.sum(axis=1).max()))
    return dep


def reformer_sum_model(patterns: list[np.ndarray], B: int, x: np.ndarray) -> np.ndarray:
    """The best fixed-chunk attempt at SUM: each layer averages within chunks (q = k = 0, so the
    softmax is uniform) and scales by B, i.e. replaces each value by its chunk's sum."""
    state = np.asarray(x, dtype=np.int64).copy()
    for labels in patterns:
        labels = validate_pattern(labels, B)
        _, inv = np.unique(labels, return_inverse=True)
        chunk = np.zeros(inv.max() + 1, dtype=np.int64)
        np.add.at(chunk, inv, state)
        state = chunk[inv]
    return state


def adversarial_pair(patterns: list[np.ndarray], B: int, x: np.ndarray, delta: int) -> tuple[np.ndarray, int] | None:
    """(x', j): x with x_j raised by ``delta`` for some j outside the last output's receptive field,
    or None when the field covers every position (then no such input exists)."""
    dep = receptive_fields(patterns, B)
    outside = np.flatnonzero(~dep[-1])
    if len(outside) == 0:
        return None
    j = int(outside[0])
    x2 = np.asarray(x, dtype=np.int64).copy()
    x2[j] += delta
    return x2, j
