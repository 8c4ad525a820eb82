"""The evidence rules of the growth verdicts (:mod:`attnsim.verify.growth`, whose docstring states them): the
verdict record, the size rule, and how each evidence decides over a sweep's correct points: a formula held at
every point (the exact count with ``==``, the proof's upper formula with ``<=``) beside theory's containment, the
paper's constant, and the growth test that needs growth to persist over the larger half of the sizes."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from attnsim.paper_refs import get as get_claim
from attnsim.verify.stats import LEVEL, loglog_fit

VERDICTS = ("within", "exceeds", "failing points", "unmeasured growth")
EVIDENCE = ("exact count", "proof's inequality", "paper's constant", "growth test")
"""What decides a resource, strongest first (:mod:`attnsim.verify.growth`)."""
MIN_SIZES = 4
MIN_SPAN = 8.0
FLOAT_NOISE = 1e-9
UPPER_SHARE = 0.5
"""The growth test's curvature rule: growth is shown only when the slope over the larger half of the sizes is at
least this share of the whole sweep's (a power of n keeps its slope; a ratio levelling off loses it)."""


OUTSIDE_MARK = "†"
OUTSIDE_NOTE = "† the point's record says it ran outside the statement's range: partial evidence"


def size_cells(g: "ResourceGrowth") -> list[str]:
    """The sweep's sizes as the tables print them, those whose record ran outside the statement's range marked."""
    return [f"{s:g}" + (OUTSIDE_MARK if s in g.outside else "") for s in g.sizes]


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
    outside: tuple[float, ...] = ()  # sizes whose record says it ran outside the statement's range (partial)
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
        if self.size_var != get_claim(self.claim).limit:  # a parameter sweep at fixed N (verify/growth.py)
            return f"growth test in {self.size_var} at fixed {get_claim(self.claim).limit} (slope over the sweep)"
        return "growth test (slope over the sweep and over its larger half)"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``attnsim growth --json``, the report)."""
        return {**asdict(self), "ratios": list(self.ratios), "level": LEVEL, "decided_by": self.decided_by}


def size_rule(sizes: Sequence[float], span: float = MIN_SPAN) -> str | None:
    """Why these sizes cannot judge growth (None when they can): at least :data:`MIN_SIZES` distinct sizes
    spanning at least ``span`` x (:data:`MIN_SPAN` for a sweep in the limit variable)."""
    distinct = sorted(set(sizes))
    if len(distinct) < MIN_SIZES:
        return f"{len(distinct)} distinct size(s), {MIN_SIZES} needed"
    if distinct[-1] < span * distinct[0]:
        return f"sizes span {distinct[-1] / distinct[0]:.3g}x, {span:g}x needed"
    return None


def shown_slopes(pts: Sequence[tuple[float, ...]], span: float = MIN_SPAN) -> dict[str, Any]:
    """measured / bound's slope over every positive point and over the larger half of the sizes (the growth test's
    fits; shown beside every other evidence), and measured / exact count's where every exact count is positive."""
    fit = [p for p in pts if p[1] > 0]
    out: dict[str, Any] = dict(slope=None, low=None, high=None, top_slope=None, top_low=None, top_high=None)
    if size_rule([p[0] for p in fit], span) is not None:
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


def containment_of(claim_id: str, resource: str, records: Sequence[dict[str, Any]]) -> tuple[bool, str]:
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


def param_containment_of(claim_id: str, resource: str, records: Sequence[dict[str, Any]],
                         var: str) -> tuple[bool | None, str]:
    """:func:`containment_of` as a parameter sweep's variable ``var`` grows (the limit of the constant lim_N count
    / bound): from the records, else derived here; None for the first when sympy could not decide it."""
    for r in records:
        for c in ((r.get("containment") or {}).get(resource, {}).get("in_sweeps") or {}).values():
            if c.get("var") == var:
                return _param_reading(c["verdict"], var, c["limit"])
    from attnsim.theory.bounds import contained_as
    from attnsim.verify.registry import all_checkers

    sweeps = [ps for _, ps in all_checkers()[claim_id].param_sweeps if ps.var == var]
    c = contained_as(get_claim(claim_id), resource, var, sweeps[0].varied() if sweeps else "")
    if c is None:
        return False, "no containment to derive"
    return _param_reading(c.verdict, var, c.limit)


def _param_reading(verdict: str, var: str, limit: str) -> tuple[bool | None, str]:
    from attnsim.theory.bounds import UNDECIDED

    finite = None if verdict == UNDECIDED else verdict != "outside bound"
    return finite, f"{verdict} as {var} grows, lim count / bound {limit}"


def by_formula(base: dict[str, Any], pts: Sequence[tuple[float, ...]], col: int, formula: str,
                containment: tuple[bool, str], note: str) -> ResourceGrowth:
    """Decided by a formula held at every point (``col`` 3: the exact count, ``==``; 4: the proof's upper formula,
    ``<=``) and theory's containment of that formula in the bound."""
    exact = col == 3
    what, rel = ("the exact count", "==") if exact else ("the proof's upper formula", "<=")
    values = tuple(p[col] for p in pts)
    off = [f"{p[0]:g}" for p in pts if math.isnan(p[col]) or (p[1] != p[col] if exact else p[1] > p[col])]
    finite, reads = containment
    extra = {"formula": formula, "containment": reads, **({"exact": values} if exact else {"upper": values})}
    shown = ("" if base["slope"] is None else
             f"; measured / bound slope {base['slope']:.3g}, interval [{base['low']:.3g}, {base['high']:.3g}] "
             "(shown, not deciding)")
    if not pts:
        return ResourceGrowth(**{**base, **extra}, verdict="unmeasured growth", why="no measurement" + note)
    if off:
        why = f"measured {rel} {what} {formula} fails at {base['size_var']} = {', '.join(off)}"
    elif not finite:
        why = f"measured {rel} {what} {formula} at all {len(pts)} points, but that formula is not in O(bound): {reads}"
    else:
        why = f"measured {rel} {what} {formula} at all {len(pts)} points; in O(bound) by theory: {reads}"
    return ResourceGrowth(**{**base, **extra}, verdict="within" if finite and not off else "exceeds",
                          why=why + shown + note)


def growth_test(base: dict[str, Any], pts: Sequence[tuple[float, ...]], note: str,
                span: float = MIN_SPAN, persist: bool = True) -> ResourceGrowth:
    """The growth test, for a resource with no exact count, upper formula or stated constant: ``exceeds`` only when
    measured / bound's slope interval lies above 0 over the sweep and the growth persists over its larger half
    (``span``: the sizes' span the sweep needs; ``persist=False``, for a sweep in a parameter at fixed N: the
    interval over the whole sweep decides, since at a fixed N no resource can keep growing toward a limit)."""
    sizes = base["sizes"]
    if pts and all(p[1] == 0 for p in pts) and size_rule(sizes, span) is None:
        return ResourceGrowth(**{**base, "slope": 0.0, "low": 0.0, "high": 0.0}, verdict="within",
                              why="zero at every size" + note)
    fit = [p for p in pts if p[1] > 0]
    rule = size_rule([p[0] for p in fit], span)
    if rule is not None:
        zeros = len(pts) - len(fit)
        return ResourceGrowth(**base, verdict="unmeasured growth",
                              why=rule + (f" ({zeros} zero measurement(s) left out)" if zeros else "") + note)
    slope, low, high, top = base["slope"], base["low"], base["high"], base["top_slope"]
    top_low = base["top_low"]
    rising = not math.isnan(low) and low > FLOAT_NOISE
    persists = not persist or (top > FLOAT_NOISE and top >= UPPER_SHARE * slope
                               and (math.isnan(top_low) or top_low > FLOAT_NOISE))
    half = larger_half(fit)
    why = (f"slope {slope:.3g}, {LEVEL:.0%} interval [{low:.3g}, {high:.3g}] "
           + ("lies above 0" if rising else "reaches 0 or below") + f" over {len(fit)} points")
    if rising and persist:
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


def stated(base: dict[str, Any], constant: float, stated_by: str, records: Sequence[dict[str, Any]],
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
