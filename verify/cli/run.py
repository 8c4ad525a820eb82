"""``attnsim run``: one long layer on the batched engine (see ``verify.long_run``)."""

from __future__ import annotations

from typing import Optional

import typer

from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    bounded,
    check_format,
    check_json_path,
    check_scheduler,
    emit,
    format_option,
    json_option,
    max_memory_option,
    scheduler_option,
    seed_option,
    workers_option,
    write_json,
)
from attnsim.verify.registry import INT_MAX

RUN_SCHEDULERS = ("serial", "local", "tcp://HOST:PORT")


def register(app: typer.Typer) -> None:
    """Add the ``run`` command to ``app``."""
    @app.command("run")
    def run(N: int = typer.Option(65536, "--N", **bounded("sequence length", 1, INT_MAX)),
            M: int = typer.Option(1024, "--M", **bounded("oracle block length (calls have M + 1 tokens)", 1, INT_MAX)),
            d: int = typer.Option(64, "--d", **bounded("embedding dimension", 1, INT_MAX)),
            H: int = typer.Option(1, "--H", **bounded("heads", 1, INT_MAX)),
            scheme: str = typer.Option("fused", help="fused (one call per block pair) or paper (two)"),
            scheduler: str = scheduler_option("serial", RUN_SCHEDULERS),
            workers: int = workers_option(2, "2"),
            check_rows: int = typer.Option(0, "--check-rows", **bounded(
                    "rows checked against direct attention", 0, INT_MAX)),
            seed: int = seed_option(),
            fmt: str = format_option(FORMAT_KINDS["study"], "table"),
            json_out: Optional[str] = json_option(),
            max_memory: Optional[str] = max_memory_option()) -> None:
        """Simulate one float64 layer of length N from oracle calls in O(N·M) memory; report time, memory, calls."""
        check_format(fmt, FORMAT_KINDS["study"])
        check_scheduler(scheduler, RUN_SCHEDULERS)
        from rich.console import Console

        from attnsim.verify import guards
        from attnsim.verify.long_run import run_layer
        from attnsim.verify.progress import progress

        guards.set_memory_limit(max_memory)
        guards.not_empty(scheme=scheme)
        check_json_path(json_out)
        guards.check_workers(workers)
        guards.require_memory(guards.estimate_long_run(N, M, d, H))
        with progress(Console(stderr=True), f"one layer N={N} M={M} d={d} H={H}", 1) as bar:
            rec, _ = run_layer(N, M, d, H=H, scheme=scheme, scheduler=scheduler, workers=workers,
                               check_rows=check_rows, seed=seed)
            bar.advance()
        write_json(rec, json_out)
        if fmt == "json":
            if json_out != "-":
                write_json(rec, "-")
            return
        lines = [f"two_heads.lemma_3_1 ({rec['scheme']} scheme), one layer: N={N} M={M} d={d} H={H}",
                 f"  {rec['oracle']}",
                 f"  calls {rec['calls']} in {rec['rounds']} round(s); scheduler {scheduler} ({workers} workers)",
                 f"  time {rec['seconds']:.2f} s; peak RSS {rec['peak_rss_mib']:.0f} MiB "
                 f"(direct attention's scores alone: {rec['direct_scores_gib']:.2f} GiB)"]
        if check_rows:
            lines.append(f"  checked {check_rows} sampled rows against direct attention (long double): "
                         f"min {rec['min_error_bits']:.1f} bits, median {rec['median_error_bits']:.1f} bits")
        emit("\n".join(lines), json_out)
