"""Measured calls equal the registry's exact formula on a grid of (N, M, H, L, H', L', r, s).

The grid runs each construction through its checker with ``float64`` numerics, the reference
comparison left out (the count never depends on the arithmetic — see the shapes-only test in
``test_two_heads_exact_metamorphic.py``), and evaluates only the ``calls`` formula of the registry
(the same values ``run_check`` uses, compiled once per claim with sympy's lambdify), so 250 points
stay fast. Exactness and the other counts are
covered by ``test_two_heads_exact_identity.py``.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache

import pytest
import sympy as sp

import attnsim.verify.claims.two_heads_exact as exact_checkers
from attnsim.paper_refs import get as get_claim
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle
from attnsim.theory.formulas import expand_definitions, parse
from attnsim.verify.check import _formula_values
from attnsim.verify.registry import CheckContext, Measurement, get_checker


def _count_only(ctx, case, spec, simulate, derived, **agreement_options):
    """measure_model without the reference: run the construction, read the ledger."""
    nm = get_numerics(ctx.numerics, ctx.seed)
    oracle = Oracle(spec, nm)
    simulate(oracle, nm.array(case.X, "X"))
    led = oracle.ledger
    shape = led.max_shape("oracle")
    return Measurement(agree=None, evidence="self-consistency", counts={
        "calls": led.total("oracle"), "rounds": led.rounds("oracle"), "layer_mlp": led.total("processing", "layer_mlp"),
        "oracle_len": shape[0], "oracle_dim": shape[1]}, counts_by_tag=led.by_tag("oracle"), derived=derived)


def _grid() -> list[tuple[str, dict]]:
    rng = random.Random(3)
    pts: list[tuple[str, dict]] = []

    def shape() -> dict:
        H = rng.choice((1, 2))
        return dict(H=H, d=H * rng.choice((1, 2)), L=rng.choice((1, 2)), Hp=rng.choice((1, 2, 3)),
                    Lp=rng.choice((1, 2)), scheme=rng.choice(("paper", "fused")),
                    length=rng.choice(("paper", "strict")), psi=rng.choice(("identity", "affine")))

    for claim in ("two_heads.thm_3_4", "two_heads.thm_3_5"):
        for _ in range(70):
            pts.append((claim, dict(N=rng.randint(1, 20), M=rng.randint(2, 6), **shape())))
    for _ in range(70):
        p = shape()
        r, s = rng.randint(1, 3), rng.randint(0, 2)
        M = s + r + 1 + (p["length"] == "strict") + rng.randint(0, 3)
        pts.append(("two_heads.thm_5_1", dict(N=rng.randint(1, 30), M=M, window=r, sinks=s, **p)))
    for _ in range(20):
        p = shape()
        del p["Hp"], p["Lp"]
        pts.append(("two_heads.cor_3_2", dict(N=rng.randint(1, 16), M=rng.randint(2, 5), **p)))
    for _ in range(20):
        pts.append(("two_heads.claim_b_6", dict(N=rng.randint(1, 30), M=rng.randint(2, 7), d=rng.randint(1, 3),
                                                length=rng.choice(("paper", "strict")))))
    return pts


GRID = _grid()


@lru_cache(maxsize=None)
def calls_formula(claim: str):
    """The registry's exact calls formula of ``claim``, definitions expanded, as a Python function."""
    entry = get_claim(claim)
    expr = expand_definitions(parse(entry.resources["calls"].exact), entry.definitions)
    names = sorted(s.name for s in expr.free_symbols)
    fn = sp.lambdify([sp.Symbol(n, positive=True) for n in names], expr,
                     modules=[{"ceiling": math.ceil, "Min": min, "Max": max, "Abs": abs}, "math"])
    return lambda values: fn(*(values[n] for n in names))


def test_grid_is_large_enough():
    assert len(GRID) >= 200
    assert len({(c, tuple(sorted(p.items()))) for c, p in GRID}) >= 200


@pytest.mark.parametrize("claim, params", GRID, ids=[f"{c.split('.')[1]}-{i}" for i, (c, _) in enumerate(GRID)])
def test_calls_equal_exact_formula(claim, params, monkeypatch):
    monkeypatch.setattr(exact_checkers, "measure_model", _count_only)
    chk = get_checker(claim)
    resolved = chk.resolve(params)
    m = chk.fn(CheckContext(claim, resolved, "float64", 0))
    assert m.counts["calls"] == calls_formula(claim)(_formula_values(resolved, m.derived))
    assert m.agree is not False
