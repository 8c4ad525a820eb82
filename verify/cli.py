"""The ``attnsim`` command line.

Every user-facing error (an :class:`~attnsim.sim.errors.AttnsimError`) is printed as one line
``error: ...`` naming the parameter, with exit status 2 — never a traceback.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from attnsim.sim.errors import AttnsimError
from attnsim.verify.registry import UsageError, all_checkers, get_checker

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Run the constructions of three transformer-simulation papers, count what they spend, "
                       "and hold the counts against the papers' bounds.")
console = Console()


def jsonable(obj: Any) -> Any:
    """Records as JSON: infinite error bits become the string "inf"."""
    if isinstance(obj, float) and math.isinf(obj):
        return "inf" if obj > 0 else "-inf"
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj


def parse_extra_args(args: list[str]) -> dict[str, str]:
    """``--name value`` / ``--name=value`` pairs (dashes in names become underscores)."""
    out: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--") or a == "--":
            raise UsageError(f"unexpected argument {a!r}; parameters are given as --name value")
        name, eq, value = a[2:].partition("=")
        if not eq:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise UsageError(f"--{name}: missing value")
            value = args[i + 1]
            i += 1
        out[name.replace("-", "_")] = value
        i += 1
    return out


@app.command()
def claims(paper: Optional[str] = typer.Option(None, help="two_heads, anna or tint"),
           as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List the registered claims: id, label, kind, whether a checker runs it, and its bounds."""
    from attnsim.paper_refs import PAPERS, load

    papers = [paper] if paper else list(PAPERS)
    checkers = all_checkers()
    rows = []
    for p in papers:
        for c in load(p).claims:
            rows.append({"id": c.id, "label": c.label, "kind": c.kind, "checker": c.id in checkers,
                         "statement": c.statement,
                         "bounds": {k: r.bound for k, r in c.resources.items() if r.bound},
                         "exact": {k: r.exact for k, r in c.resources.items() if r.exact}})
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(title="attnsim claims")
    for col in ("id", "label", "kind", "runs", "calls bound"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["id"], r["label"], r["kind"], "yes" if r["checker"] else "-", str(r["bounds"].get("calls", "")))
    console.print(table)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def check(ctx: typer.Context, claim: str = typer.Argument(..., help="claim id, e.g. two_heads.lemma_3_1"),
          numerics: Optional[str] = typer.Option(None, help="exact, fraction, symbolic, mp:BITS, float64, ..."),
          seed: int = typer.Option(0, help="seed of every random choice"),
          min_bits: Optional[float] = typer.Option(None, help="bits of agreement required (approximate numerics)"),
          as_json: bool = typer.Option(False, "--json", help="print the record as JSON"),
          list_params: bool = typer.Option(False, "--list-params", help="list the claim's parameters and exit")) -> None:
    """Run one claim's construction and reference; exit 0 iff the verdict is pass.

    Claim parameters follow as --name value (see --list-params), e.g.
    attnsim check two_heads.lemma_3_1 --N 64 --M 8 --d 4 --numerics exact
    """
    from attnsim.verify.check import run_check

    chk = get_checker(claim)
    if list_params:
        for p in chk.params:
            choices = f" ({'|'.join(map(str, p.choices))})" if p.choices else ""
            console.print(f"--{p.name.replace('_', '-')}  [{p.type.__name__}, default {p.default}]{choices}  {p.help}")
        console.print(f"numerics: {', '.join(chk.numerics)} (default {chk.default_numerics})")
        return
    record = run_check(claim, parse_extra_args(list(ctx.args)), numerics, seed, min_bits)
    if as_json:
        print(json.dumps(jsonable(record), indent=2))
    else:
        print_record(record)
    raise typer.Exit(0 if record["verdict"] == "pass" else 1)


def print_record(r: dict[str, Any]) -> None:
    bits = r["error_bits"]
    bits_s = "" if bits is None else (" (exact)" if bits == math.inf else f" ({bits:.1f} bits)")
    agree = {True: "exact" if bits == math.inf else f"yes{bits_s}", False: f"NO{bits_s}", None: "n/a"}[r["agree"]]
    console.print(f"[bold]{r['claim']}[/bold] ({r['label']})  numerics={r['numerics']}  seed={r['seed']}"
                  + (f"  length={r['length_convention']}" if r["length_convention"] else ""))
    console.print(f"  params: {r['params']}")
    console.print(f"  agreement: {agree}")
    table = Table(show_header=True)
    for col in ("resource", "measured", "exact formula", "bound", "bound value", "containment"):
        table.add_column(col)
    for name in sorted(set(r["counts"]) | set(r["predicted"]) | set(r["bounds"])):
        b = r["bounds"].get(name, {})
        table.add_row(name, str(r["counts"].get(name, "")), str(r["predicted"].get(name, "")),
                      str(b.get("formula", "")), str(b.get("value", "")),
                      r["containment"].get(name, {}).get("verdict", ""))
    console.print(table)
    if r["calls_by_tag"]:
        console.print(f"  by tag: {r['calls_by_tag']}")
    colour = "green" if r["verdict"] == "pass" else "red"
    console.print(f"  verdict: [{colour}]{r['verdict']}[/{colour}]")
    for reason in r["reasons"]:
        console.print(f"   - {reason}")


@app.command()
def report(out: Path = typer.Option(Path("attnsim-report"), help="output folder"),
           quick: bool = typer.Option(False, help="small sweep (under a minute)")) -> None:
    """Run the default sweep of every claim and write report.md, checks.csv and checks.json."""
    from attnsim.verify.report import write_report

    failed = write_report(out, quick=quick, console=console)
    raise typer.Exit(1 if failed else 0)


def _register_subcommands() -> None:
    """Commands kept in their own modules: every ``attnsim.verify.cli_*`` module's ``register(app)``."""
    import importlib
    import pkgutil

    import attnsim.verify as pkg

    for mod in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name.startswith("cli_")):
        importlib.import_module(f"attnsim.verify.{mod}").register(app)


_register_subcommands()


def main() -> None:
    """Entry point: one clear line and exit 2 for bad input, never a traceback."""
    try:
        app(standalone_mode=False)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (AttnsimError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as e:  # click usage errors and friends
        import click

        if isinstance(e, click.exceptions.ClickException):
            e.show()
            sys.exit(e.exit_code)
        if isinstance(e, click.exceptions.Abort):
            sys.exit(1)
        raise


if __name__ == "__main__":
    main()
