"""Every claim's bound and exact count as sympy expressions, with a proof-style containment check.

For one resource of one claim (``paper_refs``), :func:`analyse` gives

- the paper's bound and the exact count of our scheme as expressions, definitions expanded except
  the claim's limit variable (``n = N/M`` for Two Heads), and simplified;
- the ratio count/bound with ceilings and floors dropped (they move a count by less than a constant
  factor once the limit variable is large) and its limit as that variable grows: the *leading
  constant*. The count is in the bound's class when the limit is finite, tight when it is also
  non-zero;
- the *factors*: every other symbol of the bound (``H``, ``L``, ``Hp``, ``Lp``, ``d``, ...) is a
  per-layer / per-head / per-width factor. It is ``exact`` when the leading constant does not depend
  on it (count and bound scale the same way in it); otherwise the constant's limit as that symbol
  alone grows is ``bounded`` or it ``grows``. Symbols only the count has (scheme flags such as
  ``fused``) are reported as ``count only``. The factors are reported beside the verdict, not folded
  into it: the symbols are not independent (H <= d, an oracle with H' = 1, ...), so a factor that
  grows on its own is a finding to read (the scheme does not use the oracle's extra heads, say), not
  by itself a broken bound. The verdict is about the claim's limit variable only;
- LaTeX of all of it, ready to paste.

Nothing here runs a model; ``attnsim.theory.bounds.contained`` (used by every check record) reads
its verdict from here, so ``attnsim bounds`` and ``attnsim check`` can never disagree.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Iterator

import sympy as sp

from attnsim.paper_refs import Claim
from attnsim.theory import leading, store
from attnsim.theory.formulas import FormulaError, expand_definitions, parse, symbol
from attnsim.theory.notation import bound_text, latex, latex_cases, text_cases

TIGHT, LOOSE, OUTSIDE = "tight", "within bound (not tight)", "outside bound"
BOUND_ONLY, EXACT_ONLY = "bound only (no exact count)", "exact count only (no bound)"


@dataclass(frozen=True)
class ResourceTheory:
    """One resource of a claim analysed: bound, exact count, limit, leading constant and verdict."""
    claim: str
    resource: str
    limit_var: str
    bound: sp.Expr | None
    exact: sp.Expr | None
    leading_constant: sp.Expr | None
    verdict: str
    factors: dict[str, str] = field(default_factory=dict)
    note: str = ""
    of: str = "exact"  # what ``exact`` holds: the exact count, or ("upper") the proof's upper formula on the count

    @property
    def finite(self) -> bool:
        """Whether the exact count is within the bound's class."""
        return self.verdict in (TIGHT, LOOSE)

    @property
    def tight(self) -> bool:
        """Whether the count is tight: a finite, positive leading constant."""
        return self.verdict == TIGHT

    @property
    def factors_exact(self) -> bool:
        """Whether every factor of the bound is matched exactly (or only counted)."""
        return all(v in ("exact", "count only") for v in self.factors.values())

    @property
    def growing_factors(self) -> list[str]:
        """The factors whose ratio grows or cannot be bounded."""
        return [k for k, v in self.factors.items() if v in ("grows", "cannot bound")]

    def latex(self) -> dict[str, str]:
        """Bound, exact count and statement as LaTeX (a scheme's flags as cases, :mod:`.notation`)."""
        paper = self.claim.split(".")[0]
        out = {}
        if self.bound is not None:
            out["bound"] = latex_cases(self.bound, paper, wrap=r"O\left({}\right)")
        if self.exact is not None:
            out["exact"] = latex_cases(self.exact, paper)
        if self.leading_constant is not None:
            out["leading_constant"] = latex_cases(self.leading_constant, paper)
        if self.bound is not None and self.exact is not None:
            rel = r"\in" if self.finite else r"\notin"
            is_ = "=" if self.of == "exact" else r"\leq"
            out["statement"] = (rf"\mathrm{{{latex_name(self.resource)}}} {is_} {out['exact']} {rel} {out['bound']}"
                                rf", \quad \lim_{{{tex(symbol(self.limit_var))} \to \infty}}"
                                rf" \frac{{\mathrm{{count}}}}{{\mathrm{{bound}}}} = {out.get('leading_constant', '?')}")
        elif "bound" in out:
            out["statement"] = rf"\mathrm{{{latex_name(self.resource)}}} \in {out['bound']}"
        return out

    def text(self) -> dict[str, str]:
        """Bound, exact count and leading constant in plain text (:mod:`.notation`)."""
        paper = self.claim.split(".")[0]
        out = {}
        if self.bound is not None:
            out["bound"] = bound_text(self.bound, paper)
        for key, expr in (("exact", self.exact), ("leading_constant", self.leading_constant)):
            if expr is not None:
                out[key] = text_cases(expr, paper)
        return out

    def as_dict(self) -> dict[str, Any]:
        """The analysis as a JSON-ready dict."""
        return {
            "resource": self.resource, "limit": self.limit_var,
            "bound": _s(self.bound), "exact": _s(self.exact), "leading_constant": _s(self.leading_constant),
            "of": self.of, "verdict": self.verdict, "factors": dict(self.factors), "factors_exact": self.factors_exact,
            "growing_factors": self.growing_factors,
            "note": self.note, "latex": self.latex(), "text": self.text(),
        }


def _s(e: sp.Expr | None) -> str | None:
    return None if e is None else str(e)


def latex_name(name: str) -> str:
    """``name`` with underscores escaped for LaTeX."""
    return name.replace("_", r"\_")


def tex(expr: sp.Expr) -> str:
    """LaTeX with the papers' names (:func:`attnsim.theory.notation.latex`)."""
    return latex(expr)


def _smooth(expr: sp.Expr) -> sp.Expr:
    return expr.replace(sp.ceiling, lambda a: a).replace(sp.floor, lambda a: a)


def expression(claim: Claim, formula: str) -> sp.Expr:
    """The formula with the claim's definitions expanded except its limit variable."""
    return expand_definitions(parse(formula), claim.definitions, keep=(claim.limit,))


def _is_infinite(v: sp.Expr) -> bool:
    return v.has(sp.oo, -sp.oo, sp.zoo, sp.nan) or v.is_finite is False


def _limit(expr: sp.Expr, var: sp.Symbol, cancelled: bool = False) -> sp.Expr:
    """lim expr as var -> oo; rational functions of var by degrees, products of powers and logs by their
    leading terms (:mod:`attnsim.theory.leading`; both fast), anything else by sympy. ``cancelled``: expr is
    already in :func:`sympy.cancel`'s form."""
    if var not in expr.free_symbols:
        return expr
    form = expr if cancelled else sp.cancel(expr)
    num, den = sp.fraction(form)
    if num.is_polynomial(var) and den.is_polynomial(var):
        pn, pd = sp.Poly(num, var), sp.Poly(den, var)
        if pn.degree() < pd.degree():
            return sp.Integer(0)
        if pn.degree() == pd.degree():
            return sp.cancel(pn.LC() / pd.LC())
        lc = pn.LC() / pd.LC()
        return sp.oo if lc.is_positive is not False else sp.zoo
    try:
        lim = leading.limit(form, var)
    except leading.Unsupported:
        lim = _sympy_limit(expr, var)
    simple = sp.simplify(lim)
    return lim if simple is sp.nan and lim is not sp.nan else simple  # keep oo*sign(...) readable


def _sympy_limit(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """sympy's limit (gruntz), for what exponent comparison cannot tell."""
    if any(var in a.free_symbols and a.args[0].has(sp.log) for a in expr.atoms(sp.log)):
        # log log N terms (e.g. from ell = N^(3 rho) log N) make gruntz slow: N = e^t turns them into log t
        t = sp.Dummy("t", positive=True)
        expr, var = sp.expand_log(expr.subs(var, sp.exp(t))), t
    return sp.limit(expr, var, sp.oo)


def _upper(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """An upper bound free of Min/Max (counts are positive): Min(a, b) <= the argument in ``var``,
    Max(a, b) <= a + b. Used where sympy cannot take the limit of Min/Max directly."""
    def low(*args: sp.Expr) -> sp.Expr:
        return next((a for a in args if var in a.free_symbols), args[0])
    return expr.replace(sp.Min, low).replace(sp.Max, lambda *a: sp.Add(*a))


def _decided(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """Min(a, b) and Max(a, b) replaced by the argument that wins as ``var`` grows, where the limit of a/b
    decides it (Min(n b, b) is b once n > 1); the others are left as they are."""
    def pick(kind: type, *args: sp.Expr) -> sp.Expr:
        if len(args) != 2 or not any(var in a.free_symbols for a in args):
            return kind(*args)
        try:
            ratio = _limit(args[0] / args[1], var)
        except (NotImplementedError, ValueError, TypeError):
            return kind(*args)
        if ratio == sp.oo or (ratio.is_number and ratio > 1):
            return args[1] if kind is sp.Min else args[0]
        if ratio.is_number and ratio < 1:
            return args[0] if kind is sp.Min else args[1]
        return kind(*args)
    return expr.replace(sp.Min, lambda *a: pick(sp.Min, *a)).replace(sp.Max, lambda *a: pick(sp.Max, *a))


def _limit_or_upper(expr: sp.Expr, var: sp.Symbol, cancelled: bool = False) -> tuple[sp.Expr, bool]:
    """The limit, or the limit of an upper bound (then the flag is True) when sympy cannot take it."""
    try:
        return _limit(expr, var, cancelled), False
    except (NotImplementedError, ValueError, TypeError):
        pass
    decided = _decided(expr, var)
    if decided != expr:
        try:
            return _limit(decided, var), False
        except (NotImplementedError, ValueError, TypeError):
            pass
    terms = sp.Add.make_args(sp.expand(decided))  # sympy may not order N^a against N^b for symbolic a, b
    try:
        parts = [_limit(term, var) for term in terms] if len(terms) > 1 else []
    except (NotImplementedError, ValueError, TypeError):
        parts = []
    if parts and not any(_is_infinite(p) for p in parts):
        return sp.Add(*parts), False  # every term has a finite limit: the sum's limit is their sum
    return _limit(_upper(decided, var), var), True


TheoryKey = tuple[str, str, "str | None", "str | None", str, tuple[tuple[str, str], ...], str]
_KNOWN: dict[TheoryKey, ResourceTheory] = {}
_STORE = {"on": True}
"""Whether theories are read from and written to the disk store (:mod:`attnsim.theory.store`);
:func:`derived_here` turns it off."""


def _derived(key: TheoryKey) -> ResourceTheory:
    """The theory of ``key``: kept in this process, else stored on disk by this code, else derived (and stored)."""
    known = _KNOWN.get(key)
    if known is not None:
        return known
    if not _STORE["on"]:
        return _analyse(*key)
    stored = store.load(key)
    if stored is None:
        with store.claimed(key):  # another process deriving the same theory: wait for its entry
            stored = store.load(key)
            if stored is None:
                theory = _analyse(*key)
                if not theory.verdict.startswith("error"):
                    store.save(key, vars(theory))
                return theory
    return ResourceTheory(**stored)


def theory_key(claim: Claim, resource: str) -> TheoryKey:
    """Everything one resource's theory is derived from: ids, both formulas, the limit, definitions, note."""
    res = claim.resources[resource]
    return (claim.id, resource, res.bound, res.exact, claim.limit,
            tuple(sorted({**claim.definitions, **growth(claim)}.items())), res.note)


def analyse(claim: Claim, resource: str) -> ResourceTheory:
    """The symbolic theory of one resource (cached on the formulas, so edits to a TOML are seen)."""
    return _derived(theory_key(claim, resource))


def upper_key(claim: Claim, resource: str) -> TheoryKey:
    """:func:`theory_key` with the resource's proof's upper formula (``upper`` in paper_refs) in the exact count's
    place: a resource has one or the other, never both, so the two keys never meet."""
    cid, name, bound, _, limit, defs, note = theory_key(claim, resource)
    return (cid, name, bound, claim.resources[resource].upper, limit, defs, note)


def analyse_upper(claim: Claim, resource: str) -> ResourceTheory | None:
    """The theory of the resource's upper formula held against its bound, as :func:`analyse` holds an exact count
    (its ``exact`` is the upper formula); None without an upper formula."""
    if not claim.resources[resource].upper or not claim.resources[resource].bound:
        return None
    return _derived(upper_key(claim, resource))


def remember(results: list[tuple[TheoryKey, ResourceTheory]]) -> None:
    """Keep theories derived in another process (by :func:`analyse`, from the same key) for this one and the
    processes it forks later, so that no worker derives them again."""
    _KNOWN.update(results)


@contextmanager
def derived_here() -> Iterator[None]:
    """Within the block the theories kept by :func:`remember` and the disk store are set aside: every theory is
    derived in this process, by the functions as they are now (a broken variant that changes how a containment
    is derived must meet the derivation, not a theory derived elsewhere before the break), and none is stored."""
    kept, was = dict(_KNOWN), _STORE["on"]
    _KNOWN.clear()
    _STORE["on"] = False
    try:
        yield
    finally:
        _KNOWN.clear()
        _KNOWN.update(kept)
        _STORE["on"] = was


def analysed_form(claim: Claim, formula: str) -> sp.Expr:
    """``formula`` as :func:`analyse` holds it (definitions and growth substituted except the limit
    variable): the form ``claims``, ``bounds`` and the report print."""
    defs = {**claim.definitions, **growth(claim)}
    return expression(Claim(claim.id, claim.paper, "", "claim", "", limit=claim.limit, definitions=defs), formula)


def growth(claim: Claim) -> dict[str, str]:
    """How the quantities a checker derives (a code length, say) grow with the limit variable, from the
    claim's ``[claims.extra.growth]``: substituted for the asymptotic analysis only, so that such a
    quantity is never frozen as a constant, while exact counts use the checker's derived values."""
    return {str(k): str(v) for k, v in (claim.extra.get("growth") or {}).items()}


@lru_cache(maxsize=None)
def _analyse(cid: str, resource: str, bound_f: str | None, exact_f: str | None, limit: str,
             definitions: tuple[tuple[str, str], ...], note: str) -> ResourceTheory:
    defs = dict(definitions)
    fake = Claim(cid, cid.split(".")[0], "", "claim", "", limit=limit, definitions=defs)
    try:
        bound = expression(fake, bound_f) if bound_f else None
        exact = expression(fake, exact_f) if exact_f else None
    except FormulaError as exc:
        return ResourceTheory(cid, resource, limit, None, None, None, f"error: {exc}", note=note)
    if bound is None or exact is None:
        return ResourceTheory(cid, resource, limit, bound, exact, None, BOUND_ONLY if exact is None else EXACT_ONLY,
                              note=note)
    var = symbol(limit)
    try:
        ratio = sp.cancel(_smooth(exact) / _smooth(bound))
        lead, _ = _limit_or_upper(ratio, var, cancelled=True)
    except (NotImplementedError, ValueError, TypeError) as exc:  # sympy could not take the limit
        return ResourceTheory(cid, resource, limit, bound, exact, None, f"error: limit failed ({exc})", note=note)
    bound_syms = {s.name for s in _smooth(bound).free_symbols} - {limit}
    factors: dict[str, str] = {}
    verdict = OUTSIDE if _is_infinite(lead) else (LOOSE if lead == 0 else TIGHT)
    for name in sorted(bound_syms | {s.name for s in lead.free_symbols}):
        s = symbol(name)
        if s not in lead.free_symbols:
            factors[name] = "exact"
        elif name not in bound_syms:
            factors[name] = "count only"
        else:
            try:
                sub, upper = _limit_or_upper(lead, s)
            except (NotImplementedError, ValueError, TypeError):
                sub, upper = sp.oo, True
            if _is_infinite(sub):
                factors[name] = "grows" if not upper else "cannot bound"
            else:
                factors[name] = f"bounded ({'<=' if upper else '->'} {sub})"
    return ResourceTheory(cid, resource, limit, bound, exact, lead, verdict, factors, note)


def claim_theory(claim: Claim) -> dict[str, ResourceTheory]:
    """The analysis of every resource of ``claim``: of its exact count, else of the proof's upper formula on it
    (``of = "upper"``), else of its bound alone."""
    out = {}
    for name, res in claim.resources.items():
        upper = None if res.exact else analyse_upper(claim, name)
        out[name] = analyse(claim, name) if upper is None else replace(upper, of="upper")
    return out


def definitions_latex(claim: Claim) -> list[str]:
    """``n = \\lceil N/b \\rceil``-style lines for the claim's derived symbols."""
    return [f"{tex(symbol(k))} = {latex_cases(parse(v), claim.paper)}" for k, v in claim.definitions.items()]
