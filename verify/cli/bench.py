"""``attnsim bench``: speed as ratios measured in one run (see ``verify.bench``); a table and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer


def rows(rec: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(figure, value, detail) rows of the table."""
    out = [("numpy GEMM", f"{rec['gemm_gflops']:.1f} GFLOP/s", "measured at start-up (yardstick)")]
    for f in rec["float64"]:
        size = f"N={f['N']} M={f['M']} d={f['d']}"
        g = f["gflops"]
        sp = f.get("spread", {}).get("fused/direct")
        spread = f" (runs {sp['min']:.2f}–{sp['max']:.2f})" if sp else ""
        out += [
            ("fused / direct", f"{f['fused/direct']:.2f}{spread}",
             f"{size}; fused {g['fused']:.1f}, direct {g['direct']:.1f} GFLOP/s"),
            ("paper / direct", f"{f['paper/direct']:.2f}", f"{size}; paper {g['paper']:.1f} GFLOP/s (4·N²·d counted)"),
            ("fused / paper", f"{f['fused/paper']:.2f}", size),
        ]
        t = f["torch"]
        out.append(("fused / torch SDPA (CPU)", f"{t['sim/torch']:.2f}" if "sim/torch" in t else "skipped",
                    size if "sim/torch" in t else t["skipped"]))
    e = rec["exact"]
    size = f"N={e['N']} M={e['M']} d={e['d']}, z={e['z']}"
    out += [("exact: fraction / flint, simulation", f"{e['simulation fraction/flint']:.1f}x",
             f"{size}; Lemma 3.1 fused scheme, same rationals"),
            ("exact: fraction / flint, attention", f"{e['reference fraction/flint']:.1f}x",
             f"{size}; direct attention (reference)")]
    t = rec["torch_oracle"]
    if "skipped" in t:
        out.append(("torch oracle / torch SDPA (CPU)", "skipped", t["skipped"]))
    else:
        spread = f" (runs {t['ratio_min']:.2f}–{t['ratio_max']:.2f})" if "ratio_min" in t else ""
        out.append(("torch oracle / torch SDPA (CPU)", f"{t['ratio']:.2f}{spread}",
                    f"N={t['N']} M={t['M']} d={t['d']}; fused thm_3_4, every call on SDPA; target <= {t['target']}, "
                    f"{t['error_bits']:.1f} bits"))
    if "cost_model" in rec:
        c = rec["cost_model"]
        f = c["fit"]
        out.append(("cost model: one call t(M)", f"{f['a']:.3g}·M² + {f['b']:.3g}·M + {f['c']:.3g} s",
                    f"fused Lemma 3.1 call, d={c['d']}, M in {c['Ms']}, single-threaded BLAS"))
        h = c["held_out"]
        out.append(("cost model: predicted / measured", f"{c['predicted_seconds'] / h['seconds']:.2f}",
                    f"held-out N={h['N']}, M={c['M']}: predicted {c['predicted_seconds']:.2f} s, "
                    f"measured {h['seconds']:.2f} s ({h['calls']} calls)"))
    w = rec.get("whole_model")
    if w is not None and "skipped" in w:
        out.append(("whole model / direct forward", "skipped", w["skipped"]))
    elif w is not None:
        mib = 2 ** 20
        out.append(("whole model / direct forward", f"{w['ratio']:.2f}",
                    f"GPT-2 shape E={w['embd']} H={w['heads']} L={w['layers']}, N={w['N']} M={w['M']}, "
                    f"{w['calls']} calls, {w['threads']} threads; peak RSS simulation "
                    f"{w['simulation_peak_rss'] / mib:.0f} MiB, direct {w['direct_peak_rss'] / mib:.0f} MiB; "
                    f"{w['error_bits']:.1f} bits"))
    if "dask" in rec:
        dk = rec["dask"]
        out.append(("Dask (2 workers) / serial", f"{dk['dask/serial']:.2f}",
                    f"N={dk['N']} M={dk['M']} d={dk['d']}, fused; cluster start-up not timed"))
    return out


def register(app: typer.Typer) -> None:
    """Add the ``bench`` command to ``app``."""
    @app.command("bench")
    def bench(quick: bool = typer.Option(False, "--quick", help="one size per figure"),
              repeats: int = typer.Option(5, help="runs per timing (median; at least 5)"),
              dask: bool = typer.Option(True, help="include the Dask figure"),
              json_out: Optional[Path] = typer.Option(None, "--json", help="write the figures here")) -> None:
        """Engine speed as ratios: simulation / direct attention, fused / paper, flint / Fraction, Dask / serial."""
        from rich.console import Console
        from rich.table import Table

        from attnsim.verify import guards
        from attnsim.verify.bench.engine import run_bench

        if json_out is not None:
            guards.output_file(json_out, "--json")
        rec = run_bench(quick=quick, repeats=repeats, dask=dask)
        from rich.markup import escape

        table = Table(title=f"attnsim bench (medians of {repeats} runs, {rec['machine']['cpus']} CPUs)")
        for col in ("figure", "value", "detail"):
            table.add_column(col)
        for r in rows(rec):
            table.add_row(*(escape(c) for c in r))
        Console().print(table)
        if json_out is not None:
            json_out.write_text(json.dumps(rec, indent=2))
