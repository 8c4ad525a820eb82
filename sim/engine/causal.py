"""two_heads.thm_3_5 (fused scheme) on the batched float64 engine: ``causal.simulate``, fast.

The same calls as :func:`attnsim.sim.two_heads.causal.iter_causal_head_jobs` with ``scheme="fused"``
— per head, one call per own block (the synthetic row first) and, for every earlier key block, the
"low" call (key offsets ≤ the query's) and the "high" call (the reversed-and-shifted layout, key
offsets >) — with the same weights (``blocks.weights_step1`` with [W^V | indicator]), the same
layer MLP (p ↦ [B, A]), the same refusals and the same ledger totals by tag, rounds, shapes and flops.
The calls are described as :class:`~attnsim.sim.engine.batch.Gathered` batches instead of built:

* own calls of all query blocks form one batch, and the low (high) calls of key block t against all
  later query blocks another; the keys of a low or high batch are the same rows of block t;
* each head's input rows are projected once per round (``batch.project`` distributes the product
  over the column groups), and only through the columns that can be non-zero: score columns both
  W^Q and W^K fill, value columns W^V fills (the others are exact zeros, as in the torch oracle);
* the backend runs each batch's causal attention at once, the layer MLP decodes the whole batch,
  and eq. (1)'s running sums take the batch's query rows in one step.

Only full blocks (N divisible by b): a partial last block makes calls of another length, which the
call-by-call construction handles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from attnsim.sim.engine.backend import BatchBackend, get_backend
from attnsim.sim.engine.batch import CallBatch, Gathered, ProjectionCache, admit, project
from attnsim.sim.engine.blockwise import CONST, decode_AB, source_name
from attnsim.sim.errors import AttnsimError, require
from attnsim.sim.ledger import Ledger
from attnsim.sim.model import TransformerSpec, Weights, head_columns
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle, live_columns
from attnsim.sim.two_heads.blocks import block_starts, weights_step1
from attnsim.sim.two_heads.causal import preconditions
from attnsim.sim.two_heads.worst_case import apply_token_map, sum_heads


@dataclass(frozen=True)
class CausalGroup:
    """The calls of one batch: their part ("own", "low", "high") and query block starts."""

    part: str
    q0s: np.ndarray


def causal_batches(head: int, N: int, d: int, W: tuple[np.ndarray, np.ndarray, np.ndarray], b: int,
                   tag: str) -> Iterator[tuple[CallBatch, CausalGroup]]:
    """The head's calls, own blocks first, then key block t = 0, 1, … against every later block."""
    i = np.arange(b + 1)
    starts = np.array(block_starts(N, b))
    src = source_name(head)
    const = np.where(i >= 1, 0, 1)  # row 0 (synthetic, or the zero key of "high") is [1, 0]; others [1, 1]
    m = W[2].shape[1] - 1

    def batch(part: str, key: np.ndarray, query: np.ndarray, q0s: np.ndarray) -> tuple[CallBatch, CausalGroup]:
        B = len(q0s)
        inputs = Gathered((src, src, "C"), (d, d, 2),
                          (np.broadcast_to(key, (B, b + 1)), query, np.broadcast_to(const, (B, b + 1))))
        return (CallBatch(f"{tag}.{part}.fused", inputs, *W, decode=decode_AB(0), out_width=m + 1),
                CausalGroup(part, q0s))

    rows = np.where(i >= 1, starts[:, None] + i - 1, N)  # [x(o - 1)] after the synthetic row; N = zero row
    yield batch("own", rows, rows, starts)
    for t in range(len(starts) - 1):
        k0, q0s = int(starts[t]), starts[t + 1:]
        query_low = np.where(i >= 1, q0s[:, None] + i - 1, N)
        yield batch("low", np.where(i >= 1, k0 + i - 1, N), query_low, q0s)
        query_high = np.where(i <= b - 1, q0s[:, None] + b - 1 - i, N)  # row r: query offset b − 1 − r
        yield batch("high", np.where(i >= 1, k0 + b - i, N), query_high, q0s)


class CausalSums:
    """Σ B and Σ A of eq. (1) for one head, over the value columns W^V can make non-zero."""

    def __init__(self, N: int, m: int, b: int, cols: np.ndarray) -> None:
        """Zero sums for N rows; ``cols`` are the head's non-zero value columns."""
        self.N, self.m, self.b, self.cols = N, m, b, cols
        self.num, self.den = np.zeros((N, len(cols))), np.zeros((N, 1))
        self.terms = np.zeros(N, dtype=int)

    def add(self, group: CausalGroup, out: np.ndarray) -> None:
        """Fold a decoded batch [B, A] (B, b + 1, |cols| + 1) into the rows of its query blocks."""
        b = self.b
        if group.part == "high":
            vals = out[:, b - 1::-1].copy()  # query offset o sits in row b − 1 − o
            vals[:, b - 1] = 0.0             # offset b − 1: no key has a larger offset, A = B = 0 (set, not read)
        else:
            vals = out[:, 1:b + 1]
        rows = (group.q0s[:, None] + np.arange(b)).reshape(-1)
        vals = vals.reshape(len(rows), -1)
        self.num[rows] += vals[:, :-1]
        self.den[rows] += vals[:, -1:]
        self.terms[group.q0s] += 1

    def result(self, nm: Numerics, ledger: Ledger, tag: str, round: int) -> Array:
        """y = Σ B / Σ A with the zero value columns put back; one processing entry per query block."""
        Y = np.zeros((self.N, self.m))
        Y[:, self.cols] = nm.safe_div(self.num, self.den)
        for q0 in block_starts(self.N, self.b):
            ledger.record("processing", f"{tag}.combine", round=round, shape=(self.b, self.m),
                          flops=2 * self.b * int(self.terms[q0]) * (self.m + 1))
        return Y


def execute(batch: CallBatch, arrays: dict[str, np.ndarray], backend: BatchBackend, score: np.ndarray,
            value: np.ndarray, cache: ProjectionCache) -> np.ndarray:
    """A batch's decoded outputs [B, A] over the kept value columns: (B, b + 1, |value| − 1 + 1)."""
    q = project(batch.inputs, batch.WQ[:, score], arrays, cache)
    k = project(batch.inputs, batch.WK[:, score], arrays, cache)
    v = project(batch.inputs, batch.WV[:, value], arrays, cache)
    if q.ndim == 2:  # every call reads the same query rows
        q = np.broadcast_to(q, (batch.calls,) + q.shape).copy()
    return batch.decode(backend.attention(q, k, v, causal=True))


def simulate(spec: TransformerSpec, weights: Weights, X: Array, oracle: Oracle, *, b: int,
             backend: str = "numpy", tag: str = "thm_3_5") -> Array:
    """Causal T(X) from batched calls to a causal oracle (float64; ``causal.simulate(scheme="fused")``)."""
    nm = oracle.nm
    if nm.name != "float64":
        raise AttnsimError(f"--numerics: the batched engine runs float64 only, got {nm.name}")
    require(preconditions(spec, oracle, b, "fused"))
    if spec.N % b:
        raise AttnsimError(f"--N: the batched causal engine needs full blocks, N divisible by b; got N={spec.N}, "
                           f"b={b} (attnsim.sim.two_heads.causal.simulate handles a partial last block)")
    weights.validate(spec)
    be = get_backend(backend)
    X = apply_token_map(nm, oracle, weights.phi, nm.array(X, "X"), b, "input_mlp")
    for li, layer in enumerate(weights.layers):
        Xa = apply_token_map(nm, oracle, layer.pre, X, b, "pre_norm")
        oracle.round += 1
        heads = []
        for h, hw in enumerate(layer.heads):
            htag = f"{tag}.L{li}.H{h}"
            W = weights_step1(nm, *(nm.array(w, n) for w, n in ((hw.WQ, "W^Q"), (hw.WK, "W^K"), (hw.WV, "W^V"))))
            score, value = live_columns(*W)
            arrays = {source_name(h): np.concatenate([Xa[:, head_columns(spec, h)], np.zeros((1, spec.m))]),
                      "C": CONST}
            sums = CausalSums(spec.N, spec.m, b, value[:-1])
            cache: ProjectionCache = {}
            for batch, group in causal_batches(h, spec.N, spec.m, W, b, htag):
                admit(oracle, batch)
                sums.add(group, execute(batch, arrays, be, score, value, cache))
            heads.append(sums.result(nm, oracle.ledger, htag, oracle.round))
        del Xa
        X = sum_heads(nm, oracle, spec, X, heads)
        X = apply_token_map(nm, oracle, layer.psi, X, b, "layer_mlp")
    return X
