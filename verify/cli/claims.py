"""``attnsim claims``: what is registered, with bounds.

Claim ids are never cut: on a terminal the table folds the other columns instead, and when stdout is
not a terminal (a pipe, a file) each claim is one tab-separated line, so ``grep`` finds every id.
"""

from __future__ import annotations

from typing import Any, Optional

import typer

from attnsim.verify.cli.options import (
    check_format,
    format_option,
    is_terminal,
    json_option,
    pretty_formula,
    render_rows,
    write_json,
)
from attnsim.verify.registry import UsageError

FORMATS = ("table", "md", "csv", "json")
HEADER = ("id", "label", "kind", "checker", "calls bound")


def claim_rows(paper: Optional[str]) -> list[dict[str, Any]]:
    """One dictionary per claim of ``paper`` (all papers when None), in the papers' order."""
    from attnsim.paper_refs import PAPERS, load
    from attnsim.verify.registry import all_checkers

    if paper is not None and paper not in PAPERS:
        raise UsageError(f"--paper: unknown paper {paper!r}; known: {', '.join(PAPERS)}")
    checkers = all_checkers()
    rows = []
    for p in [paper] if paper else list(PAPERS):
        for c in load(p).claims:
            rows.append({"id": c.id, "label": c.label, "kind": c.kind, "checker": c.id in checkers,
                         "out_of_scope": c.extra.get("out_of_scope"),
                         "statement": c.statement,
                         "bounds": {k: r.bound for k, r in c.resources.items() if r.bound},
                         "exact": {k: r.exact for k, r in c.resources.items() if r.exact}})
    return rows


def table_cells(r: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """The row of the table: id, label, kind, whether it runs, and the calls bound as O(...)."""
    calls = r["bounds"].get("calls")
    return (r["id"], r["label"], r["kind"], "yes" if r["checker"] else "out of scope" if r["out_of_scope"] else "-",
            f"O({pretty_formula(calls)})" if calls else "")


def register(app: typer.Typer) -> None:
    """Add the ``claims`` command to ``app``."""
    @app.command()
    def claims(paper: Optional[str] = typer.Option(None, help="two_heads, anna or tint (default: all)"),
               fmt: str = format_option(FORMATS, "table"),
               json_out: Optional[str] = json_option()) -> None:
        """List the registered claims: id, label, kind, whether a checker runs it, and its calls bound."""
        check_format(fmt, FORMATS)
        rows = claim_rows(paper)
        if fmt == "json":
            write_json(rows, "-")
        elif fmt == "table" and is_terminal():
            from rich.console import Console
            from rich.markup import escape
            from rich.table import Table

            table = Table(title="attnsim claims")
            table.add_column("id", no_wrap=True, min_width=max(len(r["id"]) for r in rows))
            for col in HEADER[1:]:
                table.add_column(col, overflow="fold")
            for r in rows:
                table.add_row(*(escape(c) for c in table_cells(r)))
            Console().print(table)
        else:
            print(render_rows(HEADER, [table_cells(r) for r in rows], fmt))
        write_json(rows, json_out)
