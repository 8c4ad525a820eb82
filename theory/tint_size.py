"""TinT parameter counts as sympy expressions (tint.size, Table 3; formulas from the authors' code), per module type
and in total.

The formulas live in ``paper_refs/tint.toml`` (claim ``tint.size``); this module expands their
definitions into expressions of the base symbols

    D, L, V, T (aux positions), T_emb (rows of the positional table), K, H_sim,
    n_sim (simulated layers), steps (SGD steps), rf / rb (1 = forward / backward modules reused),

and evaluates them. ``attnsim.sim`` never imports this: the builder counts what it builds, and
``attnsim.verify`` holds the two side by side.
"""

from __future__ import annotations

from typing import Mapping

import sympy as sp

from attnsim.paper_refs import Claim, get
from attnsim.theory.formulas import FormulaError, expand_definitions, parse, symbol

MODULES = ("LinFwd", "LinBwd", "LinDesc", "LNFwd", "LNBwdDesc", "AttnFwd", "AttnBwdDesc", "ActFwd", "ActBwd")
TAGS = ("LinFwd", "LNFwd", "AttnFwd", "ActFwd", "LinBwd", "LinDesc", "ActBwd", "LNBwdDesc", "AttnBwdDesc",
        "Prefix", "Grad", "Emb")


def size_claim() -> Claim:
    """The ``tint.size`` claim (Table 3) from paper_refs."""
    return get("tint.size")


def expression(resource: str, reuse_forward: bool | None = None, reuse_backward: bool | None = None) -> sp.Expr:
    """The count of ``resource`` (a ledger tag or "total") in the base symbols; reuse flags substituted if given."""
    claim = size_claim()
    expr = expand_definitions(parse(claim.resources[resource].exact or ""), claim.definitions)
    subs = {}
    if reuse_forward is not None:
        subs[symbol("rf")] = int(reuse_forward)
    if reuse_backward is not None:
        subs[symbol("rb")] = int(reuse_backward)
    return expr.subs(subs)


def module_expression(module: str) -> sp.Expr:
    """Parameters of one instance of a module type (the code's names: LinFwd, LNBwdDesc, ...)."""
    claim = size_claim()
    return expand_definitions(symbol("m_" + module), claim.definitions)


def _int(value: sp.Expr) -> int:
    if not value.is_integer:
        raise ValueError(
            f"a parameter count evaluated to the non-integer {value}; check the divisibility of D, K, H_sim"
        )
    return int(value)


def _value(
    formula: str, definitions: Mapping[str, str], values: Mapping[str, int], memo: dict[str, sp.Expr]
) -> sp.Expr:
    """The formula at the given values, resolving definitions bottom-up (fast: no global expansion)."""
    expr = parse(formula)
    subs = {}
    for s in expr.free_symbols:
        if s.name in values:
            subs[s] = sp.Integer(values[s.name])
        elif s.name in definitions:
            if s.name not in memo:
                memo[s.name] = _value(definitions[s.name], definitions, values, memo)
            subs[s] = memo[s.name]
        else:
            raise FormulaError(f"formula {formula!r} needs a value for {s.name}")
    return expr.xreplace(subs)


def count(resource: str, values: Mapping[str, int]) -> int:
    """The exact count of ``resource`` at the given values."""
    claim = size_claim()
    return _int(_value(claim.resources[resource].exact or "", claim.definitions, values, {}))


def per_module(values: Mapping[str, int]) -> dict[str, int]:
    """Parameters of one instance of each module type at the given values."""
    claim = size_claim()
    memo: dict[str, sp.Expr] = {}
    return {m: _int(_value("m_" + m, claim.definitions, values, memo)) for m in MODULES}


def breakdown(values: Mapping[str, int]) -> dict[str, int]:
    """Count per ledger tag, and "total"."""
    claim = size_claim()
    memo: dict[str, sp.Expr] = {}
    return {
        tag: _int(_value(claim.resources[tag].exact or "", claim.definitions, values, memo))
        for tag in TAGS + ("total",)
    }


def ceiling() -> int:
    """The abstract's '< 2 billion' (claim tint.under_2b)."""
    return int(parse(str(get("tint.under_2b").extra["ceiling"])))
