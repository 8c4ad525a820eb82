"""Lemma 3.1 with the stable decode (``blocks``: A = (1 + k)p/q, q read from the call): exact in exact numerics
with the paper's call count, and it keeps its bits in float64 where the paper's p/(1 − p) keeps none."""

from __future__ import annotations

import warnings

import pytest

from attnsim.verify.check import run_check


@pytest.mark.parametrize("scheme", ["paper", "fused"])
def test_stable_decode_is_exact_with_the_papers_calls(scheme):
    params = {"N": 13, "M": 4, "d": 3, "scheme": scheme}
    paper = run_check("two_heads.lemma_3_1", params, numerics="exact")
    stable = run_check("two_heads.lemma_3_1", {**params, "decode": "stable"}, numerics="exact")
    assert stable["verdict"] == "pass" and stable["agree"] is True, stable["reasons"]
    assert stable["calls"] == paper["calls"] == stable["predicted_calls"]
    assert stable["counts"]["oracle_dim"] == paper["counts"]["oracle_dim"]


def test_float64_at_d16_the_stable_decode_keeps_its_bits():
    params = {"N": 64, "M": 8, "d": 16}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the division by 1 - p = 0 is counted into the record, never warned
        paper = run_check("two_heads.lemma_3_1", params, numerics="float64", min_bits=0)  # measured, not judged
    stable = run_check("two_heads.lemma_3_1", {**params, "decode": "stable"}, numerics="float64")
    assert paper["error_bits"] < 1 and paper["extra"]["non_finite"]["div"] > 0
    assert stable["error_bits"] >= 40 and "non_finite" not in stable["extra"]
    assert stable["verdict"] == "pass", stable["reasons"]


def test_corollary_3_2_runs_every_head_with_the_stable_decode_exactly():
    r = run_check("two_heads.cor_3_2", {"N": 10, "M": 4, "d": 4, "H": 2, "L": 2, "decode": "stable"}, numerics="exact")
    assert r["verdict"] == "pass" and r["agree"] is True and r["calls"] == r["predicted_calls"], r["reasons"]
