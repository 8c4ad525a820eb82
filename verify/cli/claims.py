"""``attnsim claims``: what is registered, with bounds.

Claim ids are never cut: on a terminal the table folds the other columns instead, and when stdout is
not a terminal (a pipe, a file) each claim is one tab-separated line, so ``grep`` finds every id.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

import typer

from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    check_format,
    check_json_path,
    emit,
    format_option,
    human_stream,
    is_terminal,
    json_option,
    paper_option,
    render_rows,
    write_json,
)
from attnsim.verify.registry import UsageError

FORMATS = FORMAT_KINDS["rows"]
HEADER = ("id", "label", "kind", "checker", "evidence", "calls bound", "route", "judged in", "regime")


def claim_rows(paper: Optional[str]) -> list[dict[str, Any]]:
    """One dictionary per claim of ``paper`` (all papers when None), in the papers' order."""
    from attnsim.paper_refs import load, papers
    from attnsim.theory.notation import bound_text, text_cases
    from attnsim.theory.symbolic import analysed_form
    from attnsim.verify.regime import regime_text
    from attnsim.verify.registry import all_checkers

    if paper is not None and paper not in papers():
        raise UsageError(f"--paper: unknown paper {paper!r}; known: {', '.join(papers())}")
    checkers = all_checkers()
    rows = []
    for p in [paper] if paper else list(papers()):
        for c in load(p).claims:
            chk = checkers.get(c.id)
            judged = [c.limit] + [ps.var for _, ps in chk.param_sweeps] if chk is not None else []
            rows.append({"id": c.id, "label": c.label, "kind": c.kind, "checker": c.id in checkers,
                         "evidence": chk.evidence if chk is not None else None, "partial": c.weakened or None,
                         "out_of_scope": c.extra.get("out_of_scope"),
                         "route": c.route, "regime": regime_text(c, chk), "judged_in": judged,
                         "statement": c.statement,
                         "bounds": {k: r.bound for k, r in c.resources.items() if r.bound},
                         "exact": {k: r.exact for k, r in c.resources.items() if r.exact},
                         "text": {k: {"bound": bound_text(analysed_form(c, r.bound), p) if r.bound else None,
                                      "exact": text_cases(analysed_form(c, r.exact), p) if r.exact else None}
                                  for k, r in c.resources.items()}})
    return rows


def evidence_cell(r: dict[str, Any]) -> str:
    """What a pass rests on, as the checker declares it (``partial``: the claim checked is weaker than the
    statement, paper_refs ``weakened``); ``undeclared`` for a checker that declares none, ``-`` without one."""
    if not r["checker"]:
        return "-"
    return (r["evidence"] or "undeclared") + (" (partial)" if r["partial"] else "")


def table_cells(r: dict[str, Any]) -> tuple[str, ...]:
    """The row of the table: id, label, kind, whether it runs, its evidence, the calls bound as O(...), the route
    (whose construction), the variables its growth verdicts are judged in (the limit variable, then any parameter
    sweep's) and the regime its runs reach."""
    calls = r["text"].get("calls", {}).get("bound")
    return (r["id"], r["label"], r["kind"], "yes" if r["checker"] else "out of scope" if r["out_of_scope"] else "-",
            evidence_cell(r), calls or "", r["route"], ", ".join(r["judged_in"]), r["regime"])


def summaries(paper: Optional[str]) -> list[str]:
    """Per paper with a stored count before: the rows with independent evidence now, beside that count."""
    from attnsim.paper_refs import papers
    from attnsim.verify.evidence_tally import summary

    return [line for p in ([paper] if paper else list(papers())) if (line := summary(p))]


def register(app: typer.Typer) -> None:
    """Add the ``claims`` command to ``app``."""
    @app.command()
    def claims(paper: Optional[str] = paper_option(),
               fmt: str = format_option(FORMATS, "table"),
               json_out: Optional[str] = json_option()) -> None:
        """List the registered claims: id, label, kind, whether a checker runs it, the evidence its checker declares
        (independent, self-consistency or sanity), its calls bound, the route (the paper's construction or ours),
        the variables its bounds are judged in, and the regime its runs reach. Below a table (not json, csv or
        tex): per paper, the rows with independent evidence beside the count at an earlier commit."""
        check_format(fmt, FORMATS)
        check_json_path(json_out)
        rows = claim_rows(paper)
        if fmt == "json":
            import json

            emit(json.dumps(rows, indent=2), json_out)
        elif fmt == "table" and is_terminal() and human_stream(json_out) is sys.stdout:
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
            for line in summaries(paper):
                Console().print(escape(line))
        else:
            text = render_rows(HEADER, [table_cells(r) for r in rows], fmt)
            if fmt in ("table", "md"):  # off a terminal: after the claims' lines, each summary a '#' line
                text += "".join(f"\n# {line}" if fmt == "table" else f"\n\n{line}" for line in summaries(paper))
            emit(text, json_out)
        write_json(rows, json_out)
