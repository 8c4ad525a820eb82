"""``attnsim report``: the default sweep of every claim, written as a report."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

console = Console()


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to ``app``."""
    @app.command()
    def report(out: Path = typer.Option(Path("attnsim-report"), help="output folder"),
               quick: bool = typer.Option(False, help="small sweep (under a minute)"),
               executor: str = typer.Option("processes", help="serial, processes or dask"),
               scheduler: Optional[str] = typer.Option(None, help="tcp://host:port of a running Dask scheduler"),
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

        guards.set_memory_limit(max_memory)
        guards.not_empty(executor=executor, scheduler=scheduler)
        guards.output_folder(out, "--out")
        if cache is not None and not no_cache:
            guards.output_folder(cache, "--cache")
        guards.check_workers(workers)
        failed = write_report(out, quick=quick, console=console, executor=executor, workers=workers,
                              scheduler=scheduler, cache=False if no_cache else (cache or True), teeth=teeth)
        raise typer.Exit(1 if failed else 0)
