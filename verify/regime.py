"""The regime a claim's checks run in, said by the code: the sizes its checker's grids reach and the range of every
parameter sweep, and, from records, the sizes and regime notes a run measured.

``attnsim claims`` runs nothing: it reads the checker's registered grids (the report's grid, the growth grid, each
:class:`~attnsim.verify.registry.ParamSweep`) with the parameters' defaults filled in. The report's front page reads
the records of its run (:func:`run_regime`). paper_refs' ``regime`` keeps only what no run can say (the conditions
a construction fixes, such as one head); both are shown together.
"""

from __future__ import annotations

from typing import Any, Sequence

from attnsim.paper_refs import Claim
from attnsim.theory.formulas import FormulaError, as_number, evaluate
from attnsim.verify.registry import Checker


def _num(v: float) -> str:
    return f"{int(v)}" if float(v).is_integer() else f"{v:.3g}"


def _span(values: Sequence[float]) -> str:
    vs = sorted(set(values))
    return _num(vs[0]) if len(vs) == 1 else f"{_num(vs[0])}..{_num(vs[-1])}"


def _filled(chk: Checker, point: dict[str, Any]) -> dict[str, Any]:
    return {**{p.name: p.default for p in chk.params}, **point}


def _values(var: str, points: Sequence[dict[str, Any]], claim: Claim) -> list[float]:
    out = []
    for p in points:
        try:
            v = p[var] if var in p else as_number(evaluate(var, claim.definitions, p))
        except (FormulaError, KeyError, TypeError, ValueError):
            continue
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(float(v))
    return out


def planned_regime(claim: Claim, chk: Checker) -> str:
    """The sizes the checker's full grids run: the limit variable over the report's grid and the growth grid, then
    each parameter sweep's variable with the parameters it holds fixed."""
    parts = []
    grids = [("grid", chk.grid(False))] + ([("growth", chk.growth_grid(False))] if chk.growth_grid else [])
    for name, points in grids:
        values = _values(claim.limit, [_filled(chk, p) for p in points], claim)
        if values:
            parts.append(f"{claim.limit} = {_span(values)} ({name})")
    for name, ps in chk.param_sweeps:
        points = [_filled(chk, p) for p in ps.grid(False)]
        values = _values(ps.var, points, claim)
        if not values:
            continue
        fixed = [k for k in ps.grid(False)[0] if len({repr(p.get(k)) for p in points}) == 1]
        at = ", ".join(f"{k} = {_num(points[0][k]) if isinstance(points[0][k], (int, float)) else points[0][k]}"
                       for k in fixed)
        parts.append(f"{ps.var} = {_span(values)}{' at ' + at if at else ''} ({name} sweep, {len(values)} values)")
    return "; ".join(parts)


def run_regime(records: Sequence[dict[str, Any]]) -> str:
    """What a run's records say: every distinct ``extra.regime`` a checker wrote (its own account of whether the
    point lies in the statement's range), in the order first met."""
    seen: list[str] = []
    for r in records:
        note = (r.get("extra") or {}).get("regime")
        if isinstance(note, str) and note not in seen:
            seen.append(note)
    return "; ".join(seen)


def outside_stated_range(record: dict[str, Any]) -> bool:
    """Whether the record says it ran outside the range its statement is made for (``extra.in_stated_range`` false:
    a size too small for the regime), so that it is partial evidence for the claim even where it passes."""
    return (record.get("extra") or {}).get("in_stated_range") is False


def regime_text(claim: Claim, chk: Checker | None) -> str:
    """The regime column: the planned sizes (said by the code), then paper_refs' conditions (what no run can say)."""
    planned = planned_regime(claim, chk) if chk is not None else ""
    return "; ".join(x for x in (planned, claim.regime or "") if x)
