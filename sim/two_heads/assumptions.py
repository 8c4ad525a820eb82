"""two_heads.thm_4_1's assumptions, measured on the actual input (float64; no theory here).

For one head with queries q_i, keys k_j, values v_j (rows of X W^Q, X W^K, X W^V) the theorem
assumes, with a_ij = exp(<q_i, k_j>) and b_ij = a_ij v_j (Thm 4.1 / C.1):

* ``1/C <= a_ij <= C`` for all i, j — measured as C = exp(max_ij |<q_i, k_j>|), the smallest C
  that holds;
* ``D N max_j ||b_ij|| <= ||sum_j b_ij||`` for all i — measured as the largest D that holds,
  D = min_i ||sum_j b_ij|| / (N max_j ||b_ij||) (0 when some row's values cancel exactly).

Softmax is invariant to a constant shift of a row's scores, and the proof only uses the ratio
max_j a_ij / min_j a_ij <= C^2; ``C_row_range`` = exp(max_i (max_j s_ij - min_j s_ij)/2) is that
shift-invariant constant, reported beside the literal C (the checker uses the literal one).

Both are computed in row chunks so that N = 8192 needs no N x N array at once. Whether M is large
enough for these constants is a theory question (``attnsim.theory.average_case``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CHUNK = 512


@dataclass(frozen=True)
class Assumptions:
    """Thm 4.1's constants measured on an input: C, its shift-invariant variant and D."""
    C: float             # exp(max |score|): the literal constant of the theorem
    C_row_range: float   # exp(max row range / 2): the shift-invariant constant
    D: float             # value non-cancellation ratio
    max_abs_score: float
    worst_D_row: int


def measure(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> Assumptions:
    """C and D of one head on its actual queries, keys and values (float64 arrays)."""
    N = q.shape[0]
    vnorm = np.linalg.norm(v, axis=1)
    max_abs, max_range = 0.0, 0.0
    best_D, worst_row = math.inf, 0
    for s in range(0, N, CHUNK):
        S = q[s:s + CHUNK] @ k.T
        max_abs = max(max_abs, float(np.abs(S).max()))
        max_range = max(max_range, float((S.max(axis=1) - S.min(axis=1)).max()))
        shift = S.max(axis=1, keepdims=True)  # a common factor exp(shift) cancels in the ratio D
        a = np.exp(S - shift)
        num = np.linalg.norm(a @ v, axis=1)
        den = N * (a * vnorm[None, :]).max(axis=1)
        ratio = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
        i = int(np.argmin(ratio))
        if ratio[i] < best_D:
            best_D, worst_row = float(ratio[i]), s + i
    return Assumptions(C=math.exp(max_abs) if max_abs < 700 else math.inf,
                       C_row_range=math.exp(max_range / 2) if max_range < 1400 else math.inf,
                       D=best_D, max_abs_score=max_abs, worst_D_row=worst_row)
