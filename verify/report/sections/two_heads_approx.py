"""Report material for the approximate Two Heads results (``@report_section("two_heads")``).

* the converse (two_heads.thm_4_2): absolute error against the code scale B at mp:200 and float64,
  on a log scale, with the exp(-B²) slope drawn in — it decays like exp(-B²) until the numerics' floor;
* the average case (two_heads.thm_4_1): a table of success rates with 95% Clopper–Pearson intervals per input
  kind, beside the measured C, D and whether the minimum-M conditions hold;
* the lower bound: the needle's per-row failure rate against 1 - M/N, and the reduction's decisions.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from attnsim.verify.check import run_check
from attnsim.verify.claims.two_heads_approx import run_converse


def converse_curve(Bs: list[float], numerics: str, N: int = 32, M: int = 4, d: int = 2) -> list[tuple[float, float]]:
    """Thm 4.2's leakage error as the separation B grows, in one numerics."""
    return [(B, run_converse(N, M, d, B, numerics, 0)["error"]) for B in Bs]


def _plot(curves: dict[str, list[tuple[float, float]]], path: Path) -> None:
    from attnsim.verify.report.plots import figure, legend, save

    fig, (ax,) = figure(width=5.6, height=3.8)
    for name, pts in curves.items():
        ax.semilogy([b for b, _ in pts], [max(e, 1e-300) for _, e in pts], "o-", label=name)
    ref = curves[next(iter(curves))]
    B0, e0 = next(((b, e) for b, e in ref if b >= 4 and e > 0), ref[-1])
    xs = [b for b, _ in ref if b >= B0]
    ax.semilogy(xs, [e0 * math.exp(B0 ** 2 - b ** 2) for b in xs], "k--", label="exp(-B^2) slope")
    ax.axhline(2.0 ** -100, color="grey", lw=0.8, ls=":", label="2^-100")
    ax.set_xlabel("code scale B")
    ax.set_ylabel("max absolute error")
    ax.set_title("Theorem 4.2: N/M instances in one call")
    legend(ax)
    save(fig, path)


def _rate_row(r: dict[str, Any]) -> str:
    x, p = r["extra"], r["params"]
    lo, hi = x["clopper_pearson95"]
    return (f"| {p['input']} | {p['N']} | {p['M']} | {p['eps']:g} | {x['C']:.4g} | {x['D']:.3g} "
            f"| {'yes' if all(x['conditions_hold'].values()) else 'no'} | {x['successes']}/{x['seeds']} "
            f"| [{lo:.3f}, {hi:.3f}] | {x['row_fail_rate']:.3f} | {x['eps_at_promised']:.3g} |")


def _rate_rows(records: list[dict[str, Any]], quick: bool) -> list[str]:
    """The sweep's Thm 4.1 records, plus the inputs where the assumptions fail (smaller when quick)."""
    N, M, seeds = (1024, 128, 20) if quick else (4096, 512, 200)
    rows = ["| input | N | M | eps | C | D | conditions hold | all rows within eps | 95% interval "
            "| per-row failure | eps reached by 90% |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows += [_rate_row(r) for r in records if r["claim"] == "two_heads.thm_4_1" and r.get("extra")]
    for inp in ("random", "needle", "sqrtlog"):
        params = dict(N=N, M=M, d=8 if inp == "sqrtlog" else 2, eps=2.0, seeds=seeds, input=inp)
        rows.append(_rate_row(run_check("two_heads.thm_4_1", params, "float64", 0)))
    return rows


def approximate_section(records: list[dict[str, Any]], out_dir: Path, quick: bool) -> str:
    """The report section on Thms 4.1 and 4.2 and the lower bound."""
    Bs = [0.0, 3.0, 6.0, 9.0, 12.0] if quick else [float(b) for b in range(15)]
    curves = {"mp:200": converse_curve(Bs, "mp:200"), "float64": converse_curve(Bs, "float64")}
    _plot(curves, Path(out_dir) / "plots" / "two_heads_converse_error.png")
    mp = curves["mp:200"]
    first = next((b for b, e in mp if e < 2.0 ** -100), None)
    lines = ["### The approximate results and the lower bound", "",
             "**Theorem 4.2 (converse).** Absolute error of 8 instances (M = 4, d = 2) run in one call of length 32, "
             "against the code scale B. It falls like exp(-B²) until the numerics' floor (float64 about 2^-53, "
             f"mp:200 about 2^-200); at mp:200 it is below 2^-100 from B = {first:g} on.", "",
             "![converse error](plots/two_heads_converse_error.png)", "",
             "| B | mp:200 error | float64 error |", "|---|---|---|"]
    lines += [f"| {b:g} | {e:.3g} | {f:.3g} |" for (b, e), (_, f) in zip(mp, curves["float64"])]
    lines += ["", "**Theorem 4.1 (average case)**, one head; every row within eps counts as a success; promised "
              "probability 0.9. Only `bounded` meets both minimum-M conditions, and only for eps >= about 1.8 at "
              "N = 4096, M = 512 (see docs/two_heads_approx.md); the last column is the eps that 90% of the seeds "
              "actually reach.", ""]
    lines += _rate_rows(records, quick)
    lines += ["", "**Lower bound.**", ""]
    lines += [f"- `{r['params']['input']}` ({r['numerics']}, {r['verdict']}): " + " ".join(r["extra"]["summary"])
              for r in records if r["claim"] == "two_heads.lower_bound" and r.get("extra")]
    lines.append("")
    return "\n".join(lines)
