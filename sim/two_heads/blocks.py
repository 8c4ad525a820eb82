"""two_heads.lemma_3_1 — one attention head from oracle calls on pairs of blocks.

For blocks S_t of b consecutive tokens (b = M, or M − 1 under the strict length convention) and
every ordered pair (query block t', key block t), with a_{ij} = exp(<q_i, k_j>):

* **Step 1** (one call): the two blocks side by side in the feature dimension, rows
  ``[x_key, x_query, 1, indicator]`` plus one synthetic row ``[0, 0, 1, 0]`` at the end. Queries
  ``[q, 1]`` and keys ``[k, 1]`` give scores <q,k> + 1; the synthetic key scores 1 and has value 0,
  real keys have value 1 (the indicator, Lemma A.1). The head outputs p = A/(A + 1) and the oracle's
  layer MLP decodes A = p/(1 − p) (proof of Lemma 3.1).
* **Step 2** (one call): rows ``[x_key, x_query]`` with the original weights give the in-block ratio
  R = B/A.
* **Combination** (eq. 1, outside the oracle, counted as processing): y_i = Σ_t R·A / Σ_t A.

``scheme="fused"`` (not in the paper; docs/reconstructions.md, "Fused values"): values ``[v, 1]`` on real keys make
one call return B/(A+1) and A/(A+1) together, so each pair costs one call.

``decode="stable"`` (not in the paper; docs/precision.md, "A decode that keeps its bits"): the paper's decode
p/(1 − p) subtracts p = A/(A + 1) from 1 and, once A is large, 1 − p keeps only the bits of p below log2 A: a
format with P bits of precision decodes A to about P − log2 A bits (none once p rounds to 1). The stable
decode reads the complement from the same call instead of computing it: one more value column, 1 on the
synthetic token (and on zero-key padding) and 0 on real keys, returns q = (1 + k)/(A + 1 + k) beside p, and
the layer MLP divides, A = (1 + k)·p/q, with no subtraction. Which allowance of the oracle model (§1.5) each
part uses: the new column of W^V is ``constant − indicator``, a linear map of two coordinates the call's
input already has (the constant 1 and the Lemma A.1 indicator that Step 1 adds), so it is part of the
call's parameters, which the caller supplies; the division is the oracle's layer MLP, the same token-wise
arithmetic the paper uses for p/(1 − p). No processing step and no call is added: the call count stays
2·n_q·n_k (paper) or n_q·n_k (fused), and the oracle's width stays 2d + 2 (the head's value width grows
from 1 to 2, or from m + 1 to m + 2 fused).

A partial last block (N not divisible by b) leaves k = R − b_key rows with no key. They are padded
with a zero key: in Step 1 they score 1 like the synthetic token, so p = A/(A + 1 + k) and the
decode is A = (1 + k)p/(1 − p); in Step 2 they score 0 (weight 1, value 0), so the call returns
B/(A + k) and the combination uses B = out·(A + k). With k = 0 this is exactly the paper's scheme.

With rotary embeddings (``rope``; the rebuttal claim two_heads.rebuttal_rope, not in the paper) the
oracle rotates queries and keys by their row, and the pair's relative rotation R(k0 − q0) between
the blocks' first positions is folded into that call's W^K: <q R(i), k R(j)> = q R(i − j) k^T
(``sim/rope.py``). The number of calls does not change.

Calls: 2·n_q·n_k (paper) or n_q·n_k (fused) per head, n = ceil(N/b) blocks; all in one round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Hashable, Iterable, Sequence, TypeVar

import numpy as np

from attnsim.sim.ledger import Ledger
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.rope import RoPE
from attnsim.sim.two_heads import plan as P
from attnsim.sim.two_heads.jobs import HeadJob

SCHEMES = ("paper", "fused")
DECODES = ("paper", "stable")

K = TypeVar("K", bound=Hashable)


def block_starts(N: int, b: int) -> list[int]:
    """First position of each block of size ``b`` (the plan's blocks, ``plan.py``)."""
    return [P.block_start(t, b) for t in range(P.num_blocks(P.INT, N, b))]


def token_rows(X: Array, tokens: range) -> Array:
    """The rows of X at ``tokens`` (a non-empty range of valid rows, forward or backward), as a slice: no index
    list is built."""
    return X[tokens.start:tokens.stop if tokens.stop >= 0 else None:tokens.step]


def layout_input(nm: Numerics, Xk: Array, Xq: Array, lay: P.Layout) -> Array:
    """A call's input from the plan's layout: row r is [x_key, x_query] (tokens of Xk, Xq by the
    layout's segments, zero elsewhere), and a normaliser layout adds the constant-1 column on every row
    and the indicator column (Lemma A.1) on its key rows."""
    d = Xk.shape[1]
    norm = lay.norm
    Z = nm.zeros((lay.rows, 2 * d + (2 if norm else 0)))
    for seg in lay.segs:
        if seg.what in ("key", "query"):
            rows, tokens = P.seg_tokens(seg)
            if len(rows):
                half = slice(0, d) if seg.what == "key" else slice(d, 2 * d)
                Z[rows.start:rows.stop, half] = token_rows(Xk if seg.what == "key" else Xq, tokens)
                if norm and seg.what == "key":
                    Z[rows.start:rows.stop, 2 * d + 1:] = nm.ones((len(rows), 1))
    if norm:
        Z[:, 2 * d:2 * d + 1] = nm.ones((lay.rows, 1))
    return Z


@dataclass(frozen=True)
class PairPlan:
    """Where a job's decoded output goes: query rows, key block index, kind, padding k, and the call's
    layout (``plan.pair_layout``), whose query segment says which output row lands on which token."""

    q0: int
    bq: int
    t: int
    kind: str  # "A" (step 1), "R" (step 2), "AB" (fused)
    pad: int
    layout: P.Layout


def weights_step1(nm: Numerics, WQ: Array, WK: Array, WV: Array | None,
                  decode: str = "paper") -> tuple[Array, Array, Array]:
    """W^Q', W^K' reading [x_key, x_query, 1, ind]; W^V' = indicator (paper) or [W^V | indicator] (fused), and
    with ``decode="stable"`` one more column, constant − indicator: 1 on the synthetic token, 0 on real keys."""
    d, m = WQ.shape
    w = 2 * d + 2
    one = nm.ones((1, 1))
    Wq, Wk = nm.zeros((w, m + 1)), nm.zeros((w, m + 1))
    Wq[d:2 * d, :m], Wq[2 * d:2 * d + 1, m:] = WQ, one
    Wk[:d, :m], Wk[2 * d:2 * d + 1, m:] = WK, one
    mv = 0 if WV is None else WV.shape[1]
    Wv = nm.zeros((w, mv + (2 if decode == "stable" else 1)))
    if WV is not None:
        Wv[:d, :mv] = WV
    Wv[2 * d + 1:, mv:mv + 1] = one
    if decode == "stable":
        Wv[2 * d:2 * d + 1, mv + 1:] = one
        Wv[2 * d + 1:, mv + 1:] = nm.const(-1, (1, 1))
    return Wq, Wk, Wv


def weights_step2(nm: Numerics, WQ: Array, WK: Array, WV: Array) -> tuple[Array, Array, Array]:
    """Step 2's weights of Lemma 3.1: queries from the first half of the input, keys and values from the second."""
    d = WQ.shape[0]
    zq, zv = nm.zeros((d, WQ.shape[1])), nm.zeros((d, WV.shape[1]))
    return np.concatenate([zq, WQ]), np.concatenate([WK, zq]), np.concatenate([WV, zv])


def decode_A(pad: int):
    """The oracle's layer MLP for Step 1: A = (1 + pad)·p/(1 − p)."""

    def decode(nm: Numerics, H: Array) -> Array:
        p = H[:, :1]
        c = nm.const(1 + pad, p.shape)
        return nm.div(nm.mul(c, p), nm.sub(nm.ones(p.shape), p))

    return decode


def decode_AB(pad: int):
    """Fused: from [B/(A+1+pad), p] give [B, A], using A + 1 + pad = (1 + pad)/(1 − p)."""

    def decode(nm: Numerics, H: Array) -> Array:
        bv, p = H[:, :-1], H[:, -1:]
        c = nm.const(1 + pad, p.shape)
        total = nm.div(c, nm.sub(nm.ones(p.shape), p))  # A + 1 + pad
        A = nm.sub(total, c)
        return np.concatenate([nm.mul(bv, total), A], axis=1)

    return decode


def decode_A_stable(pad: int):
    """The stable decode's layer MLP for Step 1: from [p, q] = [A, 1 + pad]/(A + 1 + pad), A = (1 + pad)·p/q."""

    def decode(nm: Numerics, H: Array) -> Array:
        p, q = H[:, :1], H[:, 1:2]
        return nm.div(nm.mul(nm.const(1 + pad, p.shape), p), q)

    return decode


def decode_AB_stable(pad: int):
    """Fused, stable: from [B, A, 1 + pad]/(A + 1 + pad) give [B, A], using A + 1 + pad = (1 + pad)/q."""

    def decode(nm: Numerics, H: Array) -> Array:
        bv, p, q = H[:, :-2], H[:, -2:-1], H[:, -1:]
        total = nm.div(nm.const(1 + pad, q.shape), q)  # A + 1 + pad, from q alone
        return np.concatenate([nm.mul(bv, total), nm.mul(p, total)], axis=1)

    return decode


def step1_decoder(fused: bool, decode: str):
    """The layer MLP of a normaliser call: ``decode_A``/``decode_AB`` or their stable forms."""
    if decode not in DECODES:
        raise ValueError(f"decode must be one of {DECODES}, got {decode!r}")
    if decode == "stable":
        return decode_AB_stable if fused else decode_A_stable
    return decode_AB if fused else decode_A


def fold_rotation(nm: Numerics, WK: Array, rope: RoPE, delta: int) -> Array:
    """W^K R(delta): a key block's rotation relative to the query block, folded into the key weights."""
    return nm.matmul(WK, rope.rotation(nm, delta, WK.shape[1]))


def fused_input(nm: Numerics, X: Array, q0: int, k0: int, b: int) -> tuple[Array, int]:
    """The fused call's rows [x_key, x_query, 1, indicator] + the synthetic row for query block q0 and key
    block k0 (``plan.pair_layout``, as :func:`head_jobs` lays them out), and the zero-key padding k its
    decode counts."""
    N = X.shape[0]
    bq, bk = P.block_len(P.INT, N, b, q0), P.block_len(P.INT, N, b, k0)
    lay = P.pair_layout(P.INT, bq, bk, q0, k0, "norm")
    return layout_input(nm, X, X, lay), lay.units - 1


def head_jobs(nm: Numerics, X: Array, WQ: Array, WK: Array, WV: Array, b: int, scheme: str,
              tag: str, rope: RoPE | None = None, length: int | None = None,
              decode: str = "paper", queries: Collection[int] | None = None) -> tuple[list[HeadJob], list[PairPlan]]:
    """All jobs of one head (X: N × d_head in numerics ``nm``; weights in ``nm``), in the plan's order
    (``plan.pair_index``); ``length``: every job padded to that many rows (Theorem 3.4); ``decode``: the
    paper's p/(1 − p) or the stable p/q (module docstring); ``queries``: only the pairs whose query block starts
    at one of these positions (a precision sweep's sampled rows), the others not built."""
    N, d = X.shape
    m = WQ.shape[1]
    jobs: list[HeadJob] = []
    plans: list[PairPlan] = []
    fused = scheme == "fused"
    w1 = weights_step1(nm, WQ, WK, WV if fused else None, decode)
    w2 = weights_step2(nm, WQ, WK, WV)
    decoder = step1_decoder(fused, decode)
    rope_dims = m if rope is not None else 0
    starts = block_starts(N, b)
    names = P.steps(fused)
    for c in range(P.pair_count(len(starts), fused)):
        tq, t, si = P.pair_index(P.INT, len(starts), fused, c)
        q0, k0 = starts[tq], starts[t]
        if queries is not None and q0 not in queries:
            continue
        bq, bk = P.block_len(P.INT, N, b, q0), P.block_len(P.INT, N, b, k0)
        lay = P.pair_layout(P.INT, bq, bk, q0, k0, names[si], length)
        if rope is not None:
            WK_pair = fold_rotation(nm, WK, rope, k0 - q0)
            w1 = weights_step1(nm, WQ, WK_pair, WV if fused else None, decode)
            w2 = weights_step2(nm, WQ, WK_pair, WV)
        Z = layout_input(nm, X, X, lay)
        if names[si] == "ratio":
            jobs.append(HeadJob(f"{tag}.step2", Z, *w2, rope_dims=rope_dims))
            plans.append(PairPlan(q0, bq, t, "R", lay.units, lay))
        else:
            jobs.append(HeadJob(f"{tag}.{'fused' if fused else 'step1'}", Z, *w1, decode=decoder(lay.units - 1),
                                rope_dims=rope_dims))
            plans.append(PairPlan(q0, bq, t, "AB" if fused else "A", lay.units - 1, lay))
    return jobs, plans


def sort_parts(nm: Numerics, parts: Iterable[tuple[K, str, Array, int]]) -> tuple[dict[K, Array], dict[K, Array]]:
    """The terms A and B of eq. (1) per part key, from decoded call outputs ``(key, kind, rows, shift)``.

    kind ``"A"``: a normaliser call, rows [A]; ``"AB"``: a fused call, rows [B, A]; ``"R"``: a ratio
    call, rows B/(A + shift) (shift = the zero rows padded into the call), so B = rows·(A + shift)
    once the part's A is known.
    """
    A: dict[K, Array] = {}
    B: dict[K, Array] = {}
    ratio: dict[K, tuple[Array, int]] = {}
    for key, kind, rows, shift in parts:
        if kind == "A":
            A[key] = rows[:, :1]
        elif kind == "R":
            ratio[key] = (rows, shift)
        else:
            B[key], A[key] = rows[:, :-1], rows[:, -1:]
    for key, (r, shift) in ratio.items():
        B[key] = nm.mul(r, nm.add(A[key], nm.const(shift, A[key].shape)))
    return A, B


def combine(nm: Numerics, ledger: Ledger, N: int, m: int, plans: Sequence[PairPlan],
            results: Sequence[Array], tag: str, round: int) -> Array:
    """Eq. (1): y_i = Σ_t B_{i,t} / Σ_t A_{i,t}, outside the oracle, recorded as processing. A call's
    result is read at the rows of its layout's used queries and lands on their tokens (``plan.query_map``)."""
    A, Bs = sort_parts(nm, (((plan.q0, plan.t), plan.kind, out[P.query_rows(plan.layout)], plan.pad)
                            for plan, out in zip(plans, results)))
    lands = {(plan.q0, plan.t): P.query_tokens(plan.layout) for plan in plans}
    Y = nm.zeros((N, m))
    for q0 in sorted({k[0] for k in A}):
        ts = sorted(t for (q, t) in A if q == q0)
        num, den = Bs[(q0, ts[0])], A[(q0, ts[0])]
        for t in ts[1:]:
            num, den = nm.add(num, Bs[(q0, t)]), nm.add(den, A[(q0, t)])
        Y[lands[(q0, ts[0])]] = nm.safe_div(num, den)
        ledger.record("processing", f"{tag}.combine", round=round, shape=num.shape,
                      flops=2 * num.shape[0] * len(ts) * (m + 1))
    return Y
