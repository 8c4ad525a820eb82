"""``attnsim report``: the default sweep of every claim, written as a report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from attnsim.verify.cli.options import (
    bounded,
    check_json_path,
    check_scheduler,
    human_stream,
    json_option,
    max_memory_option,
    paper_option,
    quick_option,
    scheduler_option,
    workers_option,
    write_json,
)

QUICK_SECONDS = "177 s and 186 s wall in two idle runs on 2 cores, 2026-12-06: 171 checks, 336 and 353 CPU s"
"""What ``--quick`` took when last measured, and where (said in the help, not hoped for)."""


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to ``app``."""
    @app.command()
    def report(out: Path = typer.Option(Path("attnsim-report"), "--out", help="the folder written"),
               quick: bool = quick_option(f"the small sweep, one broken variant per claim ({QUICK_SECONDS})"),
               scheduler: str = scheduler_option("processes"),
               workers: Optional[int] = workers_option(None, "the CPU count"),
               cache: Optional[Path] = typer.Option(None, help="record cache folder (default OUT/.cache)"),
               no_cache: bool = typer.Option(False, "--no-cache", help="recompute every check"),
               audit: int = typer.Option(2, "--audit", **bounded(
                       "cached records drawn at random and computed again; one that "
                                              "differs from its cache entry fails the report", 0, 1_000_000)),
               max_memory: Optional[str] = max_memory_option(),
               teeth: bool = typer.Option(True, "--teeth/--no-teeth",
                                          help="run the broken variants (quick: one per claim); cached per code "
                                               "version"),
               paper: Optional[str] = paper_option(),
               force: bool = typer.Option(False, "--force", help="replace a report of another scope (other "
                                                                 "papers) that OUT holds"),
               json_out: Optional[str] = json_option()) -> None:
        """Run the default sweep of every claim; write report.md/.html, checks.csv/.json, tables/, plots/.

        Progress goes to stderr; the closing summary to stdout (to stderr with --json -, whose JSON is the
        list of check records, as in checks.json)."""
        from attnsim.paper_refs import papers
        from attnsim.verify import guards
        from attnsim.verify.registry import UsageError
        from attnsim.verify.report.build import write_report

        start = time.perf_counter()
        if paper is not None and paper not in papers():
            raise UsageError(f"--paper: unknown paper {paper!r}; known: {', '.join(papers())}")
        check_scheduler(scheduler)
        check_json_path(json_out)
        guards.set_memory_limit(max_memory)
        guards.output_folder(out, "--out")
        if cache is not None and not no_cache:
            guards.output_folder(cache, "--cache")
        guards.check_workers(workers)
        executor = {"serial": "serial", "processes": "processes"}.get(scheduler, "dask")
        address = scheduler if scheduler.startswith("tcp://") else None
        summary = Console(file=human_stream(json_out), soft_wrap=True)
        failed = write_report(out, quick=quick, console=Console(stderr=True), executor=executor, workers=workers,
                              scheduler=address, cache=False if no_cache else (cache or True), teeth=teeth,
                              summary=summary, paper=paper, audit=audit, force=force)
        if json_out is not None:
            import json

            write_json(json.loads((out / "checks.json").read_text()), json_out)
        summary.print(f"report took {time.perf_counter() - start:.0f} s")
        raise typer.Exit(1 if failed else 0)
