"""A batch of same-shaped single-head single-layer oracle calls, checked, counted and executed.

:class:`Gathered` holds the inputs Z of B calls, (B, n, w), without materialising them: the columns
are split into groups, and group g of call b, row i is row ``index[g][b, i]`` of the source matrix
``sources[g]``. A construction's inputs are exactly of this kind — blocks of the large input side
by side, constant and indicator columns, zero padding (two_heads §1.1, allowed processing) — and the
projection distributes over the groups, Z W = Σ_g gather(sources[g] · W[cols_g]), so each source
row is projected once per head, not once per call. Groups whose weight rows are all zero add
exact zeros and are skipped; when the remaining groups index the same rows in every call the
projection is *shared* by the batch (2-D), which lets the backend use one GEMM for the batch.

:func:`admit` is the referee: it refuses a batch that breaks the :class:`OracleSpec` exactly as
``Oracle`` refuses a call (same message), and records the batch as one ledger entry of kind
``"oracle"`` with ``amount`` = number of calls, the per-call shape and the total flops (the same
per-call formula as ``Oracle``), so ``Ledger.total("oracle")`` counts calls.
:func:`execute` is pure (no ledger, no oracle) so that a scheduler may run it anywhere.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from attnsim.sim.engine.backend import BatchBackend
from attnsim.sim.engine.scratch import scratch
from attnsim.sim.oracle import Oracle, OracleHead, head_flops, refusal, refused

BatchDecode = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class Gathered:
    """Inputs of B calls as column groups (see module docstring). ``sources`` are names into a
    mapping of arrays handed to :func:`execute`, so that a scheduler ships each source once."""

    sources: tuple[str, ...]
    widths: tuple[int, ...]
    index: tuple[np.ndarray, ...]  # each (B, n) of row numbers

    @property
    def shape(self) -> tuple[int, int, int]:
        """(calls, rows, width) of the gathered inputs."""
        B, n = self.index[0].shape
        return B, n, sum(self.widths)

    def column_groups(self) -> list[slice]:
        """The column slice of each group in a call's input."""
        edges = np.cumsum((0,) + self.widths)
        return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]

    def materialize(self, arrays: Mapping[str, np.ndarray]) -> np.ndarray:
        """Z itself, (B, n, w) — for tests and small sizes only."""
        return np.concatenate([arrays[s][idx] for s, idx in zip(self.sources, self.index)], axis=-1)


@dataclass(frozen=True, eq=False)
class CallBatch:
    """B calls: inputs, one head's W^Q, W^K, W^V (shared by the batch), and a batched layer MLP."""

    tag: str
    inputs: Gathered
    WQ: np.ndarray
    WK: np.ndarray
    WV: np.ndarray
    decode: BatchDecode | None = None
    out_width: int | None = None  # width after decode (defaults to W^V's width)

    @property
    def calls(self) -> int:
        """Number of calls in the batch."""
        return self.inputs.shape[0]

    def flops_per_call(self) -> int:
        """Flops of one call as the ledger records them: the Q/K/V projections and the two attention products."""
        _, n, w = self.inputs.shape
        return head_flops(n, w, self.WQ.shape[1], self.WV.shape[1])


def admit(oracle: Oracle, batch: CallBatch) -> None:
    """Refuse (OracleSpecError) or record the batch in the oracle's ledger, in the current round.

    Each call of the batch is refused exactly as ``Oracle`` refuses it (:func:`attnsim.sim.oracle.refusal`)."""
    B, n, w = batch.inputs.shape
    out = batch.out_width if batch.out_width is not None else batch.WV.shape[1]
    why = refusal(oracle.spec, length=n, layers=1, width=w, heads=(OracleHead(batch.WQ, batch.WK, batch.WV),),
                  output=out)
    if why is not None:
        raise refused(oracle.spec, batch.tag, why)
    oracle.ledger.record("oracle", batch.tag, round=oracle.round, shape=(n, w),
                         flops=B * batch.flops_per_call(), amount=B)


ProjectionCache = dict[tuple, Any]  # arrays by content key; weight keys; the count of its arrays

#: at most this many score entries exist at once (128 MiB of float64): a batch is split into
#: sub-batches of calls, so peak memory stays O(N·M) whatever the batch size.
MAX_SCORES = 1 << 24


def _digest(a: np.ndarray) -> tuple[bytes, tuple[int, ...], bool]:
    """A key for an array's contents; a row broadcast along the first axis is read once."""
    row = a.ndim > 1 and a.strides[0] == 0
    data = np.ascontiguousarray(a[0] if row else a)
    return hashlib.blake2b(data.data, digest_size=16).digest(), a.shape, row


def _weight_key(W: np.ndarray, cache: ProjectionCache | None) -> tuple:
    """A key for a weight matrix's contents, computed once per matrix object while ``cache`` lives
    (the cache keeps the matrix, so its id cannot be reused meanwhile)."""
    if cache is None:
        return _digest(W)
    held = cache.get(("W", id(W)))
    if held is None or held[0] is not W:
        held = cache[("W", id(W))] = (W, _digest(W))
    return held[1]


def project(inputs: Gathered, W: np.ndarray, arrays: Mapping[str, np.ndarray],
            cache: ProjectionCache | None = None) -> np.ndarray:
    """Z W for every call: (B, n, k), or (n, k) when every contributing group is shared.

    With a ``cache`` (one per round), each source's product with its weight rows is computed once,
    and so is each distinct gathered result (e.g. the queries of a column, the same for every key
    block)."""
    groups = [(g, cols) for g, cols in enumerate(inputs.column_groups()) if W[cols].any()]  # else exact zeros
    B, n, _ = inputs.shape
    if not groups:
        return np.zeros((n, W.shape[1]))
    wkey = _weight_key(W, cache)
    key = (wkey,) + tuple((inputs.sources[g], g, _digest(inputs.index[g])) for g, _ in groups)
    if cache is not None and key in cache:
        return cache[key]
    shared = all(B == 1 or bool((inputs.index[g] == inputs.index[g][0]).all()) for g, _ in groups)
    out = None
    for g, cols in groups:
        pkey = (inputs.sources[g], g, wkey)
        P = cache.get(pkey) if cache is not None else None
        if P is None:
            src = arrays[inputs.sources[g]]
            P = np.matmul(src, W[cols], out=_cached_array(cache, (src.shape[0], W.shape[1])))
            if cache is not None:
                cache[pkey] = P
        idx = inputs.index[g][0] if shared else inputs.index[g]
        if out is None:
            out = np.take(P, idx, axis=0, out=_cached_array(cache, idx.shape + P.shape[1:]))
        else:
            out += P[idx]
    if cache is not None:
        cache[key] = out
    return out


def _cached_array(cache: ProjectionCache | None, shape: tuple[int, ...]) -> np.ndarray:
    """A new array that the round's ``cache`` will hold: a scratch array of a name of its own,
    numbered by the cache (which, with every array it holds, is dropped before the next round's
    cache is made)."""
    if cache is None:
        return np.empty(shape)
    number = cache[("arrays",)] = cache.get(("arrays",), 0) + 1
    return scratch(f"projection {number}", shape)


def execute(batch: CallBatch, arrays: Mapping[str, np.ndarray], backend: BatchBackend,
            causal: bool = False, cache: ProjectionCache | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """The calls' outputs, (B, n, out_width): projections, batched attention, batched decode.

    The attention outputs go into ``out`` when it is given with their shape (B, n, width of W^V),
    else into a new array; the fused decode writes [B, A] over them."""
    B = batch.calls
    q = project(batch.inputs, batch.WQ, arrays, cache)
    k = project(batch.inputs, batch.WK, arrays, cache)
    v = project(batch.inputs, batch.WV, arrays, cache)
    n = batch.inputs.shape[1]
    shape = (B, n, batch.WV.shape[1])
    raw = out if out is not None and out.shape == shape else np.empty(shape)
    step = max(1, MAX_SCORES // (n * n))
    for b0 in range(0, B, step):
        b1 = min(B, b0 + step)
        # shared queries repeated per call (a copy: a backend may hand its inputs to torch, which wants
        # writable arrays, and a one-call broadcast would be a read-only view)
        qs = np.broadcast_to(q, (b1 - b0,) + q.shape).copy() if q.ndim == 2 else np.ascontiguousarray(q[b0:b1])
        ks = k if k.ndim == 2 else k[b0:b1]
        vs = v if v.ndim == 2 else v[b0:b1]
        backend.attention(qs, ks, vs, causal, out=raw[b0:b1])
    return batch.decode(raw) if batch.decode is not None else raw
