"""``float64``: plain numpy, batched and fast; the path for large N and for timing."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from attnsim.sim.numerics.base import Array, Numerics, NumericsError


class Float64(Numerics):
    """Plain float64 numpy arithmetic with the real exp (max-shifted softmax numerators)."""
    exact = False
    name = "float64"

    def scalar(self, value: int | Fraction | float) -> float:
        """``value`` as a float; an error names a value float64 cannot hold."""
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise NumericsError(f"float64: cannot represent {value!r}") from None
        return v

    def array(self, data: Any, what: str = "input") -> Array:
        """``data`` as a float64 array."""
        arr = np.asarray(data)
        if arr.dtype == object:
            arr = np.vectorize(self.scalar, otypes=[np.float64])(arr) if arr.size else arr.astype(np.float64)
        arr = arr.astype(np.float64)
        bad = ~np.isfinite(arr)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise NumericsError(f"{what}: non-finite value {arr[idx]} at index {idx}")
        return arr

    def zeros(self, shape: tuple[int, ...]) -> Array:
        """An array of zeros."""
        return np.zeros(shape)

    def ones(self, shape: tuple[int, ...]) -> Array:
        """An array of ones."""
        return np.ones(shape)

    def const(self, value: int | Fraction, shape: tuple[int, ...]) -> Array:
        """An array filled with ``value``."""
        return np.full(shape, float(value))

    def to_fraction_or_float(self, value: Any) -> float:
        """The value as a float."""
        return float(value)

    def is_zero(self, a: Array) -> np.ndarray:
        """Element-wise test for zero."""
        return a == 0

    def weights(self, scores: Array, allowed: np.ndarray | None) -> Array:
        """Softmax numerators exp(s − row max); disallowed entries are 0."""
        if allowed is None:
            m = scores.max(axis=-1, keepdims=True) if scores.size else scores
            return np.exp(scores - m)
        allowed = np.broadcast_to(allowed, scores.shape)
        s = np.where(allowed, scores, -np.inf)
        m = s.max(axis=-1, keepdims=True) if s.size else s
        m = np.where(np.isfinite(m), m, 0.0)
        return np.where(allowed, np.exp(s - m), 0.0)

    def sqrt(self, a: Array) -> Array:
        """Element-wise square root."""
        return np.sqrt(a)

    def to_grid(self, a: Array, denominator: int) -> Array:
        """Round to the grid (1/denominator)ℤ."""
        return np.round(a * denominator) / denominator
