"""Rotary position embeddings (RoPE) as exact or real rotations, for the rebuttal claim
two_heads.rebuttal_rope (the authors' answer to reviewers: the simulations stay exact
with RoPE).

Coordinates are rotated in pairs (0,1), (2,3), …; an odd last coordinate is left alone. For a row
vector x at position p, ``x @ R(p)`` with R(p) block-diagonal of [[cos pθ_k, sin pθ_k],
[−sin pθ_k, cos pθ_k]]. Then R(a)R(b) = R(a + b) and R(p)^T = R(−p), so

    <x R(i), y R(j)> = x R(i − j) y^T,

the identity that lets a block pair's relative rotation fold into that call's key weights.

Angle families:

* ``real`` — θ_k = base^(−2k/m) (base 10000), evaluated at high precision (mp and float64);
* ``quarter`` — θ_k = π/2 for every pair: entries in {0, ±1}. The only rotations whose entries keep
  scores on the exact numerics' grid (1/D)Z — an exact stand-in for RoPE, labelled as such;
* ``pythagorean`` — cos θ = 3/5, sin θ = 4/5 (rational entries of growing denominators 5^p), used
  to prove the rotation identity itself exactly; scores then leave any fixed grid, so softmax
  checks with these angles run in mp only.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from attnsim.sim.errors import AttnsimError
from attnsim.sim.numerics import Array, Numerics

KINDS = ("real", "quarter", "pythagorean")
_HP = mpmath.MPContext()
_HP.prec = 600


@dataclass(frozen=True)
class RoPE:
    """Rotary embeddings: ``kind`` is ``real`` (cos/sin) or an exact rational rotation (``quarter``,
    ``pythagorean``); ``base`` sets the frequencies of the real kind."""
    kind: str = "real"
    base: int = 10000

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise AttnsimError(f"must be one of {KINDS}, got {self.kind!r}", param="rope")

    def _cos_sin(self, p: int, k: int, width: int) -> tuple[Any, Any]:
        if self.kind == "quarter":
            return [(1, 0), (0, 1), (-1, 0), (0, -1)][p % 4]
        if self.kind == "pythagorean":
            re, im = Fraction(1), Fraction(0)
            for _ in range(abs(p)):  # (3 + 4i)/5 to the power |p|
                re, im = re * Fraction(3, 5) - im * Fraction(4, 5), re * Fraction(4, 5) + im * Fraction(3, 5)
            return re, (im if p >= 0 else -im)
        theta = _HP.power(self.base, _HP.mpf(-2 * k) / width)
        return _HP.cos(p * theta), _HP.sin(p * theta)

    def rotation(self, nm: Numerics, p: int, width: int, dims: int | None = None) -> Array:
        """R(p) (width × width) rotating the first ``dims`` coordinates (default all) in pairs."""
        dims = width if dims is None else dims
        R = np.empty((width, width), dtype=object)
        R[:, :] = 0
        for i in range(width):
            R[i, i] = 1
        for k in range(dims // 2):
            c, s = self._cos_sin(p, k, dims)
            a, b = 2 * k, 2 * k + 1
            R[a, a], R[a, b], R[b, a], R[b, b] = c, s, -s, c
        return nm.array(R, "RoPE rotation")

    def apply(self, nm: Numerics, X: Array, positions: list[int], dims: int | None = None) -> Array:
        """Row r of X rotated by R(positions[r]) (first ``dims`` coordinates)."""
        width = X.shape[1]
        rows = [nm.matmul(X[r:r + 1], self.rotation(nm, p, width, dims)) for r, p in enumerate(positions)]
        return np.concatenate(rows, axis=0) if rows else X
