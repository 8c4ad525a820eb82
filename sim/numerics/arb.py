"""``arb:BITS``: ball arithmetic (python-flint ``arb``) — every number is a ball that provably holds the real value.

Each scalar is an ``arb``: a midpoint and a radius such that the real number the construction would compute in
exact real arithmetic lies in [mid − rad, mid + rad]. Every primitive (``+ − · /``, products through
``arb_mat``, row sums, and the softmax numerator through the per-entry ``arb.exp`` — never ``arb_mat.exp``,
which is the matrix exponential) rounds its midpoint to BITS bits and widens the radius by everything that
rounding and every input's radius can move the result. So an output ball is a certificate: its radius bounds
the distance from its midpoint to the exact-real output of the same sequence of operations.

**Which real function.** ``arb:BITS`` evaluates softmax with the real exp, ``exp(s)``: the transformer of the
paper (Def 2.1). The ``exact`` numerics cannot: they use weights z**(D·s) on the score grid (1/D)ℤ
(``exact.py``), i.e. softmax at temperature 1/(D·ln z). :class:`ArbSpec` therefore also describes a *companion*
ball arithmetic whose weights are exp(D·ln(z)·s) — the same real function the exact numerics evaluate, computed
with a ball for ln z — so that the exact rational output of a construction can be tested for membership in
every ball (``verify/precision/certify.py``); docs/precision.md, "Certified precision".

A row-constant shift of the scores cancels in softmax, so :meth:`Arb.weights` subtracts the (exact) midpoint of
each row's largest score before exponentiating: the balls then hold the same real value with smaller
magnitudes. Division by a ball that contains 0 (p rounding toward 1 in Lemma 3.1's decode, at too few bits)
gives a ball of infinite radius: the record reports it as uncertified, never as a number.

The working precision is python-flint's global ``ctx.prec``; every operation runs inside
``ctx.workprec(BITS)``, so two backends of different precision can live side by side.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb, arb_mat, ctx, fmpq

from attnsim.sim.numerics.base import Array, Numerics, NumericsError

MIN_BITS = 10
"""Smallest BITS: the inputs and weights of the cases (dyadic grids) and the constants of the constructions
must be exact balls (radius 0); below this the synthetic token's constant alone loses its meaning."""
MAX_BITS = 1 << 16
"""Largest BITS of ``arb:BITS`` and of ``mp:BITS`` (``verify.cost`` holds mp to it)."""


@dataclass(frozen=True)
class ArbSpec:
    """A parsed ``arb`` numerics name: the working precision, and the softmax base of the weights.

    ``grid``/``base`` None: weights exp(s) (the real exp). Both set: weights z**(D·s) = exp(D·ln z·s),
    the function the ``exact:D:z`` numerics evaluate exactly (the companion of a containment check).
    """

    bits: int
    grid: int | None = None
    base: Fraction | None = None

    @classmethod
    def parse(cls, arg: str | None) -> ArbSpec:
        """``BITS`` (the part after ``arb:``), refused with one line naming the numerics when missing or out of
        range."""
        if arg is None or not arg.strip():
            raise NumericsError("arb needs a precision, e.g. arb:128", param="numerics")
        if not arg.isdigit():
            raise NumericsError(f"arb:{arg}: expected arb:BITS with BITS a positive integer, e.g. arb:128",
                                param="numerics")
        bits = int(arg)
        if bits < MIN_BITS:
            raise NumericsError(f"arb:{arg}: BITS={bits} is outside {MIN_BITS}..{MAX_BITS} (below {MIN_BITS} bits "
                                "a ball cannot hold the constructions' constants and grid inputs exactly)",
                                param="numerics")
        if bits > MAX_BITS:
            raise NumericsError(f"arb:{arg}: BITS={bits} is outside {MIN_BITS}..{MAX_BITS} (the largest working "
                                "precision, as for mp:BITS)", param="numerics")
        return cls(bits)

    def with_base(self, grid: int, base: Fraction) -> ArbSpec:
        """The companion spec whose weights are z**(D·s): the real function of ``exact:D:z``."""
        return ArbSpec(self.bits, grid, Fraction(base))

    @property
    def name(self) -> str:
        """The numerics name (the companion's says its base; it is not a name the CLI accepts)."""
        return f"arb:{self.bits}" if self.grid is None else f"arb:{self.bits}[z={self.base}, D={self.grid}]"


def to_fraction(x: Any) -> Fraction:
    """An exact binary number (an ``arb`` midpoint, radius or endpoint given as an ``arb``) as a Fraction."""
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)


def midpoint(x: Any) -> Fraction:
    """The midpoint of a ball, exactly."""
    return to_fraction(x.mid())


def radius(x: Any) -> Fraction:
    """The radius of a ball, exactly (an upper bound on |midpoint − real value|)."""
    return to_fraction(x.rad())


def is_finite_ball(x: Any) -> bool:
    """True when the ball has a finite midpoint and radius (a division by a ball holding 0 gives neither)."""
    return bool(x.is_finite())


class Arb(Numerics):
    """Ball arithmetic at ``spec.bits`` bits (python-flint ``arb``)."""

    exact = False

    def __init__(self, spec: ArbSpec) -> None:
        """The backend of a parsed spec (:meth:`ArbSpec.parse`)."""
        self.spec = spec
        self.bits = spec.bits
        self.name = spec.name
        with self._prec():
            self._scale = None if spec.grid is None else arb(spec.grid) * arb(fmpq(spec.base.numerator,
                                                                                 spec.base.denominator)).log()

    def _prec(self) -> AbstractContextManager:
        return ctx.workprec(self.bits)

    # -- conversion -------------------------------------------------------------------------------
    def scalar(self, value: int | Fraction | float) -> Any:
        """``value`` as a ball (radius 0 when it has at most BITS significant bits)."""
        with self._prec():
            if isinstance(value, arb):
                return +value
            if isinstance(value, Fraction):
                return arb(fmpq(value.numerator, value.denominator))
            if isinstance(value, fmpq):
                return arb(value)
            if isinstance(value, (int, np.integer)):
                return arb(int(value))
            if isinstance(value, float):
                return arb(value)
        raise NumericsError(f"{self.name}: cannot represent {value!r} ({type(value).__name__})")

    def zeros(self, shape: tuple[int, ...]) -> Array:
        """Exact zero balls."""
        return np.full(shape, arb(0), dtype=object)

    def ones(self, shape: tuple[int, ...]) -> Array:
        """Exact one balls."""
        return np.full(shape, arb(1), dtype=object)

    def to_fraction_or_float(self, value: Any) -> Fraction:
        """The midpoint of a ball, exactly."""
        return midpoint(value)

    # -- arithmetic at BITS bits ------------------------------------------------------------------
    def add(self, a: Array, b: Array) -> Array:
        """a + b, balls at BITS bits."""
        with self._prec():
            return a + b

    def sub(self, a: Array, b: Array) -> Array:
        """a − b, balls at BITS bits."""
        with self._prec():
            return a - b

    def mul(self, a: Array, b: Array) -> Array:
        """a · b, balls at BITS bits."""
        with self._prec():
            return a * b

    def div(self, a: Array, b: Array) -> Array:
        """a / b (a divisor ball holding 0 gives an infinite ball)."""
        with self._prec():
            return a / b

    def rowsum(self, a: Array) -> Array:
        """Sum over the last axis, keeping it."""
        with self._prec():
            return a.sum(axis=-1, keepdims=True) if a.shape[-1] else self.zeros(a.shape[:-1] + (1,))

    def matmul(self, a: Array, b: Array) -> Array:
        """Ball matrix product (``arb_mat`` for 2-D operands, numpy's object product otherwise)."""
        with self._prec():
            if a.ndim != 2 or b.ndim != 2 or a.size == 0 or b.size == 0:
                if a.shape[-1] == 0:
                    return self.zeros(a.shape[:-1] + b.shape[-1:])
                return a @ b
            (n, k), (k2, m) = a.shape, b.shape
            if k != k2:
                raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not align")
            prod = arb_mat(n, k, list(a.reshape(-1))) * arb_mat(k, m, list(b.reshape(-1)))
            return np.array(prod.entries(), dtype=object).reshape(n, m)

    def sqrt(self, a: Array) -> Array:
        """Element-wise square root of balls."""
        with self._prec():
            return np.vectorize(lambda x: x.sqrt(), otypes=[object])(a) if a.size else a

    def is_zero(self, a: Array) -> np.ndarray:
        """Exactly zero balls (midpoint and radius 0); a ball that merely contains 0 is not zero."""
        return np.vectorize(lambda x: bool(x.is_zero()), otypes=[bool])(a) if a.size else np.zeros(a.shape, bool)

    def to_grid(self, a: Array, denominator: int) -> Array:
        """Round to the nearest multiple of 1/denominator (ties to even, as the exact numerics): a ball whose
        endpoints round to different grid points becomes the ball spanning them (still certified)."""

        def rnd(x: Any) -> Any:
            lo = round(to_fraction(x.lower()) * denominator)
            hi = round(to_fraction(x.upper()) * denominator)
            out = self.scalar(Fraction(lo, denominator))
            return out if lo == hi else out.union(self.scalar(Fraction(hi, denominator)))

        with self._prec():
            return np.vectorize(rnd, otypes=[object])(a) if a.size else a

    def weights(self, scores: Array, allowed: np.ndarray | None) -> Array:
        """exp(s − c) per entry (exp(D·ln z·(s − c)) for a companion), c the exact midpoint of the row's largest
        allowed score; disallowed entries are exactly 0."""
        if not scores.size:
            return scores
        allow = np.ones(scores.shape, bool) if allowed is None else np.broadcast_to(allowed, scores.shape)
        mids = np.vectorize(lambda x: float(x.mid()), otypes=[float])(scores)
        masked = np.where(allow, mids, -np.inf)
        arg = np.argmax(masked, axis=-1)[..., None]
        shift = np.take_along_axis(scores, arg, axis=-1)
        out = np.empty(scores.shape, dtype=object)
        flat_s, flat_o = scores.reshape(-1), out.reshape(-1)
        flat_a = allow.reshape(-1)
        flat_c = np.broadcast_to(shift, scores.shape).reshape(-1)
        zero = arb(0)
        with self._prec():
            for i, s in enumerate(flat_s):
                if not flat_a[i]:
                    flat_o[i] = zero
                    continue
                x = s - flat_c[i].mid()
                flat_o[i] = (x if self._scale is None else x * self._scale).exp()
        return out


def make_arb(arg: str | None, seed: int) -> Arb:
    """The ``arb:BITS`` backend (the seed is unused: ball arithmetic draws nothing)."""
    return Arb(ArbSpec.parse(arg))
