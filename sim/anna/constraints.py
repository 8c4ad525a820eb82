"""The ANNA definition as a checker that returns reasons (anna.def_anna, the ANNA definition of §3).

For weights w (N_q x N_k), queries q and keys k, an ANNA mechanism with parameters (r, c, ell)
must satisfy, for every row i:

* ``nonnegative``: w_ij >= 0;
* ``normalized``: sum_j w_ij = 1, or the row is all zero (no key retrieved;
  docs/reconstructions.md, "A query that retrieves nothing outputs zero");
* ``locality``:   w_ij > 0 implies ||q_i - k_j|| <= c r;
* ``coverage``:   ||q_i - k_j|| <= r implies w_ij >= 1 / ((n_i - 1) ell + 1), n_i = |N(q_i, c r)|.

Our reading: n_i counts key *indices* j within c r (with multiplicity), not distinct key vectors: the
proof's bound count <= (n_i - 1) ell + 1 counts one term per colliding index, and with repeated
keys the set reading would demand weight 1 for each of two equal keys.

Weights may be floats (compared with a relative tolerance) or :class:`RationalWeights` (an integer
numerator matrix over an integer denominator per row, compared exactly).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnsim.sim.anna.errors import as_matrix, require


@dataclass(frozen=True)
class RationalWeights:
    """w_ij = num[i, j] / den[i] exactly; den[i] = 0 marks an empty row (num row all zero)."""

    num: np.ndarray
    den: np.ndarray

    @classmethod
    def from_counts(cls, counts: np.ndarray) -> "RationalWeights":
        """The weights implied by collision counts c_ij: c_ij / sum_j c_ij (Algorithm 1)."""
        c = np.asarray(counts, dtype=np.int64)
        return cls(c, c.sum(axis=1))

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the weight matrix."""
        return tuple(self.num.shape)  # type: ignore[return-value]


@dataclass(frozen=True)
class Violation:
    """One broken constraint: the rule, the query row, the key column (if any) and why."""

    rule: str
    row: int
    col: int | None
    detail: str

    def __str__(self) -> str:
        where = f"row {self.row}" + (f", key {self.col}" if self.col is not None else "")
        return f"{self.rule} ({where}): {self.detail}"


def distances(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Euclidean distances ||q_i - k_j|| as an N_q x N_k float matrix (rows in blocks: bounded scratch memory)."""
    qf, kf = q.astype(np.float64), k.astype(np.float64)
    out = np.empty((qf.shape[0], kf.shape[0]))
    step = max(1, 2**22 // max(1, kf.shape[0] * kf.shape[1]))
    for lo in range(0, qf.shape[0], step):
        diff = qf[lo:lo + step, None, :] - kf[None, :, :]
        out[lo:lo + step] = np.sqrt((diff * diff).sum(axis=2))
    return out


def _fits_int64(w: RationalWeights, floor_den: int) -> bool:
    """Whether every product num * floor_den and every row sum of ``w`` stays exact in int64."""
    num = np.asarray(w.num)
    if num.dtype == object or num.size == 0:
        return False
    biggest = int(np.abs(num).max())
    return biggest * max(floor_den, num.shape[1]) < 2**62


def check_anna(weights: np.ndarray | RationalWeights, q: object, k: object, *, r: float, c: float,
               ell: int, rtol: float = 1e-9) -> list[Violation]:
    """Every violation of the ANNA constraints by ``weights`` (an empty list means none)."""
    qm, km = as_matrix(q, "queries"), as_matrix(k, "keys")
    require(r >= 0, "r", f"must be >= 0, got {r}")
    require(c >= 1, "c", f"must be >= 1, got {c}")
    require(ell >= 1, "ell", f"must be >= 1, got {ell}")
    shape = weights.shape if isinstance(weights, RationalWeights) else np.shape(weights)
    require(tuple(shape) == (qm.shape[0], km.shape[0]), "weights",
            f"shape {tuple(shape)} does not match {qm.shape[0]} queries x {km.shape[0]} keys")
    dist = distances(qm, km)
    near, inside = dist <= r, dist <= c * r
    floor_den = (inside.sum(axis=1) - 1) * ell + 1  # per row, the proof's (n_i - 1) ell + 1
    if isinstance(weights, RationalWeights):
        small = _fits_int64(weights, km.shape[0] * ell + 1)
        exact = np.int64 if small else object  # object: Python integers, exact at any size
        num, den = (np.asarray(a).astype(exact) for a in (weights.num, weights.den))
        positive, negative = num > 0, num < 0
        empty = den == 0
        sum_ok = np.where(empty, ~positive.any(axis=1), num.sum(axis=1) == den).astype(bool)
        too_small = near & (empty[:, None] | (num * floor_den.astype(exact)[:, None] < den[:, None]))
    else:
        w = np.asarray(weights, dtype=np.float64)
        bad = ~np.isfinite(w).all(axis=1)
        require(not bad.any(), "weights", f"row {int(np.argmax(bad))} contains NaN or inf")
        positive, negative = w > 0, w < -rtol
        sum_ok = ((np.abs(w.sum(axis=1) - 1.0) <= rtol * max(1, w.shape[1]))
                  | ~(np.abs(w) > rtol).any(axis=1))
        too_small = near & (w * floor_den[:, None] < 1.0 - rtol * floor_den[:, None])
    far = positive & ~inside
    out: list[Violation] = []
    for i in map(int, np.flatnonzero(negative.any(axis=1) | ~sum_ok | far.any(axis=1) | too_small.any(axis=1))):
        out += [Violation("nonnegative", i, int(j), "negative weight") for j in np.flatnonzero(negative[i])]
        if not sum_ok[i]:
            out.append(Violation("normalized", i, None, "weights neither sum to 1 nor are all zero"))
        out += [Violation("locality", i, int(j), f"positive weight on a key at distance {dist[i, j]:.4g} > "
                          f"c*r = {c * r:.4g}") for j in np.flatnonzero(far[i])]
        out += [Violation("coverage", i, int(j), f"near key (distance {dist[i, j]:.4g} <= r) weighted below "
                          f"1/{floor_den[i]}") for j in np.flatnonzero(too_small[i])]
    return out
