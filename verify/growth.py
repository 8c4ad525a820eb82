"""Growth verdicts: is a measured resource in its bound's big-O class, judged over a sweep of sizes?

A paper's bound is a statement about growth, so a single record cannot decide it. For every bounded resource of a
claim, the records of its growth sweep (the checker's ``growth_grid``, else its default grid) are judged by the
strongest evidence that exists, and the verdict names it (``evidence``, :data:`EVIDENCE`):

1. ``exact count``: paper_refs has the exact count of the scheme as implemented (``exact``). ``within`` when the
   measurement equals it (``==``) at every point and theory proves the count in the bound's class (the records'
   ``containment``); the slopes of measured / bound and of measured / exact are shown, never deciding.
2. ``proof's inequality``: no exact count, but an exact upper formula from the proof or the construction's design
   (``upper``: a table's capacity). ``within`` when ``measured <= upper`` at every point and theory proves the
   formula in the bound's class.
3. ``paper's constant``: the paper states the bound's constant (``stated_by``): ``within`` when every measurement
   is at most constant x bound.
4. ``growth test``: none of these. The log-log least-squares slope of measured / bound against the claim's limit
   variable (``n = N/M``, ``N``, ``k`` ...), with its 95% Student-t interval
   (:meth:`attnsim.verify.stats.LineFit.slope_interval`), over at least :data:`MIN_SIZES` sizes spanning
   :data:`MIN_SPAN` x. ``exceeds`` only when that interval lies above 0 *and* the growth persists over the larger
   half of the sizes: the slope there is at least :data:`UPPER_SHARE` of the whole sweep's (and its interval lies
   above 0 where it has three points). A ratio that rises toward a constant (a count with a negative lower-order
   term, a share that approaches 1) has a positive slope whose size shrinks along the sweep: that is curvature,
   not growth (docs/growth.md). A constant factor moves only the intercept, never the slope.

Only correct runs are measured: a growth point whose record fails any check (outputs that disagree with the
reference, a count off its exact formula, a guard) is a *failing point*, listed with its reasons, and a point a
guard refused is listed as refused; neither enters any fit or comparison, and a resource with any is judged
``failing points`` (a failing verdict). ``unmeasured growth`` (a failing row, never a pass): no measurement, or
for the growth test fewer than :data:`MIN_SIZES` sizes or a span below :data:`MIN_SPAN` x. A resource that is 0
at every size is ``within`` (nothing grows); zeros at some sizes are left out of the fit (log 0 is not defined).
Slopes within :data:`FLOAT_NOISE` of 0 are rounding, not growth.

A bound that depends on another parameter (rounds O(1/(eps'-eps)), layers O(log k)) is judged in it as well: a
checker's ``param_sweeps`` (:class:`attnsim.verify.registry.ParamSweep`) fix N and vary the parameter, and the same
rules run with the size of each point the sweep's variable (``1/(eps1 - eps)``) instead of the limit variable
(:func:`run_param_growth`); the growth test there needs :data:`MIN_SIZES` values spanning :data:`MIN_PARAM_SPAN` x,
and its slope interval over the whole sweep decides (the larger-half rule tells curvature from growth as N grows
without end; a sweep at fixed N has no such limit, and a cost that levels off there is the constant's doing).

A failure probability (``eta`` of anna.alg_1 / anna.alg_2) is measured by its checker as the one-sided 95%
Clopper-Pearson upper bound over the record's runs, never the empirical rate: a feasible sweep sees no failure, and
0 at every size fits nothing. The fit is then of that upper bound / bound, and the growth sweep runs at each size
enough seeds that zero failures put it at a fixed multiple of the bound (``eta_runs`` in verify/claims/anna_lsh.py).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable, Sequence

from attnsim.paper_refs import get as get_claim
from attnsim.theory.formulas import FormulaError, as_number, evaluate
from attnsim.verify.growth_rules import (  # noqa: F401 - the growth API, re-exported
    EVIDENCE,
    FLOAT_NOISE,
    MIN_SIZES,
    MIN_SPAN,
    UPPER_SHARE,
    VERDICTS,
    ResourceGrowth,
    by_formula,
    containment_of,
    growth_test,
    larger_half,
    param_containment_of,
    shown_slopes,
    size_rule,
    stated,
)
from attnsim.verify.regime import outside_stated_range
from attnsim.verify.registry import ParamSweep, UsageError, all_checkers
from attnsim.verify.sweep import Point


def evidence_of(claim_id: str, resource: str) -> str:
    """The strongest evidence paper_refs gives for the resource (:data:`EVIDENCE`)."""
    res = get_claim(claim_id).resources[resource]
    if res.exact:
        return "exact count"
    if res.upper:
        return "proof's inequality"
    if res.stated_by and res.constant is not None:
        return "paper's constant"
    return "growth test"


def split_points(size_var: str, records: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """(the records that passed every check, the failing points, the refused points): a record that failed any
    check, or that a guard refused (reasons ``error: ...``), is listed by its size and reasons, never measured."""
    good, failing, refused = [], [], []
    for r in records:
        if r.get("verdict") == "pass":
            good.append(r)
            continue
        size = (r.get("size") or {}).get("value")
        reasons = list(r.get("reasons") or ["verdict fail"])
        where = f"{size_var} = {size:g}" if isinstance(size, (int, float)) else f"params {r.get('params')}"
        line = f"{where}: {'; '.join(reasons)}"
        (refused if all(str(x).startswith("error:") for x in reasons) else failing).append(line)
    return good, failing, refused


MIN_PARAM_SPAN = 4.0
"""The span a sweep in a parameter other than the limit variable needs (eps' - eps from 1/4 to 1/16)."""


def _sweep_size(var: str, record: dict[str, Any]) -> float | None:
    """The value of a parameter sweep's variable at a record's parameters (None where it has none)."""
    try:
        return as_number(evaluate(var, get_claim(record.get("claim", "")).definitions, record.get("params") or {}))
    except (FormulaError, KeyError):
        return None


def _sized(resource: str, records: Sequence[dict[str, Any]],
           var: str | None = None) -> list[tuple[tuple[float, ...] | None, dict[str, Any]]]:
    """Each record with its point (size, measured, bound value, exact count or NaN, upper formula or NaN), or None
    where it measured no such resource or has no size; the size is the limit variable's, or a sweep's ``var``."""
    out: list[tuple[tuple[float, ...] | None, dict[str, Any]]] = []
    for r in records:
        b = (r.get("bounds") or {}).get(resource) or {}
        size = (r.get("size") or {}).get("value") if var is None else _sweep_size(var, r)
        if b.get("measured") is None or b.get("value") in (None, 0) or size is None:
            out.append((None, r))
            continue
        exact = (r.get("predicted") or {}).get(resource)
        upper = (b.get("upper") or {}).get("value")
        out.append(((float(size), float(b["measured"]), float(b["value"]),
                     math.nan if exact is None else float(exact), math.nan if upper is None else float(upper)), r))
    return out


def _points(resource: str, records: Sequence[dict[str, Any]],
            var: str | None = None) -> tuple[list[tuple[float, ...]], int]:
    """The points (:func:`_sized`) of every record that measured the resource, sorted, and how many did not."""
    sized = _sized(resource, records, var)
    return sorted(p for p, _ in sized if p is not None), sum(p is None for p, _ in sized)


def guard_summary(claim_id: str, resource: str, records: Sequence[dict[str, Any]]) -> str:
    """The single-record guard beside the growth verdict: the constant, where it comes from, and the sizes
    whose record exceeded it (:func:`attnsim.verify.check.bound_entry`)."""
    res = get_claim(claim_id).resources[resource]
    if res.constant is None:
        return "no constant"
    source = (f"stated: {res.stated_by}" if res.stated_by
              else f"frozen at {get_claim(claim_id).limit} = {res.calibrated_at:g}")
    over = sorted({float((r.get("size") or {}).get("value") or 0) for r in records
                   if ((r.get("bounds") or {}).get(resource) or {}).get("guard") == "exceeds"})
    held = "exceeded at " + ", ".join(f"{s:g}" for s in over) if over else "held"
    return f"{res.constant:g} x bound ({source}): {held}"


def judge(claim_id: str, resource: str, records: Sequence[dict[str, Any]], var: str | None = None) -> ResourceGrowth:
    """The verdict of one bounded resource over ``records`` (the claim's sweep; with ``var``, a parameter sweep
    judged as ``var`` grows), by the strongest evidence."""
    claim = get_claim(claim_id)
    res = claim.resources[resource]
    good, failing, refused = split_points(claim.limit, records)
    pts, missing = _points(resource, good, var)
    span = MIN_SPAN if var is None else MIN_PARAM_SPAN
    sizes = tuple(p[0] for p in pts)
    base = dict(claim=claim_id, resource=resource, bound=res.bound or "", size_var=var or claim.limit, sizes=sizes,
                measured=tuple(p[1] for p in pts), bound_values=tuple(p[2] for p in pts),
                guard=guard_summary(claim_id, resource, records), evidence=evidence_of(claim_id, resource),
                failing=tuple(failing), refused=tuple(refused), **shown_slopes(pts, span),
                outside=tuple(sorted({p[0] for p, r in _sized(resource, good, var)
                                      if p is not None and outside_stated_range(r)})))
    note = f"; {missing} record(s) without a measurement or size" if missing else ""
    evidence = base["evidence"]
    contains = None
    if evidence in ("exact count", "proof's inequality"):  # in N, or as the parameter sweep's variable grows
        contains = (containment_of(claim_id, resource, good) if var is None
                    else param_containment_of(claim_id, resource, good, var))
    if contains is not None and contains[0] is None:  # sympy could not take the limit in the sweep's variable
        g = growth_test({**base, "evidence": "growth test"}, pts,
                        f"; containment not decided ({contains[1]}): the growth test decides" + note, span,
                        persist=False)
    elif evidence == "exact count":
        g = by_formula(base, pts, 3, res.exact or "", contains, note)
    elif evidence == "proof's inequality":
        g = by_formula(base, pts, 4, res.upper or "", contains, note)
    elif evidence == "paper's constant":
        g = stated(base, res.constant or 0.0, res.stated_by or "", good, note)
    else:
        g = growth_test(base, pts, note, span, persist=var is None)
    if failing or refused:
        left = f"{len(failing)} failing and {len(refused)} refused point(s), never measured: " + " | ".join(
            failing + refused)
        g = replace(g, verdict="failing points", why=f"{left}; over the other points: {g.why}")
    return g


def bounded_resources(claim_id: str) -> list[str]:
    """The claim's resources that have a bound in paper_refs (each gets a growth verdict)."""
    return [n for n, r in get_claim(claim_id).resources.items() if r.bound]


def judge_claim(claim_id: str, records: Sequence[dict[str, Any]]) -> list[ResourceGrowth]:
    """The growth verdict of every bounded resource of ``claim_id`` over its sweep's records."""
    mine = [r for r in records if r.get("claim") == claim_id]
    return [judge(claim_id, name, mine) for name in bounded_resources(claim_id)]


def has_growth_grid(claim_id: str) -> bool:
    """Whether the claim's checker declares a growth grid (else its default grid stands in)."""
    return all_checkers()[claim_id].growth_grid is not None


def growth_points(claim_id: str, quick: bool = False, seed: int = 0) -> list[Point]:
    """The points of the claim's growth sweep: its checker's ``growth_grid``, else its default grid."""
    checkers = all_checkers()
    if claim_id not in checkers:
        raise UsageError(f"CLAIM: no checker for {claim_id!r}; `attnsim claims` lists the claims")
    chk = checkers[claim_id]
    points = []
    for raw in (chk.growth_grid or chk.grid)(quick):
        params = dict(raw)
        numerics = params.pop("numerics", None)
        pinned = params.pop("seed", None)
        points.append(Point(claim_id, params, numerics, int(seed if pinned is None else pinned)))
    return points


def param_sweeps(claim_id: str) -> tuple[tuple[str, ParamSweep], ...]:
    """The claim's named sweeps in parameters other than its limit variable (none for most claims)."""
    chk = all_checkers().get(claim_id)
    return chk.param_sweeps if chk is not None else ()


def sweep_points(claim_id: str, sweep: ParamSweep, quick: bool = False, seed: int = 0) -> list[Point]:
    """The points of one parameter sweep of the claim."""
    return [Point(claim_id, dict(raw), None, seed) for raw in sweep.grid(quick)]


def run_param_growth(claim_id: str, quick: bool = False, seed: int = 0, *, executor: str = "serial",
                     workers: int | None = None,
                     console: Any = None) -> list[tuple[str, list[dict[str, Any]], list[ResourceGrowth]]]:
    """Run each parameter sweep of the claim and judge its resources as the sweep's variable grows:
    (sweep name, records, verdicts) per sweep."""
    from attnsim.verify.sweep import sweep as run_sweep

    out = []
    for name, ps in param_sweeps(claim_id):
        records = run_sweep(sweep_points(claim_id, ps, quick, seed), executor=executor, workers=workers,
                            console=console).records
        mine = [r for r in records if r.get("claim") == claim_id]
        out.append((name, records, [judge(claim_id, res, mine, ps.var) for res in ps.resources]))
    return out


def verdict_counts(results: Sequence[ResourceGrowth]) -> dict[str, int]:
    """Resources counted by growth verdict, every verdict present (the report's summary line)."""
    return {v: sum(r.verdict == v for r in results) for v in VERDICTS}


def run_growth(claim_id: str, quick: bool = False, seed: int = 0, *, executor: str = "serial",
               workers: int | None = None, console: Any = None) -> tuple[list[dict[str, Any]], list[ResourceGrowth]]:
    """Run the claim's growth sweep and judge every bounded resource: (records, verdicts)."""
    from attnsim.verify.sweep import sweep

    result = sweep(growth_points(claim_id, quick, seed), executor=executor, workers=workers, console=console)
    return result.records, judge_claim(claim_id, result.records)


CALIBRATION_HEADROOM = 2.0
"""A frozen constant is this many times the largest measured / bound at the calibration size (two significant
digits, rounded up): room for the other parameters of a claim's grids, none for growth."""


def calibrate(claim_id: str, resource: str, records: Sequence[dict[str, Any]]) -> tuple[float, float] | None:
    """(constant, size) to freeze in paper_refs for a bound without the paper's constant: fitted once at the
    smallest size of ``records`` (the claim's growth sweep); None when nothing positive was measured there."""
    pts, _ = _points(resource, [r for r in records if r.get("claim") == claim_id])
    if not pts:
        return None
    size = pts[0][0]
    top = max(p[1] / p[2] for p in pts if p[0] == size)
    if top <= 0:
        return None
    raw = CALIBRATION_HEADROOM * top
    step = 10 ** (math.floor(math.log10(raw)) - 1)
    return float(f"{math.ceil(raw / step) * step:.3g}"), size


def judge_broken(claim_id: str, resource: str, breaks: Callable[[], Any], seed: int = 0,
                 sweep_name: str | None = None) -> ResourceGrowth:
    """The growth verdict of ``resource`` over the claim's quick growth sweep (or its parameter sweep
    ``sweep_name``) run in this process with ``breaks()`` applied."""
    import io

    from rich.console import Console

    from attnsim.verify.sweep import sweep

    ps = dict(param_sweeps(claim_id))[sweep_name] if sweep_name else None
    points = growth_points(claim_id, True, seed) if ps is None else sweep_points(claim_id, ps, True, seed)
    with breaks():
        records = sweep(points, console=Console(file=io.StringIO())).records
    return judge(claim_id, resource, records, ps.var if ps else None)


def judge_twin(claim_id: str, resource: str, breaks: Callable[[], Any], seed: int = 0,
               sweep_name: str | None = None) -> tuple[str, str]:
    """(outcome, reason) of a growth twin (:func:`judge_broken`): ``caught`` when ``resource`` is judged ``exceeds``
    by its deciding evidence, or when a point's check failed on it (a count off its exact formula, a measurement
    over the proof's upper formula or a constant); a point a guard refused is no catch; else ``missed``."""
    g = judge_broken(claim_id, resource, breaks, seed, sweep_name)
    if g.measured and not any(g.measured) and not g.failing:
        return "missed", (f"growth verdict {g.verdict}: {resource} is measured 0 at every size of the quick growth "
                          f"sweep, so no factor can inflate it (this twin cannot break anything there); {g.why}")
    caught = g.verdict == "exceeds" or bool(g.failing)
    return ("caught" if caught else "missed"), f"{g.evidence}: {g.verdict}: {g.why}"
