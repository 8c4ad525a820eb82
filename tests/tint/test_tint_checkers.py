"""The TinT checkers: registered, backed by paper_refs claims, and passing on their quick grids."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from shared_once import shared_record

from attnsim.paper_refs import load
from attnsim.verify.registry import all_checkers
from attnsim.verify.report.sections import SECTIONS

ROOT = Path(__file__).resolve().parents[2]
TINT = {cid: c for cid, c in all_checkers().items() if cid.startswith("tint.")}
SLOW = {"tint.sgd_step"}  # exact end to end: covered by test_end_to_end


def test_every_checker_has_an_implemented_claim_and_vice_versa() -> None:
    claims = {c.id: c for c in load("tint").claims}
    assert set(TINT) <= set(claims)
    assert {cid for cid, c in claims.items() if c.implemented} == set(TINT)


@pytest.mark.parametrize("cid", sorted(set(TINT) - SLOW))
def test_quick_grid_passes(cid: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The first quick point passes and counts every resource paper_refs names. Its record is the one
    tests/test_claims_evidence.py and the twins' baselines read (computed once per run where the points meet)."""
    chk = TINT[cid]
    point = dict(chk.grid(True)[0])
    point.pop("seed", None)
    numerics = point.pop("numerics", None) or ("float64" if "float64" in chk.numerics else None)
    record = shared_record(tmp_path_factory, cid, point, numerics, 0)
    if record["extra"].get("partial"):  # only without torch: the record says so and does not pass
        assert record["verdict"] != "pass" and record["extra"]["partial"] in record["reasons"]
        pytest.skip("torch is not installed: the torch-referenced record is partial")
    assert record["verdict"] == "pass" and not record["reasons"], (cid, record["reasons"])
    resources = next(c for c in load("tint").claims if c.id == cid).resources
    assert set(resources) <= set(record["counts"]) or not record["counts"]


def test_report_section_writes_the_latex_size_table(tmp_path: Path) -> None:
    text = "".join(fn([], tmp_path, True) for fn in SECTIONS["tint"])
    assert "opt-125m" in text and (tmp_path / "tables" / "tint_size.tex").exists()


def test_sim_never_imports_theory_or_verify() -> None:
    for path in (ROOT / "sim" / "tint").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.startswith(("attnsim.theory", "attnsim.verify")) for n in names), path.name
