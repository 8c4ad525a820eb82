"""``float:FMT[:opts]`` and ``fixed:qI.F[:opts]``: fixed-bit-width arithmetic (docs/precision.md).

Every primitive of the Numerics protocol rounds its result into the format, so a construction run
in this backend sees exactly the values a machine with that format would hold:

* ``add, sub, mul, div`` — the float64 result, rounded. For float formats with M ≤ 24 (all named
  ones have M ≤ 23) the float64 result of + − × ÷ on format values is close enough that rounding it once
  more is the correctly rounded result (double rounding is innocuous when 53 ≥ 2(M+1) + 2); the same
  rule covers fixed formats of total width ≤ 25 (at width 26, + − × are still exact in float64 and ÷ is
  not covered). Wider formats may differ by one ulp at rare ties.
* ``matmul, rowsum`` — sequential accumulation in the *accumulator* format (option ``acc=FMT``,
  default the storage format): each product is rounded into the accumulator, each partial sum is
  rounded, left to right over the inner index; the final sum is rounded into the storage format.
  This is apytypes' ``APyFixedAccumulatorContext`` model (tests/test_fixed_formats.py).
* ``weights(scores)`` — the row max is subtracted (rounded), exp is evaluated in float64 on the
  rounded difference and rounded into the format. The largest weight of a row is exp(0) = 1, so one
  softmax row never underflows entirely; the construction-level failure — every block's normaliser A
  rounding to 0 for a row — is diagnosed by ``attnsim.verify.precision.study``.
* ``div`` by an exact zero raises :class:`NumericsError` naming the format: in the Two Heads
  constructions (two_heads.lemma_3_1 and every construction built on its Step 1: thm_3_4, thm_3_5,
  thm_5_1) this is p rounding to exactly 1, so that the decode p/(1 − p) has nothing left to divide by.
* Overflow past the largest finite value raises (default, option ``raise``) or saturates
  (``sat``). Constants (``zeros``, ``ones``, ``const``) must be exactly representable: a format
  too narrow for the synthetic constant 1 (``fixed:q1.F``) is an error, never a silent 1 − 2^-F.

Options follow the format, separated by colons: a rounding rule ``rne`` (default) / ``rz`` /
``sr`` (stochastic, seeded by the backend's seed), ``acc=FMT`` and ``sat`` / ``raise``. Examples:
``float:bf16``, ``float:bf16:rz``, ``float:bf16:acc=fp32``, ``float:8.12:sr``, ``fixed:q8.16:sat``,
``fixed:q8.8:acc=q16.24``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from attnsim.sim.numerics.base import Array, Numerics, NumericsError, division_by_zero
from attnsim.sim.numerics.fixed_formats import ROUNDINGS, FixedFormat, Format, lowest, overflows, parse_format, saturate


class FixedWidth(Numerics):
    """Arithmetic in one fixed-width format with float64 carrier arrays holding representable values."""

    exact = False

    def __init__(self, name: str, fmt: Format, acc: Format, rounding: str = "rne", overflow: str = "raise",
                 seed: int = 0) -> None:
        """Arithmetic in format ``fmt`` with accumulator ``acc``, the given rounding and overflow rules."""
        if rounding not in ROUNDINGS:
            raise NumericsError(f"{name}: rounding must be one of {ROUNDINGS}, got {rounding!r}", param="numerics")
        self.name, self.fmt, self.acc = name, fmt, acc
        self.rounding, self.overflow = rounding, overflow
        self.bits = fmt.bits
        self.spacing_floor = fmt.spacing_floor
        self.rng = np.random.default_rng(seed) if rounding == "sr" else None
        self._representable: set[float] = set()
        self.peak = 0.0  # largest |value| met before rounding (sizes a fixed format's integer bits)
        self.saturated = 0  # values clipped to the range under the 'sat' option

    # -- rounding ------------------------------------------------------------------------------
    def round(self, x: Array, fmt: Format | None = None, what: str = "") -> Array:
        """x (float64) rounded into ``fmt`` (default the storage format), with the overflow policy."""
        fmt = fmt or self.fmt
        x = np.asarray(x, dtype=np.float64)
        if x.size == 0:
            return x
        r, big = fmt.round_with_max(x, self.rounding, self.rng)
        if not np.isfinite(big):
            raise NumericsError(f"{self.name}: a non-finite intermediate value (float64 overflow before rounding)")
        self.peak = max(self.peak, big)
        top, bottom = fmt.max_value, lowest(fmt)
        # rounding is monotone and top is representable, so |x| <= top cannot overflow
        if big > top and (r.max() > top or r.min() < bottom):
            if self.overflow == "sat":
                self.saturated += int(overflows(fmt, r).sum())
                return saturate(fmt, r)
            v = float(x[overflows(fmt, r)].flat[0])
            raise NumericsError(f"{self.name}: overflow{' in ' + what if what else ''}: {v:.6g} exceeds the range "
                                f"of {_label(fmt)} (largest {top:.6g}); use a wider format or the 'sat' option")
        return r

    # -- conversion ----------------------------------------------------------------------------
    def scalar(self, value: int | Fraction | float) -> float:
        """``value`` rounded into the format."""
        return float(self.array(np.array([_to_float(value)], dtype=np.float64), "value")[0])

    def array(self, data: Any, what: str = "input") -> Array:
        """``data`` as float64 carriers rounded into the format; overflow handled by the overflow rule."""
        arr = np.asarray(data)
        if arr.dtype == object:
            arr = np.vectorize(_to_float, otypes=[np.float64])(arr) if arr.size else arr.astype(np.float64)
        arr = arr.astype(np.float64)
        bad = ~np.isfinite(arr)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise NumericsError(f"{what}: non-finite value {arr[idx]} at index {idx}")
        return self.round(arr, what=what)

    def const(self, value: int | Fraction, shape: tuple[int, ...]) -> Array:
        """A constant array; the value must be representable in the format."""
        v = float(value)
        if v not in self._representable:
            r = float(self.fmt.round(np.array([v]), "rne", None)[0])
            if r != v or overflows(self.fmt, np.array([r])).any():
                raise NumericsError(f"{self.name}: the format cannot represent the constant {value} exactly "
                                    "(a synthetic constant of the constructions); use a wider format")
            self._representable.add(v)
        return np.full(shape, v)

    def zeros(self, shape: tuple[int, ...]) -> Array:
        """An array of zeros."""
        return np.zeros(shape)

    def ones(self, shape: tuple[int, ...]) -> Array:
        """An array of ones."""
        return self.const(1, shape)

    def to_fraction_or_float(self, value: Any) -> float:
        """The value as a float."""
        return float(value)

    def is_zero(self, a: Array) -> np.ndarray:
        """Element-wise test for zero."""
        return a == 0

    # -- arithmetic ----------------------------------------------------------------------------
    def add(self, a: Array, b: Array) -> Array:
        """a + b, rounded."""
        return self.round(np.add(a, b))

    def sub(self, a: Array, b: Array) -> Array:
        """a − b, rounded."""
        return self.round(np.subtract(a, b))

    def mul(self, a: Array, b: Array) -> Array:
        """a · b, rounded."""
        return self.round(np.multiply(a, b))

    def div(self, a: Array, b: Array) -> Array:
        """a / b, rounded; division by an exact zero raises an error that names the likely cause."""
        b = np.asarray(b)
        if (b == 0).any():
            raise division_by_zero(self.name, "use a wider format")
        return self.round(np.divide(a, b))

    def matmul(self, a: Array, b: Array) -> Array:
        """a @ b with each product rounded and the running sum kept in the accumulator format."""
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        k = a.shape[-1]
        acc = self.acc
        s = None
        for j in range(k):
            aj, bj = a[..., :, j:j + 1], b[..., j:j + 1, :]
            if not (aj.any() and bj.any()):
                continue  # an exact zero product leaves the rounded partial sum unchanged
            p = self.round(aj * bj, acc)
            s = p if s is None else self.round(s + p, acc)
        if s is None:
            return np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1]))
        return s if acc == self.fmt else self.round(s)

    def rowsum(self, a: Array) -> Array:
        """Row sums accumulated left to right in the accumulator format."""
        a = np.asarray(a, dtype=np.float64)
        if a.shape[-1] == 0:
            return np.zeros(a.shape[:-1] + (1,))
        s = self.round(a[..., 0:1], self.acc)
        for j in range(1, a.shape[-1]):
            s = self.round(s + a[..., j:j + 1], self.acc)
        return s if self.acc == self.fmt else self.round(s)

    def weights(self, scores: Array, allowed: np.ndarray | None) -> Array:
        """Softmax numerators exp(s − row max), rounded; disallowed entries are 0."""
        scores = np.asarray(scores, dtype=np.float64)
        if scores.size == 0:
            return scores.copy()
        if allowed is None:
            m = scores.max(axis=-1, keepdims=True)
            return self.round(np.exp(self.sub(scores, m)))
        allowed = np.broadcast_to(allowed, scores.shape)
        m = np.where(allowed, scores, -np.inf).max(axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        d = self.sub(np.where(allowed, scores, m), m)
        return np.where(allowed, self.round(np.exp(d)), 0.0)

    def to_grid(self, a: Array, denominator: int) -> Array:
        """Round to the grid (1/denominator)ℤ, then into the format."""
        return self.round(np.round(np.asarray(a) * denominator) / denominator)


def _to_float(value: Any) -> float:
    if hasattr(value, "p") and hasattr(value, "q"):  # flint fmpq
        return int(value.p) / int(value.q)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise NumericsError(f"cannot convert {value!r} to a number") from None


def _label(fmt: Format) -> str:
    return ("fixed:" if isinstance(fmt, FixedFormat) else "float:") + fmt.label


def make_fixed_width(family: str, arg: str | None, seed: int) -> FixedWidth:
    """The backend ``family:arg`` (family ``float`` or ``fixed``); see the module docstring."""
    if not arg:
        example = "float:bf16" if family == "float" else "fixed:q16.16"
        raise NumericsError(f"{family} needs a format, e.g. {example}", param="numerics")
    head, *opts = arg.split(":")
    fmt = parse_format(family, head)
    acc, rounding, overflow = fmt, "rne", "raise"
    for opt in opts:
        if opt in ROUNDINGS:
            rounding = opt
        elif opt in ("sat", "raise"):
            overflow = opt
        elif opt.startswith("acc="):
            acc = parse_format(family, opt[4:])
        else:
            raise NumericsError(f"{family}:{arg}: unknown option {opt!r}; options are "
                                f"{', '.join(ROUNDINGS)}, sat, raise, acc=FMT", param="numerics")
    return FixedWidth(f"{family}:{arg}", fmt, acc, rounding, overflow, seed)
