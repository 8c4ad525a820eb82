"""Growth verdicts: is a measured resource in its bound's big-O class, judged over a sweep of sizes?

A paper's bound is a statement about growth, so a single record cannot decide it. For every bounded
resource of a claim, the records of its growth sweep (the checker's ``growth_grid``, else its default
grid) give points (size, measured / bound), where the size is the claim's limit variable (``n = N/M``,
``N``, ``k`` ...). The log-log least-squares slope of measured / bound against size, with its 95%
Student-t interval (:meth:`attnsim.verify.stats.LineFit.slope_interval`), decides:

- ``exceeds``: the interval lies above 0 — the resource grows faster than its bound;
- ``within``: the interval contains 0 or lies below it;
- ``unmeasured growth``: fewer than :data:`MIN_SIZES` sizes, or a span below :data:`MIN_SPAN` x —
  a failing row, never a pass.

Where the paper states the constant (``stated_by`` in paper_refs: a machine's memory s, a parameter
ceiling), the bound holds at every size, so the verdict is ``exceeds`` when any measurement is above
constant x bound, ``within`` otherwise (the slope is shown beside it). A resource that is 0 at every size
is ``within`` (nothing grows); zeros at some sizes are left out of
the fit (log 0 is not defined), and the remaining sizes must still meet the size rules. Slopes within
:data:`FLOAT_NOISE` of 0 are rounding, not growth. A constant factor moves only the intercept, never
the slope: that is the point (a big-O bound without a stated constant cannot fail on a constant).

A failure probability (``eta`` of anna.alg_1 / anna.alg_2) is measured by its checker as the one-sided 95%
Clopper-Pearson upper bound over the record's runs, never the empirical rate: a feasible sweep sees no failure, and
0 at every size fits nothing. The fit is then of that upper bound / bound, and the growth sweep runs at each size
enough seeds that zero failures put it at a fixed multiple of the bound (``eta_runs`` in verify/claims/anna_lsh.py).

Where the scheme as implemented has an exact count (``exact`` in paper_refs, the record's ``predicted``), the
same slope test is also run on measured / exact: a small sweep often sits where the bound is still loose
(measured / bound falling like N^-0.4 over N = 128..1024), so growth on top of the count would hide in the
bound's slack there, while the proof's own formula has none. The verdict is ``exceeds`` when either interval
lies above 0 (the exact count's O(bound) containment is theory's, symbolic, in the record's ``containment``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

from attnsim.paper_refs import get as get_claim
from attnsim.verify.registry import UsageError, all_checkers
from attnsim.verify.stats import LEVEL, loglog_fit
from attnsim.verify.sweep import Point

VERDICTS = ("within", "exceeds", "unmeasured growth")
MIN_SIZES = 4
MIN_SPAN = 8.0
FLOAT_NOISE = 1e-9


@dataclass(frozen=True)
class ResourceGrowth:
    """One bounded resource of a claim judged over a sweep: the points, the fitted slope and the verdict."""

    claim: str
    resource: str
    bound: str
    size_var: str
    sizes: tuple[float, ...]
    measured: tuple[float, ...]
    bound_values: tuple[float, ...]
    slope: float | None
    low: float | None
    high: float | None
    verdict: str
    why: str
    guard: str = "no constant"
    exact: tuple[float, ...] = ()
    exact_slope: float | None = None
    exact_low: float | None = None
    exact_high: float | None = None

    @property
    def ratios(self) -> tuple[float, ...]:
        """measured / bound at each point."""
        return tuple(m / b for m, b in zip(self.measured, self.bound_values))

    @property
    def ok(self) -> bool:
        """Whether the verdict is ``within``."""
        return self.verdict == "within"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``attnsim growth --json``, the report)."""
        return {**asdict(self), "ratios": list(self.ratios), "level": LEVEL}


def _points(resource: str, records: Sequence[dict[str, Any]]) -> tuple[list[tuple[float, float, float, float]], int]:
    """(size, measured, bound value, exact count or NaN) of every record that measured the resource, and how many
    did not."""
    pts, missing = [], 0
    for r in records:
        b = (r.get("bounds") or {}).get(resource) or {}
        size = (r.get("size") or {}).get("value")
        if b.get("measured") is None or b.get("value") in (None, 0) or size is None:
            missing += 1
            continue
        exact = (r.get("predicted") or {}).get(resource)
        pts.append((float(size), float(b["measured"]), float(b["value"]),
                    math.nan if exact is None else float(exact)))
    return sorted(pts), missing


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


def size_rule(sizes: Sequence[float]) -> str | None:
    """Why these sizes cannot judge growth (None when they can): at least :data:`MIN_SIZES` distinct sizes
    spanning at least :data:`MIN_SPAN` x."""
    distinct = sorted(set(sizes))
    if len(distinct) < MIN_SIZES:
        return f"{len(distinct)} distinct size(s), {MIN_SIZES} needed"
    if distinct[-1] < MIN_SPAN * distinct[0]:
        return f"sizes span {distinct[-1] / distinct[0]:.3g}x, {MIN_SPAN:g}x needed"
    return None


def judge(claim_id: str, resource: str, records: Sequence[dict[str, Any]]) -> ResourceGrowth:
    """The growth verdict of one bounded resource over ``records`` (the claim's sweep)."""
    claim = get_claim(claim_id)
    pts, missing = _points(resource, records)
    sizes = tuple(p[0] for p in pts)
    base = dict(claim=claim_id, resource=resource, bound=claim.resources[resource].bound or "",
                size_var=claim.limit, sizes=sizes, measured=tuple(p[1] for p in pts),
                bound_values=tuple(p[2] for p in pts), guard=guard_summary(claim_id, resource, records))
    note = f"; {missing} record(s) without a measurement or size" if missing else ""
    res = claim.resources[resource]
    if res.stated_by and res.constant is not None:
        return _stated(base, res.constant, res.stated_by, records, note)
    if pts and all(p[1] == 0 for p in pts) and size_rule(sizes) is None:
        return ResourceGrowth(**base, slope=0.0, low=0.0, high=0.0, verdict="within",
                              why="zero at every size" + note)
    fit = [p for p in pts if p[1] > 0]
    rule = size_rule([p[0] for p in fit])
    if rule is not None:
        zeros = len(pts) - len(fit)
        return ResourceGrowth(**base, slope=None, low=None, high=None, verdict="unmeasured growth",
                              why=rule + (f" ({zeros} zero measurement(s) left out)" if zeros else "") + note)
    slope, low, high = _slope([p[0] for p in fit], [p[1] / p[2] for p in fit])
    exceeds = not math.isnan(low) and low > FLOAT_NOISE
    why = (f"slope {slope:.3g}, {LEVEL:.0%} interval [{low:.3g}, {high:.3g}] "
           + ("lies above 0" if exceeds else "reaches 0 or below") + f" over {len(fit)} points")
    exact = {}
    if res.exact and all(p[3] > 0 for p in fit):  # measured / the proof's exact count: no slack to hide in
        e_slope, e_low, e_high = _slope([p[0] for p in fit], [p[1] / p[3] for p in fit])
        over = not math.isnan(e_low) and e_low > FLOAT_NOISE
        exact = dict(exact=tuple(p[3] for p in pts), exact_slope=e_slope, exact_low=e_low, exact_high=e_high)
        why += (f"; against the exact count {res.exact}: slope {e_slope:.3g}, interval [{e_low:.3g}, {e_high:.3g}] "
                + ("lies above 0" if over else "reaches 0 or below"))
        exceeds = exceeds or over
    elif res.exact:
        why += f"; the exact count {res.exact} is not a positive number at every size: measured / exact not fitted"
    return ResourceGrowth(**base, slope=slope, low=low, high=high, verdict="exceeds" if exceeds else "within",
                          why=why + note, **exact)


def _slope(sizes: Sequence[float], ratios: Sequence[float]) -> tuple[float, float, float]:
    """The log-log slope of ``ratios`` against ``sizes`` and its :data:`LEVEL` interval (a flat line: 0, [0, 0])."""
    line = loglog_fit(sizes, ratios)
    slope, (low, high) = line.slope, line.slope_interval(LEVEL)
    if abs(slope) < FLOAT_NOISE and line.stderr < FLOAT_NOISE:
        return 0.0, 0.0, 0.0
    return slope, low, high


def _stated(base: dict[str, Any], constant: float, stated_by: str, records: Sequence[dict[str, Any]],
            note: str) -> ResourceGrowth:
    """A bound whose constant the paper states is a statement at every size, not only as N grows: ``within``
    when every measurement is at most constant x bound (at least one needed), the slope shown beside it."""
    measured = [(float(b["measured"]), float(b["value"])) for r in records
                for b in [(r.get("bounds") or {}).get(base["resource"]) or {}]
                if b.get("measured") is not None and b.get("value") is not None]
    over = [m for m, v in measured if m > constant * v]
    fit = [p for p in zip(base["sizes"], base["measured"], base["bound_values"]) if p[1] > 0]
    slope = low = high = None
    if size_rule([p[0] for p in fit]) is None:
        line = loglog_fit([p[0] for p in fit], [p[1] / p[2] for p in fit])
        slope, (low, high) = line.slope, line.slope_interval(LEVEL)
    if not measured:
        verdict, why = "unmeasured growth", "no measurement of a bound with a stated constant"
    elif over:
        verdict = "exceeds"
        why = f"{len(over)} of {len(measured)} measurement(s) above {constant:g} x bound ({stated_by})"
    else:
        verdict, why = "within", f"every measurement at most {constant:g} x bound at every size ({stated_by})"
    return ResourceGrowth(**base, slope=slope, low=low, high=high, verdict=verdict, why=why + note)


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


def judge_broken(claim_id: str, resource: str, breaks: Callable[[], Any], seed: int = 0) -> ResourceGrowth:
    """The growth verdict of ``resource`` over the claim's quick growth sweep run in this process with
    ``breaks()`` applied."""
    import io

    from rich.console import Console

    from attnsim.verify.sweep import sweep

    with breaks():
        records = sweep(growth_points(claim_id, True, seed), console=Console(file=io.StringIO())).records
    return judge(claim_id, resource, records)


def judge_twin(claim_id: str, resource: str, breaks: Callable[[], Any], seed: int = 0) -> tuple[str, str]:
    """(outcome, reason) of a growth twin (:func:`judge_broken`): ``caught`` when ``resource`` is judged
    ``exceeds``, else ``missed``."""
    g = judge_broken(claim_id, resource, breaks, seed)
    if g.measured and not any(g.measured):
        return "missed", (f"growth verdict {g.verdict}: {resource} is measured 0 at every size of the quick growth "
                          f"sweep, so no factor can inflate it (this twin cannot break anything there); {g.why}")
    return ("caught" if g.verdict == "exceeds" else "missed"), f"growth verdict {g.verdict}: {g.why}"
