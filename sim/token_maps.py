"""Token-wise maps: the input MLP φ and the layer MLPs ψ of two_heads Def 2.2.

The paper models MLPs as arbitrary token-wise functions (two_heads §2, Def 2.2). attnsim uses three:

* :class:`Identity`;
* :class:`Affine` — x ↦ x A + c;
* :class:`LayerNorm` — (x − mean)/sqrt(var + eps)·g + β, and :class:`Center` — x − mean, its
  root-free stand-in for exact numerics (rebuttal claim two_heads.rebuttal_norm);
* :class:`GridAffine` — x ↦ round_to_grid(x A + c). In ``exact`` numerics attention outputs leave the
  score grid; rounding each layer's output back onto a grid keeps the next layer's scores on
  (1/D)Z, so multi-layer models stay exactly checkable. Reference and simulation apply the same
  map to values that are already equal, so the rounding never separates them.

Parameters are held as Fractions (``data``) and converted into the numerics on use.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from attnsim.sim.numerics import Array, Numerics


class TokenMap:
    """A token-wise map (an MLP of Def 2.2): applied to each row independently."""
    name = "map"
    is_identity = False

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """Apply the map to every row of ``x``."""
        raise NotImplementedError

    def out_dim(self, in_dim: int) -> int:
        """Output width for input width ``in_dim``."""
        return in_dim


@dataclass(frozen=True)
class Identity(TokenMap):
    """The identity map."""
    name: str = "identity"
    is_identity: bool = True

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """Return ``x`` unchanged."""
        return x


@dataclass(frozen=True, eq=False)
class Affine(TokenMap):
    """x ↦ x A + c (A: d_in × d_out, c: d_out), given as Fractions."""

    A: np.ndarray
    c: np.ndarray
    name: str = "affine"

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """x A + c."""
        return nm.add(nm.matmul(x, nm.array(self.A, "ψ.A")), nm.array(self.c[None, :], "ψ.c"))

    def out_dim(self, in_dim: int) -> int:
        """Output width: the columns of A."""
        return int(self.A.shape[1])


@dataclass(frozen=True, eq=False)
class GridAffine(Affine):
    """x ↦ round(x A + c) to the grid (1/denominator)Z."""

    denominator: int = 2
    name: str = "grid-affine"

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """x A + c rounded to the score grid."""
        return nm.to_grid(super().__call__(nm, x), self.denominator)


def random_affine(rng: np.random.Generator, d_in: int, d_out: int, grid: int | None) -> Affine:
    """A random affine map with entries in (1/4)Z ∩ [-1, 1] (and bias in (1/2)Z), optionally gridded."""
    A = np.vectorize(lambda v: Fraction(int(v), 4), otypes=[object])(rng.integers(-4, 5, size=(d_in, d_out)))
    c = np.vectorize(lambda v: Fraction(int(v), 2), otypes=[object])(rng.integers(-2, 3, size=d_out))
    return GridAffine(A, c, denominator=grid) if grid else Affine(A, c)


@dataclass(frozen=True, eq=False)
class Center(TokenMap):
    """x ↦ x − mean(x): layer norm without the division by the root (rational; an exact stand-in)."""

    name: str = "center"

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """Subtract each row's mean."""
        d = x.shape[1]
        mean = nm.div(nm.rowsum(x), nm.const(d, (x.shape[0], 1)))
        return nm.sub(x, mean)


@dataclass(frozen=True, eq=False)
class LayerNorm(TokenMap):
    """x ↦ (x − mean)/sqrt(var + eps)·gamma + beta (gamma, beta as Fractions; needs a square root)."""

    gamma: np.ndarray
    beta: np.ndarray
    eps: Fraction = Fraction(1, 10**5)
    name: str = "layernorm"

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """Centre each row and divide by √(variance + eps)."""
        n, d = x.shape
        c = Center()(nm, x)
        var = nm.div(nm.rowsum(nm.mul(c, c)), nm.const(d, (n, 1)))
        scale = nm.sqrt(nm.add(var, nm.const(self.eps, (n, 1))))
        y = nm.div(c, scale)
        return nm.add(nm.mul(y, nm.array(self.gamma[None, :], "LN.gamma")), nm.array(self.beta[None, :], "LN.beta"))


@dataclass(frozen=True, eq=False)
class Grid(TokenMap):
    """x ↦ x rounded to the grid (1/denominator)Z (keeps exact scores on the grid)."""

    denominator: int = 2
    name: str = "grid"

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """Round to the grid (1/denominator)ℤ."""
        return nm.to_grid(x, self.denominator)


@dataclass(frozen=True, eq=False)
class Compose(TokenMap):
    """Apply ``maps`` left to right."""

    maps: tuple[TokenMap, ...]
    name: str = "compose"

    def __call__(self, nm: Numerics, x: Array) -> Array:
        """Apply the maps in order."""
        for f in self.maps:
            x = f(nm, x)
        return x
