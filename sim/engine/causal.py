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
  and eq. (1)'s running sums take the batch's query rows in one step;
* with the numpy backend, each key block's "low" and "high" batches run together from one score
  product (:mod:`~attnsim.sim.engine.causal_pairs`: the two calls' keys split the block at the
  query's offset), and the heads of a layer run side by side on worker threads, each with one BLAS
  thread, after every call of the layer has been admitted.

Only full blocks (N divisible by b): a partial last block makes calls of another length, which the
call-by-call construction handles.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Iterator

import numpy as np

from attnsim.sim.engine.backend import BatchBackend, get_backend
from attnsim.sim.engine.batch import MAX_SCORES, CallBatch, Gathered, ProjectionCache, admit
from attnsim.sim.engine.batch import execute as execute_batch
from attnsim.sim.engine.blas import single_threaded_blas
from attnsim.sim.engine.blockwise import CONST, decode_AB, source_name
from attnsim.sim.engine.causal_pairs import HeadRows, head_rows, own_outputs, pair_outputs
from attnsim.sim.errors import AttnsimError, require
from attnsim.sim.ledger import Ledger
from attnsim.sim.model import HeadWeights, TransformerSpec, Weights, head_columns
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle, live_columns
from attnsim.sim.two_heads.blocks import block_starts, weights_step1
from attnsim.sim.two_heads.causal import preconditions
from attnsim.sim.two_heads.worst_case import apply_token_map


@dataclass(frozen=True)
class CausalGroup:
    """The calls of one batch: their part ("own", "low", "high"), query block starts and, for
    "low" and "high", the start of the key block they share."""

    part: str
    q0s: np.ndarray
    k0: int | None = None


def causal_batches(head: int, N: int, d: int, W: tuple[np.ndarray, np.ndarray, np.ndarray], b: int,
                   tag: str) -> Iterator[tuple[CallBatch, CausalGroup]]:
    """The head's calls, own blocks first, then key block t = 0, 1, … against every later block."""
    i = np.arange(b + 1)
    starts = np.array(block_starts(N, b))
    src = source_name(head)
    const = np.where(i >= 1, 0, 1)  # row 0 (synthetic, or the zero key of "high") is [1, 0]; others [1, 1]
    m = W[2].shape[1] - 1

    def batch(part: str, key: np.ndarray, query: np.ndarray, q0s: np.ndarray,
              k0: int | None = None) -> tuple[CallBatch, CausalGroup]:
        B = len(q0s)
        inputs = Gathered((src, src, "C"), (d, d, 2),
                          (np.broadcast_to(key, (B, b + 1)), query, np.broadcast_to(const, (B, b + 1))))
        return (CallBatch(f"{tag}.{part}.fused", inputs, *W, decode=decode_AB(0), out_width=m + 1),
                CausalGroup(part, q0s, k0))

    rows = np.where(i >= 1, starts[:, None] + i - 1, N)  # [x(o - 1)] after the synthetic row; N = zero row
    yield batch("own", rows, rows, starts)
    for t in range(len(starts) - 1):
        k0, q0s = int(starts[t]), starts[t + 1:]
        query_low = np.where(i >= 1, q0s[:, None] + i - 1, N)
        yield batch("low", np.where(i >= 1, k0 + i - 1, N), query_low, q0s, k0)
        query_high = np.where(i <= b - 1, q0s[:, None] + b - 1 - i, N)  # row r: query offset b − 1 − r
        yield batch("high", np.where(i >= 1, k0 + b - i, N), query_high, q0s, k0)


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
        self.add_rows(group.q0s, vals.reshape(len(group.q0s) * b, -1))

    def add_rows(self, q0s: np.ndarray, vals: np.ndarray) -> None:
        """Fold decoded [B, A] rows of the query blocks starting at ``q0s`` in token order: (len(q0s)·b)
        × width, or any (len(q0s), …, width) view of them when the blocks are consecutive."""
        if vals.ndim > 2 and np.all(np.diff(q0s) == self.b):  # consecutive blocks: add through views
            rows = slice(int(q0s[0]), int(q0s[-1]) + self.b)
            num = self.num[rows].reshape(vals.shape[:-1] + (-1,))
            den = self.den[rows].reshape(vals.shape[:-1] + (1,))
            num += vals[..., :-1]
            den += vals[..., -1:]
        else:
            idx = (q0s[:, None] + np.arange(self.b)).reshape(-1)
            vals = vals.reshape(len(idx), -1)
            self.num[idx] += vals[:, :-1]
            self.den[idx] += vals[:, -1:]
        self.terms[q0s] += 1

    def result(self, nm: Numerics, ledger: Ledger, tag: str, round: int) -> np.ndarray:
        """y = Σ B / Σ A on the value columns ``cols`` (the head's other columns are 0); one
        processing entry per query block."""
        Y = nm.safe_div(self.num, self.den)
        for q0 in block_starts(self.N, self.b):
            ledger.record("processing", f"{tag}.combine", round=round, shape=(self.b, self.m),
                          flops=2 * self.b * int(self.terms[q0]) * (self.m + 1))
        return Y


def add_heads(oracle: Oracle, spec: TransformerSpec, X: np.ndarray, heads: list[tuple[np.ndarray, np.ndarray]],
              owned: bool) -> np.ndarray:
    """The end of a layer's attention as ``worst_case.sum_heads`` (the same value and ledger entry),
    from each head's non-zero columns (``cols``, values): the heads side by side plus the residual X.
    With ``owned`` (X is this simulation's own array) the heads are added into X in place."""
    out = (X if owned else X.copy()) if spec.residual else np.zeros((X.shape[0], spec.H * spec.m))
    for h, (cols, Y) in enumerate(heads):
        block = out[:, head_columns(spec, h)]
        if len(cols) and cols[-1] - cols[0] == len(cols) - 1:
            cols = slice(int(cols[0]), int(cols[-1]) + 1)  # a run of columns: a view, not a gather
        if spec.residual:
            block[:, cols] += Y
        else:
            block[:, cols] = Y
    if spec.residual:
        oracle.ledger.record("processing", "residual", round=oracle.round, shape=out.shape, flops=out.size)
    return out


def execute(batch: CallBatch, arrays: dict[str, np.ndarray], backend: BatchBackend, score: np.ndarray,
            value: np.ndarray, cache: ProjectionCache) -> np.ndarray:
    """A batch's decoded outputs [B, A] over the kept value columns: (B, b + 1, |value| − 1 + 1),
    by :func:`attnsim.sim.engine.batch.execute` on the weights' live columns (the others add exact zeros)."""
    live = replace(batch, WQ=batch.WQ[:, score], WK=batch.WK[:, score], WV=batch.WV[:, value])
    return execute_batch(live, arrays, backend, causal=True, cache=cache)


def causal_steps(head: int, N: int, d: int, W: tuple[np.ndarray, np.ndarray, np.ndarray], b: int,
                 tag: str) -> Iterator[list[tuple[CallBatch, CausalGroup]]]:
    """:func:`causal_batches` in steps: the own calls, then each key block's "low" and "high" batches together."""
    batches = causal_batches(head, N, d, W, b, tag)
    yield [next(batches)]
    for low in batches:
        yield [low, next(batches)]


def _chunks(q0s: np.ndarray, b: int) -> list[np.ndarray]:
    """``q0s`` in runs whose scores (b × b per block) fit :data:`MAX_SCORES`."""
    step = max(1, MAX_SCORES // (b * b))
    return [q0s[i:i + step] for i in range(0, len(q0s), step)]


def _paired(step: list[tuple[CallBatch, CausalGroup]], rows: HeadRows, b: int, sums: CausalSums) -> bool:
    """Run a step with shared score products (``causal_pairs``) into ``sums``; False (nothing added)
    when a block needs more shift than the headroom allows."""
    batch, group = step[0]
    chunks = _chunks(group.q0s, b)
    if group.part == "own":
        outs = [own_outputs(rows, q0s, b, batch.decode) for q0s in chunks]
    else:
        outs = [pair_outputs(rows, int(group.k0), q0s, b, batch.decode) for q0s in chunks]
    if any(o is None for o in outs):
        return False
    for q0s, out in zip(chunks, outs):
        for part in (out if isinstance(out, tuple) else (out,)):
            sums.add_rows(q0s, part)
    return True


def _admit_head(oracle: Oracle, spec: TransformerSpec, h: int, W: tuple[np.ndarray, np.ndarray, np.ndarray],
                b: int, tag: str) -> None:
    """Admit (refuse, or record in the ledger) every call of head h, before any of them runs."""
    for step in causal_steps(h, spec.N, spec.m, W, b, tag):
        for batch, _ in step:
            admit(oracle, batch)


def _run_head(spec: TransformerSpec, Xh: np.ndarray, h: int, W: tuple[np.ndarray, np.ndarray, np.ndarray],
              b: int, backend: BatchBackend, paired: bool, tag: str) -> CausalSums:
    """Execute head h's admitted calls from its input columns Xh into eq. (1)'s sums. It touches no
    ledger, so it may run on a worker thread; its steps are made again by :func:`causal_steps`, a
    pure function of the same arguments, so that a layer's batches are never all held at once."""
    score, value = live_columns(*W)
    sums = CausalSums(spec.N, spec.m, b, value[:-1])
    rows = head_rows(Xh, W, CONST, score, value) if paired else None
    arrays: dict[str, np.ndarray] = {}
    cache: ProjectionCache = {}
    for step in causal_steps(h, spec.N, spec.m, W, b, tag):
        if rows is not None and _paired(step, rows, b, sums):
            continue
        if not arrays:  # the gathered batches' sources: the head's rows, a zero row, the constants
            arrays = {source_name(h): np.concatenate([Xh, np.zeros((1, spec.m))]), "C": CONST}
        for batch, group in step:
            sums.add(group, execute(batch, arrays, backend, score, value, cache))
    return sums


def _threads(threads: int | None, backend: str) -> int:
    """Worker threads for the heads of a layer: by default the usable cores with the numpy backend
    (each head's GEMMs then run on one BLAS thread), one with any other."""
    if threads is None:
        return len(os.sched_getaffinity(0)) if backend == "numpy" and hasattr(os, "sched_getaffinity") else 1
    if threads < 1:
        raise AttnsimError(f"must be >= 1, got {threads}", param="threads")
    return threads


def simulate(spec: TransformerSpec, weights: Weights, X: Array, oracle: Oracle, *, b: int,
             backend: str = "numpy", paired: bool | None = None, threads: int | None = None,
             tag: str = "thm_3_5") -> Array:
    """Causal T(X) from batched calls to a causal oracle (float64; ``causal.simulate(scheme="fused")``).

    ``paired`` (default: with the numpy backend) runs each key block's "low" and "high" calls with
    shared score products (:mod:`~attnsim.sim.engine.causal_pairs`); otherwise, and for a head whose
    weights are not separable or a key block beyond the shift headroom, every batch runs through
    ``backend``. The calls, ledger and refusals are the same either way.

    The heads of a layer run on ``threads`` worker threads (default: see :func:`_threads`), after
    all of the layer's calls are admitted; each head's sums are its own, so the result does not
    depend on the thread count."""
    paired = backend == "numpy" if paired is None else paired
    workers = _threads(threads, backend)
    nm = oracle.nm
    if nm.name != "float64":
        raise AttnsimError(f"the batched engine runs float64 only, got {nm.name}", param="numerics")
    require(preconditions(spec, oracle, b, "fused"))
    if spec.N % b:
        raise AttnsimError(f"the batched causal engine needs full blocks, N divisible by b; got N={spec.N}, "
                           f"b={b} (attnsim.sim.two_heads.causal.simulate handles a partial last block)", param="N")
    weights.validate(spec)
    be = get_backend(backend)
    X = apply_token_map(nm, oracle, weights.phi, nm.array(X, "X"), b, "input_mlp")
    owned = not weights.phi.is_identity  # X is no longer the caller's array
    with ThreadPoolExecutor(workers) as pool:
        for li, layer in enumerate(weights.layers):
            Xa = apply_token_map(nm, oracle, layer.pre, X, b, "pre_norm")
            oracle.round += 1
            heads = _layer_heads(oracle, spec, layer.heads, Xa, b, be, paired, pool if workers > 1 else None,
                                 f"{tag}.L{li}")
            del Xa
            X, owned = add_heads(oracle, spec, X, heads, owned), True
            X = apply_token_map(nm, oracle, layer.psi, X, b, "layer_mlp")
    return X


def _layer_heads(oracle: Oracle, spec: TransformerSpec, layer_heads: tuple[HeadWeights, ...], Xa: np.ndarray, b: int,
                 backend: BatchBackend, paired: bool, pool: ThreadPoolExecutor | None,
                 tag: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """One layer's heads as (value columns, values): every call admitted in head order, the heads
    run on ``pool`` (one BLAS thread each) or here, and their sums closed in head order."""
    nm = oracle.nm
    step1 = {id(hw): weights_step1(nm, *(nm.array(w, n) for w, n in ((hw.WQ, "W^Q"), (hw.WK, "W^K"), (hw.WV, "W^V"))))
             for hw in layer_heads}  # once per distinct head (an imported layer's heads are one object)
    Ws = [step1[id(hw)] for hw in layer_heads]
    tags = [f"{tag}.H{h}" for h in range(len(Ws))]

    def run(h: int) -> CausalSums:
        return _run_head(spec, Xa[:, head_columns(spec, h)], h, Ws[h], b, backend, paired, tags[h])

    if pool is None:
        for h in range(len(Ws)):
            _admit_head(oracle, spec, h, Ws[h], b, tags[h])
        sums = [run(h) for h in range(len(Ws))]
    else:
        with single_threaded_blas():
            futures = []
            for h in range(len(Ws)):
                _admit_head(oracle, spec, h, Ws[h], b, tags[h])
                futures.append(pool.submit(run, h))
            sums = [f.result() for f in futures]
    return [(s.cols, s.result(nm, oracle.ledger, t, oracle.round)) for s, t in zip(sums, tags)]
