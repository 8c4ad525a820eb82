"""Every formula and constant of the papers is written once, in paper_refs/, and read from there.

The proof of Thm A.1's z, delta, ell and eta (anna.alg_1) decide the ANNA checks through
``attnsim.theory.lsh``; a second copy in theory/ or verify/ could be edited (say, eta times 10) while the
report still prints the first. These tests fail on such a copy, naming the file, the line and the
paper_refs formula it repeats, and they check that theory's values move when paper_refs' formulas move.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
import random
import re
from pathlib import Path

import pytest
import sympy as sp

import attnsim.theory as theory_pkg
from attnsim.paper_refs import PAPERS, get, load
from attnsim.theory import lsh
from attnsim.theory.formulas import FormulaError, parse

ROOT = Path(__file__).resolve().parents[1]
MIN_OPS = 3
"""Formulas with fewer operations ("s", "R + 1", "N**2") are names or too generic to call a copy."""


def _paper_formulas() -> dict[str, tuple[str, sp.Expr]]:
    """srepr -> (where, expr) for every definition, bound and exact count of every paper."""
    out: dict[str, tuple[str, sp.Expr]] = {}
    for paper in PAPERS:
        for c in load(paper).claims:
            own = [(f"definition {k}", v) for k, v in c.definitions.items()]
            own += [(f"{r.name}.{kind}", getattr(r, kind)) for r in c.resources.values() for kind in ("bound", "exact")
                    if getattr(r, kind)]
            for what, text in own:
                expr = parse(text)
                if sp.count_ops(expr) >= MIN_OPS:
                    out.setdefault(sp.srepr(expr), (f"{c.id} {what} = {text!r}", expr))
    return out


def _python_sources() -> list[Path]:
    return sorted(p for d in ("theory", "verify") for p in (ROOT / d).rglob("*.py"))


def test_no_paper_refs_formula_is_copied_into_theory_or_verify_as_a_string() -> None:
    """Fails on a string literal in theory/ or verify/ that parses to a formula of paper_refs."""
    formulas = _paper_formulas()
    # Every symbol of a parsed string comes from a word of it, so a string without all of some formula's symbols
    # among its words cannot parse to that formula: only the few hundred that have them are parsed (sympy), of
    # some 12,000 literals. (A formula without symbols has the empty set, which every string passes.)
    needs = {frozenset(s.name for s in expr.free_symbols) for _, expr in formulas.values()}
    copies = []
    for path in _python_sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or "\n" in node.value:
                continue
            words = set(re.findall(r"\w+", node.value))
            if not any(n <= words for n in needs):
                continue
            try:
                expr = parse(node.value)
            except (FormulaError, ValueError, TypeError, AttributeError, RecursionError):
                continue
            hit = formulas.get(sp.srepr(expr)) if isinstance(expr, sp.Basic) else None
            if hit:
                copies.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r} repeats {hit[0]}")
    assert not copies, "formulas of paper_refs written a second time:\n" + "\n".join(copies)


# theory's LSH module works in p1, p2; paper_refs in rho and q2 = 1/p2 - 1 (p1 = p2^rho)
_Q2, _RHO = sp.Symbol("q2", positive=True), sp.Symbol("rho", positive=True)
_IN_PAPER_SYMBOLS = {"p2": 1 / (1 + _Q2), "p1": (1 + _Q2) ** (-_RHO)}


def _fingerprint(expr: sp.Expr, names: list[str], points: list[dict[str, float]]) -> tuple[float, ...] | None:
    try:
        vals = [complex(sp.N(expr.xreplace({s: p[s.name] for s in expr.free_symbols}))) for p in points]
    except (TypeError, KeyError, ValueError, ZeroDivisionError):
        return None
    return tuple(round(v.real, 9) for v in vals) if all(abs(v.imag) < 1e-12 for v in vals) else None


def test_no_paper_refs_formula_is_transcribed_as_a_sympy_constant_in_theory() -> None:
    """Fails on a module-level sympy expression of any theory module equal to a paper_refs formula
    (compared numerically at random points, with p1, p2 written through rho and q2)."""
    rng = random.Random(0)
    formulas = list(_paper_formulas().values())
    names = sorted({s.name for _, e in formulas for s in e.free_symbols} | {"q2", "rho"})
    points = [{n: rng.uniform(2.5, 9.5) for n in names} for _ in range(2)]
    for p in points:
        p["rho"] = rng.uniform(0.05, 0.3)
    prints: dict[tuple[float, ...], str] = {}
    for where, expr in formulas:
        f = _fingerprint(expr, names, points)
        if f is not None:
            prints.setdefault(f, where)
    copies = []
    for mod in pkgutil.iter_modules(theory_pkg.__path__):
        module = importlib.import_module(f"attnsim.theory.{mod.name}")
        for attr, value in vars(module).items():
            if not isinstance(value, sp.Expr) or not value.free_symbols or sp.count_ops(value) < MIN_OPS:
                continue
            mapped = value.xreplace({s: _IN_PAPER_SYMBOLS.get(s.name, sp.Symbol(s.name, positive=True))
                                     for s in value.free_symbols})
            f = _fingerprint(mapped, names, points)
            if f is not None and f in prints:
                copies.append(f"theory/{mod.name}.py: {attr} = {value} repeats {prints[f]}")
    assert not copies, "formulas of paper_refs transcribed in theory:\n" + "\n".join(copies)


def _alg_1_literals() -> set[sp.Number]:
    claim = get(lsh.PROOF_CLAIM)
    texts = list(claim.definitions.values()) + [x for r in claim.resources.values() for x in (r.bound, r.exact) if x]
    return {a for t in texts for a in parse(t).atoms(sp.Number)} - {sp.Integer(0), sp.Integer(1), sp.Integer(2)}


def test_theory_lsh_holds_none_of_the_proofs_constants() -> None:
    """Fails on a numeric literal in theory/lsh.py (the module the ANNA eta verdict reads) that is also a
    constant of anna.alg_1's formulas in paper_refs (10 of 10 N^3, 3, 1/10, ...); 0, 1, 2 are too common to judge."""
    constants = _alg_1_literals()
    assert sp.Integer(10) in constants and sp.Rational(1, 10) in constants
    source = (ROOT / "theory" / "lsh.py").read_text(encoding="utf-8")
    found = [f"theory/lsh.py:{n.lineno}: literal {n.value!r} is a constant of {lsh.PROOF_CLAIM}'s formulas"
             for n in ast.walk(ast.parse(source))
             if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)
             and sp.nsimplify(n.value) in constants]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("name, edit, field", [
    ("eta_union", "10*({})", "eta_bound"),
    ("z", "{} + 1", "z"),
    ("ell", "2*{}", "ell"),
    ("delta", "({})/10", "delta"),
])
def test_theory_reads_the_proofs_formulas_from_paper_refs(monkeypatch, name, edit, field) -> None:
    """Fails when editing anna.alg_1's formula in paper_refs leaves theory's value unchanged (a second copy decides)."""
    claim = get(lsh.PROOF_CLAIM)
    before = dataclasses.asdict(lsh.proof_parameters(256, 0.9, 0.5))
    edited = dataclasses.replace(claim, definitions={**claim.definitions, name: edit.format(claim.definitions[name])})
    monkeypatch.setattr(lsh, "get", lambda cid: edited if cid == lsh.PROOF_CLAIM else get(cid))
    lsh._formula.cache_clear()
    try:
        after = dataclasses.asdict(lsh.proof_parameters(256, 0.9, 0.5))
    finally:
        lsh._formula.cache_clear()
    assert after[field] != before[field], f"theory's {field} ignores anna.alg_1's {name} in paper_refs"


SHARED = ("anna.alg_1", "anna.thm_4_2")
"""Claims whose definitions others inherit: the proof of Thm A.1's z, delta, ell, eta, and the small-memory
MPC's s, f, b, ... (Thm 4.2 / C.1, Lemma C.2, D.2)."""


def test_claims_that_share_the_proofs_formulas_inherit_them() -> None:
    """Fails when a claim of the ANNA paper writes its own copy of a definition of :data:`SHARED` (the same
    name and formula) instead of inheriting it with ``definitions_from``."""
    import tomllib

    raw = tomllib.loads((ROOT / "paper_refs" / "anna.toml").read_text(encoding="utf-8"))["claims"]
    shared = {(k, v): c["id"] for c in raw if c["id"] in SHARED for k, v in c.get("definitions", {}).items()}
    copies = [f"{c['id']}: definition {k} = {v!r} is also written in {shared[(k, v)]}"
              for c in raw for k, v in c.get("definitions", {}).items()
              if (k, v) in shared and shared[(k, v)] != c["id"]]
    assert not copies, "\n".join(copies)


def test_definitions_from_inherits_and_overrides() -> None:
    from attnsim.paper_refs import SchemaError, _claim, _inherit

    base = _claim("anna", {"id": "anna.a", "label": "A", "kind": "claim", "statement": "s",
                           "definitions": {"x": "N + 1", "y": "2*N"}}, "test")
    child = _claim("anna", {"id": "anna.b", "label": "B", "kind": "claim", "statement": "s",
                            "definitions_from": "anna.a", "definitions": {"y": "3*N"}}, "test")
    got = _inherit("anna", (base, child), {"anna.b": "anna.a"})
    assert got[1].definitions == {"x": "N + 1", "y": "3*N"} and got[0].definitions == base.definitions
    with pytest.raises(SchemaError, match="names no claim"):
        _inherit("anna", (base, child), {"anna.b": "anna.zzz"})
    with pytest.raises(SchemaError, match="circular"):
        _inherit("anna", (base, child), {"anna.b": "anna.a", "anna.a": "anna.b"})
    assert get("anna.alg_2").definitions["eta_union"] == get("anna.alg_1").definitions["eta_union"]


def test_measured_names_take_neither_the_parents_definition_nor_its_growth_form() -> None:
    """A claim whose checker measures s keeps the run's s in its records: the inherited formula would shadow it."""
    from attnsim.paper_refs import SchemaError, _claim, _inherit

    base = _claim("anna", {"id": "anna.a", "label": "A", "kind": "claim", "statement": "s",
                           "definitions": {"s": "N/2", "y": "2*s"}, "extra": {"growth": {"s": "N/2"}}}, "test")
    child = _claim("anna", {"id": "anna.b", "label": "B", "kind": "claim", "statement": "s", "measured": ["s"],
                            "definitions_from": "anna.a", "extra": {"growth": {"y": "3*s"}}}, "test")
    got = _inherit("anna", (base, child), {"anna.b": "anna.a"})[1]
    assert got.definitions == {"y": "2*s"} and got.extra["growth"] == {"y": "3*s"}
    with pytest.raises(SchemaError, match="goes with definitions_from"):
        _claim("anna", {"id": "anna.c", "label": "C", "kind": "claim", "statement": "s", "measured": ["s"]}, "test")
    with pytest.raises(SchemaError, match="also defined here"):
        _claim("anna", {"id": "anna.c", "label": "C", "kind": "claim", "statement": "s", "measured": ["s"],
                        "definitions_from": "anna.a", "definitions": {"s": "N"}}, "test")


def test_definitions_from_inherits_growth_forms_and_overrides_them() -> None:
    """A growth form stands in for a definition in the analysis, so it is inherited with it; the child's own win."""
    from attnsim.paper_refs import _claim, _inherit

    base = _claim("anna", {"id": "anna.a", "label": "A", "kind": "claim", "statement": "s",
                           "definitions": {"x": "ceiling(N/2)", "y": "2*N"},
                           "extra": {"growth": {"x": "N/2 + 1", "y": "2*N"}}}, "test")
    child = _claim("anna", {"id": "anna.b", "label": "B", "kind": "claim", "statement": "s",
                            "definitions_from": "anna.a", "extra": {"growth": {"y": "3*N"}, "note": "kept"}}, "test")
    plain = _claim("anna", {"id": "anna.c", "label": "C", "kind": "claim", "statement": "s",
                            "definitions_from": "anna.a"}, "test")
    got = _inherit("anna", (base, child, plain), {"anna.b": "anna.a", "anna.c": "anna.a"})
    assert got[1].extra == {"growth": {"x": "N/2 + 1", "y": "3*N"}, "note": "kept"}
    assert got[2].extra["growth"] == {"x": "N/2 + 1", "y": "2*N"} and got[0].extra == base.extra
    assert get("anna.thm_c_1").extra["growth"]["sort_beta"] == get("anna.thm_4_2").extra["growth"]["sort_beta"]
