"""``attnsim teeth``: run every broken twin through its claim's check; exit 0 iff every claim has teeth.

Each twin's line says ``caught`` (the verdict failed), ``refused`` (a guard, referee or assertion stopped
the run: it counts only for a declared refusal twin) or ``NOT CAUGHT``; the totals count caught and
refused apart."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:  # loaded when the command runs: it imports every checker and theory
    from attnsim.verify.teeth import ClaimTeeth, TwinResult

console = Console(soft_wrap=True)


def _tag(r: TwinResult) -> str:
    if r.bites:
        return "refused (a refusal twin)" if r.refused else "caught"
    if r.caught:  # a refusal twin the verdict failed but the referee let through
        return "[red]NOT REFUSED (the referee let it through)[/red]"
    return f"[red]NOT CAUGHT ({r.outcome})[/red]"


def _print(results: list[ClaimTeeth], seconds: float) -> None:
    for c in results:
        mark = "[green]ok[/green]" if c.ok else "[red]FAIL[/red]"
        console.print(f"{mark} [bold]{c.claim}[/bold]: {c.caught} caught, {c.refused} refused of {len(c.results)} "
                      f"({c.registered} registered)" + (f" — {c.problem}" if c.problem else ""))
        for r in c.results:
            console.print(f"    {_tag(r)} {r.name} [{r.kind}] ({r.seconds:.1f}s): {r.what}", highlight=False)
            console.print(f"        reason: {r.reason[:300]}", markup=False, highlight=False)
    twins = sum(len(c.results) for c in results)
    caught = sum(c.caught for c in results)
    refused = sum(c.refused for c in results)
    missed = twins - sum(c.bitten for c in results)
    bad = [c.claim for c in results if not c.ok]
    console.print(f"{len(results)} claims, {twins} broken variants: {caught} caught, {refused} refused, "
                  f"{missed} not caught, in {seconds:.0f}s" + (f"; without teeth: {', '.join(bad)}" if bad else ""))


def register(app: typer.Typer) -> None:
    """Add the ``teeth`` command to ``app``."""
    @app.command()
    def teeth(claims: Optional[list[str]] = typer.Argument(None, help="claim ids or papers (default: every claim)"),
              quick: bool = typer.Option(False, "--quick", help="one construction twin per claim"),
              seed: int = typer.Option(0, min=0, max=2 ** 32 - 1, help="seed of every random choice"),
              as_json: bool = typer.Option(False, "--json", help="print the results as JSON")) -> int:
        """Run each claim's broken variants through its check; exit 0 iff every claim has teeth: at least
        two variants, a construction twin among them, every variant caught (a refusal counts only for a
        declared refusal twin), and at least one caught by the check's verdict."""
        from attnsim.verify.teeth import plan, run_teeth, select_claims

        selected = select_claims(claims)
        total = sum(len(ts) for _, ts in plan(selected, quick).values())
        start = time.perf_counter()
        if as_json or not sys.stderr.isatty():
            last = [start]

            def note(r: TwinResult) -> None:
                if time.perf_counter() - last[0] > 5:
                    last[0] = time.perf_counter()
                    print(f"teeth: {r.claim} {r.name} done ({time.perf_counter() - start:.0f}s)", file=sys.stderr)

            results = run_teeth(selected, quick, seed, note)
        else:
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=Console(stderr=True), transient=True) as progress:
                bar = progress.add_task("broken variants", total=total)
                results = run_teeth(selected, quick, seed, lambda r: progress.advance(bar))
        seconds = time.perf_counter() - start
        if as_json:
            print(json.dumps({"seconds": round(seconds, 1), "claims": [c.as_dict() for c in results]}, indent=1))
        else:
            _print(results, seconds)
        return 0 if all(c.ok for c in results) else 1
