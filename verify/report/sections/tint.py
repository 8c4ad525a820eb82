"""Report material for TinT: the parameter-count table of every listed auxiliary model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnsim.sim.tint.configs import LISTED
from attnsim.verify.tint_size import size_table


def tint_report(records: list[dict[str, Any]], out_dir: Any, quick: bool) -> str:
    """TinT size table for every listed auxiliary model (markdown here, LaTeX in tables/tint_size.tex),
    and the error of each approximation alone from the tint.sgd_step and slope records."""
    tables = Path(out_dir) / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    (tables / "tint_size.tex").write_text(size_table(LISTED, fmt="tex"), encoding="utf-8")
    text = "### TinT size per auxiliary model\n\n" + size_table(LISTED, fmt="md") + "\n"
    rows = []
    for r in records:
        approx = r.get("extra", {}).get("approximation_errors_float64")
        if r["claim"] == "tint.sgd_step" and approx:
            case_name = r["params"]["case"]
            rows += [f"| {case_name} | {name} | {v['abs']:.3g} | {v['rel']:.3g} | {v['worst_group']} |"
                     for name, v in approx.items()]
    if rows:
        text += ("\n### TinT approximations, each alone (float64, N = 1000, gate scale 10, Thm 2.5 eps = 1e-3)\n\n"
                 "| case | approximation | max abs error | relative to the SGD update | worst parameter group |\n"
                 "|---|---|---|---|---|\n"
                 + "\n".join(rows) + "\n")
    wide = sorted(((r["extra"]["D"], r["params"]["case"], r["error_bits"], r["extra"].get("step_bits"),
                    r["evidence"]) for r in records if r["claim"] == "tint.sgd_step" and r["numerics"] == "float64"
                   and "D" in r.get("extra", {})), key=lambda t: (t[0], t[1]))
    if wide:
        text += ("\n### TinT's SGD step against its reference as the width grows (float64)\n\n"
                 "| D | case | error bits (weights and logits) | bits of the update itself | evidence |\n"
                 "|---|---|---|---|---|\n"
                 + "\n".join(f"| {d} | {c} | {b:.1f} | {'-' if s is None else f'{s:.1f}'} | {e} |"
                             for d, c, b, s, e in wide) + "\n")
    slopes = [f"| {r['claim']} | {r['params'].get('case', '')} | {r['extra']['slope']:.3f} |"
              for r in records if "slope" in r.get("extra", {})]
    if slopes:
        text += "\n| claim | case | fitted error slope in eps (theory: 1) |\n|---|---|---|\n" + "\n".join(slopes) + "\n"
    return text
