"""``attnsim teeth``: run every broken twin through its claim's check; exit 0 iff every claim has teeth.

Each twin's line says ``caught`` (the verdict failed), ``refused`` (a guard, referee or assertion stopped
the run: it counts only for a declared refusal twin) or ``NOT CAUGHT``; the totals count caught and
refused apart."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console

from attnsim.verify.cli.options import (
    check_json_path,
    check_scheduler,
    human_stream,
    json_option,
    quick_option,
    scheduler_option,
    seed_option,
    workers_option,
    write_json,
)

if TYPE_CHECKING:  # loaded when the command runs: it imports every checker and theory
    from attnsim.verify.teeth import ClaimTeeth, TwinResult


def _tag(r: TwinResult) -> str:
    if r.bites:
        return "refused (a refusal twin)" if r.refused else "caught"
    if r.caught:  # a refusal twin the verdict failed but the referee let through
        return "[red]NOT REFUSED (the referee let it through)[/red]"
    return f"[red]NOT CAUGHT ({r.outcome})[/red]"


def _print(results: list[ClaimTeeth], seconds: float, console: Console) -> None:
    from attnsim.verify.teeth import summary
    from attnsim.verify.twins.growth import CONSTANT

    for c in results:
        mark = "[green]ok[/green]" if c.ok else "[red]FAIL[/red]"
        console.print(f"{mark} [bold]{c.claim}[/bold]: {c.caught} caught, {c.refused} refused of {len(c.results)} "
                      f"({c.registered} registered)" + (f" — {c.problem}" if c.problem else ""))
        for b in c.baseline_failing:
            console.print(f"    [red]BASELINE {b.outcome.upper()}[/red] {b.what}: {b.reason[:300]}", highlight=False)
        for r in c.results:
            console.print(f"    {_tag(r)} {r.name} [{r.kind}] ({r.seconds:.1f} s): {r.what}", highlight=False)
            console.print(f"        reason: {r.reason[:300]}", markup=False, highlight=False)
    s = summary(results)
    bad, missed = s["without_teeth"], s["not_caught"]
    console.print(f"{len(results)} claims, {s['twins']} broken variants: {s['caught']} caught, {s['refused']} "
                  f"refused, {len(missed)} not caught, in {seconds:.0f} s"
                  + (f"; without teeth: {', '.join(bad)}" if bad else ""))
    if missed:
        console.print(f"not caught: {', '.join(missed)}", markup=False, highlight=False)
    failing = s["baseline_failing"]
    console.print(f"baseline (each claim's unbroken check on its twins' points): {s['baseline_runs']} runs; "
                  + (f"FAILING for {', '.join(failing)}: those claims fail, their twins show nothing" if failing
                     else "every one passes"), markup=False, highlight=False)
    unrun = s["without_growth_twin"]
    console.print(f"growth twins: {s['growth_twins']} run for {s['bounded_resources']} bounded resources, "
                  f"{s['growth_caught']} caught" + (f"; none run for {', '.join(unrun)}" if unrun else ""),
                  markup=False, highlight=False)
    flat = s["constant_factor_failed"]
    console.print(f"constant factor (x{CONSTANT:g}) where the paper states no constant: {s['constant_factor_run']} "
                  f"run, {len(flat)} judged exceeds" + (f" ({', '.join(flat)})" if flat else ""),
                  markup=False, highlight=False)
    only = s["caught_only_by_refusals"]
    console.print(f"claims caught only by refusals: {', '.join(only) if only else 'none'}", markup=False,
                  highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``teeth`` command to ``app``."""
    @app.command()
    def teeth(claims: Optional[list[str]] = typer.Argument(None, help="claim ids or papers (default: every claim)"),
              quick: bool = quick_option("one construction twin per claim"),
              seed: int = seed_option(),
              scheduler: str = scheduler_option("serial", ("serial", "processes", "local", "tcp://HOST:PORT")),
              workers: Optional[int] = workers_option(None, "the CPU count"),
              json_out: Optional[str] = json_option()) -> int:
        """Run each claim's broken variants through its check; exit 0 iff every claim has teeth: at least
        two variants, a construction twin among them, every variant caught (a refusal counts only for a
        declared refusal twin), and at least one caught by the check's verdict; and the referee and theory
        probes hold and catch their own broken variants."""
        from attnsim.verify import guards
        from attnsim.verify.probes import probe_pass
        from attnsim.verify.probes.page import text_lines
        from attnsim.verify.progress import progress
        from attnsim.verify.teeth import plan, run_teeth, select_claims, summary, twin_keys

        check_scheduler(scheduler)
        check_json_path(json_out)
        guards.check_workers(workers)
        selected = select_claims(claims)
        total = len(twin_keys(plan(selected, quick)))  # the baseline runs and the twins
        executor = {"serial": "serial", "processes": "processes"}.get(scheduler, "dask")
        start = time.perf_counter()
        with progress(Console(stderr=True), "baseline runs and broken variants", total) as bar:
            results = run_teeth(selected, quick, seed, lambda r: bar.advance(now=f"{r.claim} {r.name}"),
                                executor=executor, workers=workers,
                                scheduler=scheduler if scheduler.startswith("tcp://") else None)
        seconds = time.perf_counter() - start
        probes = probe_pass()  # the referee and the theory every claim's verdict rests on
        out = Console(file=human_stream(json_out), soft_wrap=True)
        _print(results, seconds, out)
        for line in text_lines(probes):
            out.print(line, markup=False, highlight=False)
        write_json({"seconds": round(seconds, 1), "summary": summary(results),
                    "claims": [c.as_dict() for c in results], "probes": probes}, json_out)
        return 0 if all(c.ok for c in results) and probes["ok"] else 1
