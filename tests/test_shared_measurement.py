"""Claims that run one construction (``shares`` in the registry) measure a point once in a sweep; each claim still
gets its own record, equal to the one it gets alone, and a run outside a sweep (a broken variant) measures afresh."""

from __future__ import annotations

import io
from unittest import mock

import pytest
from rich.console import Console

from attnsim.verify.check import run_check
from attnsim.verify.claims import anna_mpc_to_anna as checks
from attnsim.verify.registry import Param, checker
from attnsim.verify.sweep import Point, _chunks, code_version, sweep

QUIET = Console(file=io.StringIO())
SAME = {"protocol": "sum", "N": 256, "P": 16}
CLAIMS = ("anna.thm_4_1", "anna.cor_b_14", "anna.thm_b_10")


def _counting():
    calls = []
    original = checks.run_in_transformer

    def counted(*args, **kw):
        calls.append(args[0].claim)
        return original(*args, **kw)

    return calls, mock.patch.object(checks, "run_in_transformer", counted)


def test_a_sweep_measures_a_shared_point_once_and_every_claim_gets_its_own_record():
    pts = [Point(c, SAME) for c in CLAIMS] + [Point("anna.thm_4_1", {**SAME, "N": 512})]
    calls, patch = _counting()
    with patch:
        got = sweep(pts, executor="serial", console=QUIET, chunk_size=1).records
    assert calls == ["anna.thm_4_1", "anna.thm_4_1"]  # one measurement per distinct point
    assert [r["claim"] for r in got] == [p.claim for p in pts]
    for r in got[:3]:
        alone = run_check(r["claim"], SAME)
        assert r["verdict"] == "pass" and r["label"] == alone["label"]
        assert {k: r[k] for k in ("counts", "predicted", "bounds", "extra", "evidence", "reference")} == \
               {k: alone[k] for k in ("counts", "predicted", "bounds", "extra", "evidence", "reference")}


def test_outside_a_sweep_every_check_measures_afresh():
    calls, patch = _counting()
    with patch:
        for c in CLAIMS[:2]:
            run_check(c, SAME)
    assert len(calls) == 2


def test_points_that_share_a_measurement_land_in_one_task():
    v = code_version()
    pts = [Point("anna.thm_4_1", SAME), Point("anna.lemma_b_5", {"block": 4}), Point("anna.cor_b_14", SAME),
           Point("anna.cor_b_14", {**SAME, "N": 512})]
    chunks = _chunks([(p.key(v), p) for p in pts], 1)
    assert [[p.claim for _, p in c] for c in chunks] == [["anna.thm_4_1", "anna.cor_b_14"], ["anna.lemma_b_5"],
                                                          ["anna.cor_b_14"]]


def test_sharing_claims_must_run_the_same_function_and_parameters():
    with pytest.raises(RuntimeError, match="shares 'anna.thm_4_1'"):
        checker("anna.not_a_claim", params=[Param("N", int, 4, "size")], grid=lambda quick: [],
                shares="anna.thm_4_1")(lambda ctx: None)
