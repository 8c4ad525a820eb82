"""Theorem 3.5's fused calls of one head, executed a key block at a time with shared score products.

Every call of the causal construction (``attnsim.sim.engine.causal``) is made of three kinds of rows
— a real token as query, a real token as key/value, and the synthetic row — and, when the head's
step-1 weights are *separable* (W^Q reads only the query part and the constants, W^K and W^V only
the key part and the constants, as ``blocks.weights_step1`` builds them), each kind projects to the
same vector in every call: the query of token i is q_i in the own, "low" and "high" calls alike,
the key of token j is k_j, and the synthetic row (and the zero key row of a "high" call) has key k₀
and value v₀. :class:`HeadRows` holds these vectors, each computed once per head.

A query row at offset o of block q against key block t < q is then answered by two calls whose keys
partition the block: the "low" call sees k₀ and offsets 0..o, the "high" call k₀ and offsets
o+1..b−1 (Theorem 3.5's split of a key block into the parts before and after the diagonal). Both
calls read the same products ⟨q_i, k_j⟩, so :func:`pair_outputs` forms the scores of all later
query blocks against key block t once (one GEMM), exponentiates them once, and masks the result into
the two calls' weights before the value products. Each call's output is still its own softmax
average, normalised by its own weights and decoded by the layer MLP; only the shift subtracted
before exp (the row maximum over both calls' keys and k₀) is shared. A shift larger than a call's
own maximum multiplies that call's numerator and denominator by the same factor, which cancels
unless the call's largest weight leaves float64's normal range; :data:`EXP_HEADROOM` bounds the
shift so that it never does (the synthetic key is in every call, so a row whose shift exceeds its
synthetic score by less than the headroom is safe), and a key block with any row beyond it returns
None for the caller to run as ordinary batches.

Rows a construction never reads are not computed: the synthetic row's own output (row 0 of an own
or "low" call) and the "high" call's rows that hold no real query.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

#: the largest shift (row maximum minus the synthetic score) for which the shared-shift weights
#: stay normal floats: exp(−600) ≈ 1e−261 > 2.2e−308, float64's smallest normal number
EXP_HEADROOM = 600.0

Decode = Callable[[np.ndarray], np.ndarray]

#: the width of a tile of query rows and key columns (:func:`tiles`)
TILE = 64


@dataclass(frozen=True, eq=False)
class HeadRows:
    """The vectors every call of one head is made of: per real token its query ``q`` and key ``k``
    (score columns), its value ``v`` with a ones column appended (the weight sum comes out of the
    value product), and the synthetic row's key ``k0`` and value ``v0`` (with its 1)."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    k0: np.ndarray
    v0: np.ndarray


def _rows_times(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """X W through the rows of W that hold a non-zero entry (the others add exact zeros)."""
    live = np.flatnonzero(W.any(axis=1))
    if len(live) and live[-1] - live[0] == len(live) - 1:  # a run of columns: a view, not a gather
        return X[:, live[0]:live[-1] + 1] @ W[live[0]:live[-1] + 1]
    return X[:, live] @ W[live]


def head_rows(X: np.ndarray, W: tuple[np.ndarray, np.ndarray, np.ndarray], const: np.ndarray,
              score: np.ndarray, value: np.ndarray) -> HeadRows | None:
    """The head's :class:`HeadRows` from its input X (N × d, without the zero row), its step-1 weights
    over [key part d | query part d | constants 2] and the constant rows ``const`` (real key row,
    other rows); None when the weights are not separable and the calls must run as batches."""
    d = X.shape[1]
    key, qry, cst = slice(0, d), slice(d, 2 * d), slice(2 * d, 2 * d + 2)
    WQ, WK, WV = W[0][:, score], W[1][:, score], W[2][:, value]
    if WQ[key].any() or WK[qry].any() or WV[qry].any():
        return None
    real, other = const[0], const[1]
    ones = np.ones((X.shape[0], 1))
    return HeadRows(q=_rows_times(X, WQ[qry]) + real @ WQ[cst],
                    k=_rows_times(X, WK[key]) + real @ WK[cst],
                    v=np.hstack([_rows_times(X, WV[key]) + real @ WV[cst], ones]),
                    k0=other @ WK[cst], v0=np.append(other @ WV[cst], 1.0))


@lru_cache(maxsize=8)
def _masks(b: int) -> tuple[np.ndarray, np.ndarray]:
    """1.0/0.0 masks of a b × b block: key offset ≤ query offset ("low", own), and > ("high")."""
    lower = np.tril(np.ones((b, b)))
    upper = 1.0 - lower
    for mask in (lower, upper):
        mask.setflags(write=False)  # shared by every caller (cached)
    return lower, upper


def _weights(S: np.ndarray, s0: np.ndarray) -> np.ndarray | None:
    """exp(S − shift) in place and the synthetic key's exp(s0 − shift), shift = max(row of S, s0);
    None when a row's shift exceeds its synthetic score by more than :data:`EXP_HEADROOM`."""
    shift = np.maximum(S.max(axis=-1), s0)
    if np.any(shift - s0 > EXP_HEADROOM):
        return None
    S -= shift[..., None]
    np.exp(S, out=S)
    return np.exp(s0 - shift).reshape(-1, 1)


def _outputs(num: np.ndarray, e0: np.ndarray, v0: np.ndarray, decode: Decode) -> np.ndarray:
    """Decoded call outputs from the real keys' weighted values ``num`` (its last column the weight
    sum) and the synthetic key's weight ``e0``: softmax average (Σ e v + e₀ v₀)/(Σ e + e₀), decoded."""
    live = np.flatnonzero(v0)  # v₀'s zero entries add exact zeros
    num[:, live] += e0 * v0[live]
    H = np.divide(num[:, :-1], num[:, -1:], out=num[:, :-1])
    return decode(H)


def own_outputs(rows: HeadRows, q0s: np.ndarray, b: int, decode: Decode) -> np.ndarray | None:
    """The decoded own calls of the consecutive blocks starting at ``q0s``: query offset o sees k₀
    and offsets 0..o of its own block; (len(q0s)·b) × width, rows in token order; None beyond the
    headroom. Tile I of the query rows is scored against key tiles 0..I only (the tiles after the
    diagonal hold no key of these calls), the diagonal tile masked after exp."""
    B, T = len(q0s), tiles(b)
    s = b // T
    blocks = slice(int(q0s[0]), int(q0s[-1]) + b)
    q, k, v = (a[blocks].reshape(B, b, -1) for a in (rows.q, rows.k, rows.v))
    lower = _masks(s)[0]
    out = np.empty((B, b, v.shape[2]))
    e0 = np.empty((B, b, 1))
    for i in range(T):
        r, seen = slice(i * s, (i + 1) * s), slice(0, (i + 1) * s)
        qi = q[:, r]
        S = np.matmul(qi, np.swapaxes(k[:, seen], 1, 2))
        w0 = _weights(S, (qi @ rows.k0))
        if w0 is None:
            return None
        S[:, :, i * s:] *= lower
        np.matmul(S, v[:, seen], out=out[:, r])
        e0[:, r] = w0.reshape(B, s, 1)
    return _outputs(out.reshape(B * b, -1), e0.reshape(-1, 1), rows.v0, decode)


def tiles(b: int) -> int:
    """How many tiles of rows (and key columns) a block of b is cut into: about 64 wide, dividing b."""
    T = max(1, b // TILE)
    while b % T:
        T -= 1
    return T


def _by_tile(a: np.ndarray, B: int, T: int) -> np.ndarray:
    """Rows of B blocks, block-major (block, tile, row), reordered tile-major (tile, block, row)."""
    s = a.shape[0] // (B * T)
    return a.reshape(B, T, s, -1).transpose(1, 0, 2, 3).reshape(a.shape)


def _by_block(a: np.ndarray, B: int, T: int) -> np.ndarray:
    """Tile-major rows as a (block, tile, row, ·) view in token order (no copy)."""
    s = a.shape[0] // (B * T)
    return a.reshape(T, B, s, -1).transpose(1, 0, 2, 3)


def pair_outputs(rows: HeadRows, k0: int, q0s: np.ndarray, b: int,
                 decode: Decode) -> tuple[np.ndarray, np.ndarray] | None:
    """The decoded "low" and "high" calls of key block ``k0`` against the consecutive query blocks
    ``q0s``: two (len(q0s), T, b/T, width) views, (block, tile, row) in token order (the "high" row
    of offset b − 1, which sees no real key, is 0 as the construction sets it); None beyond the
    headroom.

    The query rows are taken tile by tile (:func:`tiles`), every block's tile I together, so that the
    value products split along the diagonal: tile I's "low" weights are the key tiles before I in
    full and tile I masked to offsets ≤ the query's, its "high" weights tile I masked to offsets >
    and the key tiles after I — each key tile multiplied once outside the diagonal."""
    B, T = len(q0s), tiles(b)
    s = b // T
    q = _by_tile(rows.q[int(q0s[0]):int(q0s[-1]) + b], B, T)
    S = q @ rows.k[k0:k0 + b].T
    e0 = _weights(S, q @ rows.k0)
    if e0 is None:
        return None
    lower, upper = _masks(s)
    v = rows.v[k0:k0 + b]
    low, high = np.empty((B * b, v.shape[1])), np.empty((B * b, v.shape[1]))
    for i in range(T):
        r, d = slice(i * B * s, (i + 1) * B * s), slice(i * s, (i + 1) * s)
        E, Ed = S[r], S[r, d].reshape(B, s, s)
        np.matmul(np.multiply(Ed, lower).reshape(B * s, s), v[d], out=low[r])
        np.matmul(np.multiply(Ed, upper).reshape(B * s, s), v[d], out=high[r])
        if i > 0:
            low[r] += E[:, :i * s] @ v[:i * s]
        if i < T - 1:
            high[r] += E[:, (i + 1) * s:] @ v[(i + 1) * s:]
    low = _by_block(_outputs(low, e0, rows.v0, decode), B, T)
    high = _by_block(_outputs(high, e0, rows.v0, decode), B, T)
    high[:, T - 1, s - 1] = 0.0
    return low, high
