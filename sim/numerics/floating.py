"""``float64``: plain numpy, batched and fast; the path for large N and for timing.

IEEE semantics are kept (a division by 0 gives inf, 0/0 gives NaN, and they propagate), but numpy's
floating-point warnings never reach stderr: every arithmetic primitive runs under ``np.errstate(all="ignore")``
and counts the non-finite entries it creates from finite operands in :attr:`Float64.non_finite` (by
primitive), which the checkers copy into the record (``extra.non_finite``). Lemma 3.1's decode p/(1 − p) with
p rounded to 1 is the usual source.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from attnsim.sim.numerics.base import Array, Numerics, NumericsError


class Float64(Numerics):
    """Plain float64 numpy arithmetic with the real exp (max-shifted softmax numerators)."""
    exact = False
    name = "float64"
    bits = 53
    spacing_floor = 2.0 ** -1074  # the subnormal spacing

    def __init__(self) -> None:
        """A backend with no non-finite value created yet."""
        self.non_finite: dict[str, int] = {}

    def _quiet(self, op: str, fn: Any, *args: Array) -> Array:
        """``fn(*args)`` with numpy's warnings off; non-finite entries created from finite operands are counted."""
        with np.errstate(all="ignore"):
            out = fn(*args)
        if isinstance(out, np.ndarray) and out.dtype.kind == "f":
            new = ~np.isfinite(out)
            if new.any():
                for a in args:
                    if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.ndim == out.ndim:
                        try:
                            new &= np.broadcast_to(np.isfinite(a), out.shape)
                        except ValueError:  # matmul: operands do not broadcast to the product's shape
                            new &= np.isfinite(a).all()
                created = int(new.sum())
                if created:
                    self.non_finite[op] = self.non_finite.get(op, 0) + created
        return out

    def add(self, a: Array, b: Array) -> Array:
        """a + b (warnings off, non-finite results counted)."""
        return self._quiet("add", np.add, a, b)

    def sub(self, a: Array, b: Array) -> Array:
        """a − b (warnings off, non-finite results counted)."""
        return self._quiet("sub", np.subtract, a, b)

    def mul(self, a: Array, b: Array) -> Array:
        """a · b (warnings off, non-finite results counted)."""
        return self._quiet("mul", np.multiply, a, b)

    def div(self, a: Array, b: Array) -> Array:
        """a / b (warnings off; a division by 0 is counted, and gives inf or NaN as IEEE says)."""
        return self._quiet("div", np.divide, a, b)

    def matmul(self, a: Array, b: Array) -> Array:
        """a @ b (warnings off, non-finite results counted)."""
        return self._quiet("matmul", np.matmul, a, b)

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

    ROW_CHUNK_CELLS = 1 << 24
    """Above this many scores, a single (2-D) attention runs in chunks of query rows: softmax is row by
    row, so each row's arithmetic is the same and the N × N scores of a long call never exist at once."""

    def attention(self, q: Array, k: Array, v: Array, allowed: np.ndarray | None = None) -> Array:
        """As :meth:`Numerics.attention`, in chunks of query rows for long 2-D calls."""
        rows, keys = q.shape[-2], k.shape[-2]
        if q.ndim != 2 or rows * keys <= self.ROW_CHUNK_CELLS:
            return super().attention(q, k, v, allowed)
        step = max(1, self.ROW_CHUNK_CELLS // keys)
        return np.concatenate([super(Float64, self).attention(q[r:r + step], k, v,
                                                              None if allowed is None else allowed[r:r + step])
                               for r in range(0, rows, step)])

    def weights(self, scores: Array, allowed: np.ndarray | None) -> Array:
        """Softmax numerators exp(s − row max); disallowed entries are 0."""
        with np.errstate(all="ignore"):
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
