"""``attnsim report``: run every registered claim's default sweep and write the evidence into one folder.

- ``report.md``: a front page, then per paper and claim its section
  (:mod:`attnsim.verify.report.claim_page`: statement, theory, checks, plots); then each paper's own
  ``report_section`` material; failing checks listed last;
- ``report.html``: the same page, self-contained (plots inlined as base64);
- ``checks.csv``, ``checks.json``: one row per check; ``tables/<claim>.tex`` (booktabs);
  ``plots/*.png`` (``attnsim.verify.report.claim_plots`` and the sections, in the style of
  ``attnsim.verify.report.plots``); ``docs/``: the documentation pages the report links, copied so that every
  link is relative to the folder (``attnsim.verify.report.doc_links``).

The claims come from ``attnsim.paper_refs`` and the checks from ``attnsim.verify.registry``, so new
claims and checkers appear without changes here. The theory, the sweep (``attnsim.verify.sweep``: executor,
workers, cache), the broken variants, the proofs and the sections run as one graph of overlapping jobs
(``attnsim.verify.report.jobs``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from attnsim.paper_refs import load, papers
from attnsim.verify.cache import SECRET_NOTES, SET_ASIDE
from attnsim.verify.executors import reachable
from attnsim.verify.findings import findings
from attnsim.verify.guards import check_workers
from attnsim.verify.probes import probe_failures, probe_pass
from attnsim.verify.probes.page import markdown as probe_markdown
from attnsim.verify.progress import Phases, cpu_seconds
from attnsim.verify.records import dumps as dumps_records
from attnsim.verify.records import split_varying
from attnsim.verify.registry import EVIDENCE_KINDS, ResumableError, all_checkers
from attnsim.verify.report.doc_links import copy_cited_docs
from attnsim.verify.report.front import front_page
from attnsim.verify.report.html import html_page
from attnsim.verify.report.jobs import ReportJobs
from attnsim.verify.report.not_tight import not_tight_lines
from attnsim.verify.report.schedule import Graph
from attnsim.verify.report.scope import claim_folder, sweep_line
from attnsim.verify.report.section_cache import cached_section
from attnsim.verify.report.section_tasks import NOT_COMPUTED, run_topic, section_name, topic_jobs
from attnsim.verify.report.sections import growth, paper_sections
from attnsim.verify.report.verdicts import claim_verdicts, failing_list, verdict_table
from attnsim.verify.sweep import Point, atomic_write, code_version, grid
from attnsim.verify.sweep import run_point as _run_point
from attnsim.verify.teeth import assemble as assemble_teeth
from attnsim.verify.teeth import load as load_teeth
from attnsim.verify.teeth import plan as plan_teeth
from attnsim.verify.teeth import save as save_teeth

__all__ = ["write_report", "run_point", "atomic_write", "records_csv"]

SLOWEST = 3
"""How many of the slowest report sections the closing summary names with their times."""

CSV_COLUMNS = ("claim", "paper", "numerics", "seed", "params", "length_convention", "agree", "error_bits", "calls",
               "predicted_calls", "rounds", "counts", "predicted", "verdict", "reasons")


def run_point(claim: str, params: dict[str, Any], numerics: str | None, seed: int) -> dict[str, Any]:
    """One check; a bad grid point becomes a failing record with its reason, not a crash."""
    return _run_point(Point(claim, params, numerics, seed))


def _csv_cell(v: Any) -> str:
    return "" if v is None else "inf" if v == float("inf") else str(v)


def evidence_counts(records: list[dict[str, Any]]) -> str:
    """Passing checks counted by the kind of evidence they rest on."""
    kinds = {k: sum(r["verdict"] == "pass" and r.get("evidence", "independent") == k for r in records)
             for k in EVIDENCE_KINDS}
    unmeasured = sum(b.get("measured") is None for r in records for b in (r.get("bounds") or {}).values())
    return (f"Passes by evidence: {kinds['independent']} independent (compared with a reference computed another "
            f"way), {kinds['self-consistency']} self-consistency (our code against our own formula), "
            f"{kinds['sanity']} sanity (a necessary condition any answer meets). Bounds without a measurement: "
            f"{unmeasured}.")


def summary_table(records: list[dict[str, Any]], teeth: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """The checks table of ``records`` alone (:func:`attnsim.verify.report.verdicts.verdict_table`)."""
    return verdict_table(claim_verdicts(records, teeth))


def records_csv(records: list[dict[str, Any]]) -> str:
    """The records as CSV with the fixed columns of ``CSV_COLUMNS``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in records:
        w.writerow([json.dumps(r.get(c), sort_keys=True) if c in ("params", "reasons", "counts", "predicted")
                    else _csv_cell(r.get(c)) for c in CSV_COLUMNS])
    return buf.getvalue()


def _teeth_key(claims: list[str], quick: bool) -> str:
    return hashlib.sha256(f"{code_version()} {quick} {' '.join(claims)}".encode()).hexdigest()[:16]


def write_report(out: Path, quick: bool = False, console: Console | None = None, *, executor: str = "processes",
                 workers: int | None = None, scheduler: str | None = None, cache: Path | None | bool = True,
                 teeth: bool = True, summary: Console | None = None,
                 paper: str | None = None, audit: int = 0, force: bool = False) -> list[dict[str, Any]]:
    """Run the sweep, write the files, return the failing records (a claim whose broken variant passed
    adds a failing record of its own).

    ``cache=True`` keeps records under ``out/.cache`` (a rerun recomputes nothing that finished);
    a path puts them there; ``False``/``None`` computes everything afresh. ``teeth``: run every claim's
    broken variants (one per claim when ``quick``), cached per code version in ``out/.cache``. Progress
    goes to ``console``, the closing summary to ``summary`` (default: ``console``). ``paper``: only that
    paper's claims and sections (default: every paper). ``audit``: that many cached records, drawn at random,
    are computed again; one that differs from its cache entry fails the report. A folder that holds a report of
    another scope (other papers) is refused unless ``force`` (:func:`attnsim.verify.report.scope.claim_folder`).

    The theory, the checks, the broken variants, the proofs and the sections run as one graph of jobs
    (:mod:`attnsim.verify.report.schedule`): each starts as soon as what it reads exists, so the phases
    overlap; each phase's wall and CPU time is printed as it ends, then their total.
    """
    console = console or Console()
    summary = summary or console
    began, cpu_began = time.perf_counter(), cpu_seconds()
    phase = Phases(console)
    out = Path(out)
    aside_before = len(SET_ASIDE)
    cache_dir = out / ".cache" if cache is True else (Path(cache) if cache else None)
    chosen = [paper] if paper else list(papers())
    if scheduler and "://" in scheduler:
        reachable(scheduler)  # before anything is written: an unreachable scheduler is one line, nothing else
    claim_folder(out, chosen, paper, force)
    mine = [c for c in all_checkers() if c.split(".")[0] in chosen]
    points = grid(None, quick=quick) if paper is None else grid(mine, quick=quick) if mine else []
    claims = [c for c in dict.fromkeys(p.claim for p in points) if c in all_checkers()]
    grow = growth.points_of(claims, quick)  # in the checks' sweep: a point of both is computed once
    loaded = [load(p) for p in chosen]
    ids = [c.id for pr in loaded for c in pr.claims]
    graph = Graph(console, executor, check_workers(workers), scheduler)
    jobs = ReportJobs(graph, out, quick, points, grow, claims, cache_dir, audit)
    jobs.theory(ids)
    jobs.checks()
    teeth_key = _teeth_key(claims, quick)
    teeth_path = out / ".cache" / f"teeth-{teeth_key}.json"
    bitten = load_teeth(teeth_path, teeth_key) if teeth else None
    twins_planned = plan_teeth(claims, quick) if teeth and bitten is None else {}
    jobs.teeth(twins_planned)
    jobs.proofs(ids)
    shown = [pr for pr in loaded if pr.claims or any(p.claim.startswith(pr.id + ".") for p in points)]
    jobs.sections(shown, paper_sections)
    out.mkdir(parents=True, exist_ok=True)
    try:
        graph.run()
    except ResumableError as exc:
        raise jobs.swept.resumable(exc) from None
    swept, parts, slow = jobs.swept, jobs.parts, jobs.slow
    n_points = len(points)
    result = swept.result()
    records = result.records[:n_points]
    split = [split_varying(r) for r in records]  # what varies run to run goes beside, not into, checks.*
    atomic_write(out / "checks.json", dumps_records([det for det, _ in split], indent=1))
    atomic_write(out / "checks.csv", records_csv([det for det, _ in split]))
    atomic_write(out / "timings.json", json.dumps(graph.timings, indent=1))  # where the time went, job by job
    atomic_write(out / "measurements.json", dumps_records(
        [{k: r[k] for k in ("claim", "params", "numerics", "seed")} | {"measured": m}
         for r, (_, m) in zip(records, split) if m], indent=1))
    if teeth and bitten is None:
        assembled = assemble_teeth(claims, twins_planned, jobs.twin_results)
        save_teeth(assembled, teeth_path, teeth_key, quick)
        bitten = {c.claim: c.as_dict() for c in assembled}
    with phase("referee and theory probes"):
        probes = probe_pass()  # what every verdict rests on: a failing probe fails the report
    failed_probes = [{"claim": f"probe {name}", "params": {}, "numerics": None, "verdict": "fail",
                      "reasons": [why]} for name, why in probe_failures(probes)]
    grown = growth.judged(claims, result.records[n_points:], quick)
    ungrown = growth.failing_rows(grown)  # a resource that is not within fails its claim
    ungrown += growth.failing_points(result.records[n_points:], records)  # so does a point that failed
    verdicts = claim_verdicts(records, bitten, ungrown)  # the front page, the checks table, the failing list
    failed = failing_list(verdicts)
    toothless = [v for v in verdicts.values() if any(r.get("source") == "teeth" for r in v.failures)]
    n_checks_failed = sum(v.checks - v.passed for v in verdicts.values())
    aside = (f" {result.set_aside} cache entries did not verify: set aside as *.bad and computed again."
             if result.set_aside else "")
    aside += (f" Spot audit: {result.audited} cached records computed again, {len(result.audit_failures)} differed."
              if result.audited else "")
    failed += result.audit_failures
    audit_failed = len(result.audit_failures)
    with phase("sections run alone"):
        for _, paper_id, index, inputs in topic_jobs([pr.id for pr in shown], out, quick, records, jobs.enabled,
                                                     where="alone"):
            start = time.perf_counter()
            parts[(paper_id, index)] = run_topic(str(out), quick, paper_id, index, inputs["records"], jobs.enabled)
            slow[section_name(paper_sections(paper_id)[index])] = time.perf_counter() - start
    found = {pr.id: findings(pr.id, records) for pr in shown}
    atomic_write(out / "findings.json", dumps_records([f.as_dict() for fs in found.values() for f in fs], indent=1))
    md = ["# attnsim report", "", sweep_line(quick, records, len(grow), chosen, paper), "",
          *front_page(loaded, records, set(all_checkers()), verdicts, jobs.proved, grown, found),
          *not_tight_lines(records),
          "## Checks", "",
          f"{len(records)} checks, {len(grow)} points of growth sweeps ({result.computed} computed, "
          f"{result.cached} from the cache; a point of both is computed once), {len(records) - n_checks_failed} "
          "passed. "
          f"Sweep: {'quick' if quick else 'default'}, executor {executor}."
          + aside, "", evidence_counts(records), "", growth.verdict_line(grown), ""]
    if bitten is not None:
        twins = sum(t["run"] for t in bitten.values())
        md += [f"Broken variants ({'one per claim' if quick else 'all'}, `attnsim teeth`): "
               f"{sum(t['caught'] for t in bitten.values())}/{twins} caught, "
               f"{sum(t.get('refused', 0) for t in bitten.values())} refused; claims without teeth: "
               f"{', '.join(f'`{t}`' for t in sorted(v.claim for v in toothless)) or 'none'}.", ""]
    md += verdict_table(verdicts)
    md += probe_markdown(probes)
    unsectioned = {t.split("\n", 1)[0].removeprefix("### "): t.split(f"**{NOT_COMPUTED}:** ", 1)[1].strip()
                   for key, t in parts.items() if isinstance(key, tuple) and f"**{NOT_COMPUTED}:**" in t}
    failed += [{"claim": f"section {name}", "params": {}, "numerics": None, "verdict": "fail",
                "reasons": [why]} for name, why in unsectioned.items()]
    failed += failed_probes
    for pr in shown:
        md += [f"## {pr.title}", "", f"_{pr.citation}_", "", *[parts[c.id] for c in pr.claims],
               *[parts[(pr.id, i)] for i in range(len(paper_sections(pr.id)))]]
    if failed:
        md += ["## Failing checks", ""]
        md += [f"- `{r['claim']}` {r['params']} ({r.get('numerics')}): " + "; ".join(r["reasons"]) for r in failed]
        md.append("")
    text = "\n".join(md)
    atomic_write(out / "report.md", text)
    copy_cited_docs(out, text)
    with phase("html"):
        html = cached_section(out, "report.html", quick, [{"markdown": text}], lambda: html_page(text, out),
                              enabled=cache_dir is not None)
    atomic_write(out / "report.html", html)
    wall, cpu = time.perf_counter() - began, cpu_seconds() - cpu_began
    console.print(f"phase total (the phases overlap): {wall:.1f} s (CPU {cpu:.1f} s)", markup=False, highlight=False,
                  soft_wrap=True)
    beyond = "".join(f"; {n} {what}" for n, what in ((len(ungrown), "growth rows failed"),
                                                     (len(failed_probes), "referee or theory probes failed"),
                                                     (len(toothless), "claims' broken-variant runs failed"),
                                                     (len(unsectioned), "report sections not computed"),
                                                     (audit_failed, "cached records differed when computed again"))
                     if n)
    summary.print(f"{len(records) - n_checks_failed}"
                  f"/{len(records)} checks passed"
                  f"{beyond} ({result.computed} computed, "
                  f"{result.cached} cached); wrote {out.resolve()}/report.md, report.html, checks.csv, checks.json, "
                  f"tables/, plots/, docs/")
    top = sorted(slow.items(), key=lambda kv: -kv[1])[:SLOWEST]
    summary.print(f"phases: {', '.join(x for x in (graph.line(), phase.line()) if x)}; total {wall:.0f} s, CPU "
                  f"{cpu:.0f} s; slowest report sections: "
                  + ", ".join(f"{name} {s:.0f} s" for name, s in top), soft_wrap=True)
    aside = len(SET_ASIDE) - aside_before  # records, sections and teeth passes
    if aside:
        summary.print(f"{aside} cache entries set aside (renamed *.bad) and recomputed")
    for note in dict.fromkeys(SECRET_NOTES):
        summary.print(note, markup=False, highlight=False)
    for claim in dict.fromkeys(r["claim"] for r in failed):
        bad = [r for r in failed if r["claim"] == claim]
        summary.print(f"[red]FAIL[/red] {claim}: {len(bad)} check(s); first: {bad[0]['params']} "
                      f"{bad[0].get('numerics')}: {'; '.join(bad[0]['reasons'])}", soft_wrap=True)
    return failed
