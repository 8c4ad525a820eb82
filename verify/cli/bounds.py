"""``attnsim bounds``: every claim's bound, exact count, leading constant and containment verdict.

Formats: ``md`` (a table per claim with LaTeX lines), ``tex`` (a fragment that pastes into a paper:
one ``align*`` per claim) and ``json`` (the :func:`attnsim.theory.catalog.catalog` dictionaries).
"""

from __future__ import annotations

import json
from typing import Any, Optional

import typer

from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    ascii_tex,
    check_format,
    check_json_path,
    emit,
    format_option,
    json_option,
    paper_option,
    render_rows,
    write_json,
)
from attnsim.verify.registry import UsageError

FORMATS = FORMAT_KINDS["formulas"]


def render_md(rows: list[dict[str, Any]]) -> str:
    """The bounds as Markdown: per claim, the same theory block as the report's claim section."""
    from attnsim.verify.report.claim_page import theory_lines

    out = ["# attnsim bounds", ""]
    for c in rows:
        out += [f"## {c['label']} — `{c['id']}`", "", *theory_lines(c)]
    return "\n".join(out)


TABLE_HEADER = ("claim", "result", "resource", "bound", "exact count (≤: the proof's upper formula)", "containment")


def table_rows(rows: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """One row per bounded or counted resource of each claim (the ``table`` format)."""
    return [(c["id"], c["label"], name, r["text"].get("bound") or "",
             ("≤ " if r.get("of") == "upper" and r["text"].get("exact") else "") + (r["text"].get("exact") or ""),
             r.get("verdict") or "") for c in rows for name, r in c["resources"].items()]


def render_tex(rows: list[dict[str, Any]]) -> str:
    """The bounds as LaTeX paragraphs."""
    from attnsim.verify.report.latex import tex_escape

    out = ["% attnsim bounds: paste into a LaTeX document (needs amsmath)"]
    for c in rows:
        out.append(rf"\paragraph{{{tex_escape(c['label'])} (\texttt{{{tex_escape(c['id'])}}}).}}")
        lines = [r["latex"]["statement"] for r in c["resources"].values() if "statement" in r["latex"]]
        lines += [cond["latex"] for cond in c.get("conditions", [])]
        if c["definitions_latex"] and lines:
            lines.append(r"\text{where } " + r",\ ".join(c["definitions_latex"]))
        if not lines:
            out.append("No counted resource.")
            continue
        out += [r"\begin{align*}", " \\\\\n".join(f"  & {line}" for line in lines), r"\end{align*}"]
    return "\n".join(out) + "\n"


def register(app: typer.Typer) -> None:
    """Add the ``bounds`` command to ``app``."""
    @app.command()
    def bounds(paper: Optional[str] = paper_option(),
               fmt: str = format_option(FORMATS, "md"),
               json_out: Optional[str] = json_option()) -> None:
        """Every claim's bound, exact count, leading constant and containment verdict, with LaTeX."""
        from attnsim.paper_refs import papers
        from attnsim.theory.catalog import catalog

        check_format(fmt, FORMATS)
        check_json_path(json_out)
        if paper is not None and paper not in papers():
            raise UsageError(f"--paper: unknown paper {paper!r}; known: {', '.join(papers())}")
        rows = catalog(paper)
        if fmt == "json":
            emit(json.dumps(rows, indent=2, ensure_ascii=False), json_out)
        elif fmt == "tex":
            emit(ascii_tex(render_tex(rows)).rstrip("\n"), json_out)
        elif fmt == "table":
            emit(render_rows(TABLE_HEADER, table_rows(rows), "table"), json_out)
        else:
            emit(render_md(rows), json_out)
        write_json(rows, json_out)
