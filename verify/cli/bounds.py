"""``attnsim bounds``: every claim's bound, exact count, leading constant and containment verdict.

Formats: ``md`` (a table per claim with LaTeX lines), ``tex`` (a fragment that pastes into a paper:
one ``align*`` per claim) and ``json`` (the :func:`attnsim.theory.catalog.catalog` dictionaries).
"""

from __future__ import annotations

import json
from typing import Any, Optional

import typer

from attnsim.verify.cli.options import check_format, format_option, json_option, write_json
from attnsim.verify.registry import UsageError

FORMATS = ("md", "tex", "json")


def render_md(rows: list[dict[str, Any]]) -> str:
    """The bounds table as Markdown."""
    out = ["# attnsim bounds", ""]
    for c in rows:
        out += [f"## {c['label']} — `{c['id']}`", ""]
        if c["definitions"]:
            out += ["Definitions: " + ", ".join(f"${d}$" for d in c["definitions_latex"]), ""]
        out += ["| resource | bound | exact count | leading constant | verdict | factors |",
                "|---|---|---|---|---|---|"]
        for name, r in c["resources"].items():
            factors = ", ".join(f"{k}: {v}" for k, v in r["factors"].items()) or "—"
            out.append(f"| {name} | O({r['bound'] or '—'}) | {r['exact'] or '—'} | {r['leading_constant'] or '—'} "
                       f"| {r['verdict']} | {factors} |")
        out.append("")
        for name, r in c["resources"].items():
            if "statement" in r["latex"]:
                out.append(f"$$ {r['latex']['statement']} $$")
        for cond in c.get("conditions", []):
            out.append(f"- condition `{cond['source']}` solved for {cond['variable']}: ${cond['latex']}$")
        if "minimum" in c:
            out.append(f"- together: ${c['minimum']['latex']}$")
        out.append("")
    return "\n".join(out)


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
    def bounds(paper: Optional[str] = typer.Option(None, help="two_heads, anna or tint (default: all)"),
               fmt: str = format_option(FORMATS, "md"),
               json_out: Optional[str] = json_option()) -> None:
        """Every claim's bound, exact count, leading constant and containment verdict, with LaTeX."""
        from attnsim.paper_refs import PAPERS
        from attnsim.theory.catalog import catalog

        check_format(fmt, FORMATS)
        if paper is not None and paper not in PAPERS:
            raise UsageError(f"--paper: unknown paper {paper!r}; known: {', '.join(PAPERS)}")
        rows = catalog(paper)
        if fmt == "json":
            print(json.dumps(rows, indent=2))
        elif fmt == "tex":
            print(render_tex(rows), end="")
        else:
            print(render_md(rows))
        write_json(rows, json_out)
