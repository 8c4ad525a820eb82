"""The figures of docs/exact_numerics.md that a cheap run gives, read off the page and recomputed.

Two Heads proves its constructions as exact identities; the page says how attnsim checks them in rational
arithmetic: the base z of the softmax numerator, the grid a layer's output is rounded to, a broken decode
seen layer by layer, the verdicts of the Thm 3.4 run at N = 256 and the size the bench times. Wall-clock and
CPU times are not held here; neither is the `exact:64:seeded` row of the N = 256 table (14 s).
"""

from __future__ import annotations

import inspect
import math
import re
import statistics
from fractions import Fraction
from functools import cache
from pathlib import Path
from unittest import mock

import pytest
from doc_page import Page
from test_exact_base import _pad_miscounted  # the break the page names

from attnsim.sim.masks import Full
from attnsim.sim.numerics import NumericsError, get_numerics
from attnsim.sim.numerics.exact import FlintExact, draw_base
from attnsim.sim.numerics.flint_kernels import flint_attention
from attnsim.sim.token_maps import GridAffine
from attnsim.sim.two_heads import multi_layer
from attnsim.verify.bench import engine
from attnsim.verify.cases import random_case
from attnsim.verify.check import run_check
from attnsim.verify.cli import bench as bench_cli

_PAGE = Page("exact_numerics.md")
PAGE = _PAGE.text
TEXT = _PAGE.flat
said = _PAGE.said
table = _PAGE.table
SEEDS = range(1000)


@cache
def record(claim: str, numerics: str, seed: int = 0, min_bits: float | None = None, **params) -> dict:
    """One check's record, run once per file (read-only)."""
    return run_check(claim, params, numerics, seed, min_bits)


# -- the base z --------------------------------------------------------------------------------------------------
def test_the_default_base():
    D, z, default = said(r"`exact` \(= `exact:(\d+):(\d+)`\) \| z = (\d+), the default")
    nm = get_numerics("exact")
    assert (nm.grid, nm.z_fraction) == (int(D), Fraction(int(z))) and z == default
    long = get_numerics(f"exact:{D}:{z}")  # the same numerics, named the long way
    assert (long.grid, long.z_fraction) == (nm.grid, nm.z_fraction)


def test_the_seeded_base():
    """`exact:64:seeded` draws z = p/q in (1, 2] with q below 2^16, so p up to 17 bits."""
    lo, hi, q_bits, p_most, p_bits = said(r"z ∈ \((\d+), (\d+)\], a fraction p/q with q below 2\^(\d+) \(so p ≤ "
                                          r"(\d+)q, up to (\d+) bits\), from `--seed`")
    zs = [draw_base(s) for s in SEEDS]
    assert all(int(lo) < z <= int(hi) for z in zs)
    assert max(z.denominator for z in zs).bit_length() == int(q_bits)
    assert all(z.numerator <= int(p_most) * z.denominator for z in zs)
    assert max(z.numerator for z in zs).bit_length() == int(p_bits)
    assert get_numerics("exact:64:seeded", 7).z_fraction == draw_base(7)


def test_bits_per_grid_step_of_the_seeded_base():
    per_step, smaller = map(int, said(r"seeded base that is ~(\d+) bits per grid step \(the median over seeds\).*?"
                                      r"\(k bits, ~(\d+)x smaller\)"))
    bits = statistics.median(math.log2(z.numerator * z.denominator) for z in map(draw_base, SEEDS))
    assert round(bits) == per_step == smaller  # z = 2 spends 1 bit per step where the seeded z spends log2(p q)


def test_any_rational_base_above_one():
    (above,) = said(r"`exact:D:p/q` \| any rational > (\d+) \|")
    assert get_numerics("exact:64:3/2").z_fraction == Fraction(3, 2)
    with pytest.raises(NumericsError):
        get_numerics(f"exact:64:{above}")


# -- every layer compared ----------------------------------------------------------------------------------------
def test_layer_outputs_are_rounded_to_the_half_grid():
    (den,) = said(r"rounds each layer's output onto the \(1/(\d+)\)Z grid \(`GridAffine`\)")
    case = random_case(8, 4, 1, 2, Full(), 0, layer_mlp="affine", exact_kind=True)
    psis = [layer.psi for layer in case.weights.layers]
    assert all(isinstance(p, GridAffine) and p.denominator == int(den) for p in psis)


BROKEN = dict(N=13, M=4, d=4, H=2, L=2)


def broken(numerics: str, scheme: str) -> dict:
    """Thm 3.4 at the page's size with the padding count of the decode off by one (seed 0)."""
    with mock.patch.object(multi_layer, "head_jobs", _pad_miscounted):
        return run_check("two_heads.thm_3_4", dict(BROKEN, scheme=scheme), numerics, 0, 0 if numerics == "float64"
                         else None)


def test_a_padding_count_off_by_one():
    size = said(r"Measured on Thm 3\.4 \(N = (\d+), M = (\d+), d = (\d+), H = (\d+), L = (\d+)\) with the padding "
                r"count of the decode off by one")
    assert dict(zip(BROKEN, map(int, size))) == BROKEN
    lo, hi = map(int, said(r"float64 saw (\d+)–(\d+) bits of error"))
    paper, fused = said(r"at seed 0 today keeps ([\d.]+) bits in float64 with the paper scheme and ([\d.]+) fused")
    for scheme, figure in (("paper", paper), ("fused", fused)):
        bits = broken("float64", scheme)["error_bits"]
        assert f"{bits:.1f}" == figure and lo <= bits <= hi, scheme
    reasons = broken("exact", "paper")["reasons"]  # both the layers and the rounded output differ at seed 0
    assert any("before ψ" in r for r in reasons) and any(r.startswith("output does not agree") for r in reasons)


# -- the measured run at N = 256 ---------------------------------------------------------------------------------
def test_verdicts_of_thm_3_4_at_N_256():
    """The verdict column of the z = 2 rows (the times are this machine's, not held; the seeded row takes 14 s)."""
    (command,) = said(r"```\s*(attnsim check two_heads\.thm_3_4 [^`]*?--numerics exact)\s*```")
    params = dict(re.findall(r"--(\w+) (\S+)", command))
    assert params.pop("numerics") == "exact"
    params = {k: int(v) for k, v in params.items()}
    rows = {r[0]: r[-1] for r in table("| run | load ~5")}
    paper = record("two_heads.thm_3_4", "exact", scheme="paper", **params)
    (layers,) = re.fullmatch(r"pass, (\d+) layers compared before rounding",
                             rows["`--numerics exact` (z = 2), paper scheme"]).groups()
    assert paper["verdict"] == "pass" and paper["extra"]["layers_compared_before_rounding"] == int(layers)
    assert rows["same, `--scheme fused`"] == record("two_heads.thm_3_4", "exact", scheme="fused", **params)["verdict"]


# -- where the time goes -----------------------------------------------------------------------------------------
def test_the_flint_path_is_where_the_page_says():
    where, kernel = said(r"\* `FlintExact\.attention` \(`([\w/]+\.py)`, its kernel in `([\w/]+\.py)`\)")
    root = Path(__file__).resolve().parents[1]
    assert Path(inspect.getsourcefile(FlintExact)) == root / where
    assert Path(inspect.getsourcefile(flint_attention)) == root / kernel
    assert "flint_attention" in inspect.getsource(FlintExact.attention)
    assert "fmpq_mat" in inspect.getsource(FlintExact.matmul)  # "`FlintExact.matmul`: one `fmpq_mat` product"


# -- the bench ---------------------------------------------------------------------------------------------------
def test_the_bench_times_the_page_size():
    (repeats,) = said(r"`attnsim bench --quick` \(medians of (\d+)\)")
    N, M, d, z = said(r"Lemma 3\.1 fused, N = (\d+), M = (\d+), d = (\d+), z = (\d+); outputs asserted equal")
    assert f"repeats = {repeats} if repeats is None else repeats" in inspect.getsource(bench_cli.register)
    assert f"rec[\"exact\"] = exact_figures({N}, {M}, {d}, repeats)" in inspect.getsource(engine.run_bench)
    assert 'scheme="fused"' in inspect.getsource(engine.exact_figures)
    assert get_numerics("exact").z_fraction == int(z)
