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
    n_inside = inside.sum(axis=1)
    out: list[Violation] = []
    small = isinstance(weights, RationalWeights) and _fits_int64(weights, km.shape[0] * ell + 1)
    for i in range(qm.shape[0]):
        floor_den = (int(n_inside[i]) - 1) * ell + 1
        if isinstance(weights, RationalWeights):
            num, den = weights.num[i].astype(np.int64 if small else object), int(weights.den[i])
            positive, negative = num > 0, num < 0
            row_sum_ok = int(num.sum()) == den if den else not positive.any()
            too_small = [j for j in np.flatnonzero(near[i]) if den == 0 or num[j] * floor_den < den]
        else:
            w = np.asarray(weights[i], dtype=np.float64)
            require(bool(np.all(np.isfinite(w))), "weights", f"row {i} contains NaN or inf")
            positive, negative = w > 0, w < -rtol
            s = float(w.sum())
            row_sum_ok = abs(s - 1.0) <= rtol * max(1, len(w)) or not (np.abs(w) > rtol).any()
            too_small = [j for j in np.flatnonzero(near[i]) if w[j] * floor_den < 1.0 - rtol * floor_den]
        for j in np.flatnonzero(negative):
            out.append(Violation("nonnegative", i, int(j), "negative weight"))
        if not row_sum_ok:
            out.append(Violation("normalized", i, None, "weights neither sum to 1 nor are all zero"))
        for j in np.flatnonzero(positive & ~inside[i]):
            out.append(Violation("locality", i, int(j),
                                 f"positive weight on a key at distance {dist[i, j]:.4g} > c*r = {c * r:.4g}"))
        for j in too_small:
            out.append(Violation("coverage", i, int(j),
                                 f"near key (distance {dist[i, j]:.4g} <= r) weighted below 1/{floor_den}"))
    return out
