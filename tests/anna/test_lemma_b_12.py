"""Lemma B.12 by our relay (anna.lemma_b_12): R D^2 relay rounds, at most k contacts, within R (1+gamma)/(2 rho^2)."""

from __future__ import annotations

import math

import pytest

from attnsim.verify.check import run_check
from attnsim.verify.teeth import run_twin
from attnsim.verify.twins import all_twins

TWINS = [t for t in all_twins() if t.claim == "anna.lemma_b_12" and t.kind != "growth"]


@pytest.mark.parametrize("k", [2, 4])
def test_relay_rounds_are_r_d_squared_below_the_proofs_bound(k):
    record = run_check("anna.lemma_b_12", {"N": 256, "P": 16, "eps": 0.875, "k": k}, None, 0)
    x = record["extra"]
    assert record["verdict"] == "pass" and record["counts"]["contacts"] == k
    assert record["counts"]["rounds"] == x["R"] * x["D"] ** 2
    assert x["D"] < (1 + x["gamma"]) / x["rho"]  # docs/anna_mpc_to_anna.md: D < (1 + gamma)/rho
    assert math.isclose(x["rho"], math.log(k) / math.log(256))


@pytest.mark.parametrize("twin", TWINS, ids=[t.name for t in TWINS])
def test_twin_is_caught(twin):
    result = run_twin(twin)
    assert result.bites, result.reason
