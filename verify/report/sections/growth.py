"""The report's growth verdicts: every claim's growth sweep in its limit variable and each of its parameter sweeps
(ε' − ε, ρ, the fan: :class:`~attnsim.verify.registry.ParamSweep`, N fixed, at their quick grids), and per bounded
resource the sizes run, measured / bound at each, the fitted log-log slope with its 95% interval and the verdict
(:mod:`attnsim.verify.growth`), with a log-log plot of measured and bound against size in the limit variable.

:func:`points_of` lists the sweeps' points (the report runs them with its checks), :func:`judged` judges their
records, each sweep's own, and :func:`growth_pass` does both; :func:`claim_growth` is the
markdown a claim's section ends with; :func:`verdict_line` is the summary's count of resources by verdict
(for the front page); :func:`failing_rows` makes every resource that is not ``within`` a failing row of
its claim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from attnsim.theory.notation import bound_text
from attnsim.verify.cache import point_key
from attnsim.verify.growth import (
    VERDICTS,
    ResourceGrowth,
    growth_points,
    judge,
    judge_claim,
    param_sweeps,
    sweep_points,
    verdict_counts,
)
from attnsim.verify.growth_rules import OUTSIDE_NOTE, size_cells
from attnsim.verify.registry import ParamSweep, all_checkers
from attnsim.verify.sweep import Point, sweep

Results = dict[str, list[ResourceGrowth]]


def sweeps_of(claim_id: str, quick: bool) -> list[tuple[ParamSweep | None, list[Point]]]:
    """The claim's growth sweep in its limit variable (``None``; its quick grid when ``quick``), then each of its
    parameter sweeps at its quick grid, with their points. The parameter sweeps' full grids, which ``attnsim growth
    CLAIM`` runs, take minutes a point (Thm 4.2's gap sweep); with them a full report had run a third of its jobs
    after 19 minutes, where it had run over half without them."""
    return [(None, growth_points(claim_id, quick))] + [(ps, sweep_points(claim_id, ps, True))
                                                       for _, ps in param_sweeps(claim_id)]


def points_of(claims: Sequence[str], quick: bool) -> list[Point]:
    """The growth sweeps of every claim in ``claims`` that has a checker, its parameter sweeps included, one list
    (the report runs it in the same sweep as its checks, so a point two of them name is computed once)."""
    checkers = all_checkers()
    return [p for c in claims if c in checkers for _, points in sweeps_of(c, quick) for p in points]


def judged(claims: Sequence[str], records: Sequence[dict[str, Any]], quick: bool) -> Results:
    """Every bounded resource of ``claims`` judged over the records of their growth sweeps (``records``, any order;
    a point two sweeps share is one record, counted once in each), and each resource a parameter sweep names judged
    over that sweep's own records as its variable grows; claims with no bounded resource are left out."""
    checkers = all_checkers()
    out: Results = {}
    for c in (c for c in claims if c in checkers):
        for ps, points in sweeps_of(c, quick):
            asked = {point_key(p.fields(), "") for p in points}  # the question a record answers, code aside
            mine = list({q: r for r in records if r.get("claim") == c and (q := point_key(r, "")) in asked}.values())
            out.setdefault(c, []).extend(judge_claim(c, mine) if ps is None else
                                         [judge(c, res, mine, ps.var) for res in ps.resources])
    return {c: rs for c, rs in out.items() if rs}


def growth_pass(claims: Sequence[str], quick: bool, **sweep_options: Any) -> Results:
    """Run the growth sweeps of every claim in ``claims`` (one sweep, the report's ``sweep_options``) and judge
    every bounded resource; claims with no bounded resource are left out."""
    points = points_of(claims, quick)
    return judged(claims, sweep(points, **sweep_options).records if points else [], quick)


def _row(g: ResourceGrowth) -> str:
    sizes = ", ".join(size_cells(g)) or "—"
    ratios = ", ".join(f"{r:.3g}" for r in g.ratios) or "—"
    slope = "—" if g.slope is None else f"{g.slope:+.3g}"
    interval = "—" if g.low is None else f"[{g.low:+.3g}, {g.high:+.3g}]"
    verdict = g.verdict if g.ok else f"**{g.verdict}** ({g.why})"
    bound = bound_text(g.bound, g.claim.split(".")[0])  # the notation of every other table
    return (f"| {g.resource} | {bound} | {sizes} | {ratios} | {slope} | {interval} | {g.decided_by} | {verdict} "
            f"| {g.guard} |")



def claim_growth(claim_id: str, results: Results, out: Path | None = None) -> str:
    """The growth table (and plot, written under ``out``) of one claim; empty when it has no bounded resource."""
    rs = results.get(claim_id)
    if not rs:
        return ""
    by_var: dict[str, list[ResourceGrowth]] = {}
    for g in rs:  # the limit variable's sweep first, then each parameter sweep's
        by_var.setdefault(g.size_var, []).append(g)
    lines = [f"**Growth** (`attnsim growth {claim_id}`): each resource decided by the strongest evidence that "
             "exists (decided by): the exact count held with == at every point and its containment in the bound, "
             "else the proof's upper formula held with <=, else the paper's constant, else the growth test (the "
             "log-log slope of measured / bound with a 95% interval above 0, persisting over the larger half of the "
             "sizes). The slope is shown for every resource; only failing-free sweeps are measured (docs/growth.md).",
             ""]
    for i, (var, gs) in enumerate(by_var.items()):
        if i:
            lines += [f"In {var}, over the claim's sweep in that parameter, N fixed, at its quick grid "
                      f"(`attnsim growth {claim_id}` runs the full one):", ""]
        lines += [f"| resource | bound | {var} | measured / bound | slope | interval | decided by | verdict | "
                  "single-record guard |", "|---|---|---|---|---|---|---|---|---|", *[_row(g) for g in gs], ""]
    if any(g.outside for g in rs):
        lines += [OUTSIDE_NOTE, ""]
    if out is not None:
        from attnsim.verify.report.claim_plots import growth_plot

        if growth_plot(next(iter(by_var.values())), out / "plots" / f"{claim_id}_growth.png"):
            lines += [f"![{claim_id} growth](plots/{claim_id}_growth.png)", ""]
    return "\n".join(lines)


def counts(results: Results) -> dict[str, int]:
    """Bounded resources counted by growth verdict, over every claim."""
    return verdict_counts([g for rs in results.values() for g in rs])


def verdict_line(results: Results) -> str:
    """One sentence for the report's summary: resources by growth verdict, and which are not ``within``."""
    c = counts(results)
    bad = [f"`{g.claim}` {g.resource} ({g.verdict}, {g.evidence})" for rs in results.values() for g in rs if not g.ok]
    return ("Bounded resources by growth verdict: " + ", ".join(f"{c[v]} {v}" for v in VERDICTS)
            + (f". Not within: {', '.join(bad)}." if bad else "."))


def failing_points(records: Sequence[dict[str, Any]], grid_records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The growth sweep's records that failed their own check (a wrong output, a count, a bound at that size),
    each once: a point that is also in the default grid is already a failing check there."""
    seen = {(r["claim"], repr(r["params"]), r["numerics"], r["seed"]) for r in grid_records}
    out: list[dict[str, Any]] = []
    for r in records:
        key = (r["claim"], repr(r["params"]), r["numerics"], r["seed"])
        if r["verdict"] != "pass" and key not in seen:
            seen.add(key)
            out.append({**r, "reasons": [f"growth sweep point: {why}" for why in r["reasons"]]})
    return out


def failing_rows(results: Results) -> list[dict[str, Any]]:
    """A failing row per resource that is not ``within`` (its claim fails with it)."""
    return [{"claim": g.claim, "params": {"growth": g.resource}, "numerics": None, "verdict": "fail",
             "reasons": [f"{g.resource}: {g.verdict} by the {g.evidence} ({g.why})"]}
            for rs in results.values() for g in rs if not g.ok]
