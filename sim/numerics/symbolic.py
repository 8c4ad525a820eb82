"""``symbolic``: the exact scheme with z a symbol — elements of the rational function field Q(z).

Softmax numerators are monomials z**(D*s) (scores on the grid (1/D)Z, as in ``exact``). Equality of
two results is equality of rational functions, i.e. a proof of the identity for that instance for
every base z, including z = e^(1/D). Use small sizes: arithmetic in Q(z) grows with the degree.

``to_grid`` (used by grid-rounding layer maps) first evaluates at the seed's rational point z0 (the
``exact:D:seeded`` backend's base), so later layers start from numbers again; the identity checked is then
that of the last layer, in z, given the earlier layers at z0.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from sympy import QQ
from sympy.polys.fields import field

from attnsim.sim.numerics.base import Array, Numerics, NumericsError
from attnsim.sim.numerics.exact import draw_base

FIELD, Z = field("z", QQ)


class Symbolic(Numerics):
    """Exact arithmetic in Q(z) with z a symbol: an identity checked here holds for every base z."""
    exact = True

    def __init__(self, grid: int = 64, seed: int = 0) -> None:
        """Scores on the grid (1/grid)ℤ; ``seed`` draws the rational point z0 at which grid rounding is decided."""
        if grid < 1:
            raise NumericsError(f"symbolic: the score grid denominator D must be >= 1, got {grid}")
        self.name = "symbolic" if grid == 64 else f"symbolic:{grid}"
        self.grid = grid
        self.z0 = draw_base(seed)

    def scalar(self, value: int | Fraction | float) -> Any:
        """``value`` as an element of Q(z)."""
        if isinstance(value, float):
            value = Fraction(value)
        if isinstance(value, (int, np.integer)):
            return FIELD(int(value))
        if isinstance(value, Fraction):
            return FIELD(QQ(value.numerator, value.denominator))
        if isinstance(value, type(Z)):
            return value
        raise NumericsError(f"{self.name}: cannot represent {value!r}")

    def _at_z0(self, x: Any) -> Fraction:
        z0 = QQ(self.z0.numerator, self.z0.denominator)
        if x.numer.is_ground and x.denom.is_ground:
            return self._ground(x)
        v = x.numer(z0) / x.denom(z0)
        return Fraction(int(v.numerator), int(v.denominator))

    @staticmethod
    def _ground(x: Any) -> Fraction:
        """A constant element of Q(z) as a Fraction."""
        v = x.numer.LC / x.denom.LC
        return Fraction(int(v.numerator), int(v.denominator))

    def to_fraction_or_float(self, value: Any) -> Fraction:
        """The value at z = z0 (the exact:D:seeded base for the same seed)."""
        return self._at_z0(value)

    def weights(self, scores: Array, allowed: np.ndarray | None) -> Array:
        """Softmax numerators z^(D·s) as elements of Q(z); disallowed entries are 0."""
        out = np.empty(scores.shape, dtype=object)
        flat_s, flat_o = scores.reshape(-1), out.reshape(-1)
        flat_a = None if allowed is None else np.broadcast_to(allowed, scores.shape).reshape(-1)
        for i, s in enumerate(flat_s):
            if flat_a is not None and not flat_a[i]:
                flat_o[i] = FIELD(0)
                continue
            if not (s.numer.is_ground and s.denom.is_ground):
                raise NumericsError(f"{self.name}: a score depends on z; scores must be numbers on the grid")
            k = Fraction(self._ground(s)) * self.grid
            if k.denominator != 1:
                raise NumericsError(f"{self.name}: score {k / self.grid} is not on the grid (1/{self.grid})Z")
            flat_o[i] = Z ** int(k)
        return out

    def to_grid(self, a: Array, denominator: int) -> Array:
        """Round to the grid (1/denominator)ℤ, choosing the grid point by the value at z0."""
        def rnd(x: Any) -> Any:
            f = self._at_z0(x)
            return self.scalar(Fraction(round(f * denominator), denominator))

        return np.vectorize(rnd, otypes=[object])(a) if a.size else a
