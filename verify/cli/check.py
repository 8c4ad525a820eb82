"""``attnsim check``: one claim's construction and reference, one record."""

from __future__ import annotations

import math
from typing import Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from attnsim.verify.records import dumps
from attnsim.verify.registry import UsageError, get_checker

console = Console()


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


def print_record(r: dict[str, Any]) -> None:
    """Print one record: verdict, agreement, counts against formula and bound."""
    bits = r["error_bits"]
    bits_s = "" if bits is None else (" (exact)" if bits == math.inf else f" ({bits:.1f} bits)")
    agree = {True: "exact" if bits == math.inf else f"yes{bits_s}", False: f"NO{bits_s}", None: "n/a"}[r["agree"]]
    console.print(f"[bold]{r['claim']}[/bold] ({r['label']})  numerics={r['numerics']}  seed={r['seed']}"
                  + (f"  length={r['length_convention']}" if r["length_convention"] else ""))
    console.print(f"  params: {r['params']}")
    for line in (r.get("extra") or {}).get("summary", []):
        console.print(f"  {line}", markup=False, highlight=False)
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
    notes = (r.get("extra") or {}).get("notes")
    for note in ([notes] if isinstance(notes, str) else notes or []):
        console.print(f"  note: {note}", markup=False)
    colour = "green" if r["verdict"] == "pass" else "red"
    console.print(f"  verdict: [{colour}]{r['verdict']}[/{colour}]")
    for reason in r["reasons"]:
        console.print(f"   - {reason}")


def register(app: typer.Typer) -> None:
    """Add the ``check`` command to ``app``."""
    @app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def check(
        ctx: typer.Context,
        claim: str = typer.Argument(..., help="claim id, e.g. two_heads.lemma_3_1"),
        numerics: Optional[str] = typer.Option(None, help="exact, fraction, symbolic, mp:BITS, float64, ..."),
        seed: int = typer.Option(0, help="seed of every random choice"),
        min_bits: Optional[float] = typer.Option(None, help="bits of agreement required (approximate numerics)"),
        as_json: bool = typer.Option(False, "--json", help="print the record as JSON"),
        list_params: bool = typer.Option(False, "--list-params", help="list the claim's parameters and exit"),
        max_memory: Optional[str] = typer.Option(
            None, "--max-memory", help="refuse runs estimated to need more (e.g. 4G, 25%; default: half the available "
            "memory)"),
    ) -> None:
        """Run one claim's construction and reference; exit 0 iff the verdict is pass.

        Claim parameters follow as --name value (see --list-params), e.g.
        attnsim check two_heads.lemma_3_1 --N 64 --M 8 --d 4 --numerics exact
        """
        from attnsim.verify import guards

        guards.set_memory_limit(max_memory)
        raw = parse_extra_args(list(ctx.args))
        guards.precheck(claim, raw, numerics)

        from attnsim.verify.check import run_check

        chk = get_checker(claim)
        if list_params:
            for p in chk.params:
                choices = f" ({'|'.join(map(str, p.choices))})" if p.choices else ""
                console.print(
                    f"--{p.name.replace('_', '-')}  [{p.type.__name__}, default {p.default}]{choices}  {p.help}"
                )
            console.print(f"numerics: {', '.join(chk.numerics)} (default {chk.default_numerics})")
            return
        record = run_check(claim, raw, numerics, seed, min_bits)
        if as_json:
            print(dumps(record, indent=2))
        else:
            print_record(record)
        raise typer.Exit(0 if record["verdict"] == "pass" else 1)
