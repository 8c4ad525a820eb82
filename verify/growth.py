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

A failure probability (``eta`` of anna.alg_1 / anna.alg_2) is measured by its checker as the one-sided 95%
Clopper-Pearson upper bound over the record's runs, never the empirical rate: a feasible sweep sees no failure, and
0 at every size fits nothing. The fit is then of that upper bound / bound, and the growth sweep runs at each size
enough seeds that zero failures put it at a fixed multiple of the bound (``eta_runs`` in verify/claims/anna_lsh.py).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Sequence

from attnsim.paper_refs import get as get_claim
from attnsim.verify.registry import UsageError, all_checkers
from attnsim.verify.stats import LEVEL, loglog_fit
from attnsim.verify.sweep import Point

VERDICTS = ("within", "exceeds", "failing points", "unmeasured growth")
EVIDENCE = ("exact count", "proof's inequality", "paper's constant", "growth test")
"""What decides a resource, strongest first (the module's docstring)."""
MIN_SIZES = 4
MIN_SPAN = 8.0
FLOAT_NOISE = 1e-9
UPPER_SHARE = 0.5
"""The growth test's curvature rule: growth is shown only when the slope over the larger half of the sizes is at
least this share of the whole sweep's (a power of n keeps its slope; a ratio levelling off loses it)."""


@dataclass(frozen=True)
class ResourceGrowth:
    """One bounded resource of a claim judged over a sweep: the points, the evidence that decided and the verdict.

    ``slope``/``low``/``high`` are measured / bound's log-log slope and interval over the correct points (shown for
    every evidence, deciding only for the growth test); ``top_slope`` and its interval are the same over the larger
    half of the sizes. ``failing`` and ``refused`` list the points left out (size and reasons)."""

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
    evidence: str = "growth test"
    failing: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    upper: tuple[float, ...] = ()
    formula: str = ""
    containment: str = ""
    top_slope: float | None = None
    top_low: float | None = None
    top_high: float | None = None

    @property
    def ratios(self) -> tuple[float, ...]:
        """measured / bound at each point."""
        return tuple(m / b for m, b in zip(self.measured, self.bound_values))

    @property
    def ok(self) -> bool:
        """Whether the verdict is ``within``."""
        return self.verdict == "within"

    @property
    def decided_by(self) -> str:
        """The evidence that decided, in one line, with its formula and containment where it has them."""
        if self.evidence in ("exact count", "proof's inequality"):
            rel = "==" if self.evidence == "exact count" else "<="
            return f"{self.evidence}: measured {rel} {self.formula} at every point; {self.containment}"
        if self.evidence == "paper's constant":
            return f"{self.evidence}: measured <= {self.formula}"
        return "growth test (slope over the sweep and over its larger half)"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``attnsim growth --json``, the report)."""
        return {**asdict(self), "ratios": list(self.ratios), "level": LEVEL, "decided_by": self.decided_by}


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


def _points(resource: str, records: Sequence[dict[str, Any]]) -> tuple[list[tuple[float, ...]], int]:
    """(size, measured, bound value, exact count or NaN, upper formula or NaN) of every record that measured the
    resource, sorted, and how many did not."""
    pts, missing = [], 0
    for r in records:
        b = (r.get("bounds") or {}).get(resource) or {}
        size = (r.get("size") or {}).get("value")
        if b.get("measured") is None or b.get("value") in (None, 0) or size is None:
            missing += 1
            continue
        exact = (r.get("predicted") or {}).get(resource)
        upper = (b.get("upper") or {}).get("value")
        pts.append((float(size), float(b["measured"]), float(b["value"]),
                    math.nan if exact is None else float(exact), math.nan if upper is None else float(upper)))
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
    """The verdict of one bounded resource over ``records`` (the claim's sweep), by the strongest evidence."""
    claim = get_claim(claim_id)
    res = claim.resources[resource]
    good, failing, refused = split_points(claim.limit, records)
    pts, missing = _points(resource, good)
    sizes = tuple(p[0] for p in pts)
    base = dict(claim=claim_id, resource=resource, bound=res.bound or "", size_var=claim.limit, sizes=sizes,
                measured=tuple(p[1] for p in pts), bound_values=tuple(p[2] for p in pts),
                guard=guard_summary(claim_id, resource, records), evidence=evidence_of(claim_id, resource),
                failing=tuple(failing), refused=tuple(refused), **_shown_slopes(pts))
    note = f"; {missing} record(s) without a measurement or size" if missing else ""
    evidence = base["evidence"]
    if evidence == "exact count":
        g = _by_formula(base, pts, 3, res.exact or "", _containment(claim_id, resource, good), note)
    elif evidence == "proof's inequality":
        g = _by_formula(base, pts, 4, res.upper or "", _containment(claim_id, resource, good), note)
    elif evidence == "paper's constant":
        g = _stated(base, res.constant or 0.0, res.stated_by or "", good, note)
    else:
        g = _growth_test(base, pts, note)
    if failing or refused:
        left = f"{len(failing)} failing and {len(refused)} refused point(s), never measured: " + " | ".join(
            failing + refused)
        g = replace(g, verdict="failing points", why=f"{left}; over the other points: {g.why}")
    return g


def _shown_slopes(pts: Sequence[tuple[float, ...]]) -> dict[str, Any]:
    """measured / bound's slope over every positive point and over the larger half of the sizes (the growth test's
    fits; shown beside every other evidence), and measured / exact count's where every exact count is positive."""
    fit = [p for p in pts if p[1] > 0]
    out: dict[str, Any] = dict(slope=None, low=None, high=None, top_slope=None, top_low=None, top_high=None)
    if size_rule([p[0] for p in fit]) is not None:
        return out
    out["slope"], out["low"], out["high"] = _slope([p[0] for p in fit], [p[1] / p[2] for p in fit])
    top = larger_half(fit)
    out["top_slope"], out["top_low"], out["top_high"] = _slope([p[0] for p in top], [p[1] / p[2] for p in top])
    if all(p[3] > 0 for p in fit):  # NaN (no exact count) is not > 0
        e = _slope([p[0] for p in fit], [p[1] / p[3] for p in fit])
        out.update(exact=tuple(p[3] for p in pts), exact_slope=e[0], exact_low=e[1], exact_high=e[2])
    return out


def larger_half(pts: Sequence[tuple[float, ...]]) -> list[tuple[float, ...]]:
    """The points at the larger half of the distinct sizes (the middle size too, when their number is odd)."""
    distinct = sorted({p[0] for p in pts})
    cut = distinct[(len(distinct) - 1) // 2] if len(distinct) % 2 else distinct[len(distinct) // 2]
    return [p for p in pts if p[0] >= cut]


def _containment(claim_id: str, resource: str, records: Sequence[dict[str, Any]]) -> tuple[bool, str]:
    """(whether theory proves the exact count, or the proof's upper formula, in the bound's class; how it reads):
    from the records' ``containment``, else derived here."""
    for r in records:
        c = (r.get("containment") or {}).get(resource)
        if c:
            return c["verdict"] != "outside bound", f"{c['verdict']}, limit {c.get('leading_constant')}"
    from attnsim.theory.bounds import contained

    c = contained(get_claim(claim_id), resource)
    if c is None:
        return False, "no containment to derive"
    return c.finite, f"{c.verdict}, limit {c.leading_constant}"


def _by_formula(base: dict[str, Any], pts: Sequence[tuple[float, ...]], col: int, formula: str,
                containment: tuple[bool, str], note: str) -> ResourceGrowth:
    """Decided by a formula held at every point (``col`` 3: the exact count, ``==``; 4: the proof's upper formula,
    ``<=``) and theory's containment of that formula in the bound."""
    exact = col == 3
    what, rel = ("the exact count", "==") if exact else ("the proof's upper formula", "<=")
    values = tuple(p[col] for p in pts)
    off = [f"{p[0]:g}" for p in pts if math.isnan(p[col]) or (p[1] != p[col] if exact else p[1] > p[col])]
    finite, reads = containment
    extra = {"formula": formula, "containment": reads, **({} if exact else {"upper": values})}
    shown = ("" if base["slope"] is None else
             f"; measured / bound slope {base['slope']:.3g}, interval [{base['low']:.3g}, {base['high']:.3g}] "
             "(shown, not deciding)")
    if not pts:
        return ResourceGrowth(**base, verdict="unmeasured growth", why="no measurement" + note, **extra)
    if off:
        why = f"measured {rel} {what} {formula} fails at {base['size_var']} = {', '.join(off)}"
    elif not finite:
        why = f"measured {rel} {what} {formula} at all {len(pts)} points, but that formula is not in O(bound): {reads}"
    else:
        why = f"measured {rel} {what} {formula} at all {len(pts)} points; in O(bound) by theory: {reads}"
    return ResourceGrowth(**base, verdict="within" if finite and not off else "exceeds", why=why + shown + note,
                          **extra)


def _growth_test(base: dict[str, Any], pts: Sequence[tuple[float, ...]], note: str) -> ResourceGrowth:
    """The growth test, for a resource with no exact count, upper formula or stated constant: ``exceeds`` only when
    measured / bound's slope interval lies above 0 over the sweep and the growth persists over its larger half."""
    sizes = base["sizes"]
    if pts and all(p[1] == 0 for p in pts) and size_rule(sizes) is None:
        return ResourceGrowth(**{**base, "slope": 0.0, "low": 0.0, "high": 0.0}, verdict="within",
                              why="zero at every size" + note)
    fit = [p for p in pts if p[1] > 0]
    rule = size_rule([p[0] for p in fit])
    if rule is not None:
        zeros = len(pts) - len(fit)
        return ResourceGrowth(**base, verdict="unmeasured growth",
                              why=rule + (f" ({zeros} zero measurement(s) left out)" if zeros else "") + note)
    slope, low, high, top = base["slope"], base["low"], base["high"], base["top_slope"]
    top_low = base["top_low"]
    rising = not math.isnan(low) and low > FLOAT_NOISE
    persists = top > FLOAT_NOISE and top >= UPPER_SHARE * slope and (math.isnan(top_low) or top_low > FLOAT_NOISE)
    half = larger_half(fit)
    why = (f"slope {slope:.3g}, {LEVEL:.0%} interval [{low:.3g}, {high:.3g}] "
           + ("lies above 0" if rising else "reaches 0 or below") + f" over {len(fit)} points")
    if rising:
        why += (f"; over the larger half ({base['size_var']} = {half[0][0]:g} ... {half[-1][0]:g}) slope {top:.3g}"
                + ("" if math.isnan(top_low) else f", interval [{top_low:.3g}, {base['top_high']:.3g}]")
                + (": the growth persists" if persists else
                   f": below {UPPER_SHARE:g} x the sweep's or not above 0, the ratio levels off "
                   "(curvature, not growth)"))
    return ResourceGrowth(**base, verdict="exceeds" if rising and persists else "within", why=why + note)


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
    if not measured:
        verdict, why = "unmeasured growth", "no measurement of a bound with a stated constant"
    elif over:
        verdict = "exceeds"
        why = f"{len(over)} of {len(measured)} measurement(s) above {constant:g} x bound ({stated_by})"
    else:
        verdict, why = "within", f"every measurement at most {constant:g} x bound at every size ({stated_by})"
    return ResourceGrowth(**base, verdict=verdict, why=why + note, formula=f"{constant:g} x bound")


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
    """(outcome, reason) of a growth twin (:func:`judge_broken`): ``caught`` when ``resource`` is judged ``exceeds``
    by its deciding evidence, or when a point's check failed on it (a count off its exact formula, a measurement
    over the proof's upper formula or a constant); a point a guard refused is no catch; else ``missed``."""
    g = judge_broken(claim_id, resource, breaks, seed)
    if g.measured and not any(g.measured) and not g.failing:
        return "missed", (f"growth verdict {g.verdict}: {resource} is measured 0 at every size of the quick growth "
                          f"sweep, so no factor can inflate it (this twin cannot break anything there); {g.why}")
    caught = g.verdict == "exceeds" or bool(g.failing)
    return ("caught" if caught else "missed"), f"{g.evidence}: {g.verdict}: {g.why}"
