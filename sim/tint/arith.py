"""The arithmetic every TinT piece runs in: exact rationals, mpmath at a set precision, or float64.

``exact``  – numpy object arrays of python-flint ``fmpq``. Sums and products are exact, so the linear
             pieces of TinT (tint.linear_forward / tint.linear_backward / tint.linear_descent) must
             agree with the reference *bit for bit*. The non-rational primitives (exp, sqrt, tanh) are
             deterministic oracles: the value is computed by mpmath at ``oracle_bits`` and stored as
             the exact dyadic rational it rounds to. The reference model and TinT call the same
             oracle, so they agree exactly whenever the oracle sees the same rational input - which
             is exactly the statement "TinT computes the same function" for those pieces. The
             oracle's precision (24 bits by default, to keep the rationals short) does not enter that
             statement: it only chooses which rational function stands in for exp, sqrt and tanh.
``mp:<bits>`` – numpy object arrays of ``mpf`` in a private ``mpmath.MPContext`` (never the global mp).
``float64`` – plain numpy.

Kept local to ``attnsim.sim.tint`` so that TinT's exact pipeline does not depend on the shape of the
shared numerics backends; ``Arith.name`` uses the same spelling as ``get_numerics``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import mpmath
import numpy as np
from flint import fmpq

from attnsim.sim.errors import AttnsimError


class ArithError(AttnsimError):
    """An unknown numerics name."""


@dataclass
class Arith:
    """One arithmetic: conversion in and out, and the few non-rational primitives TinT needs."""

    name: str
    kind: str  # "exact" | "mp" | "float64" | "count" (shapes only: 1-byte arrays, for counting big TinTs)
    ctx: Any = field(default=None, repr=False)

    # -- conversion ---------------------------------------------------------------------------------
    def scalar(self, v: Any) -> Any:
        """``v`` as a scalar of this arithmetic."""
        if isinstance(v, np.generic):
            v = v.item()
        if self.kind in ("float64", "count"):
            return float(v)
        if self.kind == "mp":
            if isinstance(v, fmpq):
                return self.ctx.mpf(int(v.p)) / int(v.q)
            return self.ctx.mpf(v)
        if isinstance(v, fmpq):
            return v
        if isinstance(v, int):
            return fmpq(int(v))
        if isinstance(v, mpmath.mpf) or hasattr(v, "_mpf_"):
            man, exp = mpmath.mpf(v).man_exp
            return fmpq(int(man)) * (fmpq(2) ** int(exp)) if exp >= 0 else fmpq(int(man), 2 ** (-int(exp)))
        num, den = float(v).as_integer_ratio()
        return fmpq(num, den)

    def array(self, x: Any) -> np.ndarray:
        """``x`` as an array of this arithmetic."""
        a = np.asarray(x)
        if self.kind == "float64":
            return a.astype(np.float64)
        if self.kind == "count":
            return a.astype(bool)
        out = np.empty(a.shape, dtype=object)
        flat = out.reshape(-1)
        for i, v in enumerate(a.reshape(-1)):
            flat[i] = self.scalar(v)
        return out

    def zeros(self, shape: tuple[int, ...] | int) -> np.ndarray:
        """An array of zeros."""
        if self.kind == "float64":
            return np.zeros(shape)
        if self.kind == "count":
            return np.zeros(shape, dtype=bool)
        return np.full(shape, self.scalar(0), dtype=object)

    def to_float(self, x: np.ndarray) -> np.ndarray:
        """``x`` as float64."""
        if self.kind == "float64":
            return np.asarray(x, dtype=np.float64)
        return np.vectorize(_float, otypes=[float])(x)

    # -- linear algebra ----------------------------------------------------------------------------
    def matmul(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """x @ w, skipping the zero entries of w (TinT weight matrices are mostly zero)."""
        if self.kind == "float64":
            return x @ w
        out = self.zeros(x.shape[:-1] + (w.shape[1],))
        cols, rows = np.nonzero(w.T != 0)  # column by column, rows in order: the sums' order is fixed (mp rounds)
        for j, i in zip(cols.tolist(), rows.tolist()):
            out[..., j] = out[..., j] + x[..., i] * w[i, j]
        return out

    # -- non-rational primitives --------------------------------------------------------------------
    def _oracle(self, fn: Callable[[Any, Any], Any], x: np.ndarray) -> np.ndarray:
        if self.kind == "float64":
            raise AssertionError("float64 uses numpy directly")
        ctx = self.ctx
        if self.kind == "mp":
            return np.vectorize(lambda v: fn(ctx, v), otypes=[object])(x)
        return np.vectorize(lambda v: self.scalar(fn(ctx, ctx.mpf(int(v.p)) / int(v.q))), otypes=[object])(x)

    def exp(self, x: np.ndarray) -> np.ndarray:
        """Element-wise exp (through mpmath for the exact and mp kinds)."""
        return np.exp(x) if self.kind in ("float64", "count") else self._oracle(lambda c, v: c.exp(v), np.asarray(x))

    def sqrt(self, x: np.ndarray) -> np.ndarray:
        """Element-wise square root."""
        return np.sqrt(x) if self.kind in ("float64", "count") else self._oracle(lambda c, v: c.sqrt(v), np.asarray(x))

    def tanh(self, x: np.ndarray) -> np.ndarray:
        """Element-wise tanh."""
        return np.tanh(x) if self.kind in ("float64", "count") else self._oracle(lambda c, v: c.tanh(v), np.asarray(x))

    def relu(self, x: np.ndarray) -> np.ndarray:
        """Element-wise max(x, 0)."""
        zero = self.scalar(0)
        return np.where(x > zero, x, zero) if self.kind != "float64" else np.maximum(x, 0.0)

    def gelu_new(self, x: np.ndarray) -> np.ndarray:
        """GPT-2's tanh GELU: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
        c = self.const_sqrt_2_over_pi()
        a = self.scalar(fmpq(44715, 10 ** 6)) if self.kind == "exact" else self.scalar(0.044715)
        half = self.scalar(fmpq(1, 2)) if self.kind == "exact" else self.scalar(0.5)
        return half * x * (1 + self.tanh(c * (x + a * x * x * x)))

    def const_sqrt_2_over_pi(self) -> Any:
        """The constant √(2/π) of GELU-new, in this arithmetic."""
        if self.kind == "float64":
            return float(np.sqrt(2 / np.pi))
        v = self.ctx.sqrt(2 / self.ctx.pi)
        return v if self.kind == "mp" else self.scalar(v)

    def activation(self, name: str) -> Callable[[np.ndarray], np.ndarray]:
        """The activation called ``name`` (``relu`` or ``gelu_new``)."""
        return {"relu": self.relu, "gelu_new": self.gelu_new}[name]

    # -- comparison ----------------------------------------------------------------------------------
    def equal(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether two arrays have the same shape and equal entries (exact for exact arithmetic)."""
        return a.shape == b.shape and bool(np.all(a == b))


def _float(v: Any) -> float:
    """A float from fmpq (any size), mpf or float."""
    if isinstance(v, fmpq):
        return float(Fraction(int(v.p), int(v.q)))
    return float(v)


def max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """Largest absolute difference, in float (for error reports across arithmetics)."""
    da = np.asarray(a - b).reshape(-1)
    return max((abs(_float(v)) for v in da), default=0.0)


def bits_of_agreement(err: float, scale: float) -> float:
    """-log2(err/scale); infinite when the error is zero (the convention of ``attnsim check``)."""
    if err == 0.0:
        return float("inf")
    return float(-np.log2(err / max(scale, 1e-300)))


def get_arith(name: str, oracle_bits: int = 24) -> Arith:
    """``exact`` | ``mp:<bits>`` | ``float64`` | ``count`` (build-only, for parameter counts).

    Names follow ``attnsim.sim.numerics``: ``exact:<D>`` is accepted as ``exact`` (TinT needs no score
    grid: both sides call the same oracles) and a bare ``mp`` means 200 bits.
    """
    if name == "float64":
        return Arith("float64", "float64")
    if name == "count":
        return Arith("count", "count")
    if name == "mp":
        name = "mp:200"
    if name == "exact" or name.startswith("exact:"):
        ctx = mpmath.MPContext()
        ctx.prec = oracle_bits
        return Arith(name, "exact", ctx)
    if name.startswith("mp:"):
        try:
            bits = int(name[3:])
        except ValueError:
            raise ArithError(f"expected mp:<bits>, got {name!r}", param="numerics") from None
        if bits < 16:
            raise ArithError(f"mp precision must be >= 16 bits, got {bits}", param="numerics")
        ctx = mpmath.MPContext()
        ctx.prec = bits
        return Arith(name, "mp", ctx)
    raise ArithError(f"TinT runs in exact, mp:<bits> or float64; got {name!r}", param="numerics")
