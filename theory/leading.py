"""Limits at infinity by leading terms: the fast path of :func:`attnsim.theory.symbolic` before sympy's limit.

The ratios the claims' containment checks take limits of (count/bound as ``N``, ``n`` or ``k`` grows:
ANNA Thm 4.2's ``N^(3 rho) log N`` tables, Cor B.9's ``log N`` rounds, Two Heads' polynomials in ``n``)
are sums and products of powers of the variable ``x``, of ``log x`` and of ``log log x``, with
coefficients free of ``x``. Every such term behaves as ``c · x^p · (log x)^q · (log log x)^r``: its
*leading term*, found here by exponent arithmetic (a product adds exponents, a sum keeps the largest
scale, ``log`` of ``c x^p`` is ``p log x``, ``log(1 + u)`` is ``u`` once ``u`` vanishes), without sympy's
series machinery (gruntz), which spends a second on one such ratio, and four on Lemma C.2's closed formula.

Nothing is guessed: :func:`leading` raises :class:`Unsupported` whenever the answer would need more than
exponent comparison — a function of ``x`` other than powers, ``log``, ``exp(k log x)`` and ``Abs`` of a
term of known sign, two scales whose order depends on the sign of a symbol (``x^eps`` against
``x^(eps_gap/4)``; :func:`limit` still gives 0 when every term of the expanded expression vanishes), a
sum whose top terms cancel, an infinite limit whose sign is not known — and the caller then asks sympy.
``Min``/``Max`` of ``x`` raise NotImplementedError at once, as sympy's limit does (they have no series):
the caller decides or bounds them.
"""

from __future__ import annotations

import sympy as sp

Scale = tuple[sp.Expr, sp.Expr, sp.Expr]
"""The exponents of ``x``, ``log x`` and ``log log x`` in a leading term."""
_ONE: Scale = (sp.Integer(0),) * 3


class Unsupported(Exception):
    """The leading term cannot be found by exponent comparison alone."""


class Unordered(Unsupported):
    """Two scales whose order depends on the sign of an expression in the symbols."""


def _sign(e: sp.Expr) -> int:
    """-1, 0 or 1: the sign of an exponent (all symbols are positive); Unordered when it is not known."""
    e = sp.expand(e)
    if e == 0:
        return 0
    if e.is_positive:
        return 1
    if e.is_negative:
        return -1
    raise Unordered(f"sign of {e}")


def _compare(a: Scale, b: Scale) -> int:
    """The order of two scales as ``x`` grows: x^p dominates every power of log x, which dominates log log x."""
    for u, v in zip(a, b):
        s = _sign(u - v)
        if s:
            return s
    return 0


def _key(s: Scale) -> Scale:
    return tuple(sp.expand(e) for e in s)  # type: ignore[return-value]


def leading(expr: sp.Expr, x: sp.Symbol) -> tuple[sp.Expr, Scale]:
    """``(c, (p, q, r))`` with ``expr ~ c · x^p · (log x)^q · (log log x)^r`` as ``x → ∞``; Unsupported
    when exponent comparison cannot tell."""
    if x not in expr.free_symbols:
        return expr, _ONE
    if expr == x:
        return sp.Integer(1), (sp.Integer(1), sp.Integer(0), sp.Integer(0))
    if isinstance(expr, sp.Mul):
        coeff, scale = sp.Integer(1), _ONE
        for f in expr.args:
            c, s = leading(f, x)
            coeff, scale = coeff * c, tuple(u + v for u, v in zip(scale, s))
        return coeff, _key(scale)  # type: ignore[arg-type]
    if isinstance(expr, sp.Add):
        return _sum([leading(t, x) for t in expr.args])
    if isinstance(expr, sp.Pow) and x not in expr.exp.free_symbols:
        c, s = leading(expr.base, x)
        if not (c.is_positive or expr.exp.is_integer):
            raise Unsupported(f"power of a coefficient of unknown sign: {expr}")
        return c ** expr.exp, _key(tuple(u * expr.exp for u in s))  # type: ignore[arg-type]
    if isinstance(expr, sp.log):
        c, s = leading(expr.args[0], x)
        if c == 1 and s == _ONE:
            return _log_near_one(expr.args[0], x)
        return _log(c, s)
    if isinstance(expr, sp.Abs):
        c, s = leading(expr.args[0], x)
        if c.is_positive or c.is_negative:
            return abs(c), s
        raise Unsupported(f"Abs of a term of unknown sign: {expr}")
    if isinstance(expr, (sp.Min, sp.Max)):
        raise NotImplementedError(f"{type(expr).__name__} of {x} has no series (sympy's limit fails on it too)")
    if isinstance(expr, sp.exp):
        free, dep = expr.args[0].as_independent(x, as_Add=True)
        k = sp.cancel(dep / sp.log(x))
        if x in k.free_symbols:
            raise Unsupported(f"exp of more than a multiple of log {x}: {expr}")
        return sp.exp(free), (k, sp.Integer(0), sp.Integer(0))
    raise Unsupported(f"{type(expr).__name__} of {x}")


def _sum(terms: list[tuple[sp.Expr, Scale]]) -> tuple[sp.Expr, Scale]:
    """The leading term of a sum: the largest scale, its coefficients added (which must not cancel)."""
    groups: dict[Scale, sp.Expr] = {}
    for c, s in terms:
        groups[s] = groups.get(s, sp.Integer(0)) + c
    scales = list(groups)
    top = scales[0]
    for s in scales[1:]:
        if _compare(s, top) > 0:
            top = s
    if any(s != top and _compare(top, s) <= 0 for s in scales):
        raise Unsupported("no largest scale")
    coeff = groups[top]
    if sp.expand(sp.expand_log(coeff, force=True)) == 0:
        raise Unsupported("the top terms cancel")
    return coeff, top


def _log(c: sp.Expr, s: Scale) -> tuple[sp.Expr, Scale]:
    """log(c x^p (log x)^q ...) ~ p log x when p != 0, q log log x when only q != 0, log c when both are 0."""
    p, q, r = s
    if _sign(p):  # log c is a constant, whatever the sign of c
        return p, (sp.Integer(0), sp.Integer(1), sp.Integer(0))
    if _sign(q):
        return q, (sp.Integer(0), sp.Integer(0), sp.Integer(1))
    if _sign(r) or not c.is_positive:
        raise Unsupported("log of a log log or of unknown sign")
    return sp.log(c), _ONE


def _log_near_one(arg: sp.Expr, x: sp.Symbol) -> tuple[sp.Expr, Scale]:
    """log(1 + u) ~ u when u -> 0 (log(1 + u) = u + O(u^2)): the leading term of ``arg - 1``, which must vanish."""
    c, s = leading(sp.cancel(arg - 1), x)
    if _compare(s, _ONE) >= 0:
        raise Unsupported(f"log of something tending to 1 whose excess does not vanish: log({arg})")
    return c, s


def limit(expr: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """lim expr as x → ∞ from the leading term: its coefficient, 0, or ±oo; Unsupported when it cannot tell.
    When the terms of a sum cannot be ordered, the limit is still 0 if every term of the expanded
    expression tends to 0."""
    try:
        c, scale = leading(expr, x)
    except Unordered:
        terms = sp.Add.make_args(sp.expand(expr))
        if len(terms) > 1 and all(limit(t, x) == 0 for t in terms):
            return sp.Integer(0)
        raise
    for e in scale:
        s = _sign(e)
        if s < 0:
            return sp.Integer(0)
        if s > 0:
            if c.is_positive:
                return sp.oo
            if c.is_negative:
                return -sp.oo
            raise Unsupported(f"infinite limit of unknown sign: {c}")
    return c
