"""``exact``: rational arithmetic (python-flint ``fmpq``; ``fractions.Fraction`` as fallback).

exp is not rational, so scores live on a grid (1/D)Z and the softmax numerator of a score s is
``z**(D*s)`` for a rational base z > 1 (docs/reconstructions.md, "Exact arithmetic on a score grid"). Every identity
the constructions use needs only w(a + b) = w(a)·w(b), so simulated == reference holds exactly for *any* such z.

Names: ``exact[:D[:z]]`` (and ``fraction[:D[:z]]``), z an integer or fraction > 1, or ``seeded``.

**Default base z = 2** (D = 64). Earlier the default was a rational z = p/q in (1, 2] with a 16-bit
denominator q (so p ≤ 2q has up to 17 bits) drawn from the seed (now ``exact:64:seeded``). That z makes each equality a
Schwartz–Zippel test of the identity as a rational function of z, but a weight z**k then has ~31·k
bits, and exact checks at useful sizes (Thm 3.4 at N = 256) spend their time on gcds of
10⁴–10⁵-bit numbers. With z = 2 a weight is 2**k (k bits, about 31x smaller), the row-scaled
weights are integers and every sum of weights is an integer. The check stays exact: simulated and
reference are the *same* rationals for softmax with base 2**(D·s), a well-defined attention function
(temperature D·ln 2), and ``==`` is decided without rounding or reduction modulo a prime. What a
fixed base gives up is the probabilistic argument over z; deliberately broken constructions are still
caught under the default (``tests/test_exact_base.py``; multi-layer checks compare every layer before
its grid rounding, ``verify/layer_record.py``), and ``exact:64:seeded`` remains for the stronger
test. More in ``docs/exact_numerics.md``.

A score off the grid raises :class:`~attnsim.sim.numerics.base.NumericsError` naming D.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import numpy as np

from attnsim.sim.numerics.base import Array, Numerics, NumericsError
from attnsim.sim.numerics.memory_room import refuse_past_room

try:  # pragma: no cover - exercised by the fallback test via FractionExact
    import flint

    HAVE_FLINT = True
except ImportError:  # pragma: no cover
    flint = None
    HAVE_FLINT = False


DEFAULT_GRID = 64
DEFAULT_BASE = Fraction(2)
LARGE_EXPONENT = 1 << 20
"""A weight z**k with |k| past this (megabits for z = 2) is built only after asking whether it fits
(:func:`attnsim.sim.numerics.memory_room.refuse_past_room`)."""

BRIEF_DIGITS = 40
"""A number with more digits than this is shown by its value to six digits and its size in digits."""


def brief(x: Fraction | float) -> str:
    """``x`` for a one-line message: exactly while numerator and denominator are short, else its value to six
    significant digits and their sizes (a score after a few exact layers has thousands of digits, more than
    Python will even print)."""
    if isinstance(x, float):
        return f"{x:g}"
    sizes = [max(1, round(abs(n).bit_length() * 0.30103)) for n in (x.numerator, x.denominator)]
    if max(sizes) <= BRIEF_DIGITS:
        return str(x)
    try:
        value = f"{float(x):.6g}"
    except OverflowError:
        value = f"{'-' if x < 0 else ''}1e{sizes[0] - sizes[1]} in size"
    return f"≈ {value} (a fraction of about {sizes[0]} / {sizes[1]} digits)"


def draw_base(seed: int) -> Fraction:
    """A rational z = p/q in (1, 2] with a 16-bit q (p ≤ 2q: up to 17 bits), from the seed (``exact:D:seeded``)."""
    rng = random.Random(seed)
    den = rng.randrange(2**15, 2**16)
    return Fraction(den + rng.randrange(1, den + 1), den)


def parse_base(text: str | None, seed: int, kind: str = "exact") -> Fraction | None:
    """The base z named after ``kind:D:`` — ``seeded``, an integer or a fraction p/q > 1; None: the default."""
    if text is None:
        return None
    if text == "seeded":
        return draw_base(seed)
    try:
        z = Fraction(text)
    except (ValueError, ZeroDivisionError):
        z = None
    if z is None or z <= 1:
        raise NumericsError(f"{kind}:D:{text}: the base z must be 'seeded' or a rational > 1 "
                            f"(e.g. {kind}:64:2, {kind}:64:3/2)", param="numerics")
    return z


class _RationalBase(Numerics):
    exact = True
    kind = "exact"

    def __init__(self, grid: int = DEFAULT_GRID, seed: int = 0, base: Fraction | None = None) -> None:
        if grid < 1:
            raise NumericsError(f"{self.kind}: the score grid denominator D must be >= 1, got {grid}")
        self.grid = grid
        self.seed = seed
        self.z_fraction = DEFAULT_BASE if base is None else Fraction(base)
        if self.z_fraction <= 1:
            raise NumericsError(f"{self.kind}: the base z must be a rational > 1, got {self.z_fraction}")
        label = None if self.z_fraction == DEFAULT_BASE else str(self.z_fraction)
        self.name = self.kind + (f":{grid}" if grid != DEFAULT_GRID or label else "") + (f":{label}" if label else "")
        self.z = self.scalar(self.z_fraction)
        self._powers: dict[int, Any] = {}

    # constants: one shared immutable scalar per array, not a conversion per entry
    def zeros(self, shape: tuple[int, ...]) -> Array:
        return np.full(shape, self.scalar(0), dtype=object)

    def ones(self, shape: tuple[int, ...]) -> Array:
        return np.full(shape, self.scalar(1), dtype=object)

    def const(self, value: int | Fraction, shape: tuple[int, ...]) -> Array:
        return np.full(shape, self.scalar(value), dtype=object)

    def _power(self, k: int) -> Any:
        p = self._powers.get(k)
        if p is None:
            if abs(k) > LARGE_EXPONENT:
                self._refuse_past_room(k)
            p = self.z**k
            if len(self._powers) < 100_000:
                self._powers[k] = p
        return p

    def _refuse_past_room(self, k: int) -> None:
        """Refuse a weight z**k that would not fit in the memory this process may still take (GMP would end the
        process instead of raising)."""
        z = self.z_fraction
        bits = abs(k) * (z.numerator.bit_length() + z.denominator.bit_length())
        refuse_past_room(4 * bits / 8, f"{self.name}: a score of {k / self.grid:g} needs the weight z**{k}, which "
                                       "with its copies")

    def _grid_index(self, s: Any) -> int:
        num, den = self._num_den(s * self.grid)
        if den != 1:
            raise NumericsError(
                f"{self.name}: score {brief(self.to_fraction_or_float(s))} is not on the grid (1/{self.grid})Z; "
                f"choose inputs and weights on a coarser grid or a larger grid denominator D")
        return num

    def weights(self, scores: Array, allowed: np.ndarray | None) -> Array:
        out = np.empty(scores.shape, dtype=object)
        flat_s, flat_o = scores.reshape(-1), out.reshape(-1)
        flat_a = None if allowed is None else np.broadcast_to(allowed, scores.shape).reshape(-1)
        zero = self.scalar(0)
        for i, s in enumerate(flat_s):
            flat_o[i] = zero if (flat_a is not None and not flat_a[i]) else self._power(self._grid_index(s))
        return out

    def to_grid(self, a: Array, denominator: int) -> Array:
        def rnd(x: Any) -> Any:
            f = self.to_fraction_or_float(x)
            return self.scalar(Fraction(round(f * denominator), denominator))

        return np.vectorize(rnd, otypes=[object])(a) if a.size else a

    def _num_den(self, x: Any) -> tuple[int, int]:
        raise NotImplementedError


class FlintExact(_RationalBase):
    """Rationals as python-flint ``fmpq``; 2-D products through ``fmpq_mat`` (C speed)."""

    def __init__(self, grid: int = DEFAULT_GRID, seed: int = 0, base: Fraction | None = None) -> None:
        """Exact arithmetic on python-flint rationals with grid D = ``grid`` and base z."""
        super().__init__(grid, seed, base)
        self._int_powers: dict[int, np.ndarray] = {}

    def scalar(self, value: int | Fraction | float) -> Any:
        """``value`` as an ``fmpq``."""
        if isinstance(value, float):
            value = Fraction(value)
        if isinstance(value, Fraction):
            return flint.fmpq(value.numerator, value.denominator)
        if isinstance(value, (int, np.integer)):
            return flint.fmpq(int(value))
        if isinstance(value, flint.fmpq):
            return value
        raise NumericsError(f"{self.name}: cannot represent {value!r} ({type(value).__name__}) exactly")

    def to_fraction_or_float(self, value: Any) -> Fraction:
        """An ``fmpq`` as a ``Fraction``."""
        return Fraction(int(value.p), int(value.q))

    def _num_den(self, x: Any) -> tuple[int, int]:
        return int(x.p), int(x.q)

    def to_grid(self, a: Array, denominator: int) -> Array:
        """As the generic rounding (nearest, ties to even) but on the reduced fmpq directly: no gcd."""
        from attnsim.sim.numerics.flint_kernels import round_to_grid

        return round_to_grid(a, denominator) if a.size else a

    def attention(self, q: Array, k: Array, v: Array, allowed: np.ndarray | None = None) -> Array:
        """Through flint matrices with integer weights (``attnsim.sim.numerics.flint_kernels``); same result."""
        if q.ndim == 2 and q.size and k.size and v.size:
            from attnsim.sim.numerics.flint_kernels import flint_attention

            z = self.z_fraction
            out = flint_attention(q, k, v, allowed, z.numerator, z.denominator, self.grid, self._int_powers)
            if out is not None:
                return out
        return super().attention(q, k, v, allowed)

    def matmul(self, a: Array, b: Array) -> Array:
        """Exact matrix product through flint's matrix kernel (object arrays fall back to numpy)."""
        if a.ndim != 2 or b.ndim != 2 or a.size == 0 or b.size == 0:
            return super().matmul(a, b)
        (n, k), (k2, m) = a.shape, b.shape
        if k != k2:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not align")
        used = (b != 0).any(axis=1)  # an all-zero row of b makes its column of a irrelevant (exactly)
        if not used.all():  # e.g. packed oracle heads reading one slot of a wide stream (packing.py)
            if not used.any():
                return self.zeros((n, m))
            a, b, k = a[:, used], b[used], int(used.sum())
        prod = flint.fmpq_mat(n, k, list(a.reshape(-1))) * flint.fmpq_mat(k, m, list(b.reshape(-1)))
        return np.array(prod.entries(), dtype=object).reshape(n, m)


class FractionExact(_RationalBase):
    """Rationals as ``fractions.Fraction`` (the fallback when python-flint is missing; slower)."""

    kind = "fraction"

    def scalar(self, value: int | Fraction | float) -> Any:
        """``value`` as a ``Fraction``."""
        if isinstance(value, (int, np.integer, Fraction, float)):
            return Fraction(value)
        if HAVE_FLINT and isinstance(value, flint.fmpq):
            return Fraction(int(value.p), int(value.q))
        raise NumericsError(f"{self.name}: cannot represent {value!r} exactly")

    def to_fraction_or_float(self, value: Any) -> Fraction:
        """The value itself (already a ``Fraction``)."""
        return value

    def _num_den(self, x: Any) -> tuple[int, int]:
        return x.numerator, x.denominator


def make_exact(grid: int = DEFAULT_GRID, seed: int = 0, base: Fraction | None = None) -> _RationalBase:
    """The fastest exact backend available: python-flint if installed, else ``fractions``."""
    return FlintExact(grid, seed, base) if HAVE_FLINT else FractionExact(grid, seed, base)
