"""``attnsim report``: run every registered claim's default sweep and write the evidence.

Writes into one folder: ``report.md`` (per paper and claim: statement, assumptions, a table of
measured vs exact vs bound, agreement, verdict), ``checks.json`` and ``checks.csv`` (one row per
check). Failing checks are listed last and make the command exit non-zero.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from attnsim.paper_refs import PAPERS, load
from attnsim.sim.errors import AttnsimError
from attnsim.verify.check import run_check
from attnsim.verify.registry import all_checkers, report_sections


def default_points(quick: bool) -> list[tuple[str, dict[str, Any], str | None, int]]:
    """(claim, params, numerics, seed) for every grid point of every checker."""
    points = []
    for claim, chk in all_checkers().items():
        for raw in chk.grid(quick):
            params = dict(raw)
            numerics = params.pop("numerics", None)
            seed = int(params.pop("seed", 0))
            points.append((claim, params, numerics, seed))
    return points


def run_point(claim: str, params: dict[str, Any], numerics: str | None, seed: int) -> dict[str, Any]:
    """One check; a bad grid point becomes a failing record with its reason, not a crash."""
    try:
        return run_check(claim, params, numerics, seed)
    except AttnsimError as exc:
        return {"claim": claim, "params": params, "numerics": numerics, "seed": seed, "verdict": "fail",
                "reasons": [f"error: {exc}"], "counts": {}, "predicted": {}, "bounds": {}, "agree": None}


def atomic_write(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "inf" if v == float("inf") else f"{v:.4g}"
    return "" if v is None else str(v)


def claim_section(claim: Any, records: list[dict[str, Any]]) -> str:
    lines = [f"### {claim.label} — `{claim.id}`", "", claim.statement, ""]
    if claim.assumptions:
        lines += ["Assumptions: " + "; ".join(claim.assumptions), ""]
    for name, res in claim.resources.items():
        lines.append(f"- **{name}**: bound O({res.bound or '—'}), exact count of our scheme: {res.exact or '—'}")
    lines.append("")
    if not records:
        lines += ["_Not run by the default sweep._", ""]
        return "\n".join(lines)
    lines += ["| params | numerics | calls | predicted | bound value | agreement (bits) | verdict |",
              "|---|---|---|---|---|---|---|"]
    for r in records:
        bound_val = r.get("bounds", {}).get("calls", {}).get("value") if r.get("bounds") else None
        agree = r.get("agree")
        bits = r.get("error_bits")
        agree_s = "n/a" if agree is None else ("exact" if bits == float("inf") else f"{'yes' if agree else 'NO'} ({_fmt(bits)})")
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items() if v is not None)
        lines.append(f"| {params} | {r.get('numerics')} | {_fmt(r.get('calls'))} | {_fmt(r.get('predicted_calls'))} "
                     f"| {_fmt(bound_val)} | {agree_s} | {r['verdict']} |")
    lines.append("")
    return "\n".join(lines)


def write_report(out: Path, quick: bool = False, console: Console | None = None) -> list[dict[str, Any]]:
    """Run the sweep, write the files, return the failing records."""
    console = console or Console()
    points = default_points(quick)
    records = []
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("checks", total=len(points))
        for claim, params, numerics, seed in points:
            progress.update(task, description=claim)
            records.append(run_point(claim, params, numerics, seed))
            progress.advance(task)
    from attnsim.verify.cli import jsonable

    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "checks.json", json.dumps(jsonable(records), indent=1))
    atomic_write(out / "checks.csv", records_csv(records))
    md = ["# attnsim report", "", f"{len(records)} checks, {sum(r['verdict'] == 'pass' for r in records)} passed.", ""]
    sections = report_sections()
    for paper in PAPERS:
        pr = load(paper)
        if not pr.claims:
            continue
        md += [f"## {pr.title}", "", f"_{pr.citation}_", ""]
        for claim in pr.claims:
            md.append(claim_section(claim, [r for r in records if r["claim"] == claim.id]))
        for section in sections.get(paper, []):
            md.append(section([r for r in records if r["claim"].startswith(paper + ".")], out, quick))
    failed = [r for r in records if r["verdict"] != "pass"]
    if failed:
        md += ["## Failing checks", ""] + [f"- `{r['claim']}` {r['params']} ({r.get('numerics')}): "
                                           + "; ".join(r["reasons"]) for r in failed] + [""]
    atomic_write(out / "report.md", "\n".join(md))
    for r in failed:
        console.print(f"[red]FAIL[/red] {r['claim']} {r['params']} {r.get('numerics')}: {'; '.join(r['reasons'])}")
    console.print(f"{len(records) - len(failed)}/{len(records)} checks passed; wrote {out.resolve()}/report.md, "
                  f"checks.csv, checks.json")
    return failed


def records_csv(records: list[dict[str, Any]]) -> str:
    import io

    buf = io.StringIO()
    cols = ["claim", "numerics", "seed", "params", "length_convention", "agree", "error_bits", "calls",
            "predicted_calls", "rounds", "verdict", "reasons"]
    w = csv.writer(buf)
    w.writerow(cols)
    for r in records:
        w.writerow([_fmt(r.get(c)) if c not in ("params", "reasons") else json.dumps(r.get(c)) for c in cols])
    return buf.getvalue()
