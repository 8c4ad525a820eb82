"""``mp:BITS``: mpmath reals at an explicit precision, with the real exp.

Each backend object owns its own ``mpmath.MPContext`` (never the global ``mp``), so two backends
of different precision can live side by side. Errors against a reference are reported in bits.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from attnsim.sim.numerics.base import Array, Numerics, NumericsError, division_by_zero


class MP(Numerics):
    """mpmath reals at ``bits`` bits of precision, with the real exp."""
    exact = False

    def __init__(self, bits: int) -> None:
        """Arithmetic with ``bits`` bits of mantissa (at least 8)."""
        if bits < 8:
            raise NumericsError(f"mp: precision must be at least 8 bits, got {bits}")
        self.name = f"mp:{bits}"
        self.bits = bits
        self.ctx = mpmath.MPContext()
        self.ctx.prec = bits
        self._exp = np.vectorize(self.ctx.exp, otypes=[object])

    def scalar(self, value: int | Fraction | float) -> Any:
        """``value`` as an mpmath real at this precision."""
        ctx = self.ctx
        if isinstance(value, Fraction):
            return ctx.mpf(value.numerator) / ctx.mpf(value.denominator)
        if isinstance(value, (int, np.integer, float)):
            return ctx.mpf(value)
        if hasattr(value, "p") and hasattr(value, "q"):  # flint fmpq
            return ctx.mpf(int(value.p)) / ctx.mpf(int(value.q))
        if isinstance(value, mpmath.mpf.__mro__[0]) or type(value).__name__ == "mpf":
            return ctx.mpf(value)
        raise NumericsError(f"{self.name}: cannot represent {value!r}")

    def to_fraction_or_float(self, value: Any) -> float:
        """The value as a float."""
        return float(value)

    def weights(self, scores: Array, allowed: np.ndarray | None) -> Array:
        """Softmax numerators exp(s − row max) at this precision; disallowed entries are 0."""
        ctx = self.ctx
        s = scores
        if allowed is not None:
            allowed = np.broadcast_to(allowed, scores.shape)
            s = np.where(allowed, scores, ctx.mpf(0))
        # A row-constant shift cancels in attention; subtract the row max for tidy magnitudes.
        if s.size:
            masked_max = np.where(allowed, s, ctx.ninf) if allowed is not None else s
            m = np.max(masked_max, axis=-1, keepdims=True)
            m = np.where(np.vectorize(ctx.isinf, otypes=[bool])(m), ctx.mpf(0), m)
            s = s - m
        w = self._exp(s) if s.size else s
        return w if allowed is None else np.where(allowed, w, ctx.mpf(0))

    def attention(self, q: Array, k: Array, v: Array, allowed: np.ndarray | None = None) -> Array:
        """As :meth:`Numerics.attention` (paper Def 2.1); with a mask, row by row over each row's allowed keys
        only. A disallowed key adds exact zeros there (weight 0, 0·v = 0 and x + 0 = x in mpmath), so the
        numbers are the dense evaluation's, without the exps and products of masked keys (a sliding window
        with sinks, Thm 1.4 / Thm 5.1, leaves a few keys per row)."""
        if allowed is None or q.ndim != 2:
            return super().attention(q, k, v, allowed)
        allowed = np.broadcast_to(allowed, (q.shape[0], k.shape[0]))
        num, den = self.zeros((q.shape[0], v.shape[1])), self.zeros((q.shape[0], 1))
        for i in range(q.shape[0]):
            keys = np.flatnonzero(allowed[i])
            if len(keys):
                w = self.weights(self.matmul(q[i:i + 1], k[keys].T), None)
                num[i:i + 1], den[i:i + 1] = self.matmul(w, v[keys]), self.rowsum(w)
        return self.safe_div(num, den)

    def div(self, a: Array, b: Array) -> Array:
        """a / b; mpmath has no infinity for x / 0, so a divisor that rounded to 0 is an error naming the BITS."""
        try:
            return a / b
        except ZeroDivisionError:
            raise division_by_zero(self.name, "use more bits (mp:BITS)") from None

    def sqrt(self, a: Array) -> Array:
        """Element-wise square root."""
        return np.vectorize(self.ctx.sqrt, otypes=[object])(a) if a.size else a

    def to_grid(self, a: Array, denominator: int) -> Array:
        """Round to the grid (1/denominator)ℤ."""
        ctx = self.ctx
        return np.vectorize(lambda x: ctx.nint(x * denominator) / denominator, otypes=[object])(a)
