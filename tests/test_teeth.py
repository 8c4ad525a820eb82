"""attnsim teeth: every broken variant of a claim runs through its check; one that passes is a failure."""

from __future__ import annotations

import json
from contextlib import nullcontext

import pytest

from attnsim.sim.errors import AttnsimError
from attnsim.verify import twins as twins_mod
from attnsim.verify.report.build import summary_table
from attnsim.verify.teeth import ClaimTeeth, TwinResult, plan, run_teeth, run_twin, select_claims
from attnsim.verify.twins import Twin, all_twins

CLAIM = "two_heads.lemma_3_3"  # the fastest Two Heads check


def _teeth_cli(*args: str) -> int:
    from attnsim.verify.cli.app import app

    return app(["teeth", *args], standalone_mode=False)


def test_every_two_heads_claim_has_two_twins_of_different_names():
    for claim, (registered, twins) in plan(select_claims(["two_heads"])).items():
        assert registered >= 2, claim
        assert len({t.name for t in twins}) == registered and all(t.what for t in twins)


def test_cli_on_one_claim_catches_every_variant(capsys):
    assert _teeth_cli(CLAIM, "--json") == 0
    out = json.loads(capsys.readouterr().out)
    (c,) = out["claims"]
    assert c["claim"] == CLAIM and c["ok"] and c["caught"] == c["run"] == c["registered"] >= 2
    assert all(t["caught"] and t["reason"] for t in c["twins"])


def test_a_variant_that_is_not_caught_makes_exit_1(monkeypatch, capsys):
    monkeypatch.setitem(twins_mod._TWINS, (CLAIM, "aaa_harmless"),
                        Twin(CLAIM, "aaa_harmless", "breaks nothing", nullcontext))
    all_twins()
    assert _teeth_cli(CLAIM, "--quick") == 1  # quick runs the first twin by name: the harmless one
    assert "NOT CAUGHT aaa_harmless" in capsys.readouterr().out


def test_fewer_than_two_variants_is_no_teeth(monkeypatch):
    all_twins()
    for key in [k for k in twins_mod._TWINS if k[0] == CLAIM][1:]:
        monkeypatch.delitem(twins_mod._TWINS, key)
    (c,) = run_teeth([CLAIM])
    assert not c.ok and c.problem.startswith("no teeth")


def test_a_crash_is_not_a_catch_and_a_refusal_is():
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

    assert not run_twin(Twin(CLAIM, "crash", "crashes", as_cm(crash))).caught
    assert run_twin(Twin(CLAIM, "refuse", "refuses", as_cm(refuse))).caught


def test_unknown_claim_is_a_usage_error():
    with pytest.raises(AttnsimError, match="CLAIM"):
        select_claims(["two_heads.nope"])


def test_report_column_and_failing_row():
    rec = {"claim": CLAIM, "verdict": "pass", "evidence": "independent"}
    good = ClaimTeeth(CLAIM, 2, (TwinResult(CLAIM, "a", "x", True, "r"), TwinResult(CLAIM, "b", "y", True, "r")))
    bad = ClaimTeeth(CLAIM, 2, (TwinResult(CLAIM, "a", "x", True, "r"), TwinResult(CLAIM, "b", "y", False, "r")))
    row_good = summary_table([rec], {CLAIM: good.as_dict()})[2]
    row_bad = summary_table([rec], {CLAIM: bad.as_dict()})[2]
    assert "| 2/2 |" in row_good and row_good.endswith("| pass |")
    assert "1/2" in row_bad and row_bad.endswith("| fail |")
    sanity = summary_table([{**rec, "evidence": "sanity"}], {CLAIM: good.as_dict()})[2]
    assert sanity.endswith("| pass (sanity) |")
