"""attnsim teeth: every broken variant of a claim runs through its check; one that passes is a failure."""

from __future__ import annotations

import json
from contextlib import nullcontext

import pytest

from attnsim.sim.errors import AttnsimError
from attnsim.verify import twins as twins_mod
from attnsim.verify.report.build import summary_table
from attnsim.verify.teeth import ClaimTeeth, TwinResult, plan, run_teeth, run_twin, select_claims, summary
from attnsim.verify.twins import KINDS, Twin, all_twins

CLAIM = "two_heads.lemma_3_3"  # the fastest Two Heads check


def _teeth_cli(*args: str) -> int:
    from attnsim.verify.cli.app import app

    return app(["teeth", *args], standalone_mode=False)


def test_every_two_heads_claim_has_two_twins_of_different_names():
    for claim, (registered, twins) in plan(select_claims(["two_heads"])).items():
        assert registered >= 2, claim
        assert len({t.name for t in twins}) == registered and all(t.what for t in twins)


def test_cli_on_one_claim_catches_every_variant(capsys):
    assert _teeth_cli(CLAIM, "--json", "-") == 0
    out = json.loads(capsys.readouterr().out)
    (c,) = out["claims"]
    assert c["claim"] == CLAIM and c["ok"] and c["caught"] == c["run"] == c["registered"] >= 2
    assert c["refused"] == 0 and all(t["caught"] and t["outcome"] == "caught" and t["reason"] for t in c["twins"])


def test_a_variant_that_is_not_caught_makes_exit_1(monkeypatch, capsys):
    monkeypatch.setitem(twins_mod._TWINS, (CLAIM, "aaa_harmless"),
                        Twin(CLAIM, "aaa_harmless", "breaks nothing", nullcontext, kind="construction"))
    all_twins()
    assert _teeth_cli(CLAIM, "--quick") == 1  # quick runs the first construction twin by name: the harmless one
    assert "NOT CAUGHT (missed) aaa_harmless" in capsys.readouterr().out


def test_quick_runs_a_construction_twin_not_the_first_by_name(monkeypatch):
    monkeypatch.setitem(twins_mod._TWINS, (CLAIM, "aaa_formula"),
                        Twin(CLAIM, "aaa_formula", "breaks nothing", nullcontext, kind="formula"))
    for claim, (_, (t,)) in plan(select_claims(None), quick=True).items():
        assert t.kind == "construction", f"{claim}: --quick runs {t.name} ({t.kind})"
    assert plan([CLAIM], quick=True)[CLAIM][1][0].name != "aaa_formula"


def test_every_twin_declares_a_kind_and_every_claim_has_a_construction_twin():
    twins = all_twins()
    assert all(t.kind in KINDS for t in twins)
    with pytest.raises(ValueError, match="kind"):
        Twin(CLAIM, "x", "y", nullcontext, kind="vague")
    built = {t.claim for t in twins if t.kind == "construction"}
    assert not [c for c in select_claims(None) if c not in built]


def test_fewer_than_two_variants_is_no_teeth(monkeypatch):
    all_twins()
    for key in [k for k in twins_mod._TWINS if k[0] == CLAIM][1:]:
        monkeypatch.delitem(twins_mod._TWINS, key)
    (c,) = run_teeth([CLAIM])
    assert not c.ok and c.problem.startswith("no teeth")


def test_a_crash_is_not_a_catch_and_a_refusal_bites_only_a_refusal_twin():
    def crash():
        raise TypeError("boom")

    def refuse():
        raise AttnsimError("refused on purpose")

    def as_cm(fn):
        class _CM:
            def __enter__(self):
                fn()

            def __exit__(self, *exc):
                return False
        return _CM

    crashed = run_twin(Twin(CLAIM, "crash", "crashes", as_cm(crash), kind="construction"))
    assert crashed.outcome == "crashed" and not crashed.bites
    refused = run_twin(Twin(CLAIM, "refuse", "refuses", as_cm(refuse), kind="construction"))
    assert refused.outcome == "refused" and refused.refused and not refused.caught and not refused.bites
    limit = run_twin(Twin(CLAIM, "refuse", "refuses", as_cm(refuse), kind="referee"))
    assert limit.refused and limit.bites and not limit.caught
    let_through = run_twin(Twin(CLAIM, "through", "the referee lets it through", nullcontext, kind="referee"))
    assert let_through.outcome == "missed" and not let_through.bites


def test_a_claim_caught_only_by_refusals_has_no_teeth():
    def r(name, outcome, kind):
        return TwinResult(CLAIM, name, "x", kind, outcome, "r")

    only_refused = ClaimTeeth(CLAIM, 2, (r("a", "refused", "referee"), r("b", "refused", "referee")), 1)
    assert only_refused.refused == 2 and only_refused.caught == 0 and only_refused.bitten == 2
    assert not only_refused.ok and "only by refusals" in only_refused.problem
    mixed = ClaimTeeth(CLAIM, 2, (r("a", "refused", "referee"), r("b", "caught", "construction")), 1)
    assert mixed.ok and mixed.as_dict()["refused"] == 1 and mixed.as_dict()["caught"] == 1
    refused_construction = ClaimTeeth(CLAIM, 2, (r("a", "refused", "construction"), r("b", "caught", "ledger")), 1)
    assert not refused_construction.ok and "a (refused)" in refused_construction.problem
    assert not ClaimTeeth(CLAIM, 2, (r("b", "caught", "ledger"),), 0).ok


def test_summary_counts_caught_and_refused_apart_and_names_what_is_missing():
    from attnsim.verify.growth import bounded_resources

    first, *rest = bounded_resources(CLAIM)
    twins = (TwinResult(CLAIM, "a", "x", "referee", "refused", "r"),
             TwinResult(CLAIM, "b", "x", "construction", "missed", "r"),
             TwinResult(CLAIM, f"growth:{first}", "x", "growth", "caught", "r", constant_factor="exceeds"))
    s = summary([ClaimTeeth(CLAIM, 3, twins, 1)])
    assert (s["twins"], s["caught"], s["refused"]) == (3, 1, 1)
    assert s["not_caught"] == [f"{CLAIM}:b (missed)"] and s["without_teeth"] == [CLAIM]
    assert s["growth_twins"] == s["growth_caught"] == 1 and s["bounded_resources"] == 1 + len(rest)
    assert s["without_growth_twin"] == [f"{CLAIM}:{r}" for r in rest]
    assert s["constant_factor_failed"] == [f"{CLAIM}:{first}"] and not s["caught_only_by_refusals"]
    only = ClaimTeeth(CLAIM, 2, twins[:1] * 2, 1)
    assert summary([only])["caught_only_by_refusals"] == [CLAIM]


def test_unknown_claim_is_a_usage_error():
    with pytest.raises(AttnsimError, match="CLAIM"):
        select_claims(["two_heads.nope"])


def test_report_column_and_failing_row():
    rec = {"claim": CLAIM, "verdict": "pass", "evidence": "independent"}
    def r(name, outcome):
        return TwinResult(CLAIM, name, "x", "construction", outcome, "r")

    good = ClaimTeeth(CLAIM, 2, (r("a", "caught"), r("b", "caught")), 2)
    bad = ClaimTeeth(CLAIM, 2, (r("a", "caught"), r("b", "missed")), 2)
    row_good = summary_table([rec], {CLAIM: good.as_dict()})[2]
    row_bad = summary_table([rec], {CLAIM: bad.as_dict()})[2]
    assert "| 2/2 |" in row_good and row_good.endswith("| pass |")
    assert "1/2" in row_bad and row_bad.endswith("| fail |")
    sanity = summary_table([{**rec, "evidence": "sanity"}], {CLAIM: good.as_dict()})[2]
    assert sanity.endswith("| pass (sanity) |")


def test_a_formula_twin_meets_the_derivation_not_a_theory_kept_from_before_the_break():
    """The report hands each job the theories its main process derived (``remember``); a twin that breaks how a
    containment is derived must still be caught there, as ``attnsim teeth`` catches it."""
    from attnsim.theory.symbolic import derived_here, remember
    from attnsim.verify.check import theory_chunk

    (t,) = [t for t in all_twins() if (t.claim, t.name) == ("anna.lemma_d_2", "containment_reversed")]
    with derived_here():  # this test's kept theories do not outlive it
        remember(theory_chunk(["anna.lemma_d_2"]))  # as the report's teeth workers get it
        assert run_twin(t).outcome == "caught"
