"""The evidence column of ``attnsim claims``: what each checker declares, held to what its records say, and the count
of independent rows beside the count measured at an earlier commit."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from shared_once import shared_record

from attnsim.paper_refs import load
from attnsim.verify import evidence_tally
from attnsim.verify.check import run_check
from attnsim.verify.cli.claims import claim_rows, evidence_cell
from attnsim.verify.registry import _CHECKERS, all_checkers

ROOT = Path(__file__).resolve().parents[1]
TINT = [c.id for c in load("tint").claims if c.id in all_checkers()]


@pytest.mark.parametrize("claim", TINT)
def test_declared_evidence_is_what_the_record_says_at_the_quick_point(claim: str, tmp_path_factory) -> None:
    chk = all_checkers()[claim]
    point = dict(chk.grid(True)[0])
    numerics, seed = point.pop("numerics", None), point.pop("seed", 0)
    r = shared_record(tmp_path_factory, claim, point, numerics, seed)  # the twins' tests read the same record
    if r["extra"].get("partial"):
        pytest.skip(f"the record is partial ({r['extra']['partial']}): its float reference is not installed")
    assert chk.evidence is not None and r["evidence"] == chk.evidence
    assert not any(reason.startswith("evidence:") for reason in r["reasons"])


def test_a_record_whose_measurement_contradicts_the_declaration_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    chk = all_checkers()["tint.act_descent"]  # a sanity check: declared independent, it must fail
    monkeypatch.setitem(_CHECKERS, chk.claim, dataclasses.replace(chk, evidence="independent"))
    r = run_check(chk.claim, {"case": "tiny-relu"}, "float64")
    assert r["verdict"] == "fail"
    assert "evidence: the checker declares independent, its measurement says sanity" in r["reasons"]


def test_the_table_shows_each_checkers_declaration() -> None:
    rows = claim_rows(None)
    checkers = all_checkers()
    for r in rows:
        chk = checkers.get(r["id"])
        if chk is None:
            assert evidence_cell(r) == "-"
        else:
            assert evidence_cell(r).split(" ")[0] == (chk.evidence or "undeclared")
    thm = next(r for r in rows if r["id"] == "tint.thm_1_1")
    assert evidence_cell(thm) == "independent (partial)"  # the statement's parameter count is not checked


def test_every_tint_checker_declares_and_the_summary_counts_them() -> None:
    now = evidence_tally.tally(evidence_tally.declared("tint"))
    assert now.get("undeclared", 0) == 0 and now["runnable"] == len(TINT)
    line = evidence_tally.summary("tint")
    assert line is not None and f"{now['independent']} of {now['runnable']} runnable claims" in line


def test_the_stored_count_before_is_its_own_records_at_the_commit_before_the_first_reference() -> None:
    body = evidence_tally.before("tint")
    assert body is not None
    assert body["tally"] == evidence_tally.tally({k: v["evidence"] for k, v in body["records"].items()})
    assert all(v["verdict"] == "pass" for v in body["records"].values())
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("no git checkout here to find the commit in (an installed copy)")
    try:
        commit = evidence_tally.before_commit(ROOT)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"the history is not available here ({exc.stderr.strip()[:80]})")
    assert body["commit"] == commit
    assert json.loads(evidence_tally.BEFORE_FILE.read_text())["paper"] == "tint"
