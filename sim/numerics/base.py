"""The Numerics protocol: the few operations a model needs, in one arithmetic.

A backend holds arrays as numpy arrays (``dtype=object`` of its scalar type for the exact, symbolic
and mp backends; ``float64`` for the fast path) and performs every arithmetic operation through its
methods, so that a fixed-bit-width backend can round after each primitive (docs/precision.md).
Structural operations — slicing, concatenation, reshaping — use numpy directly: they compute nothing.

Attention is written once, here, from the primitives::

    scores  = Q @ K^T
    w       = weights(scores, allowed)       # softmax numerator, 0 where not allowed
    out     = (w @ V) / rowsum(w)            # a row with no allowed key outputs 0
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction
from typing import Any

import numpy as np

from attnsim.sim.errors import AttnsimError

Array = np.ndarray


class NumericsError(AttnsimError):
    """An input or an intermediate value that this numerics cannot represent (names the cause)."""


def division_by_zero(name: str, remedy: str) -> NumericsError:
    """The error of a division by a value that rounded to exactly 0 in numerics ``name``, naming the likely cause."""
    return NumericsError(f"{name}: division by a value that rounded to exactly 0 (in the Two Heads constructions: p "
                         "rounded to 1, so the decode A = p/(1 - p) of Lemma 3.1 Step 1, used by every block "
                         f"construction, divides by zero); {remedy}", param="numerics")


class Numerics(ABC):
    """One arithmetic. ``exact`` backends are compared with ``==``; the others in bits of error."""

    name: str
    exact: bool
    bits: int | None = None
    """Significand bits the arithmetic keeps (a fixed format's fraction bits); None for the exact kinds."""
    saturated: int = 0
    """Values clipped to the format's range so far (only a fixed-width format with the 'sat' option clips)."""
    spacing_floor: float | None = None
    """The gap between neighbouring numbers near 0, below which relative precision is lost (a float format's
    subnormal spacing, a fixed format's resolution); None where the exponent is unbounded (exact kinds, mp)."""

    # -- conversion ---------------------------------------------------------------------------
    @abstractmethod
    def scalar(self, value: int | Fraction | float) -> Any:
        """One number of this arithmetic from an int, a Fraction or a finite float."""

    def array(self, data: Any, what: str = "input") -> Array:
        """An array of this arithmetic from nested lists / numpy arrays of ints, Fractions, floats."""
        src = np.asarray(data, dtype=object) if not isinstance(data, np.ndarray) else data
        if src.dtype.kind == "f":
            bad = ~np.isfinite(src)
            if bad.any():
                idx = tuple(int(i) for i in np.argwhere(bad)[0])
                raise NumericsError(f"{what}: non-finite value {src[idx]} at index {idx}")
        out = np.empty(src.shape, dtype=object)
        flat_src, flat_out = src.reshape(-1), out.reshape(-1)
        for i, v in enumerate(flat_src):
            if isinstance(v, float) and not np.isfinite(v):
                raise NumericsError(f"{what}: non-finite value {v} at flat index {i}")
            flat_out[i] = self.scalar(v.item() if isinstance(v, np.generic) else v)
        return self._finish(out)

    def _finish(self, arr: Array) -> Array:
        """Hook for backends with a non-object dtype."""
        return arr

    def zeros(self, shape: tuple[int, ...]) -> Array:
        """An array of zeros in this arithmetic."""
        return self.array(np.zeros(shape, dtype=np.int64))

    def ones(self, shape: tuple[int, ...]) -> Array:
        """An array of ones in this arithmetic."""
        return self.array(np.ones(shape, dtype=np.int64))

    def const(self, value: int | Fraction, shape: tuple[int, ...]) -> Array:
        """An array filled with ``value``."""
        return self.array(np.full(shape, value, dtype=object))

    @abstractmethod
    def to_fraction_or_float(self, value: Any) -> Fraction | float:
        """A scalar of this arithmetic as a Fraction (exact backends) or float, for reporting."""

    # -- arithmetic (every primitive goes through one of these) -------------------------------
    def add(self, a: Array, b: Array) -> Array:
        """Element-wise a + b."""
        return a + b

    def sub(self, a: Array, b: Array) -> Array:
        """Element-wise a − b."""
        return a - b

    def mul(self, a: Array, b: Array) -> Array:
        """Element-wise a · b."""
        return a * b

    def div(self, a: Array, b: Array) -> Array:
        """Element-wise a / b."""
        return a / b

    def matmul(self, a: Array, b: Array) -> Array:
        """Matrix product a @ b."""
        return a @ b

    def rowsum(self, a: Array) -> Array:
        """Sum over the last axis, keeping it (shape (..., 1))."""
        return a.sum(axis=-1, keepdims=True)

    def sqrt(self, a: Array) -> Array:
        """Elementwise square root (layer norm); rational arithmetic has none."""
        raise NumericsError(f"{self.name}: square roots are not available in this numerics (use mp or float64)")

    def is_zero(self, a: Array) -> np.ndarray:
        """Element-wise test for exact zero."""
        return np.vectorize(lambda x: x == 0, otypes=[bool])(a) if a.size else np.zeros(a.shape, bool)

    def to_grid(self, a: Array, denominator: int) -> Array:
        """Round to the nearest multiple of 1/denominator (a token-wise map models may use)."""
        raise NumericsError(f"{self.name}: rounding to a grid is not available")

    @abstractmethod
    def weights(self, scores: Array, allowed: np.ndarray | None) -> Array:
        """Softmax numerators of each row (0 where ``allowed`` is False).

        Any row-constant factor may be taken out (it cancels in attention): approximate backends
        subtract the row maximum before exponentiating.
        """

    # -- attention from the primitives ---------------------------------------------------------
    def attention(self, q: Array, k: Array, v: Array, allowed: np.ndarray | None = None) -> Array:
        """softmax(q k^T) v row by row, with mask ``allowed`` (True = may attend); paper Def 2.1."""
        scores = self.matmul(q, np.swapaxes(k, -1, -2))
        w = self.weights(scores, allowed)
        num = self.matmul(w, v)
        den = self.rowsum(w)
        return self.safe_div(num, den)

    def safe_div(self, num: Array, den: Array) -> Array:
        """num / den with 0 where den == 0 (an empty block or a fully masked row)."""
        zero = self.is_zero(den)
        if not zero.any():
            return self.div(num, den)
        den_fixed = np.where(zero, self.scalar(1), den) if den.dtype == object else np.where(zero, 1.0, den)
        out = self.div(num, den_fixed)
        return np.where(np.broadcast_to(zero, out.shape), self.scalar(0), out) if out.dtype == object \
            else np.where(np.broadcast_to(zero, out.shape), 0.0, out)

    def __repr__(self) -> str:
        return f"<numerics {self.name}>"
