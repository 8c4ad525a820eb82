"""The TinT checkers: registered, backed by paper_refs claims, and passing on their quick grids."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from attnsim.paper_refs import load
from attnsim.verify.registry import CheckContext, all_checkers
from attnsim.verify.report.sections import SECTIONS

ROOT = Path(__file__).resolve().parents[2]
TINT = {cid: c for cid, c in all_checkers().items() if cid.startswith("tint.")}
SLOW = {"tint.sgd_step"}  # exact end to end: covered by test_end_to_end


def test_every_checker_has_an_implemented_claim_and_vice_versa() -> None:
    claims = {c.id: c for c in load("tint").claims}
    assert set(TINT) <= set(claims)
    assert {cid for cid, c in claims.items() if c.implemented} == set(TINT)


@pytest.mark.parametrize("cid", sorted(set(TINT) - SLOW))
def test_quick_grid_passes(cid: str) -> None:
    chk = TINT[cid]
    numerics = "float64" if "float64" in chk.numerics else chk.default_numerics
    for given in chk.grid(True)[:1]:
        m = chk.fn(CheckContext(cid, chk.resolve(given), numerics, 0))
        if m.extra.get("partial"):  # only without torch: the record says so and does not pass
            assert m.agree is False and m.extra["partial"] in m.reasons
            pytest.skip("torch is not installed: the torch-referenced record is partial")
        assert m.agree in (True, None) and not m.reasons, (cid, m.reasons)
        size = load("tint").claims
        resources = next(c for c in size if c.id == cid).resources
        assert set(resources) <= set(m.counts) or not m.counts


def test_report_section_writes_the_latex_size_table(tmp_path: Path) -> None:
    text = "".join(fn([], tmp_path, True) for fn in SECTIONS["tint"])
    assert "opt-125m" in text and (tmp_path / "tables" / "tint_size.tex").exists()


def test_sim_never_imports_theory_or_verify() -> None:
    for path in (ROOT / "sim" / "tint").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.startswith(("attnsim.theory", "attnsim.verify")) for n in names), path.name
