"""One dictionary per claim with all of its theory: what ``attnsim bounds`` prints and the report shows.

Iterates over ``attnsim.paper_refs`` only, so claims that other papers add appear without change.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from attnsim.paper_refs import PAPERS, Claim, load
from attnsim.theory.conditions import conditions, minimum
from attnsim.theory.formulas import FormulaError
from attnsim.theory.symbolic import claim_theory, definitions_latex, tex


def claim_summary(claim: Claim) -> dict[str, Any]:
    """Bound, exact count, leading constant, verdict and LaTeX per resource; side conditions solved."""
    out: dict[str, Any] = {
        "id": claim.id, "paper": claim.paper, "label": claim.label, "kind": claim.kind,
        "statement": claim.statement, "assumptions": list(claim.assumptions), "implemented": claim.implemented,
        "limit": claim.limit, "definitions": dict(claim.definitions),
        "definitions_latex": definitions_latex(claim),
        "resources": {name: t.as_dict() for name, t in claim_theory(claim).items()},
    }
    try:
        conds = conditions(claim)
    except FormulaError as exc:
        out["conditions_error"] = str(exc)
        conds = []
    if conds:
        low = minimum(claim)
        out["conditions"] = [c.as_dict() for c in conds]
        out["minimum"] = {"variable": conds[0].variable, "value": str(low),
                          "latex": f"{tex(sp.Symbol(conds[0].variable, positive=True))} \\geq {tex(low)}"}
    return out


def catalog(paper: str | None = None) -> list[dict[str, Any]]:
    """Summaries of every claim of ``paper`` (or of all papers), in file order."""
    papers = [paper] if paper else list(PAPERS)
    return [claim_summary(c) for p in papers for c in load(p).claims]
