"""Lemma instances that let a second solver settle the plan's non-linear integer arithmetic.

The plan multiplies block indices by a symbolic block size and divides by it (``t·b``, ``⌈N/b⌉``,
``i div b``), which is non-linear integer arithmetic. cvc5's linearisation rarely finds the two facts
the proofs turn on, so they are added to a query as *instances*, on the query's own terms:

* **division** — for a divisor d ≥ 1: d·(a div d) ≤ a ≤ d·(a div d) + d − 1, and a mod d = a − d·(a div d);
* **monotone multiples** — for d ≥ 1 and any two multiplicands x, y of d in the query (a product's
  other factors, or a quotient by d), and their negations: x − y ≥ 1 ⇒ d·x − d·y ≥ d, x − y ≤ −1 ⇒
  d·x − d·y ≤ −d, x = y ⇒ d·x = d·y; and the same with y = 0.

Each instance is a theorem of integer arithmetic (:data:`SCHEMAS`, proved once by both solvers in
``tests/test_prove.py``), so adding it leaves the query's satisfiability unchanged: an ``unsat`` with the
instances is an ``unsat`` without them. A divisor's integer content is factored out (2·C and C are
one divisor, C, with multiplicands scaled by 2), so quotients by 2·C and by C are compared.
"""

from __future__ import annotations

from math import gcd
from typing import Any

import z3

MAX_TERMS = 24  # multiplicands per divisor compared pairwise (the queries have far fewer)


def _linear(t: z3.ArithRef) -> tuple[dict[str, tuple[int, Any]], int] | None:
    """``t`` as Σ c·atom + k (atoms: any subterm that is not +, −, unary −, a numeral times a term)."""
    if z3.is_int_value(t):
        return {}, t.as_long()
    if z3.is_add(t) or z3.is_sub(t):
        parts = [_linear(c) for c in t.children()]
        if any(p is None for p in parts):
            return None
        out: dict[str, tuple[int, Any]] = {}
        k = 0
        for n, (terms, const) in enumerate(parts):  # type: ignore[misc]
            sign = -1 if z3.is_sub(t) and n > 0 else 1
            k += sign * const
            for key, (c, atom) in terms.items():
                out[key] = (out.get(key, (0, atom))[0] + sign * c, atom)
        return {key: v for key, v in out.items() if v[0] != 0}, k
    if z3.is_app_of(t, z3.Z3_OP_UMINUS):
        inner = _linear(t.arg(0))
        return None if inner is None else ({k: (-c, a) for k, (c, a) in inner[0].items()}, -inner[1])
    if z3.is_mul(t):
        nums = [c for c in t.children() if z3.is_int_value(c)]
        rest = [c for c in t.children() if not z3.is_int_value(c)]
        scale = 1
        for c in nums:
            scale *= c.as_long()
        if not rest:
            return {}, scale
        if len(rest) == 1:
            inner = _linear(rest[0])
            return None if inner is None else ({k: (scale * c, a) for k, (c, a) in inner[0].items()},
                                              scale * inner[1])
        return None
    return {t.sexpr(): (1, t)}, 0


def _divisor(d: z3.ArithRef) -> tuple[str, Any, int]:
    """(a key, the divisor without its integer content, the content g ≥ 1) of a non-constant term."""
    lin = _linear(d)
    if lin is None or not lin[0]:
        s = z3.simplify(d)
        return s.sexpr(), s, 1
    terms, k = lin
    g = 0
    for c, _ in terms.values():
        g = gcd(g, c)
    g = gcd(g, k)
    sign = 1 if min(terms)[0:0] == "" and terms[min(terms)][0] > 0 else -1
    g *= sign
    body = z3.Sum(*[(c // g) * a for c, a in (terms[key] for key in sorted(terms))]) + k // g
    s = z3.simplify(body)
    return s.sexpr(), s, g


def _collect(goal: Any) -> tuple[dict[str, tuple[Any, dict[str, Any]]], list[Any]]:
    """Divisors with their multiplicands, and the division facts, of every subterm of ``goal``."""
    groups: dict[str, tuple[Any, dict[str, Any]]] = {}
    facts: list[Any] = []
    seen: set[int] = set()

    def add(d: Any, x: Any) -> None:
        key, body, g = _divisor(d)
        xs = groups.setdefault(key, (body, {}))[1]
        for term in {z3.simplify(g * x), z3.simplify(x)} if g != 1 else {z3.simplify(x)}:
            xs.setdefault(term.sexpr(), term)

    stack = [goal]
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        stack.extend(e.children())
        if not z3.is_arith(e) or not z3.is_app(e):
            continue
        if z3.is_app_of(e, z3.Z3_OP_IDIV) or z3.is_app_of(e, z3.Z3_OP_MOD):
            a, d = e.children()
            if z3.is_int_value(d):
                continue
            q = a / d
            facts.append(z3.Implies(d >= 1, z3.And(d * q <= a, a <= d * q + d - 1, a % d == a - d * q)))
            add(d, q)
        elif z3.is_mul(e):
            factors = [c for c in e.children() if not z3.is_int_value(c)]
            if len(factors) < 2:
                continue
            coef = 1
            for c in e.children():
                if z3.is_int_value(c):
                    coef *= c.as_long()
            for n, f in enumerate(factors):
                others = [g for m, g in enumerate(factors) if m != n]
                add(f, coef * z3.Product(*others) if len(others) > 1 else coef * others[0])
    return groups, facts


def _compare(d: Any, x: Any, y: Any) -> Any:
    """d ≥ 1 ⇒ the sign of x − y is the sign of d·x − d·y, and d·(x − y) is at least d away from 0."""
    z, dz = x - y, d * x - d * y
    return z3.Implies(d >= 1, z3.And(z3.Implies(z >= 1, dz >= d), z3.Implies(z <= -1, dz <= -d),
                                     z3.Implies(z == 0, dz == 0)))


def instances(hyps: list[Any], goal: Any) -> list[Any]:
    """Division and monotone-multiple instances (:data:`SCHEMAS`) on the terms of ``hyps`` and ``goal``."""
    groups, facts = _collect(z3.And(*hyps, goal))
    out = list(facts)
    for body, xs in groups.values():
        terms = list(xs.values())[:MAX_TERMS]
        for n, x in enumerate(terms):
            out.append(_compare(body, x, z3.IntVal(0)))
            for y in terms[n + 1:]:
                out += [_compare(body, x, y), _compare(body, x, -y)]
    return out


_d, _x, _y, _a = z3.Ints("d x y a")
SCHEMAS = {  # the universally valid facts every instance is a case of (proved in tests/test_prove.py)
    "division": z3.Implies(_d >= 1, z3.And(_d * (_a / _d) <= _a, _a <= _d * (_a / _d) + _d - 1,
                                          _a % _d == _a - _d * (_a / _d))),
    "monotone multiples": _compare(_d, _x, _y),
}
