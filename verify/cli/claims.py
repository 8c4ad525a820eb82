"""``attnsim claims``: what is registered, with bounds."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from attnsim.verify.registry import all_checkers

console = Console()


def register(app: typer.Typer) -> None:
    """Add the ``claims`` command to ``app``."""
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
            table.add_row(
                r["id"], r["label"], r["kind"], "yes" if r["checker"] else "-", str(r["bounds"].get("calls", ""))
            )
        console.print(table)
