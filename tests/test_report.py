"""verify.report: every file is written, the HTML renders in headless Chromium, failures come last."""

from __future__ import annotations

import html
import io
import json
import re
import shutil
import subprocess

import matplotlib.pyplot as plt
import pytest
from rich.console import Console

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
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify({imgs, claims});
  document.body.appendChild(pre);
});
</script></body>"""


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_quick_report_files_plots_and_html(tmp_path, monkeypatch):
    """One quick report (one test, so that xdist does not build it twice), then everything in it.

    The sweep is limited to Lemma 3.1's quick grid so that this test's time does not grow with every
    paper's checkers (``attnsim report --quick`` runs them all); every claim still gets its section.
    """
    from attnsim.verify.report import build as report_mod
    from attnsim.verify.sweep import grid

    monkeypatch.setattr(report_mod, "grid", lambda quick: grid(["two_heads.lemma_3_1"], quick=quick))
    out = tmp_path / "rep"
    failed = write_report(out, quick=True, console=QUIET, executor="processes", workers=2, cache=False)
    assert failed == []
    for name in ("report.md", "report.html", "checks.csv", "checks.json"):
        assert (out / name).stat().st_size > 0
    md = (out / "report.md").read_text()
    for cid in all_claims():
        assert f"`{cid}`" in md, cid
    records = json.loads((out / "checks.json").read_text())
    assert len((out / "checks.csv").read_text().splitlines()) == len(records) + 1
    assert "\\toprule" in (out / "tables" / "two_heads.lemma_3_1.tex").read_text()

    pngs = sorted((out / "plots").glob("*.png"))
    assert {p.name for p in pngs} >= {"two_heads.lemma_3_1_counts.png", "two_heads.lemma_3_1_error.png"}
    for p in pngs:
        img = plt.imread(p)
        assert p.stat().st_size > 0 and img.shape[0] > 50 and img.shape[1] > 50 and img.std() > 0

    page = (out / "report.html").read_text()
    assert "<script" not in page and "http" not in re.sub(r"data:[^\"]+", "", page)  # self-contained
    if _chromium() is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it): HTML not rendered")
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", PROBE))
    p = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        "--virtual-time-budget=10000", probe.as_uri()], capture_output=True, text=True, timeout=90)
    m = re.search(r'<pre id="probe">(.*?)</pre>', p.stdout, re.S)
    assert m, p.stderr[-2000:]
    seen = json.loads(html.unescape(m.group(1)))
    assert {src for src, _, _ in seen["imgs"]} == {f"plots/{q.name}" for q in pngs}
    assert all(complete and width > 0 for _, complete, width in seen["imgs"]), seen["imgs"]
    assert set(seen["claims"]) == set(all_claims())


def test_broken_checker_fails_and_is_listed_last(tmp_path, monkeypatch):
    """A construction that disagrees with its reference: the report lists its claim last and fails."""
    def broken(ctx):
        return Measurement(agree=False, error_bits=1.0, counts={"calls": 99})

    chk = registry.Checker("two_heads.cor_3_2", broken, (registry.Param("N", int, 8, "n"),),
                           lambda quick: [{"N": 8}], ("exact",), "exact")
    registry.all_checkers()
    monkeypatch.setitem(registry._CHECKERS, "two_heads.cor_3_2", chk)
    monkeypatch.setattr("attnsim.verify.sweep.all_checkers",
                        lambda: {"two_heads.cor_3_2": chk})
    console = Console(file=io.StringIO(), width=200)
    failed = write_report(tmp_path, quick=True, console=console, executor="serial", cache=False)
    assert [r["claim"] for r in failed] == ["two_heads.cor_3_2"]
    md = (tmp_path / "report.md").read_text()
    assert md.strip().splitlines()[-1].startswith("- `two_heads.cor_3_2`")
    assert console.file.getvalue().strip().splitlines()[-1].startswith("FAIL two_heads.cor_3_2")


def test_markdown_converter_pieces(tmp_path):
    body = markdown_to_html("### Lemma — `two_heads.lemma_3_1`\n\n| a | b |\n|---|---|\n| 1 | pass |\n\n"
                            "- x `y`\n\n$$ n^2 $$\n\n![p](missing.png)\n", tmp_path)
    assert 'data-claim="two_heads.lemma_3_1"' in body and "<table>" in body and "<li>x <code>y</code></li>" in body
    assert '<div class="math"><code>n^2</code></div>' in body and '<span class="pass">pass</span>' in body

