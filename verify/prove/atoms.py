"""Symbolic entries for the real constructions: a numerics of rational functions in free symbols.

Every input entry, weight and layer-MLP coefficient is a free symbol; values are elements of the
rational function field Q(symbols), held as reduced fractions of python-flint ``fmpq_mpoly``. Softmax
numerators are where exp enters: a score s is a polynomial, split as s = s₀ + c with c its integer
constant term, and exp(s) is written E^c·a[s₀], where E stands for e and a[s₀] is a fresh symbol per
distinct polynomial s₀ (a[0] = 1). This is sound for proving: an identity between rational functions of
independent symbols still holds when each a[s₀] is given its value exp(s₀) — the only relation a
construction may use, exp(s₀ + c) = e^c·exp(s₀), is built in. So a construction's output that equals
the reference's here equals it for every value of the inputs and weights, at that size.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable

import numpy as np
from flint import fmpq, fmpq_mpoly_ctx

from attnsim.sim.numerics.base import Array, Numerics, NumericsError


class Field:
    """Q(names…, E, a0…a_{atoms−1}): the symbols of one proof run and the atoms handed out so far."""

    def __init__(self, names: Iterable[str], atoms: int, generic: int = 0) -> None:
        """Free symbols ``names``, the symbol E, room for ``atoms`` distinct exp atoms and ``generic`` symbols
        for the values of an arbitrary token-wise map (``outputs.Generic``)."""
        names = list(names)
        self.ctx = fmpq_mpoly_ctx.get(names + ["E"] + [f"a{k}" for k in range(atoms)]
                                      + [f"g{k}" for k in range(generic)], "degrevlex")
        gens = self.ctx.gens()
        self.one = gens[0] ** 0
        self.symbols = {n: Rat(self, g) for n, g in zip(names, gens)}
        self.E = gens[len(names)]
        self.free_atoms = list(gens[len(names) + 1:len(names) + 1 + atoms])
        self.free_generic = list(gens[len(names) + 1 + atoms:])
        self.atoms: dict[str, Any] = {}
        self.generic: dict[str, list[Any]] = {}

    def take_generic(self, count: int) -> list[Any]:
        """``count`` fresh symbols for one value of an arbitrary map."""
        if len(self.free_generic) < count:
            raise NumericsError("symbolic entries: more distinct map inputs than the run has room for")
        out, self.free_generic = self.free_generic[:count], self.free_generic[count:]
        return out

    def const(self, value: int | Fraction) -> Rat:
        """A constant of the field."""
        v = Fraction(value)
        return Rat(self, self.one * fmpq(v.numerator, v.denominator))

    def atom(self, poly: Any) -> Any:
        """exp(poly) for a polynomial without constant term: one symbol per distinct polynomial."""
        key = str(poly)
        if key not in self.atoms:
            if not self.free_atoms:
                raise NumericsError("symbolic entries: more distinct scores than the run has room for")
            self.atoms[key] = self.free_atoms.pop(0)
        return self.atoms[key]


class Rat:
    """A reduced fraction n/d of polynomials of one :class:`Field` (d with leading coefficient 1)."""

    __slots__ = ("F", "n", "d")

    def __init__(self, F: Field, n: Any, d: Any = None, reduce: bool = False) -> None:
        """n/d in ``F`` (d = 1 when omitted); ``reduce``: cancel the gcd and make d's leading coefficient 1."""
        self.F, self.n, self.d = F, n, (F.one if d is None else d)
        if reduce:
            g = self.n.gcd(self.d)
            if not g.is_one():
                self.n, self.d = self.n / g, self.d / g
            lc = self.d.leading_coefficient()
            if lc != 1:
                self.n, self.d = self.n / lc, self.d / lc

    def _lift(self, other: Any) -> Rat:
        if isinstance(other, Rat):
            return other
        if isinstance(other, (int, np.integer, Fraction)):
            return self.F.const(int(other) if isinstance(other, np.integer) else other)
        raise NumericsError(f"symbolic entries: cannot combine with {type(other).__name__}")

    def __add__(self, other: Any) -> Rat:
        o = self._lift(other)
        if self.d == o.d:
            return Rat(self.F, self.n + o.n, self.d, reduce=not self.d.is_one())
        return Rat(self.F, self.n * o.d + o.n * self.d, self.d * o.d, reduce=True)

    __radd__ = __add__

    def __neg__(self) -> Rat:
        return Rat(self.F, -self.n, self.d)

    def __sub__(self, other: Any) -> Rat:
        return self + (-self._lift(other))

    def __rsub__(self, other: Any) -> Rat:
        return self._lift(other) - self

    def __mul__(self, other: Any) -> Rat:
        o = self._lift(other)
        if self.d.is_one() and o.d.is_one():
            return Rat(self.F, self.n * o.n)
        return Rat(self.F, self.n * o.n, self.d * o.d, reduce=True)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Rat:
        o = self._lift(other)
        if o.n.is_zero():
            raise ZeroDivisionError("symbolic entries: division by zero")
        return Rat(self.F, self.n * o.d, self.d * o.n, reduce=True)

    def __rtruediv__(self, other: Any) -> Rat:
        return self._lift(other) / self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (Rat, int, np.integer, Fraction)):
            return NotImplemented
        o = self._lift(other)
        return self.n * o.d == o.n * self.d

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"({self.n})/({self.d})" if not self.d.is_one() else f"{self.n}"


class AtomNumerics(Numerics):
    """The Numerics protocol over a :class:`Field`: every operation exact, exp as atoms (module docstring)."""

    name = "symbolic-entries"
    exact = True

    def __init__(self, field: Field) -> None:
        """Arithmetic in ``field``."""
        self.F = field

    def scalar(self, value: Any) -> Rat:
        """A field element from a :class:`Rat`, an int or a Fraction."""
        if isinstance(value, Rat):
            return value
        if isinstance(value, (int, np.integer, Fraction)):
            return self.F.const(int(value) if isinstance(value, np.integer) else value)
        raise NumericsError(f"{self.name}: cannot represent {value!r}")

    def to_fraction_or_float(self, value: Any) -> Fraction:
        """A constant element as a Fraction (non-constant ones have no single value)."""
        if value.n.is_constant() and value.d.is_constant():
            q = value.n.leading_coefficient() / value.d.leading_coefficient() if not value.n.is_zero() else fmpq(0)
            return Fraction(int(q.p), int(q.q))
        raise NumericsError(f"{self.name}: {value} is not a number")

    def weights(self, scores: Array, allowed: np.ndarray | None) -> Array:
        """exp of each polynomial score as E^c·a[s − c] (0 where not allowed)."""
        out = np.empty(scores.shape, dtype=object)
        flat_s, flat_o = scores.reshape(-1), out.reshape(-1)
        flat_a = None if allowed is None else np.broadcast_to(allowed, scores.shape).reshape(-1)
        zero = self.F.const(0)
        for k, s in enumerate(flat_s):
            flat_o[k] = zero if flat_a is not None and not flat_a[k] else self._exp(s)
        return out

    def _exp(self, s: Rat) -> Rat:
        if not s.d.is_constant():
            raise NumericsError(f"{self.name}: a score is not a polynomial in the symbols: {s}")
        poly = s.n / s.d.leading_coefficient()
        c = poly.to_dict().get((0,) * self.F.ctx.nvars(), fmpq(0))
        if c.q != 1:
            raise NumericsError(f"{self.name}: a score's constant term {c} is not an integer")
        rest = poly - c
        value = self.F.one if rest.is_zero() else self.F.atom(rest)
        e = int(c.p)
        return Rat(self.F, value * self.F.E ** e) if e >= 0 else Rat(self.F, value, self.F.E ** (-e))

    def is_zero(self, a: Array) -> np.ndarray:
        """Element-wise test for the zero function."""
        return np.vectorize(lambda x: x.n.is_zero(), otypes=[bool])(a) if a.size else np.zeros(a.shape, bool)


def symbols(F: Field, prefix: str, shape: tuple[int, ...]) -> Array:
    """An array of the field's symbols ``prefix_i_j``."""
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        out[idx] = F.symbols[prefix + "_" + "_".join(map(str, idx))]
    return out


def symbol_names(prefix: str, shape: tuple[int, ...]) -> list[str]:
    """The names :func:`symbols` uses."""
    return [prefix + "_" + "_".join(map(str, idx)) for idx in np.ndindex(*shape)]


def same(a: Array, b: Array) -> bool:
    """Equal shapes and every entry the same rational function."""
    return a.shape == b.shape and all(x == y for x, y in zip(a.reshape(-1), b.reshape(-1)))

