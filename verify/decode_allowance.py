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

import numpy as np

from attnsim.sim.masks import Full
from attnsim.sim.model import TransformerSpec, Weights, head_columns, head_projections, stream
from attnsim.sim.numerics import Array, Numerics


def paper_decode_loss_bits(spec: TransformerSpec, weights: Weights, X: Array, truth: Numerics, b: int) -> float:
    """max log2(1 + A) over layers, heads, query rows and allowed key blocks of size ``b`` (0 for an empty model)."""
    allowed = None if isinstance(spec.mask, Full) else spec.mask.materialize(spec.N)
    worst = -math.inf  # the largest ln A seen
    for layer, X_in in zip(weights.layers, stream(spec, weights, X, truth)):
        Xp = layer.pre(truth, X_in)
        for h, hw in enumerate(layer.heads):
            q, k, _ = head_projections(spec, hw, Xp[:, head_columns(spec, h)], truth)
            scores = _as_float(q) @ _as_float(k).T
            if allowed is not None:
                scores = np.where(allowed, scores, -np.inf)
            for start in range(0, spec.N, b):
                block = scores[:, start:start + b]
                with np.errstate(divide="ignore"):  # a row with no allowed key in the block: ln A = -inf
                    worst = max(worst, float(np.logaddexp.reduce(block, axis=1).max()))
    return 0.0 if worst == -math.inf else float(np.logaddexp(0.0, worst)) / math.log(2)


def _as_float(a: Array) -> np.ndarray:
    return np.vectorize(float, otypes=[float])(a) if a.dtype == object else np.asarray(a, dtype=float)


def window_decode_loss_bits(spec: TransformerSpec, weights: Weights, X: Array, truth: Numerics, b: int) -> float:
    """The bits the window construction (Thm 5.1) may lose: max over layers, heads and query rows of
    log2(1 + A_pre) + log2(A_pre / A) + 1.

    Each window sum is a difference of two local prefix sums, A = A_P − A_S (and B = B_P − B_S), each decoded from
    a causal call as in Lemma 3.1 (about P − log2(1 + A_P) bits): the difference keeps about
    P − log2(1 + A_P) − log2(A_P / A) − 1 bits. Both prefixes lie among the sinks and the last b keys up to the
    query (a chunk's oracle window holds at most b tokens), so A_pre, their sum, bounds A_P whatever the chunking.
    """
    allowed = spec.mask.materialize(spec.N)
    idx = np.arange(spec.N)
    recent = (idx[None, :] <= idx[:, None]) & (idx[None, :] > idx[:, None] - b)
    prefix = allowed | recent
    worst = 0.0
    for layer, X_in in zip(weights.layers, stream(spec, weights, X, truth)):
        Xp = layer.pre(truth, X_in)
        for h, hw in enumerate(layer.heads):
            q, k, _ = head_projections(spec, hw, Xp[:, head_columns(spec, h)], truth)
            scores = _as_float(q) @ _as_float(k).T
            with np.errstate(divide="ignore"):
                ln_win = np.logaddexp.reduce(np.where(allowed, scores, -np.inf), axis=1)
                ln_pre = np.logaddexp.reduce(np.where(prefix, scores, -np.inf), axis=1)
            rows = np.isfinite(ln_win)
            loss = (np.logaddexp(0.0, ln_pre[rows]) + ln_pre[rows] - ln_win[rows]) / math.log(2) + 1.0
            worst = max(worst, float(loss.max(initial=0.0)))
    return worst
