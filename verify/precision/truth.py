"""The reference ("truth") of the precision sweeps: attention with the real exp, exact except for exp.

The precision study measures errors against the exact/mp reference. Running the ``mp`` backend on every
sampled row (N exps and N multiply-adds per row, one mpmath object each) costs seconds per N; this
module computes the same quantity much faster, exactly except for the exponentials:

* **Scores and values are exact.** The cases' inputs and weights are rationals with small
  denominators (``verify/cases.py``: X on (1/2)Z, W on (1/4)Z), so after scaling by the common
  denominators the queries, keys, values and the scores <q_i, k_j> are integers. They are computed
  in float64, which is exact because every partial sum stays below 2^53 (checked; a case that
  breaks the check is refused with a clear error).
* **Row sums are grouped by score.** A row's numerator and denominator are
  Σ_u e^(u/D) c_{i,u} and Σ_u e^(u/D) n_{i,u} over the *distinct* allowed scores u of that row, with
  n_{i,u} the number of allowed keys of score u and c_{i,u} the (integer) sum of their values —
  exact integer counts.
* **exp in mp.** Each distinct score gets e^((u − u_max)/D) from mpmath at P + 32 bits, stored as
  the integer ⌊e^((u − u_max)/D)·2^P⌋. P = 64 + log2 N + (the largest gap, in bits, between the
  overall top score and a row's top score), so every row's dominant term keeps ≥ 64 + log2 N bits.
  The sums are then exact Python-integer dot products, and y_i = num/den is rounded once to float64
  (``Fraction.__float__``, correctly rounded).

The reference's own row-wise relative error is therefore below 2^-52 (the final rounding to
float64; the truncated exps contribute < 2^-64): far below the targets the sweeps accept (≥ 2^-36).
tests/test_precision.py checks it against the ``mp:192`` backend's ``reference``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from attnsim.sim.model import HeadWeights
from attnsim.verify.registry import UsageError

GUARD_BITS = 64


def _as_integers(a: np.ndarray, what: str) -> tuple[np.ndarray, int]:
    """(a·D as float64 integers, D) with D the least common denominator of a's rational entries."""
    fr = [Fraction(v) for v in np.asarray(a, dtype=object).ravel()]
    D = math.lcm(*(f.denominator for f in fr)) if fr else 1
    ints = np.array([f.numerator * (D // f.denominator) for f in fr], dtype=object).reshape(np.shape(a))
    if ints.size and max(abs(int(v)) for v in ints.ravel()) >= 2 ** 26:
        raise UsageError(f"precision truth: {what} needs integers of more than 26 bits on its common "
                         f"denominator {D}; the exact score grid would not fit float64")
    return ints.astype(np.float64), D


def _exact_matmul(a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """a @ b for integer-valued float64 arrays, refused when a partial sum could reach 2^53."""
    bound = float(np.abs(a).max(initial=0)) * float(np.abs(b).max(initial=0)) * a.shape[-1]
    if bound >= 2.0 ** 53:
        raise UsageError(f"precision truth: {what} could exceed 2^53 and lose exactness in float64")
    return a @ b


def attention_truth(X: np.ndarray, head: HeadWeights, rows: np.ndarray, allowed: np.ndarray | None) -> np.ndarray:
    """Rows ``rows`` of softmax(X W^Q (X W^K)^T, mask ``allowed``) X W^V, as float64 (see the module docstring).

    ``allowed``: boolean (len(rows) × N), True where query row may attend key j; None for no mask.
    A row with no allowed key is 0 (a fully masked row outputs 0, as in every backend).
    """
    Xi, dx = _as_integers(X, "X")
    Wq, dq = _as_integers(head.WQ, "W^Q")
    Wk, dk = _as_integers(head.WK, "W^K")
    Wv, dv = _as_integers(head.WV, "W^V")
    Q = _exact_matmul(Xi[rows], Wq, "X W^Q")
    K = _exact_matmul(Xi, Wk, "X W^K")
    V = _exact_matmul(Xi, Wv, "X W^V")
    S = _exact_matmul(Q, K.T, "the scores")  # true scores · D
    D = dx * dq * dx * dk
    R, N = S.shape
    ok = np.ones((R, N), dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    out = np.zeros((R, V.shape[1]))
    if not ok.any():
        return out
    uniq, inv = np.unique(S[ok], return_inverse=True)
    U = len(uniq)
    row_of = np.broadcast_to(np.arange(R)[:, None], (R, N))[ok]
    key = row_of * U + inv
    counts = np.bincount(key, minlength=R * U).reshape(R, U)
    cols = np.broadcast_to(np.arange(N)[None, :], (R, N))[ok]
    csum = [np.bincount(key, weights=V[cols, c], minlength=R * U).reshape(R, U) for c in range(V.shape[1])]
    if any(float(np.abs(c).max(initial=0)) >= 2.0 ** 53 for c in csum):
        raise UsageError("precision truth: a grouped value sum could exceed 2^53 and lose exactness in float64")
    top = float(uniq[-1])
    row_top = np.where(ok, S, -np.inf).max(axis=1)
    live = np.isfinite(row_top)
    gap_bits = (top - float(row_top[live].min())) / D / math.log(2)
    P = GUARD_BITS + math.ceil(math.log2(max(N, 2))) + math.ceil(gap_bits)
    ctx = mpmath.MPContext()
    ctx.prec = P + 32
    scale = ctx.mpf(2) ** P
    E = np.array([int(ctx.exp(ctx.mpf(int(u) - int(top)) / D) * scale) for u in uniq], dtype=object)
    den = counts.astype(object) @ E
    nums = [c.astype(np.int64).astype(object) @ E for c in csum]
    for i in np.flatnonzero(live):
        d = int(den[i])
        for c, num in enumerate(nums):
            out[i, c] = float(Fraction(int(num[i]), d * dx * dv))
    return out
