"""The regime column is said by the code: the sizes come from the checker's grids and the records, not paper_refs."""

from __future__ import annotations

from attnsim.paper_refs import get as get_claim
from attnsim.verify.cli.claims import claim_rows
from attnsim.verify.regime import planned_regime, run_regime
from attnsim.verify.registry import all_checkers


def test_planned_regime_reads_the_grids_and_the_parameter_sweeps():
    text = planned_regime(get_claim("anna.lemma_c_2"), all_checkers()["anna.lemma_c_2"])
    assert "N = 2048..32768 (growth)" in text
    assert "1/(eps1 - eps) = 4..16 at N = 16384" in text and "(gap sweep, 5 values)" in text


def test_the_claims_table_shows_generated_sizes_before_paper_refs_conditions():
    row = next(r for r in claim_rows("anna") if r["id"] == "anna.cor_b_9")
    claim = get_claim("anna.cor_b_9")
    assert row["regime"].startswith("N = ") and row["regime"].endswith(claim.regime)
    assert "N = 256..4096 (growth)" in row["regime"]


def test_run_regime_lists_each_record_note_once():
    records = [{"extra": {"regime": "in range"}}, {"extra": {"regime": "partial: outside"}}, {"extra": {}},
               {"extra": {"regime": "in range"}}]
    assert run_regime(records) == "in range; partial: outside"


def test_every_checked_anna_result_names_its_route():
    # The ANNA table says for each result whether it runs the paper's construction or one of ours in its place.
    rows = [r for r in claim_rows("anna") if r["id"] in all_checkers()]
    assert rows and all(r["route"] for r in rows), [r["id"] for r in rows if not r["route"]]
