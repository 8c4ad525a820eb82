"""An independent reference for Algorithms 1 and 2 (anna.alg_1, anna.alg_2; Thm 3.4 / A.1, §3.1).

Algorithm 1 stores, per table u, the sum and the count of the values of the keys in each bucket
g_u(k); a query adds up the buckets g_u(q) of every table. So its output is fixed by the collision
counts c[i, j] = #{u : g_u(q_i) = g_u(k_j)}: sums_i = Σ_j c_ij v_j and counts_i = Σ_j c_ij.

This module recomputes c from the drawn hash parameters alone (the projections ``a``, offsets ``b``,
width ``w`` and the cross-polytope flag of each table), sharing no code with the construction
(``attnsim.sim.anna.lsh`` and ``attnsim.sim.anna.attention``): each of the z hash values of a point
is computed here, one hash function at a time, and a query and a key collide in a table only when
all z values agree, compared pair by pair. A construction that looks buckets up by fewer than the
z values (a loosened key) merges buckets the reference keeps apart, and its sums and counts differ.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

REFERENCE = "attnsim.verify.lsh_reference.collision_counts"
"""The name a record gives this reference (``Measurement.reference``)."""


def hash_values(table: Any, x: np.ndarray) -> np.ndarray:
    """The z hash values of every row of ``x`` under one table's parameters (N × z integers)."""
    a, b, w = np.asarray(table.a, dtype=np.float64), np.asarray(table.b, dtype=np.float64), table.w
    x = np.asarray(x, dtype=np.float64)
    if table.rotations:  # z rotations of dim rows each: the nearest of ±e_i after each rotation
        dim = a.shape[1]
        values = []
        for t in range(a.shape[0] // dim):
            rotated = np.einsum("ij,nj->ni", a[t * dim:(t + 1) * dim], x)
            i = np.abs(rotated).argmax(axis=1)
            negative = rotated[np.arange(len(x)), i] < 0
            values.append(i + dim * negative)
        return np.stack(values, axis=1).astype(np.int64)
    values = []
    for t in range(a.shape[0]):
        proj = np.einsum("j,nj->n", a[t], x)
        values.append(proj >= 0 if w is None else np.floor((proj + b[t]) / w))
    return np.stack(values, axis=1).astype(np.int64)


def collision_counts(q: np.ndarray, k: np.ndarray, tables: Sequence[Any]) -> np.ndarray:
    """c[i, j]: the number of tables in which all z hash values of q_i and k_j agree (Nq × Nk)."""
    c = np.zeros((len(q), len(k)), dtype=np.int64)
    for table in tables:
        hq, hk = hash_values(table, q), hash_values(table, k)
        c += (hq[:, None, :] == hk[None, :, :]).all(axis=2)
    return c


def retrieval(c: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sums, counts) that Algorithm 1 must return for collision counts ``c`` and values ``v``."""
    return c @ np.asarray(v), c.sum(axis=1)
