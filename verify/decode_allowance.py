"""The bits Lemma 3.1's decode may lose, read off the reference model (two_heads Lemma 3.1, proof).

Step 1 of Lemma 3.1 returns p = A/(A + 1 + k) for a query row and a key block, A = Σ_j exp(<q_i, k_j>) over the
block's keys, and the oracle's layer MLP decodes A = (1 + k) p/(1 − p). The subtraction 1 − p keeps only the bits of
p below log2((A + 1 + k)/(1 + k)) ≤ log2(1 + A): in a format of P bits the decoded A carries about P − log2(1 + A)
bits, and the combination y_i = Σ_t R A_t / Σ_t A_t inherits that error. It is the paper's construction's own
conditioning, not a wrong simulation (the direct evaluation of the same model in the same format does not lose
these bits; docs/precision.md, "A decode that keeps its bits").

An approximate agreement check of a construction that decodes this way therefore allows, on top of its generic
margin, the largest log2(1 + A) over the model's layers, heads, query rows and key blocks of b consecutive
keys (aligned at 0, the plan's blocks) that the mask allows. A is computed here from the reference model's own
queries and keys (``sim.model``, which shares no code with the construction), in the truth numerics, read as
float64: a loss estimate in bits needs no more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from attnsim.sim.masks import Full
from attnsim.sim.model import TransformerSpec, Weights, head_columns, head_projections, stream
from attnsim.sim.numerics import Array, Numerics


@dataclass(frozen=True)
class BlockDecode:
    """How a construction decodes Lemma 3.1's Step 1, for the bits that may lose: over aligned blocks of ``block``
    keys, or (``window``) as Thm 5.1's differences of two local prefix sums, each among the sinks and the last
    ``block`` keys up to the query. ``paper``: the paper's p/(1 − p), which loses bits to the subtraction (False: the
    stable decode, which does not). ``fused``: the one-call scheme, which also forms A = (A + 1 + pad) − (1 + pad), an
    absolute error of about 2^-P (1 + pad) ≤ 2^-P (1 + block) that costs log2 of that over A when A is small."""

    block: int
    window: bool = False
    fused: bool = False
    paper: bool = True

    @property
    def label(self) -> str:
        """What the allowance is for, as the record and ``attnsim check`` name it."""
        return "Thm 5.1's prefix differences" if self.window else "Lemma 3.1's decode"

    def loss_bits(self, spec: TransformerSpec, weights: Weights, X: Array, truth: Numerics) -> float:
        """The allowance in bits on this model for the paper's decode (0 for the stable one or an empty model)."""
        if not self.paper:
            return 0.0
        fn = _window_loss if self.window else _block_loss
        worst = max((fn(spec, scores, self.block, self.fused) for scores in _scores(spec, weights, X, truth)),
                    default=-math.inf)
        return max(worst, 0.0)

    def floor_bits(self, spec: TransformerSpec, weights: Weights, X: Array, truth: Numerics, nm: Numerics) -> float:
        """The bits the format's floor may cost (0 where ``nm`` has none).

        Every sum A is formed relative to Step 1's synthetic token, p = A/(A + 1 + k), so a row whose keys all score
        far below it has p, and the weights summing to it, near 0. There a format keeps an absolute error of its
        spacing u (``Numerics.spacing_floor``) per number, not a relative one; the decode multiplies it by 1 + k ≤
        1 + block. A row's sums then keep about log2(A_row / (m (1 + block) u)) bits, with A_row the row's sum over its
        blocks and m their number (the window: the window's sum and its two prefixes, m = 2), and the allowance is
        what that leaves of the format's precision P: the largest P − log2(A_row / (m (1 + block) u)) over layers,
        heads and rows, if positive."""
        if nm.spacing_floor is None:
            return 0.0
        ln_sums, counts = [], []
        for scores in _scores(spec, weights, X, truth):
            ln_sum, count = _window_sums(spec, scores) if self.window else _row_sums(spec, scores, self.block)
            ln_sums.append(ln_sum)
            counts.append(count)
        return floor_loss_bits(np.concatenate(ln_sums or [np.zeros(0)]), np.concatenate(counts or [np.zeros(0)]),
                               self.block, nm)


def decode_loss_bits(ln_sums: np.ndarray) -> float:
    """The paper's decode p/(1 − p) on sums A (given as ln A): the largest log2(1 + A), 0 for none."""
    return float(np.logaddexp(0.0, ln_sums).max(initial=0.0)) / math.log(2)


def floor_loss_bits(ln_sums: np.ndarray, counts: np.ndarray, block: int, nm: Numerics) -> float:
    """The format's floor on sums A (as ln A), each made of ``counts`` decoded terms over blocks of ``block`` keys:
    the largest P − log2(A / (m (1 + block) u)), if positive; 0 where ``nm`` has no floor
    (:meth:`BlockDecode.floor_bits` says why)."""
    u = nm.spacing_floor
    if u is None or ln_sums.size == 0:
        return 0.0
    worst = float((np.log2(counts) - ln_sums / math.log(2)).max())
    return max(worst + math.log2(u * (1 + block)) + nm.bits, 0.0)


def _scores(spec: TransformerSpec, weights: Weights, X: Array, truth: Numerics) -> Iterator[np.ndarray]:
    """Each layer's and head's score matrix q kᵀ of the reference model, in float64."""
    for layer, X_in in zip(weights.layers, stream(spec, weights, X, truth)):
        Xp = layer.pre(truth, X_in)
        for h, hw in enumerate(layer.heads):
            q, k, _ = head_projections(spec, hw, Xp[:, head_columns(spec, h)], truth)
            yield _as_float(q) @ _as_float(k).T


def _row_sums(spec: TransformerSpec, scores: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row with an allowed key: ln of its sum over the allowed keys, and its number of blocks with one."""
    ln_blocks = _ln_blocks(spec, scores, b)
    seen = np.isfinite(ln_blocks)
    rows = seen.any(axis=1)
    return np.logaddexp.reduce(ln_blocks, axis=1)[rows], seen.sum(axis=1)[rows].astype(float)


def _window_sums(spec: TransformerSpec, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row with an allowed key: ln of its window's sum, and 2 (the window and its two prefixes' difference)."""
    with np.errstate(divide="ignore"):
        ln_win = np.logaddexp.reduce(np.where(spec.mask.materialize(spec.N), scores, -np.inf), axis=1)
    ln_win = ln_win[np.isfinite(ln_win)]
    return ln_win, np.full(ln_win.shape, 2.0)


def _ln_blocks(spec: TransformerSpec, scores: np.ndarray, b: int) -> np.ndarray:
    """ln A per row and aligned block of b keys, over the keys the mask allows (−inf for a block with none)."""
    if not isinstance(spec.mask, Full):
        scores = np.where(spec.mask.materialize(spec.N), scores, -np.inf)
    with np.errstate(divide="ignore"):  # a block with no allowed key: ln A = -inf
        return np.stack([np.logaddexp.reduce(scores[:, s:s + b], axis=1) for s in range(0, spec.N, b)], axis=1)


def paper_decode_loss_bits(spec: TransformerSpec, weights: Weights, X: Array, truth: Numerics, b: int) -> float:
    """max log2(1 + A) over layers, heads, query rows and allowed key blocks of size ``b`` (0 for an empty model)."""
    return BlockDecode(b).loss_bits(spec, weights, X, truth)


def _block_loss(spec: TransformerSpec, scores: np.ndarray, b: int, fused: bool) -> float:
    """Blocks of b keys: the largest log2(1 + A) over rows and blocks; fused, per row
    log2(Σ_t (A_t (1 + A_t) + 1 + b) / Σ_t A_t) over the blocks with an allowed key, if larger."""
    ln_blocks = _ln_blocks(spec, scores, b)
    worst = decode_loss_bits(ln_blocks[np.isfinite(ln_blocks)])
    if fused:
        seen = np.isfinite(ln_blocks)
        err = np.where(seen, np.logaddexp(ln_blocks + np.logaddexp(0.0, ln_blocks), math.log(1 + b)), -np.inf)
        rows = seen.any(axis=1)
        ln_err, ln_sum = np.logaddexp.reduce(err, axis=1)[rows], np.logaddexp.reduce(ln_blocks, axis=1)[rows]
        worst = max(worst, float((ln_err - ln_sum).max(initial=0.0)) / math.log(2))
    return worst


def _window_loss(spec: TransformerSpec, scores: np.ndarray, b: int, fused: bool) -> float:
    """Window sums A = A_P − A_S: per row log2(2 ((1 + A_pre) A_pre + c) / A), c = 1 + b when fused, else 0; A_pre
    sums the sinks and the last b keys up to the row, where both prefixes lie, whatever the chunking."""
    allowed = spec.mask.materialize(spec.N)
    idx = np.arange(spec.N)
    recent = (idx[None, :] <= idx[:, None]) & (idx[None, :] > idx[:, None] - b)
    with np.errstate(divide="ignore"):
        ln_win = np.logaddexp.reduce(np.where(allowed, scores, -np.inf), axis=1)
        ln_pre = np.logaddexp.reduce(np.where(allowed | recent, scores, -np.inf), axis=1)
    rows = np.isfinite(ln_win)
    ln_err = ln_pre[rows] + np.logaddexp(0.0, ln_pre[rows])
    if fused:
        ln_err = np.logaddexp(ln_err, math.log(1 + b))
    return float((ln_err - ln_win[rows]).max(initial=-math.inf)) / math.log(2) + 1.0


def _as_float(a: Array) -> np.ndarray:
    return np.vectorize(float, otypes=[float])(a) if a.dtype == object else np.asarray(a, dtype=float)

