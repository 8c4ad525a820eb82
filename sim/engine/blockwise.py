"""two_heads.lemma_3_1 for float64, vectorised: the same calls as ``blocks.head_jobs``, in batches.

For every ordered pair of blocks (query block t', key block t) the oracle receives exactly the
input, weights and layer MLP that ``attnsim.sim.two_heads.blocks`` builds — Step 1 input
``[x_key, x_query, 1, indicator]`` plus the synthetic row, Step 2 input ``[x_key, x_query]``, the
weights of ``blocks.weights_step1/2``, the decodes A = (1 + pad)p/(1 − p) and, fused,
[B, A] from [B/(A+1+pad), p] — but the calls are described as :class:`~attnsim.sim.engine.batch.Gathered`
batches (rows of the head's input, constant and indicator columns, zero rows for padding), one
batch per key block t and call length, and executed by a scheduler.

Streaming goes by **key-block column** (all query blocks against key block t) rather than by
query-block row: the calls of a column share their keys and values, so the scores of the whole
column are one GEMM (B·(b+1) × (m+1)) · ((m+1) × (b+1)) and the values one more — the arithmetic of
direct attention — and a column's scores take O(N·b) memory. Eq. (1) is folded column by column in
the order t = 0, 1, …, the same left fold as ``blocks.combine``, so every per-call result enters
the sums in the same order whichever scheduler ran it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from attnsim.sim.engine.batch import CallBatch, Gathered
from attnsim.sim.ledger import Ledger
from attnsim.sim.numerics import Numerics
from attnsim.sim.two_heads.blocks import block_starts, weights_step1, weights_step2

CONST = np.array([[1.0, 1.0], [1.0, 0.0]])  # [1, indicator] of a real key row; of any other row


@dataclass(frozen=True)
class ColumnGroup:
    """Calls of one key block t that have the same length R: query blocks ``q0s`` (sizes ``bqs``)."""

    head: int
    t: int
    kind: str  # "A", "R" or "AB" as in blocks.PairPlan
    q0s: np.ndarray
    bqs: np.ndarray
    R: int
    pad: int


def source_name(head: int) -> str:
    """The name under which head ``head``'s projected input is shared with the scheduler."""
    return f"X.H{head}"


def head_sources(Xh: np.ndarray, head: int) -> dict[str, np.ndarray]:
    """The head's input with one zero row appended (row N is the zero padding row)."""
    return {source_name(head): np.concatenate([Xh, np.zeros((1, Xh.shape[1]))]), "C": CONST}


def decode_A(pad: int):
    """A decoder for Step 1 of Lemma 3.1: A = (1 + pad)·p/(1 − p) from the synthetic token's weight p."""
    def decode(H: np.ndarray) -> np.ndarray:
        p = H[..., :1]
        c = np.full(p.shape, float(1 + pad))
        return (c * p) / (np.ones(p.shape) - p)
    return decode


def decode_AB(pad: int):
    """A decoder for the fused scheme: the weighted values and A from one call's output, written
    over that output (a batch's own fresh array; [B/(A+1+pad), p] and [B, A] have one width)."""
    def decode(H: np.ndarray) -> np.ndarray:
        bv, p = H[..., :-1], H[..., -1:]
        c = np.full(p.shape, float(1 + pad))
        total = c / (np.ones(p.shape) - p)
        bv *= total
        np.subtract(total, c, out=p)
        return H
    return decode


def _inputs(head: int, N: int, d: int, k0: int, bk: int, q0s: np.ndarray, bqs: np.ndarray,
            R: int) -> Gathered:
    """Step 1 inputs of the calls (t', t) for t' in q0s: rows [x_key, x_query, 1, ind], then the
    synthetic row [0, 0, 1, 0]; padding rows are zero in the key (i >= bk) or query (i >= bq) part."""
    i = np.arange(R + 1)
    B = len(q0s)
    key = np.broadcast_to(np.where(i < bk, k0 + i, N), (B, R + 1))
    qry = np.where((i[None, :] < bqs[:, None]) & (i[None, :] < R), q0s[:, None] + i[None, :], N)
    const = np.broadcast_to(np.where(i < bk, 0, 1), (B, R + 1))
    src = source_name(head)
    return Gathered((src, src, "C"), (d, d, 2), (key, qry, const))


def head_batches(nm: Numerics, head: int, N: int, d: int, WQ: np.ndarray, WK: np.ndarray, WV: np.ndarray,
                 b: int, scheme: str, tag: str) -> Iterator[tuple[CallBatch, ColumnGroup]]:
    """The head's calls as (batch, group) items, column by column (t = 0, 1, …)."""
    w1 = weights_step1(nm, WQ, WK, WV if scheme == "fused" else None)
    w2 = weights_step2(nm, WQ, WK, WV)
    starts = np.array(block_starts(N, b))
    sizes = np.minimum(b, N - starts)
    m = WV.shape[1]
    for t, k0 in enumerate(starts):
        bk = int(sizes[t])
        Rs = np.maximum(sizes, bk)
        for R in dict.fromkeys(Rs.tolist()):  # first-appearance order
            sel = Rs == R
            q0s, bqs, pad = starts[sel], sizes[sel], R - bk
            g1 = _inputs(head, N, d, int(k0), bk, q0s, bqs, R)
            if scheme == "fused":
                yield (CallBatch(f"{tag}.fused", g1, *w1, decode=decode_AB(pad), out_width=m + 1),
                       ColumnGroup(head, t, "AB", q0s, bqs, R, pad))
                continue
            yield (CallBatch(f"{tag}.step1", g1, *w1, decode=decode_A(pad), out_width=1),
                   ColumnGroup(head, t, "A", q0s, bqs, R, pad))
            g2 = Gathered(g1.sources[:2], (d, d), tuple(ix[:, :R] for ix in g1.index[:2]))
            yield CallBatch(f"{tag}.step2", g2, *w2), ColumnGroup(head, t, "R", q0s, bqs, R, pad)


class HeadAccumulator:
    """Σ_t B_{i,t} and Σ_t A_{i,t} of eq. (1) for one head, folded column by column."""

    def __init__(self, N: int, m: int) -> None:
        """Empty numerator (N × m) and denominator (N × 1) of one head."""
        self.num = np.zeros((N, m))
        self.den = np.zeros((N, 1))
        self._A: np.ndarray | None = None

    def _fold(self, group: ColumnGroup, B: np.ndarray, A: np.ndarray) -> None:
        """Add B and A, per call (calls, rows, ·), to the rows of the group's query blocks: the first
        bq rows of each call."""
        calls, R = len(group.q0s), group.R
        if (group.bqs == R).all() and (group.q0s == group.q0s[0] + R * np.arange(calls)).all():
            rows = slice(int(group.q0s[0]), int(group.q0s[0]) + calls * R)  # consecutive full blocks: views
            num, den = self.num[rows].reshape(calls, R, -1), self.den[rows].reshape(calls, R, 1)
            num += B[:, :R]
            den += A[:, :R]
            return
        i = np.arange(R)
        keep = i[None, :] < group.bqs[:, None]
        rows = (group.q0s[:, None] + i[None, :])[keep]
        self.num[rows] += B[:, :R][keep]
        self.den[rows] += A[:, :R][keep]

    def add(self, group: ColumnGroup, out: np.ndarray) -> None:
        """Take one call's decoded output: a Step-1 output (A) is held until its Step-2 partner arrives; then
        B and A are added to the numerator and denominator rows of the query block (eq. 1)."""
        if group.kind == "A":
            self._A = out
            return
        if group.kind == "AB":
            self._fold(group, out[..., :-1], out[..., -1:])
            return
        A_full = self._A[:, :group.R]
        self._fold(group, out * (A_full + np.full(A_full.shape, float(group.pad))), A_full)
        self._A = None

    def result(self, nm: Numerics) -> np.ndarray:
        """The head's output: numerator / denominator, 0 on rows with no allowed key."""
        return nm.safe_div(self.num, self.den)


def record_combine(ledger: Ledger, N: int, m: int, b: int, tag: str, round: int) -> None:
    """The processing entries of ``blocks.combine``: one per query block."""
    starts = block_starts(N, b)
    for q0 in starts:
        bq = min(b, N - q0)
        ledger.record("processing", f"{tag}.combine", round=round, shape=(bq, m),
                      flops=2 * bq * len(starts) * (m + 1))
