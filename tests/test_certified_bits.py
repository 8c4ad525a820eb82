"""The certified bits-needed search (``verify/precision/certified.py``) and the rebuttal's precision rows."""

from __future__ import annotations

import pytest

from attnsim.verify.check import run_check
from attnsim.verify.precision.certified import Target, certified_need
from attnsim.verify.precision.constructions import make_setup
from attnsim.verify.registry import UsageError


def test_target_parses_the_per_N_form_and_refuses_others():
    assert Target.parse("2^-N").bits(64) == 64 and Target.parse("2^-20").bits(64) == 20
    with pytest.raises(UsageError, match="target: expected 2"):
        Target.parse("0.001")


def test_the_answer_certifies_and_one_bit_less_does_not():
    need = certified_need(make_setup(16, 4, d=2, sample_blocks=2), "paper", 24.0)
    assert need.probes[need.bits] >= 24 > need.probes[need.bits - 1]


def test_the_per_N_row_needs_more_than_N_bits_and_the_midpoints_agree_with_the_truth():
    r = run_check("two_heads.rebuttal_log_bits", {"N": 16, "M": 4, "d": 2, "sample_blocks": 2})
    assert r["verdict"] == "pass", r["reasons"]
    assert r["counts"]["bits"] > 16 and r["extra"]["midpoint_bits_vs_truth"] >= 16
