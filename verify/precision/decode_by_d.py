"""Both Step-1 decodes of Lemma 3.1 as the width d grows: certified bits in balls, error bits in float64.

The paper's decode A = p/(1 − p) loses about log2 A bits, and the block mass A grows with d on unit-scale inputs
(scores are sums of d products); the stable decode A = (1 + k)p/q reads q = 1 − p from the call and loses
nothing to it (``sim/two_heads/blocks.py``). For each d and decode this module runs Lemma 3.1 (paper scheme,
single head, the precision study's case at N, M, every query row) twice:

* in ``arb:BITS``: the bits the balls certify (``certify.certified_bits``);
* in ``float64``: the error bits against the precision study's truth, and the non-finite values the float64
  primitives created (``Float64.non_finite``), e.g. the division by 1 − p = 0 once p rounds to 1.

Each run is one *record* (:func:`decode_records`): what ran, its figures, and the command that reproduces the
float64 figure with ``attnsim check``. The report's table, plot and finding are computed from these records
(:func:`decode_finding`), never written by hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnsim.sim.numerics import get_numerics
from attnsim.sim.numerics.arb import Arb, ArbSpec
from attnsim.sim.two_heads.blocks import DECODES
from attnsim.verify.precision.certify import certified_bits
from attnsim.verify.precision.constructions import make_setup, run_construction
from attnsim.verify.precision.study import error_bits

DS = (4, 8, 16, 32)
BALL_BITS = 128


def command(N: int, M: int, d: int, decode: str, numerics: str) -> str:
    """The ``attnsim check`` command that measures the same construction on the same case.

    The paper's decode asks for no bits (``--min-bits 0``): by default a check allows the bits that decode loses
    on the case and refuses a format left with none, and this command is here to measure how many it keeps."""
    return (f"attnsim check two_heads.lemma_3_1 --N {N} --M {M} --d {d} --numerics {numerics}"
            + (f" --decode {decode}" if decode != "paper" else " --min-bits 0"))


def decode_records(ds: tuple[int, ...] = DS, N: int = 64, M: int = 8, seed: int = 0,
                   bits: int = BALL_BITS) -> list[dict[str, Any]]:
    """One record per (d, decode): certified bits at ``arb:bits`` and float64 error bits, every row of the case."""
    out = []
    for d in ds:
        setup = make_setup(N, M, d, seed, None)
        for decode in DECODES:
            balls = run_construction("paper", Arb(ArbSpec(bits)), setup, decode=decode)
            f64 = get_numerics("float64", seed)
            Y = np.asarray(run_construction("paper", f64, setup, decode=decode), float)
            bits64 = error_bits(Y, setup.truth) if np.isfinite(Y).all() else 0.0  # a NaN row agrees to nothing
            out.append({"study": "decode_by_d", "claim": "two_heads.lemma_3_1", "N": N, "M": M, "d": d,
                        "seed": seed, "decode": decode, "ball_numerics": f"arb:{bits}",
                        "certified_bits": certified_bits(balls)["certified_bits"],
                        "float64_error_bits": max(0.0, bits64), "float64_non_finite": dict(f64.non_finite),
                        "command": command(N, M, d, decode, "float64")})
    return out


def decode_table(records: list[dict[str, Any]]) -> list[str]:
    """Markdown: d against both decodes' certified bits (balls) and float64 error bits."""
    lines = ["| d | paper decode: certified bits (arb) | stable: certified bits (arb) | paper: float64 bits | "
             "stable: float64 bits | float64 non-finite (paper) |", "|---|---|---|---|---|---|"]
    by = {(r["d"], r["decode"]): r for r in records}
    for d in sorted({r["d"] for r in records}):
        p, s = by[(d, "paper")], by[(d, "stable")]
        nf = sum(p["float64_non_finite"].values())
        lines.append(f"| {d} | {p['certified_bits']:.1f} | {s['certified_bits']:.1f} | {p['float64_error_bits']:.1f} "
                     f"| {s['float64_error_bits']:.1f} | {nf or '—'} |")
    return lines


def plot_decodes(records: list[dict[str, Any]], path: Any) -> None:
    """Certified bits (balls) and float64 bits against d, both decodes."""
    from attnsim.verify.report.plots import figure, legend, save

    fig, (ax,) = figure(width=5.4, height=3.8)
    for decode, marker in zip(DECODES, ("o", "x")):
        rows = sorted((r for r in records if r["decode"] == decode), key=lambda r: r["d"])
        ds = [r["d"] for r in rows]
        ax.plot(ds, [r["certified_bits"] for r in rows], marker + "-",
                label=f"{decode}: certified ({rows[0]['ball_numerics']})")
        ax.plot(ds, [r["float64_error_bits"] for r in rows], marker + "--", label=f"{decode}: float64 error bits")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("d")
    ax.set_ylabel("bits")
    ax.set_title("Lemma 3.1: the paper's decode p/(1-p) vs the stable p/q")
    legend(ax)
    save(fig, path)


def decode_finding(records: list[dict[str, Any]]) -> str | None:
    """The front-page finding, from the records: the smallest d at which the paper's decode keeps under 1 bit in
    float64, and what the stable decode keeps there (None when the paper's decode never fails)."""
    paper = sorted((r for r in records if r["decode"] == "paper"), key=lambda r: r["d"])
    bad = [r for r in paper if r["float64_error_bits"] < 1]
    if not bad:
        return None
    r = bad[0]
    s = next(x for x in records if x["decode"] == "stable" and x["d"] == r["d"])
    nf = sum(r["float64_non_finite"].values())
    return (f"Lemma 3.1 in float64 agrees to {r['float64_error_bits']:.0f} bits at d = {r['d']} (N = {r['N']}, "
            f"M = {r['M']}, unit-scale random inputs; {nf} non-finite values created by the decode p/(1 − p)); the "
            f"stable decode p/q, same calls, keeps {s['float64_error_bits']:.1f} bits there, and ball arithmetic "
            f"certifies {r['certified_bits']:.0f} vs {s['certified_bits']:.0f} bits at {r['ball_numerics']} "
            f"(record: decode_by_d d={r['d']}; `{r['command']}`)")

