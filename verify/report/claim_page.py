"""One claim's section of ``attnsim report``: statement, assumptions, the theory (bound, exact count, leading
constant, containment verdict, LaTeX, solved side conditions), a table of measured vs predicted vs bound per
check with agreement and verdict, its plots (:mod:`attnsim.verify.report.claim_plots`), its growth table and a
booktabs table ``tables/<claim>.tex``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnsim.theory.notation import number
from attnsim.verify.regime import outside_stated_range
from attnsim.verify.report.latex import tex_escape
from attnsim.verify.report.section_cache import cached_section
from attnsim.verify.report.sections import growth
from attnsim.verify.sweep import atomic_write


def _fmt(v: Any) -> str:
    """A number as it means something (:func:`attnsim.theory.notation.number`); nothing as a dash."""
    return number(v)


def _constant(b: dict[str, Any]) -> str:
    """What a measured/bound ratio is held against: the paper's constant, a frozen one, or none."""
    c = b.get("C")
    if c is None or b.get("constant") in (None, "none"):
        return ""
    return f"; C = {number(c)}, {'the paper' if b.get('constant') == 'paper' else 'frozen'}"


def _agreement(r: dict[str, Any]) -> str:
    agree, bits = r.get("agree"), r.get("error_bits")
    if agree is None:
        return "n/a"
    if bits in (float("inf"), "inf"):
        return "exact"
    return f"{'yes' if agree else 'NO'} ({number(bits, 'bits')})"


def _params(r: dict[str, Any], defaults: dict[str, Any] | None = None) -> str:
    """``name=value`` of the record's parameters; with ``defaults``, only those that differ from them."""
    defaults = defaults or {}
    return ", ".join(f"{k}={v}" for k, v in r.get("params", {}).items()
                     if v is not None and (k not in defaults or defaults[k] != v))


def claim_defaults(claim_id: str) -> dict[str, Any]:
    """The default parameters of the claim's checker ({} when it has none)."""
    from attnsim.verify.registry import all_checkers

    chk = all_checkers().get(claim_id)
    return {p.name: p.default for p in chk.params} if chk else {}


def _common(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Parameters every record shares (shown once above the table instead of in every row)."""
    if not records:
        return {}
    first = records[0].get("params", {})
    return {k: v for k, v in first.items() if all(r.get("params", {}).get(k, object()) == v for r in records)}


def _resources_measured(summary: dict[str, Any], records: list[dict[str, Any]]) -> list[str]:
    return [n for n in summary["resources"] if any(n in r.get("counts", {}) or n in r.get("predicted", {})
                                                   for r in records)]


def measured_table(summary: dict[str, Any], records: list[dict[str, Any]]) -> list[str]:
    """One row per check: per resource ``measured / predicted / bound value``.

    Parameters every check shares are listed once above the table; a row shows only what differs.
    """
    res = _resources_measured(summary, records)
    defaults = claim_defaults(summary["id"])
    shared = _common(records)
    common = _params({"params": shared}, defaults)
    lead = f"Every check below: `{common}`; other parameters" if common else "Parameters"
    lines = [f"{lead} at the checker's defaults (`attnsim check {summary['id']} --help`); a row lists only what "
             "differs.", ""]
    skip = {**defaults, **shared}
    head = ["params", "numerics", "seed", *[f"{n} (meas / pred / bound (ratio))" for n in res], "agreement", "verdict"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        cells = [_params(r, skip) or "—", str(r.get("numerics")), str(r.get("seed"))]
        for n in res:
            b = r.get("bounds", {}).get(n) or {}
            ratio = f" (×{number(b['ratio'])}{_constant(b)})" if b.get("ratio") is not None else ""
            unit = "bytes" if n.endswith("bytes") else None
            cells.append(f"{number(r.get('counts', {}).get(n), unit)} / {number(r.get('predicted', {}).get(n), unit)}"
                         f" / {number(b.get('value'), unit)}{ratio}")
        cells += [_agreement(r), shown_verdict(r)]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return lines


def theory_lines(summary: dict[str, Any]) -> list[str]:
    """A claim's theory as markdown: definitions, a table per resource in the plain-text notation of
    :mod:`attnsim.theory.notation` (``attnsim bounds --format md`` prints the same table), its LaTeX
    statements, and solved side conditions."""
    from attnsim.theory.notation import factors_text

    lines = []
    if summary["definitions_latex"]:
        lines += ["Definitions: " + ", ".join(f"${d}$" for d in summary["definitions_latex"]), ""]
    if summary["resources"]:
        lines += ["| resource | bound | exact count (≤: the proof's upper formula) | leading constant | verdict "
                  "| factors |", "|---|---|---|---|---|---|"]
        for name, t in summary["resources"].items():
            text = {**t["text"], **({"exact": "≤ " + t["text"]["exact"]} if t.get("of") == "upper" else {})}
            cells = [text.get(k, "—").replace("|", "/") for k in ("bound", "exact", "leading_constant")]
            lines.append(f"| {name} | {cells[0]} | {cells[1]} | {cells[2]} | {t['verdict']} "
                         f"| {factors_text(t['factors'], summary['paper'])} |")
        lines.append("")
        lines += [f"$$ {t['latex']['statement']} $$" for t in summary["resources"].values()
                  if "statement" in t["latex"]]
        lines.append("")
    for cond in summary.get("conditions", []):
        lines.append(f"- side condition `{cond['source']}`, solved: ${cond['latex']}$")
    if "minimum" in summary:
        lines += [f"- all together: ${summary['minimum']['latex']}$", ""]
    return lines


def claim_section(claim: Any, records: list[dict[str, Any]], out: Path | None = None) -> str:
    """The markdown of one claim; with ``out``, its plots and LaTeX table are written there too."""
    from attnsim.theory.catalog import claim_summary  # sympy and matplotlib only when a section is computed
    from attnsim.verify.report.claim_plots import counts_plot, error_plot

    summary = claim_summary(claim)
    lines = [f"### {claim.label} — `{claim.id}`", "", claim.statement, ""]
    if claim.assumptions:
        lines += ["**Assumptions:** " + "; ".join(claim.assumptions), ""]
    lines += theory_lines(summary)
    if not records:
        lines += ["_Not run by the default sweep" + ("" if claim.implemented else " (no checker yet)") + "._", ""]
        return "\n".join(lines)
    failed = [r for r in records if r["verdict"] != "pass"]
    agree = [r for r in records if r.get("agree") is not None]
    lines += measured_table(summary, records) + [""]
    lines += [f"**Agreement:** {sum(bool(r['agree']) for r in agree)}/{len(agree)} checks agree with the reference. "
              f"**Verdict:** {'fail' if failed else 'pass'} ({len(records) - len(failed)}/{len(records)} checks "
              "pass).", ""]
    if out is not None:
        if counts_plot(summary, records, out / "plots" / f"{claim.id}_counts.png"):
            lines += [f"![{claim.id} counts](plots/{claim.id}_counts.png)", ""]
        if error_plot(summary, records, out / "plots" / f"{claim.id}_error.png"):
            lines += [f"![{claim.id} error](plots/{claim.id}_error.png)", ""]
        atomic_write(out / "tables" / f"{claim.id}.tex", latex_table(summary, records))
    return "\n".join(lines)


def claim_sections(items: list[tuple[str, bool, str, list[dict[str, Any]], bool, list[Any]]],
                   _cache: str | None = None) -> list[tuple[str, str]]:
    """A task of the sweep's executors: (claim id, markdown) of each claim section (cached in OUT/.cache), its
    growth table and plot after it (from the growth verdicts given)."""
    from attnsim.paper_refs import get as get_claim

    done = []
    for out, quick, claim_id, records, enabled, judged in items:
        claim = get_claim(claim_id)
        md = cached_section(Path(out), claim_id, quick, records, lambda: claim_section(claim, records, Path(out)),
                            enabled=enabled)
        done.append((claim_id, "\n".join([md, growth.claim_growth(claim_id, {claim_id: judged}, Path(out))])))
    return done


def latex_table(summary: dict[str, Any], records: list[dict[str, Any]]) -> str:
    """A booktabs table of the claim's checks (needs \\usepackage{booktabs})."""
    res = _resources_measured(summary, records)
    cols = ["params", "numerics", *[f"{n}: meas./pred./bound" for n in res], "agreement", "verdict"]
    rows = [" & ".join(tex_escape(c) for c in cols) + r" \\"]
    for r in records:
        cells = [_params(r), str(r.get("numerics"))]
        for n in res:
            b = (r.get("bounds", {}).get(n) or {}).get("value")
            cells.append(f"{_fmt(r.get('counts', {}).get(n))}/{_fmt(r.get('predicted', {}).get(n))}/{_fmt(b)}")
        cells += [_agreement(r), r["verdict"]]
        rows.append(" & ".join(tex_escape(c) for c in cells) + r" \\")
    return "\n".join([f"% {summary['label']} ({summary['id']}), from attnsim report",
                      r"\begin{tabular}{" + "l" * len(cols) + "}", r"\toprule", rows[0], r"\midrule", *rows[1:],
                      r"\bottomrule", r"\end{tabular}", ""])


def shown_verdict(r: dict[str, Any]) -> str:
    """A record's verdict as the report shows it: a pass says what kind of evidence it is, unless independent, and
    whether it ran outside the statement's range (partial)."""
    ev = r.get("evidence", "independent")
    if r["verdict"] != "pass":
        return r["verdict"]
    notes = ([] if ev == "independent" else [ev]) + (["partial: outside the stated range"]
                                                     if outside_stated_range(r) else [])
    return "pass" + (f" ({', '.join(notes)})" if notes else "")
