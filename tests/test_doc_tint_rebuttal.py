"""The figures of docs/tint_rebuttal.md, read off the page and recomputed from the three rebuttal checks.

TinT's authors told reviewers that TinT also trains a 2-layer MLP, that without reuse its size grows with layers
times steps, and that finite differences end to end are too noisy. The page gives each check's sizes, the opt-125m
line, the SPSA variances and the bias slope; every figure here is a record at the page's command (seed 0 unless the
page names another).
"""

from __future__ import annotations

import math
import re
from functools import cache

from doc_page import Page

from attnsim.paper_refs import get as get_claim
from attnsim.paper_refs import load
from attnsim.verify.check import run_check
from attnsim.verify.claims.tint_rebuttal import SLOPE_POINTS, spsa_variance_interval, width_level
from attnsim.verify.stats import LEVEL, loglog_fit

_PAGE = Page("tint_rebuttal.md")
PAGE = _PAGE.text
TEXT = _PAGE.flat
said = _PAGE.said
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}


def num(text: str) -> int:
    """An integer as the page writes it (thousands separated by commas)."""
    return int(text.replace(",", ""))


def command(claim: str) -> list[tuple[str | None, dict]]:
    """(numerics, params) of each `attnsim check CLAIM ...` line the page shows."""
    out = []
    for line in re.findall(rf"attnsim check {re.escape(claim)}([^\n#]*)", PAGE):
        opts = dict(re.findall(r"--([\w-]+) (\S+)", line))
        numerics = opts.pop("numerics", None)
        out.append((numerics, {k.replace("-", "_"): (int(v) if v.isdigit() else v) for k, v in opts.items()}))
    assert out, f"docs/tint_rebuttal.md shows no command for {claim}"
    return out


@cache
def record(claim: str, numerics: str | None = None, seed: int = 0, **params) -> dict:
    """One check's record, run once per file (read-only)."""
    return run_check(claim, params, numerics, seed)


def test_the_three_rebuttal_claims():
    (count,) = said(r"(\w+) claims of kind `rebuttal` in `paper_refs/tint\.toml`")
    sections = re.findall(r"^## `(tint\.\w+)`", PAGE, flags=re.M)
    rebuttals = [c.id for c in load("tint").claims if c.kind == "rebuttal"]
    assert len(rebuttals) == WORDS[count.lower()] and sorted(sections) == sorted(rebuttals)


# -- a 2-layer MLP as the auxiliary model ------------------------------------------------------------------------
def test_the_mlp_aux_commands_pass_against_their_references():
    """ReLU in exact numerics against the exact gradient step, bit for bit; GELU against the same difference."""
    (relu, relu_params), (gelu, gelu_params) = command("tint.rebuttal_mlp_aux")
    r = record("tint.rebuttal_mlp_aux", relu, **relu_params)
    assert (relu, r["verdict"], r["extra"]["reference"], r["extra"]["bit_for_bit"]) == (
        "exact", "pass", "exact gradient", True)
    assert r["extra"]["kink_margin_ok"] is True  # the checker verified no pre-activation lies near the kink
    g = record("tint.rebuttal_mlp_aux", gelu, **gelu_params)
    assert gelu_params == {"activation": "gelu_new"}
    assert (g["verdict"], g["extra"]["reference"]) == ("pass", "same one-sided activation difference")


def test_the_mlp_aux_sizes():
    D, K, H_sim, mlp, transformer = said(r"Sizes \(D = (\d+), K = (\d+), H_sim = (\d+)\): MLP-TinT ([\d,]+) parameters "
                                         r"\(ledger = formula\), the TinT of a 1-layer transformer of the same width "
                                         r"([\d,]+) without embeddings")
    numerics, params = command("tint.rebuttal_mlp_aux")[0]
    r = record("tint.rebuttal_mlp_aux", numerics, **params)
    assert {k: r["params"][k] for k in ("D", "K", "H_sim")} == {"D": int(D), "K": int(K), "H_sim": int(H_sim)}
    assert r["counts"]["total"] == r["predicted"]["total"] == num(mlp)
    t = r["extra"]["transformer"]
    assert (t["values"]["D"], t["values"]["L"]) == (int(D), 1)
    assert t["total"] - t["by_tag"]["Emb"] == num(transformer)


# -- layers x steps ----------------------------------------------------------------------------------------------
def test_size_growth_of_opt_125m():
    base, per_unit = said(r"opt-125m: base ([\d,]+), per_unit ([\d,]+) \(one forward and one backward block\), both "
                          r"equal to the claim's formulas")
    (numerics, params), = command("tint.rebuttal_size_growth")
    r = record("tint.rebuttal_size_growth", numerics, **params)
    assert params["aux"] == "opt-125m" and r["verdict"] == "pass"
    assert r["counts"] == r["predicted"] == {"base": num(base), "per_unit": num(per_unit)}


# -- finite differences end to end -------------------------------------------------------------------------------
def fd(seed: int = 0, **params) -> dict:
    return record("tint.rebuttal_fd_end_to_end", "float64", seed, **params)


def test_spsa_variance_follows_the_number_of_parameters():
    """With `--samples 4000`: every width's variance within the page's share of n_params + 1, over its range."""
    within, lo, hi = said(r"variance per estimate \(n_params \+ 1\)\|g\|\^2, measured within (\d+)% for (\d+) to (\d+) "
                          r"parameters")
    (_, params), = command("tint.rebuttal_fd_end_to_end")
    claim = get_claim("tint.rebuttal_fd_end_to_end")
    assert claim.extra["spsa_relative_variance"] == claim.resources["coordinate_forwards"].exact == "n_params + 1"
    widths = fd(**params)["extra"]["by_width"]
    assert (widths[0]["n_params"], widths[-1]["n_params"]) == (int(lo), int(hi))
    assert all(w["formula"] == w["n_params"] + 1 for w in widths)
    assert math.ceil(100 * max(abs(w["ratio"] - 1) for w in widths)) == int(within)  # the tightest whole per cent


def test_tints_bias_slope():
    (slope,) = said(r"TinT's per-layer scheme \(deterministic, bias O\(eps\), fitted slope ([\d.]+)\)")
    (_, params), = command("tint.rebuttal_fd_end_to_end")
    r = fd(**params)
    assert f"{r['extra']['tint_bias_slope']:.3f}" == slope
    assert all(row["variance"] == 0 for row in r["extra"]["rows"] if row["estimator"] == "tint")


def test_the_slope_is_fitted_over_the_smallest_steps():
    D, share, every, smallest = said(r"at `--D (\d+)` the bias is (\d+)% of \|g\| at eps = 0\.1, and a fit over every "
                                     r"step gave ([\d.]+) \(([\d.]+) over the smallest three\)")
    (points,) = said(r"fitted over the (\w+) smallest steps above float64's rounding floor")
    assert WORDS[points] == SLOPE_POINTS
    r = fd(D=int(D))
    rows = [row for row in r["extra"]["rows"] if row["estimator"] == "tint"]
    assert rows[0]["eps"] == 0.1 and round(100 * rows[0]["bias"]) == int(share)
    assert f"{loglog_fit([x['eps'] for x in rows], [x['bias'] for x in rows]).slope:.2f}" == every
    assert f"{r['extra']['tint_bias_slope']:.2f}" == smallest
    assert r["extra"]["tint_slope_steps"] == [x["eps"] for x in rows[-SLOPE_POINTS:]]


def test_widths_are_decided_together_at_95_percent():
    (level,) = said(r"decided by its chi-square interval at 1 − (\d+)%/\(number of widths\)")
    assert width_level(4) == 1 - int(level) / 100 / 4 and LEVEL == 1 - int(level) / 100
    seed, samples, variance, claimed, margin, apiece = said(
        r"a fuzz found seed (\d+) \(`--samples (\d+)`\), whose D = 1 variance of ([\d.]+) \(claim: (\d+)\) cleared the "
        r"claim's \+(\d+)% at (\d+)% apiece")
    assert get_claim("tint.rebuttal_fd_end_to_end").extra["variance_tolerance"] == int(margin) / 100
    r = fd(int(seed), samples=int(samples))
    w = r["extra"]["by_width"][0]
    assert (w["D"], f"{w['variance_unbiased']:.2f}", w["formula"]) == (1, variance, int(claimed))
    top = int(claimed) * (1 + int(margin) / 100)
    assert spsa_variance_interval(w["variance_unbiased"], w["n_params"], int(samples), int(apiece) / 100)[0] > top
    assert w["interval"][0] <= top and r["verdict"] == "pass"  # at 1 − 5%/4 apiece it no longer refutes
