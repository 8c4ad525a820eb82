"""The front page's list of bounds this run beats by a factor that grows without limit.

A check holds each exact count against the paper's bound through the theory's containment
(:mod:`attnsim.theory.bounds`): *tight* when lim count/bound is positive and finite, *within, not tight*
when it is 0. A bound met that loosely is always met, so the verdicts cannot show a bound transcribed
looser than the paper states (O(N²d) for O(Nd)), nor a paper's bound that is looser than its own scheme
needs. This list puts every such resource of the run in front of the reader, with the limit that decided
it, to recheck against the paper.
"""

from __future__ import annotations

from typing import Any

from attnsim.theory.symbolic import LOOSE


def not_tight(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (claim, resource) whose containment a passing record of this run calls not tight."""
    from attnsim.paper_refs import all_claims

    claims = all_claims()
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        for name, c in (r.get("containment") or {}).items():
            if c.get("verdict") != LOOSE or (r["claim"], name) in rows or r["claim"] not in claims:
                continue
            res = claims[r["claim"]].resources.get(name)
            if res is None:
                continue
            counted = res.upper if c.get("of") == "upper" else res.exact  # the formula the containment is of
            rows[(r["claim"], name)] = {"claim": r["claim"], "label": claims[r["claim"]].label, "resource": name,
                                        "exact": counted, "of": c.get("of") or "exact", "bound": res.bound,
                                        "limit": c.get("leading_constant"),
                                        "var": c.get("limit"), "checks": 0}
    for r in records:
        for name, c in (r.get("containment") or {}).items():
            if (r["claim"], name) in rows:
                rows[(r["claim"], name)]["checks"] += 1
    return list(rows.values())


def not_tight_lines(records: list[dict[str, Any]]) -> list[str]:
    """The front page's section (markdown): "bound not tight here", one line per resource, or a line saying
    that every bound the run measured is tight."""
    rows = not_tight(records)
    lines = ["#### Bounds not tight here", ""]
    if not rows:
        return lines + ["Every bound this run holds an exact count against is tight (the count over the bound "
                        "tends to a positive constant).", ""]
    lines += ["Each bound below is met by a factor that grows without limit: lim count/bound is the figure given, "
              "so the paper's bound is looser than its scheme needs here, or transcribed looser than the paper "
              "states — worth rechecking.", "",
              "| result | resource | count (exact, or the proof's upper formula) | bound | lim count/bound | checks |",
              "|---|---|---|---|---|---|"]
    lines += [f"| [{r['label']}](#{r['claim']}) | {r['resource']} | `{r['exact']}` ({r['of']}) | O(`{r['bound']}`) | "
              f"bound not tight here: {r['limit']} as {r['var']} → ∞ | {r['checks']} |" for r in rows]
    return lines + [""]
