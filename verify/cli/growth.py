"""``attnsim growth CLAIM``: the claim's growth sweep and, per bounded resource, the growth verdict.

Runs the checker's growth grid (:mod:`attnsim.verify.growth`; its default grid when it declares none),
then prints per bounded resource the sizes, measured / bound at each, the fitted log-log slope with its
95% interval, the evidence that decided (exact count, the proof's upper formula, the paper's constant or the
growth test) and the verdict (``within``, ``exceeds``, ``failing points``, ``unmeasured growth``); failing and
refused points are listed, never measured. Exit 0 iff every resource is ``within``.
"""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.console import Console

from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    check_format,
    check_json_path,
    format_option,
    json_option,
    quick_option,
    render_rows,
    seed_option,
    write_json,
)

FORMATS = FORMAT_KINDS["rows"]
HEADER = ("resource", "bound", "size", "sizes", "measured / bound", "slope", "95% interval", "decided by", "verdict",
          "guard")


def _num(v: float | None) -> str:
    return "—" if v is None else f"{v:.3g}"


def rows(results: list) -> list[list[str]]:
    """One row per bounded resource (the ``table``, ``md`` and ``csv`` formats)."""
    from attnsim.theory.notation import bound_text
    from attnsim.verify.growth_rules import size_cells

    out = []
    for g in results:
        interval = "—" if g.low is None else f"[{g.low:.3g}, {g.high:.3g}]"
        out.append([g.resource, bound_text(g.bound, g.claim.split(".")[0]), g.size_var,
                    " ".join(size_cells(g)),
                    " ".join(f"{r:.3g}" for r in g.ratios), _num(g.slope), interval, g.decided_by,
                    g.verdict + ("" if g.ok else f" ({g.why})"), g.guard])
    return out


def register(app: typer.Typer) -> None:
    """Add the ``growth`` command to ``app``."""
    @app.command()
    def growth(claim: str = typer.Argument(..., help="claim id or paper (attnsim claims lists them)"),
               quick: bool = quick_option("the small growth grid"),
               seed: int = seed_option(),
               fmt: str = format_option(FORMATS, "table"),
               json_out: Optional[str] = json_option()) -> int:
        """Judge each bounded resource of CLAIM (or of every claim of a paper) over its growth sweep by the
        strongest evidence: the exact count (== at every size), else the proof's upper formula (<=), else the
        paper's constant, else the growth test (log-log slope of measured / bound over >= 4 sizes spanning >= 8x,
        persisting over the larger half); each sweep in another parameter the claim declares (eps' - eps at fixed
        N: >= 4 values spanning >= 4x) is judged in its own variable; exit 0 iff every resource is within its bound."""
        from attnsim.verify.cli.check import find_checker
        from attnsim.verify.growth import has_growth_grid, run_growth, run_param_growth, verdict_counts
        from attnsim.verify.registry import UsageError
        from attnsim.verify.teeth import select_claims

        check_format(fmt, FORMATS)
        check_json_path(json_out)
        if seed < 0:
            raise UsageError(f"--seed: must be >= 0, got {seed}")
        from attnsim.paper_refs import papers

        claims = select_claims([claim]) if claim in papers() else [find_checker(claim).claim]
        docs, all_results = [], []
        for one in claims:
            records, results = run_growth(one, quick, seed, console=Console(stderr=True))
            swept = run_param_growth(one, quick, seed, console=Console(stderr=True))
            results += [g for _, _, gs in swept for g in gs]
            all_results += results
            docs.append({"claim": one, "quick": quick, "grid": "growth" if has_growth_grid(one) else "default",
                         "counts": verdict_counts(results), "resources": [g.as_dict() for g in results],
                         "records": [{k: r.get(k) for k in ("params", "size", "bounds", "verdict", "reasons")}
                                     for r in records],
                         "param_sweeps": [{"sweep": name, "variable": gs[0].size_var if gs else None,
                                           "records": [{k: r.get(k) for k in ("params", "bounds", "verdict")}
                                                       for r in recs]} for name, recs, gs in swept]})
        doc = docs[0] if len(docs) == 1 else {"paper": claim, "quick": quick, "claims": docs}
        if json_out == "-" or fmt == "json":
            print(json.dumps(doc, indent=2, default=str))
        else:
            print(render_rows(("claim",) + HEADER, [[g.claim, *row] for g, row in zip(all_results, rows(all_results))],
                              fmt) if len(docs) > 1 else render_rows(HEADER, rows(all_results), fmt))
            if fmt != "csv" and any(g.outside for g in all_results):
                from attnsim.verify.growth_rules import OUTSIDE_NOTE

                print(OUTSIDE_NOTE)
        if json_out != "-":
            write_json(doc, json_out)
        return 0 if all(g.ok for g in all_results) else 1
