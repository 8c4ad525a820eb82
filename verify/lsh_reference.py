"""An independent reference for Algorithms 1 and 2 (anna.alg_1, anna.alg_2; Thm 3.4 / A.1, §3.1).

Algorithm 1 stores, per table u, the sum and the count of the values of the keys in each bucket
g_u(k); a query adds up the buckets g_u(q) of every table. So its output is fixed by the collision
counts c[i, j] = #{u : g_u(q_i) = g_u(k_j)}: sums_i = Σ_j c_ij v_j and counts_i = Σ_j c_ij.

This module recomputes c from the drawn hash parameters alone (the projections ``a``, offsets ``b``,
width ``w`` and the cross-polytope flag of each table), sharing no code with the construction
(``attnsim.sim.anna.lsh`` and ``attnsim.sim.anna.attention``): each of the z hash values of a point
is computed here from the table's parameters, and a query and a key collide in a table only when all
z values agree, judged for every (query, key) pair: no bucket is ever formed. A construction that looks
buckets up by fewer than the z values (a loosened key) merges buckets the reference keeps apart, and its
sums and counts differ.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

REFERENCE = "attnsim.verify.lsh_reference.collision_counts"
"""The name a record gives this reference (``Measurement.reference``)."""

_SCRATCH = 2**18
"""Query-key pairs times tables compared at once: a few hundred KiB of scratch, reused while it is in cache (a
larger block costs more CPU, fresh pages and all, for the same comparisons)."""


def hash_values(tables: Sequence[Any], x: np.ndarray) -> np.ndarray:
    """The z hash values of every row of ``x`` under each table's parameters (tables × N × z integers).

    The tables are draws of one family (as Algorithm 1, line 1 draws them): one kind (hyperplane, p-stable
    or cross-polytope) and one shape of ``a``."""
    kinds = {(np.shape(t.a), t.w is None, bool(t.rotations)) for t in tables}
    if len(kinds) != 1:
        raise ValueError(f"tables: the reference needs draws of one family and shape, got {sorted(kinds)}")
    a = np.stack([np.asarray(t.a, dtype=np.float64) for t in tables])  # (tables, rows of a, dim)
    proj = (a @ np.asarray(x, dtype=np.float64).T).transpose(0, 2, 1)  # (tables, N, rows of a)
    if tables[0].rotations:  # z rotations of dim rows each: the nearest of ±e_i after each rotation
        dim = a.shape[2]
        rotated = proj.reshape(len(tables), len(x), -1, dim)
        i = np.abs(rotated).argmax(axis=3)
        negative = np.take_along_axis(rotated, i[..., None], axis=3)[..., 0] < 0
        return (i + dim * negative).astype(np.int64)
    if tables[0].w is None:
        return (proj >= 0).astype(np.int64)
    b = np.stack([np.asarray(t.b, dtype=np.float64) for t in tables])[:, None, :]
    w = np.array([float(t.w) for t in tables])[:, None, None]
    return np.floor((proj + b) / w).astype(np.int64)


def _numbers(hq: np.ndarray, hk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each point's z hash values of a table as one integer; two points of a table share it exactly when all z
    values agree. The values, shifted to 0 .. W - 1 per table and hash function, are its digits in base W while
    W^z < 2^63; otherwise it is the rank of the table and values among the distinct rows (``np.unique``, slower)."""
    low = np.minimum(hq.min(axis=1, initial=0), hk.min(axis=1, initial=0))[:, None, :]
    hq, hk = hq - low, hk - low
    base = int(max(hq.max(initial=0), hk.max(initial=0))) + 1
    tables, n_q, z = hq.shape
    if z * np.log2(base) < 63:
        digits = base ** np.arange(z, dtype=np.int64)
        return hq @ digits, hk @ digits
    rows = np.concatenate([hq, hk], axis=1)
    table = np.broadcast_to(np.arange(tables)[:, None, None], (tables, rows.shape[1], 1))
    _, ids = np.unique(np.concatenate([table, rows], axis=2).reshape(-1, z + 1), axis=0, return_inverse=True)
    ids = ids.reshape(tables, -1)
    return ids[:, :n_q], ids[:, n_q:]


def collision_counts(q: np.ndarray, k: np.ndarray, tables: Sequence[Any]) -> np.ndarray:
    """c[i, j]: the number of tables in which all z hash values of q_i and k_j agree (Nq × Nk), every pair
    compared (:func:`_numbers`)."""
    c = np.zeros((len(q), len(k)), dtype=np.int64)
    step = max(1, _SCRATCH // max(1, len(q) * len(k)))
    for lo in range(0, len(tables), step):
        nq, nk = _numbers(*(hash_values(tables[lo:lo + step], x) for x in (q, k)))
        c += (nq[:, :, None] == nk[:, None, :]).sum(axis=0)
    return c


def retrieval(c: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sums, counts) that Algorithm 1 must return for collision counts ``c`` and values ``v``."""
    return c @ np.asarray(v), c.sum(axis=1)
