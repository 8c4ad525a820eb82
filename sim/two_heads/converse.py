"""two_heads.thm_4_2 — the converse: N/M small single-head instances inside one large single-head call.

For instances i = 1..n (n = N/M), each with its own input X_i (M × d) and weights W^Q_i, W^K_i, W^V_i
(Thm 4.2 / C.2):

1. **Small products** (3n, outside the oracle, ledger kind ``processing``, tag
   ``thm_4_2.small_products``): q, k, v = X_i W^Q_i, X_i W^K_i, X_i W^V_i. One large head has one set
   of weights; the n instances have n sets, so these products cannot be folded into the call.
2. **Separating codes**: the smallest even r with C(r, r/2) >= n; instance i gets the i-th r/2-subset
   Z_i of [r] (lexicographic order), u_i ∈ {0, -B}^r zero exactly on Z_i, and w_i = B·1 + u_i ∈ {0, B}^r
   (the paper calls w_i "v_i", which clashes with the values;
   docs/reconstructions.md, "Naming the key codes of Thm 4.2"). <u_i, w_i> = 0, and for
   i ≠ i' some coordinate has u_i = -B and w_i' = B, so <u_i, w_i'> <= -B².
3. **One call** of length N and width 3(d + r): rows [q, u_i | k, w_i | v, 0] and W^Q = [I; 0; 0],
   W^K = [0; I; 0], W^V = [0; 0; I]. Scores inside an instance are unchanged; across instances they
   drop by at least B², so each query's output is its own instance's attention up to an absolute
   error <= N C exp(2C² - B²)(1 + exp(C²))/M (C bounds |score|^(1/2) and |v|; the bound is the
   paper's and lives in paper_refs).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, islice
from math import comb
from typing import Sequence

import numpy as np

from attnsim.sim.errors import AttnsimError
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads.jobs import HeadJob, run_one_per_call

TAG = "thm_4_2"


@dataclass(frozen=True, eq=False)
class Instance:
    """One small single-head transformer: X (M × d) and its W^Q, W^K, W^V (d × d), as Fractions."""

    X: np.ndarray
    WQ: np.ndarray
    WK: np.ndarray
    WV: np.ndarray


def code_length(n: int) -> int:
    """The smallest even r >= 2 with C(r, r/2) >= n."""
    if n < 1:
        raise AttnsimError(f"need at least one instance, got n = {n}", param="N")
    r = 2
    while comb(r, r // 2) < n:
        r += 2
    return r


def code_sets(n: int, r: int) -> list[tuple[int, ...]]:
    """Z_1..Z_n: the first n subsets of size r/2 of range(r)."""
    return list(islice(combinations(range(r), r // 2), n))


def small_products(nm: Numerics, oracle: Oracle, inst: Instance) -> tuple[Array, Array, Array]:
    """Each small instance's X W^Q, X W^K, X W^V as M × d × d products, written to the ledger."""
    X = nm.array(inst.X, "X_i")
    out = []
    for name, W in (("W^Q", inst.WQ), ("W^K", inst.WK), ("W^V", inst.WV)):
        Wn = nm.array(W, name)
        out.append(nm.matmul(X, Wn))
        M, d = X.shape
        oracle.ledger.record("processing", f"{TAG}.small_products", round=oracle.round, shape=(M, d, Wn.shape[1]),
                             flops=2 * M * d * Wn.shape[1])
    return out[0], out[1], out[2]


def simulate(instances: Sequence[Instance], oracle: Oracle, B: float) -> Array:
    """Every instance's attention output, stacked (N × d), from one oracle call."""
    if not instances:
        raise AttnsimError("need at least one instance", param="N")
    nm = oracle.nm
    shapes = {(i.X.shape, i.WQ.shape, i.WK.shape, i.WV.shape) for i in instances}
    if len(shapes) != 1:
        raise AttnsimError("instances: all must have the same length M and width d")
    n = len(instances)
    r = code_length(n)
    rows_q, rows_k, rows_v = [], [], []
    for inst, Z in zip(instances, code_sets(n, r)):
        q, k, v = small_products(nm, oracle, inst)
        M = q.shape[0]
        u = np.array([0.0 if c in Z else -float(B) for c in range(r)])
        u_rows = nm.array(np.tile(u, (M, 1)), "u (code)")
        w_rows = nm.array(np.tile(float(B) + u, (M, 1)), "w (code)")
        rows_q.append(np.concatenate([q, u_rows], axis=1))
        rows_k.append(np.concatenate([k, w_rows], axis=1))
        rows_v.append(np.concatenate([v, nm.zeros((M, r))], axis=1))
    Qp, Kp, Vp = np.concatenate(rows_q), np.concatenate(rows_k), np.concatenate(rows_v)
    dp = Qp.shape[1]
    Xbig = np.concatenate([Qp, Kp, Vp], axis=1)
    eye, zero = nm.array(np.eye(dp, dtype=np.int64)), nm.zeros((dp, dp))
    WQ = np.concatenate([eye, zero, zero])
    WK = np.concatenate([zero, eye, zero])
    WV = np.concatenate([zero, zero, eye])
    out = run_one_per_call(oracle, [HeadJob(f"{TAG}.large_call", Xbig, WQ, WK, WV)])[0]
    return out[:, :instances[0].WV.shape[1]]


def reference(nm: Numerics, instances: Sequence[Instance]) -> Array:
    """Each instance's attention computed on its own, stacked (the truth)."""
    outs = []
    for inst in instances:
        X = nm.array(inst.X, "X_i")
        q, k, v = (nm.matmul(X, nm.array(W, "W")) for W in (inst.WQ, inst.WK, inst.WV))
        outs.append(nm.attention(q, k, v))
    return np.concatenate(outs)
