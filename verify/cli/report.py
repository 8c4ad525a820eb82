"""``attnsim report``: the default sweep of every claim, written as a report."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from attnsim.verify.cli.options import check_scheduler, scheduler_option

console = Console()


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to ``app``."""
    @app.command()
    def report(out: Path = typer.Option(Path("attnsim-report"), help="output folder"),
               quick: bool = typer.Option(False, help="small sweep (under a minute)"),
               scheduler: str = scheduler_option("processes"),
               workers: Optional[int] = typer.Option(None, help="worker processes (default: CPU count)"),
               cache: Optional[Path] = typer.Option(None, help="record cache folder (default OUT/.cache)"),
               no_cache: bool = typer.Option(False, "--no-cache", help="recompute every check"),
               max_memory: Optional[str] = typer.Option(None, "--max-memory", help="refuse checks estimated to need "
                                                        "more (e.g. 4G, 25%; default: half the available memory)"),
               teeth: bool = typer.Option(True, "--teeth/--no-teeth",
                                          help="run the broken variants (quick: one per claim); cached per code "
                                               "version")) -> None:
        """Run the default sweep of every claim; write report.md/.html, checks.csv/.json, tables/, plots/."""
        from attnsim.verify import guards
        from attnsim.verify.report.build import write_report

        check_scheduler(scheduler)
        guards.set_memory_limit(max_memory)
        guards.output_folder(out, "--out")
        if cache is not None and not no_cache:
            guards.output_folder(cache, "--cache")
        guards.check_workers(workers)
        executor = {"serial": "serial", "processes": "processes"}.get(scheduler, "dask")
        address = scheduler if scheduler.startswith("tcp://") else None
        failed = write_report(out, quick=quick, console=console, executor=executor, workers=workers,
                              scheduler=address, cache=False if no_cache else (cache or True), teeth=teeth)
        raise typer.Exit(1 if failed else 0)
