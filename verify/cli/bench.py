"""``attnsim bench``: speed as ratios measured in one run (see ``verify.bench``); a table and JSON.

``--torch`` runs only the torch figure (:func:`attnsim.verify.bench.torch_sdpa.torch_sdpa_ratio`).
"""

from __future__ import annotations

from typing import Any, Optional

import typer

from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    bounded,
    check_format,
    check_json_path,
    emit,
    format_option,
    is_terminal,
    json_option,
    quick_option,
    render_rows,
    write_json,
)
from attnsim.verify.registry import INT_MAX, UsageError


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
             f"{size}; fused {g['fused']:.1f}, direct {g['direct']:.1f} GFLOP/s; "
             + (f"target <= {f['target']}; " if f.get("target") else "")
             + f"median of {f['runs']} alternating runs; the engine's scratch kept across runs"
             + (f"; {f['scheduler_threads']} scheduler thread(s), BLAS on all cores"
                if f.get("scheduler_threads") == 1 else
                f"; {f['scheduler_threads']} scheduler threads" if "scheduler_threads" in f else "")),
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
    for key, name, how in (("torch_oracle", "torch oracle, batched / torch SDPA (CPU)",
                            "batched engine, each block projected once per head; target <= {target}"),
                           ("torch_per_call", "torch oracle, call by call / torch SDPA (CPU)",
                            "TorchOracle, each call projected on its own input; no target")):
        t = rec.get(key)
        if t is None:
            continue
        if "skipped" in t:
            out.append((name, "skipped", t["skipped"]))
            continue
        spread = f" (runs {t['ratio_min']:.2f}–{t['ratio_max']:.2f})" if "ratio_min" in t else ""
        out.append((name, f"{t['ratio']:.2f}{spread}",
                    f"N={t['N']} M={t['M']} d={t['d']}; fused thm_3_4, every call's attention on SDPA, "
                    f"{how.format(target=t['target'])}; {t['error_bits']:.1f} bits"))
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
        shape = (f"GPT-2 shape E={w['embd']} H={w['heads']} L={w['layers']}, N={w['N']} M={w['M']}, "
                 f"{w['calls']} calls, {w['threads']} threads")
        out.append(("whole model, batched / direct forward",
                    f"{w['ratio']:.2f} (runs {w['ratio_min']:.2f}–{w['ratio_max']:.2f})",
                    f"{shape}; batched engine, numpy; target <= {w['target']}; peak RSS simulation "
                    f"{w['peak_rss'] / mib:.0f} MiB, direct {w['direct_peak_rss'] / mib:.0f} MiB; "
                    f"{w['error_bits']:.1f} bits; medians of {w['repeats']} runs"))
        c = w["call_by_call"]
        out.append(("whole model, call by call / direct forward",
                    f"{c['ratio']:.2f} (runs {c['ratio_min']:.2f}–{c['ratio_max']:.2f})",
                    f"{shape}; TorchOracle, no target; peak RSS {c['peak_rss'] / mib:.0f} MiB; "
                    f"{c['error_bits']:.1f} bits"))
    if "dask" in rec:
        dk = rec["dask"]
        out.append(("Dask (2 workers) / serial", f"{dk['dask/serial']:.2f}",
                    f"N={dk['N']} M={dk['M']} d={dk['d']}, fused; cluster start-up not timed"))
    return out


def torch_rows(r: dict[str, Any], repeats: int) -> list[tuple[str, str, str]]:
    """(figure, value, detail) rows of the torch SDPA figure."""
    size = f"N={r['N']} M={r['M']} d={r['d']}, engine {r['engine']}, {r['threads']} threads"
    return [("direct torch SDPA", f"{r['direct_s']:.3f} s", f"{size} (median of {repeats})"),
            ("simulation on torch SDPA", f"{r['simulation_s']:.3f} s", size),
            ("simulation / direct", f"{r['ratio']:.2f}", f"target <= {r['target']}"),
            ("agreement", f"{r['error_bits']:.1f} bits", "simulation against direct SDPA")]


ENGINES = ("engine", "torch-oracle")
TORCH_SIZE = {"N": 8192, "M": 512, "d": 64}
"""The torch figure's default sizes."""


def register(app: typer.Typer) -> None:
    """Add the ``bench`` command to ``app``."""
    @app.command("bench")
    def bench(quick: bool = quick_option("one size per figure"),
              repeats: Optional[int] = typer.Option(None, **bounded(
                      "runs per timing (median; default 5, 3 with --torch)", 1, 1000)),
              dask: bool = typer.Option(True, help="include the Dask figure"),
              torch: bool = typer.Option(False, "--torch", help="only the torch figure: the fused simulation "
                                                                "through torch SDPA calls / one direct SDPA call"),
              N: Optional[int] = typer.Option(None, "--N", **bounded(
                      f"--torch: sequence length (default {TORCH_SIZE['N']})", 1, INT_MAX)),
              M: Optional[int] = typer.Option(None, "--M", **bounded(
                      f"--torch: oracle length (blocks of M tokens + 1 synthetic; default {TORCH_SIZE['M']})",
                      1, INT_MAX)),
              d: Optional[int] = typer.Option(None, "--d", **bounded(
                      f"--torch: head width (default {TORCH_SIZE['d']})", 1, INT_MAX)),
              engine: Optional[str] = typer.Option(None, help="--torch: engine or torch-oracle (default: engine "
                                                              "when installed)"),
              fmt: str = format_option(FORMAT_KINDS["rows"], "table"),
              json_out: Optional[str] = json_option()) -> None:
        """Engine speed as ratios: simulation / direct attention, fused / paper, flint / Fraction, Dask / serial."""
        check_format(fmt, FORMAT_KINDS["rows"])
        given = [f"--{k}" for k, v in (("N", N), ("M", M), ("d", d)) if v is not None]
        if given and not torch:
            raise UsageError(f"{given[0]}: sizes are the torch figure's; give them with --torch (the other figures "
                             "run their own fixed sizes)")
        N, M, d = (TORCH_SIZE[k] if v is None else v for k, v in (("N", N), ("M", M), ("d", d)))
        if engine is not None and (not torch or engine not in ENGINES):
            raise UsageError(f"--engine: one of {', '.join(ENGINES)}, with --torch; got {engine!r}"
                             + ("" if torch else " without --torch"))
        from rich.console import Console

        from attnsim.verify.progress import progress

        check_json_path(json_out)
        err = Console(stderr=True)
        if torch:
            from attnsim.verify.bench.torch_sdpa import torch_sdpa_ratio

            repeats = 3 if repeats is None else repeats
            with progress(err, f"bench --torch N={N} M={M} d={d}", 1) as bar:
                rec = torch_sdpa_ratio(N=N, M=M, d=d, repeats=repeats, engine=engine)
                bar.advance()
            table_rows = torch_rows(rec, repeats)
            title = "attnsim bench --torch (float64, CPU)"
        else:
            from attnsim.verify.bench.engine import bench_steps, run_bench

            repeats = 5 if repeats is None else repeats
            with progress(err, "bench figures", bench_steps(quick, dask)) as bar:
                rec = run_bench(quick=quick, repeats=repeats, dask=dask, step=lambda name: bar.advance(now=name))
            table_rows = rows(rec)
            title = f"attnsim bench (medians of {repeats} runs, {rec['machine']['cpus']} CPUs)"
        if fmt == "json":
            if json_out != "-":
                write_json(rec, "-")
        elif fmt == "table" and is_terminal() and json_out != "-":
            from rich.markup import escape
            from rich.table import Table

            table = Table(title=title)
            for col in ("figure", "value", "detail"):
                table.add_column(col)
            for r in table_rows:
                table.add_row(*(escape(c) for c in r))
            Console().print(table)
        else:
            emit(render_rows(("figure", "value", "detail"), table_rows, fmt), json_out)
        write_json(rec, json_out)
