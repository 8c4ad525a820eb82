"""Numerics backends, chosen by name (docs/exact_numerics.md, docs/precision.md).

=====================  =======================================================================================
name                   arithmetic
=====================  =======================================================================================
``exact[:D[:z]]``      rationals (python-flint), softmax numerator z**(D*s); z = 2 by default, a rational
                       > 1, or ``seeded`` (a 16-bit rational in (1, 2] from the seed), see ``exact.py``
``fraction[:D[:z]]``   the same with ``fractions.Fraction`` (the fallback, and a speed baseline)
``symbolic[:D]``       rational functions in a symbol z
``mp:BITS``            mpmath reals at BITS bits of precision, real exp
``arb:BITS``           balls (python-flint ``arb``) at BITS bits, real exp: each output provably holds the exact
                       real value, see ``arb.py``
``float64``            numpy float64
``float:FMT``          fixed-width binary floating point (fp32, bf16, fp16, e4m3, e5m2, E.M), see ``fixed.py``
``fixed:qI.F``         fixed point, I integer bits (with sign) and F fraction bits, see ``fixed.py``
=====================  =======================================================================================

D is the score-grid denominator (default 64). Fixed-bit-width formats plug in through
:func:`register_backend`.
"""

from __future__ import annotations

from typing import Callable

from attnsim.sim.numerics.arb import make_arb
from attnsim.sim.numerics.base import Array, Numerics, NumericsError
from attnsim.sim.numerics.exact import DEFAULT_GRID, FractionExact, make_exact, parse_base
from attnsim.sim.numerics.fixed import make_fixed_width
from attnsim.sim.numerics.floating import Float64
from attnsim.sim.numerics.mp import MP

__all__ = ["Array", "Numerics", "NumericsError", "get_numerics", "register_backend", "backend_kind", "NAMES"]

NAMES = ("exact", "fraction", "symbolic", "mp:BITS", "arb:BITS", "float64", "float:FMT", "fixed:qI.F")

# kind -> factory(argument-after-colon or None, seed) -> Numerics
_BACKENDS: dict[str, Callable[[str | None, int], Numerics]] = {}


def register_backend(kind: str, factory: Callable[[str | None, int], Numerics]) -> None:
    """Make ``factory`` the constructor for numerics names of kind ``kind``."""
    _BACKENDS[kind] = factory


def _int_arg(kind: str, arg: str | None, default: int | None) -> int:
    if arg is None:
        if default is None:
            raise NumericsError(f"{kind} needs an argument, e.g. {kind}:200", param="numerics")
        return default
    try:
        return int(arg)
    except ValueError:
        raise NumericsError(f"{kind}:{arg}: expected an integer after the colon", param="numerics") from None


def _rational(kind: str, arg: str | None, seed: int) -> Numerics:
    """``exact[:D[:z]]`` or ``fraction[:D[:z]]``; the name keeps the user's spelling."""
    grid, _, base = (arg or "").partition(":")
    D = _int_arg(kind, grid or None, DEFAULT_GRID)
    z = parse_base(base or None, seed, kind)
    nm = make_exact(D, seed, z) if kind == "exact" else FractionExact(D, seed, z)
    nm.name = kind if arg is None else f"{kind}:{arg}"
    return nm


register_backend("exact", lambda arg, seed: _rational("exact", arg, seed))
register_backend("fraction", lambda arg, seed: _rational("fraction", arg, seed))
def _symbolic(arg: str | None, seed: int) -> Numerics:
    """``symbolic[:D]``; sympy is imported only when a symbolic run asks for it (it costs a second)."""
    from attnsim.sim.numerics.symbolic import Symbolic

    return Symbolic(_int_arg("symbolic", arg, 64), seed)


register_backend("symbolic", _symbolic)
register_backend("mp", lambda arg, seed: MP(_int_arg("mp", arg, None)))
register_backend("arb", make_arb)


def _float64(arg: str | None, seed: int) -> Numerics:
    if arg is not None:
        raise NumericsError("float64 takes no argument", param="numerics")
    return Float64()


register_backend("float64", _float64)
register_backend("float", lambda arg, seed: make_fixed_width("float", arg, seed))
register_backend("fixed", lambda arg, seed: make_fixed_width("fixed", arg, seed))


def backend_kind(name: str) -> str:
    """The kind of a numerics name: the part before the first colon."""
    return name.split(":", 1)[0]


def get_numerics(name: str, seed: int = 0) -> Numerics:
    """The backend called ``name`` (see the table above); ``seed`` fixes the exact base z."""
    kind, _, arg = name.partition(":")
    if kind not in _BACKENDS:
        raise NumericsError(f"unknown numerics {name!r}; choose one of "
                            f"{', '.join(sorted(_BACKENDS))} (e.g. exact, mp:200, float64)", param="numerics")
    return _BACKENDS[kind](arg or None, seed)
