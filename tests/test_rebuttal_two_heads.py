"""Rebuttal claims of the Two Heads authors: RoPE and residual + layer norm (checks that can fail)."""

from __future__ import annotations

import pytest

import attnsim.sim.two_heads.blocks as blocks
from attnsim.sim.rope import RoPE
from attnsim.verify.check import run_check
from attnsim.verify.claims.two_heads_rebuttal import rotation_identity_holds


@pytest.mark.parametrize("params, numerics", [
    (dict(N=15, M=3, d=2), "exact"),
    (dict(N=13, M=4, d=3, scheme="fused", length="strict"), "exact"),
    (dict(N=6, M=3, d=2), "symbolic"),
    (dict(N=16, M=4, d=2), "mp:200"),
])
def test_rope_simulation_agrees(params, numerics):
    r = run_check("two_heads.rebuttal_rope", params, numerics)
    assert r["verdict"] == "pass", r["reasons"]
    assert r["calls"] == r["predicted_calls"]
    assert r["extra"]["rotation_identity_exact"] is True


def test_rope_without_the_fold_is_caught(monkeypatch):
    """Forget to fold the pair's relative rotation into W^K: outputs differ."""
    monkeypatch.setattr(blocks, "fold_rotation", lambda nm, WK, rope, delta: WK)
    r = run_check("two_heads.rebuttal_rope", dict(N=9, M=3, d=2), "exact")
    assert r["agree"] is False and r["verdict"] == "fail"


def test_rotation_identity_check_can_fail(monkeypatch):
    assert rotation_identity_holds(6, 4, 0)
    monkeypatch.setattr(RoPE, "_cos_sin", lambda self, p, k, w: (1, 0) if p % 2 else (0, 1))
    assert not rotation_identity_holds(6, 4, 0)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_residual_and_layer_norm(norm):
    exact = run_check("two_heads.rebuttal_norm", dict(N=10, M=4, d=4, H=2, L=2, norm=norm), "exact")
    assert exact["verdict"] == "pass" and exact["error_bits"] == float("inf"), exact["reasons"]
    mp = run_check("two_heads.rebuttal_norm", dict(N=10, M=4, d=4, H=2, L=2, norm=norm), "mp:200")
    assert mp["verdict"] == "pass" and mp["error_bits"] >= 190, mp["reasons"]
    assert mp["calls"] == exact["calls"] == mp["predicted_calls"]
