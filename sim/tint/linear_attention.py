"""tint.thm_2_5 (Theorem 2.5): softmax attention simulates a linear attention head with error O(eps).

A linear head outputs L_t = sum_{j in J_t} <q_t, k_j> v_j. Softmax is invariant to shifting the scores
of a row, so on its own it only sees centred scores; one reading of the theorem subtracts a uniform
head and still has to remove the term s_bar_t sum_j v_j. Our construction (a reconstruction; the
paper's exact statement was not available) removes that term with one *sink* key instead: every row
may also attend a sink with value 0 and score log(1/eps), so the sink's weight 1/eps dominates the
denominator. Two softmax heads over [sink; keys]:

  head A: scores eps <q_t, k_j>,  head U: scores 0 (same sink),
  L_t ~ (A_t - U_t) / eps^2,

because W/(W + sum_j e^{eps s_j}) = 1 - O(eps) for W = 1/eps, and (e^{eps s} - 1)/eps = s + O(eps).
Both terms give an error O(eps) (constant ~ n |s| |v| (1 + |s|)), until round-off, amplified by
1/eps^2, takes over. Two softmax heads replace one linear head (docs/reconstructions.md, "Softmax simulating
linear attention (Thm 2.5)").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.aux_model import softmax_rows


def linear_head(q: np.ndarray, k: np.ndarray, v: np.ndarray, allowed: np.ndarray, zero: Any) -> np.ndarray:
    """The linear head itself: sum over allowed j of <q_t, k_j> v_j."""
    return np.where(allowed, q @ k.T, zero) @ v


def key_groups(allowed: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rows of a mask grouped by their allowed keys: (keys J, rows t with J_t = J) for each distinct J."""
    rows_of, which = np.unique(allowed, axis=0, return_inverse=True)
    return [(np.flatnonzero(mask), np.flatnonzero(which.reshape(-1) == p)) for p, mask in enumerate(rows_of)]


def grouped_linear_head(q: np.ndarray, k: np.ndarray, v: np.ndarray, groups: list[tuple[np.ndarray, np.ndarray]],
                        zero: Any) -> np.ndarray:
    """:func:`linear_head` in exact arithmetic, grouped as L_t = q_t · sum_{j in J_t} k_j v_j^T over the mask's
    :func:`key_groups`: rows with the same allowed keys share one (head width)² sum, so a head costs O(N·b²)
    products of long rationals instead of O(N²·b) (TinT's masks have a few distinct rows). Exact sums do not
    depend on grouping: the values are :func:`linear_head`'s."""
    out = np.full((q.shape[0], v.shape[1]), zero, dtype=object)
    for keys, rows in groups:
        if len(keys):
            out[rows] = q[rows] @ (k[keys].T @ v[keys])
    return out


def sink_score(ar: Arith, eps: Any) -> Any:
    """log(1/eps): the sink's softmax weight is then 1/eps."""
    if ar.kind == "float64":
        return float(-np.log(eps))
    value = -ar.ctx.log(ar.ctx.mpf(eps) if ar.kind == "mp" else ar.ctx.mpf(int(eps.p)) / int(eps.q))
    return value if ar.kind == "mp" else ar.scalar(value)


def softmax_simulation(ar: Arith, q: np.ndarray, k: np.ndarray, v: np.ndarray, allowed: np.ndarray,
                       eps: Any) -> np.ndarray:
    """(A - U) / eps^2 from two softmax heads over [sink; keys] (see the module docstring)."""
    eps = ar.scalar(eps)
    n = q.shape[0]
    zero = ar.scalar(0)
    sink = np.full((n, 1), sink_score(ar, eps), dtype=object if ar.kind != "float64" else float)
    keep = np.concatenate([np.ones((n, 1), dtype=bool), allowed], axis=1)
    values = np.concatenate([ar.zeros((1, v.shape[1])), v], axis=0)
    scores = np.concatenate([sink, (q @ k.T) * eps], axis=1)
    flat = np.concatenate([sink, ar.zeros(allowed.shape)], axis=1)
    a = softmax_rows(ar, np.where(keep, scores, zero), keep) @ values
    u = softmax_rows(ar, np.where(keep, flat, zero), keep) @ values
    return (a - u) / (eps * eps)
