"""verify.report: every file is written, the HTML renders in headless Chromium, failures come last."""

from __future__ import annotations

import dataclasses
import html
import io
import json
import re
import shutil
import subprocess

import matplotlib.pyplot as plt
import pytest
from limits import limit
from rich.console import Console
from test_report_links import assert_links_stay_inside

from attnsim.paper_refs import all_claims
from attnsim.verify import registry
from attnsim.verify.registry import Measurement
from attnsim.verify.report.build import write_report
from attnsim.verify.report.html import markdown_to_html

QUIET = Console(file=io.StringIO(), width=200)
PROBE = """<script>
window.addEventListener('load', () => {
  const imgs = [...document.images].map(i => [i.getAttribute('data-src'), i.complete, i.naturalWidth]);
  const claims = [...document.querySelectorAll('[data-claim]')].map(e => e.dataset.claim);
  const maths = [...document.querySelectorAll('math')].map(m => {
    const r = m.getBoundingClientRect();
    return [m.textContent.slice(0, 40), r.width, r.height];
  });
  const links = [...document.querySelectorAll('a[href^="#"]')].map(a => {
    const id = decodeURIComponent(a.getAttribute('href').slice(1));
    return [id, document.getElementById(id) !== null, a.closest('nav.toc') !== null];
  });
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify({imgs, claims, maths, links});
  document.body.appendChild(pre);
});
</script></body>"""


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_quick_report_files_plots_and_html(tmp_path, monkeypatch):
    """One quick report (one test, so that xdist does not build it twice), then everything in it.

    The report is one paper's, its sweep Lemma 3.1's quick grid, its proofs Lemma 3.1's obligations and its findings
    only those that its records carry (tests/test_report_verdicts.py tests the finders), so that this test's time
    does not grow with every paper's checkers, theory and proofs (``attnsim report --quick`` runs them all; ANNA's
    symbolic theory alone took half this test's time, the paper's other proofs a third of what was left); every
    claim of the paper still gets its section.
    """
    from attnsim.verify.findings import carried
    from attnsim.verify.prove import status
    from attnsim.verify.report import build as report_mod
    from attnsim.verify.sweep import grid

    monkeypatch.setattr(report_mod, "grid", lambda claims, quick: grid(["two_heads.lemma_3_1"], quick=quick))
    monkeypatch.setattr(status, "CLAIMS", ["two_heads.lemma_3_1"])
    # the findings the records carry; the finders that run checks of their own took 15 of this test's 39 CPU s
    monkeypatch.setattr(report_mod, "findings", carried)
    out = tmp_path / "rep"
    failed = write_report(out, quick=True, console=QUIET, executor="processes", workers=2, cache=False,
                          paper="two_heads")
    assert failed == []
    for name in ("report.md", "report.html", "checks.csv", "checks.json"):
        assert (out / name).stat().st_size > 0
    md = (out / "report.md").read_text()
    mine = [cid for cid in all_claims() if cid.startswith("two_heads.")]
    assert mine
    for cid in mine:
        assert f"`{cid}`" in md, cid
    records = json.loads((out / "checks.json").read_text())
    assert len((out / "checks.csv").read_text().splitlines()) == len(records) + 1
    assert "\\toprule" in (out / "tables" / "two_heads.lemma_3_1.tex").read_text()
    timings = json.loads((out / "timings.json").read_text())
    assert {"symbolic theory", "checks and growth sweeps", "sections"} <= {t["phase"] for t in timings}
    assert any(t["job"].startswith("two_heads.lemma_3_1") and t["phase"] == "checks and growth sweeps"
               for t in timings)
    assert all(t["seconds"] >= 0 and t["cpu"] >= 0 for t in timings)

    pngs = sorted((out / "plots").glob("*.png"))
    assert {p.name for p in pngs} >= {"two_heads.lemma_3_1_counts.png", "two_heads.lemma_3_1_error.png"}
    for p in pngs:
        img = plt.imread(p)
        assert p.stat().st_size > 0 and img.shape[0] > 50 and img.shape[1] > 50 and img.std() > 0

    assert assert_links_stay_inside(out) > 0  # the docs pages cited are copied in; no link leaves the folder
    page = (out / "report.html").read_text()
    assert "<script" not in page and "http" not in re.sub(r"data:[^\"]+", "", page)  # self-contained
    if _chromium() is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it): HTML not rendered")
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", PROBE))
    p = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        "--virtual-time-budget=10000", probe.as_uri()], capture_output=True, text=True,
                       timeout=limit(90))
    m = re.search(r'<pre id="probe">(.*?)</pre>', p.stdout, re.S)
    assert m, p.stderr[-2000:]
    seen = json.loads(html.unescape(m.group(1)))
    assert {src for src, _, _ in seen["imgs"]} == {f"plots/{q.name}" for q in pngs}
    assert all(complete and width > 0 for _, complete, width in seen["imgs"]), seen["imgs"]
    assert set(seen["claims"]) == set(mine)
    # MathML is laid out by the browser itself: every formula has a size (no network, no script)
    assert len(seen["maths"]) > 50 and all(w > 0 and h > 0 for _, w, h in seen["maths"]), seen["maths"][:5]
    # every link of the table of contents and of the summary lands on a heading
    toc = [ident for ident, _, in_toc in seen["links"] if in_toc]
    broken = [ident for ident, ok, _ in seen["links"] if not ok]
    assert len(toc) > len(mine) and not broken, broken
    assert "two_heads.lemma_3_1" in [ident for ident, _, in_toc in seen["links"] if not in_toc]  # the summary


def test_broken_checker_fails_and_is_listed_last(tmp_path, monkeypatch):
    """A construction that disagrees with its reference: the report lists its claim last and fails."""
    def broken(ctx):
        return Measurement(agree=False, error_bits=1.0, counts={"calls": 99}, evidence="independent", reference="test")

    chk = registry.Checker("two_heads.cor_3_2", broken, (registry.Param("N", int, 8, "n"),),
                           lambda quick: [{"N": 8}], ("exact",), "exact")
    registry.all_checkers()
    monkeypatch.setitem(registry._CHECKERS, "two_heads.cor_3_2", chk)
    monkeypatch.setattr("attnsim.verify.sweep.all_checkers",
                        lambda: {"two_heads.cor_3_2": chk})
    # the papers cut down to this claim: no other claim's section (their theory, plots) is built, nor the papers'
    # topic sections, findings or proofs (30, 15 and 13 of this test's 53 CPU s)
    from attnsim.verify.prove import status
    from attnsim.verify.report import build as report_mod
    from attnsim.verify.report import section_tasks

    monkeypatch.setattr(section_tasks, "paper_sections", lambda paper: [])
    monkeypatch.setattr(report_mod, "paper_sections", lambda paper: [])
    monkeypatch.setattr(report_mod, "findings", lambda paper, records: [])
    monkeypatch.setattr(status, "CLAIMS", [])

    load = report_mod.load
    monkeypatch.setattr(report_mod, "load", lambda paper: dataclasses.replace(
        load(paper), claims=tuple(c for c in load(paper).claims if c.id == "two_heads.cor_3_2")))
    console = Console(file=io.StringIO(), width=200)
    failed = write_report(tmp_path, quick=True, console=console, executor="serial", cache=False)
    assert {r["claim"] for r in failed} == {"two_heads.cor_3_2"}  # its check, and its growth rows (its one point fails)
    assert failed[0]["params"] == {"N": 8} and any("failing points" in r["reasons"][0] for r in failed[1:])
    md = (tmp_path / "report.md").read_text()
    assert md.strip().splitlines()[-1].startswith("- `two_heads.cor_3_2`")
    assert console.file.getvalue().strip().splitlines()[-1].startswith("FAIL two_heads.cor_3_2")
    # the summary counts the failing growth rows too, not only the checks
    assert re.search(r"0/1 checks passed; [1-9]\d* growth rows failed[;(]", console.file.getvalue())


def test_markdown_converter_pieces(tmp_path):
    body = markdown_to_html("# Report\n\n## Paper\n\n### Lemma — `two_heads.lemma_3_1`\n\n| a | b |\n|---|---|\n"
                            "| $n^2$ | pass |\n\n- x `y` and `$not math$`\n\n$$ n^2 $$\n\n![p](missing.png)\n\n"
                            "## Paper\n", tmp_path, toc=True)
    assert 'data-claim="two_heads.lemma_3_1"' in body and 'id="two_heads.lemma_3_1"' in body
    assert "<table>" in body and "<li>x <code>y</code> and <code>$not math$</code></li>" in body
    assert '<math display="block">' in body and "<msup><mi>n</mi><mn>2</mn></msup>" in body
    assert '<td><math display="inline">' in body and '<span class="pass">pass</span>' in body
    assert 'id="paper"' in body and 'id="paper-2"' in body  # one id per heading, even when the text repeats
    assert '<nav class="toc"' in body and 'href="#two_heads.lemma_3_1"' in body
    assert body.index("</h1>") < body.index("<nav")



def test_tables_show_bounds_in_one_notation_and_only_parameters_that_differ():
    import math

    from attnsim.paper_refs import get as get_claim
    from attnsim.theory.catalog import claim_summary
    from attnsim.verify.report.build import summary_table
    from attnsim.verify.report.claim_page import claim_defaults, measured_table, theory_lines

    summary = claim_summary(get_claim("two_heads.lemma_3_1"))
    theory = "\n".join(theory_lines(summary))
    assert "**" not in theory and "| calls | O(n²) | 2·n² (paper scheme); n² (fused scheme) |" in theory
    assert r"O\left(n^{2}\right)" in theory and "fused" not in theory.split("$$")[1].replace("fused scheme", "")
    defaults = claim_defaults("two_heads.lemma_3_1")
    base = {"numerics": "exact", "seed": 0, "counts": {"calls": 1}, "predicted": {"calls": 1}, "bounds": {},
            "verdict": "pass", "agree": True, "error_bits": math.inf, "claim": "two_heads.lemma_3_1"}
    records = [dict(base, params=dict(defaults, N=16, M=4)),
               dict(base, params=dict(defaults, N=32, M=4, scheme="fused"))]
    table = measured_table(summary, records)
    assert "`M=4`" in table[0]  # shared by every row: said once
    rows = [line.split(" | ")[0] for line in table if line.startswith("| N=")]
    assert rows == ["| N=16", "| N=32, scheme=fused"]
    assert "| [Lemma 3.1](#two_heads.lemma_3_1) | `two_heads.lemma_3_1` |" in "\n".join(summary_table(records))


def test_a_section_whose_work_a_guard_refuses_is_listed_not_fatal(tmp_path, monkeypatch):
    """A topic section whose work is over a limit (here: a guard's memory refusal) says so in its place; the
    report is written, counts it in the summary, fails, and caches nothing for it (a rerun computes it)."""
    from attnsim.verify.prove import status
    from attnsim.verify.registry import UsageError
    from attnsim.verify.report import build as report_mod
    from attnsim.verify.report import section_tasks
    from attnsim.verify.sweep import grid

    def greedy(records, out, quick):
        raise UsageError("this run would need about 16.0 GiB; the limit is 1.0 GiB (--max-memory changes it)",
                         param="N")

    monkeypatch.setattr(section_tasks, "paper_sections", lambda paper: [greedy])
    monkeypatch.setattr(report_mod, "paper_sections", lambda paper: [greedy])
    monkeypatch.setattr(report_mod, "findings", lambda paper, records: [])  # nothing else of the page is computed
    monkeypatch.setattr(status, "CLAIMS", [])
    monkeypatch.setattr(report_mod, "grid", lambda claims, quick: grid(["two_heads.lemma_3_1"], quick=quick)[:1])
    load = report_mod.load
    monkeypatch.setattr(report_mod, "load", lambda paper: dataclasses.replace(
        load(paper), claims=tuple(c for c in load(paper).claims if c.id == "two_heads.lemma_3_1")))
    console = Console(file=io.StringIO(), width=200)
    failed = write_report(tmp_path, quick=True, console=console, executor="serial", teeth=False, paper="two_heads")
    assert [r["claim"] for r in failed] == ["section test_report.test_a_section_whose_work_a_guard_refuses_is_listed_"
                                            "not_fatal.<locals>.greedy"]
    md = (tmp_path / "report.md").read_text()
    # the report is the library's page, not the command line's: the parameter is named as the API names it
    assert "**Section not computed:** N: this run would need about 16.0 GiB" in md
    assert "1 report sections not computed" in console.file.getvalue()
    cached = list((tmp_path / ".cache" / "sections").rglob("*")) if (tmp_path / ".cache" / "sections").exists() else []
    assert not any("greedy" in p.name for p in cached)
