"""Report part "bits needed per Two Heads construction": one table over all constructions.

Rows: two_heads.lemma_3_1 (paper and fused schemes), two_heads.thm_3_4 (unmasked, packed),
two_heads.thm_3_5 (causal), two_heads.thm_5_1 (sliding window r + s sinks), each beside direct
attention under the *same mask* in the same formats; columns: bits needed (format width, float
family with 8 exponent bits) per N, the fitted slope in bits per doubling of N with R², and the
verdict of :func:`attnsim.verify.precision.study.verdict`. Then the error against the number of merged
blocks N/M at float:fp32 for each construction. The Lemma 3.1 rows come from the section's own
Lemma 3.1 study (same grid), so nothing is computed twice; direct attention without a mask is
shared by Lemma 3.1 and Thm 3.4.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from attnsim.verify.precision.study import TARGET, bits_study, blocks_study

WINDOW_FRACTION = 4  # thm_5_1: window r = M/4 and one sink, the CLI's defaults


def _rows_spec() -> list[tuple[str, str, str, str]]:
    """(label, claim, construction, mask) in table order."""
    return [("Lemma 3.1, paper scheme", "two_heads.lemma_3_1", "paper", "none"),
            ("Lemma 3.1, fused scheme", "two_heads.lemma_3_1", "fused", "none"),
            ("Thm 3.4 (packed), paper scheme", "two_heads.thm_3_4", "paper", "none"),
            ("direct attention", "two_heads.lemma_3_1", "direct", "none"),
            ("Thm 3.5, paper scheme", "two_heads.thm_3_5", "paper", "causal"),
            ("direct attention", "two_heads.thm_3_5", "direct", "causal"),
            ("Thm 5.1, paper scheme", "two_heads.thm_5_1", "paper", "window + sinks"),
            ("direct attention", "two_heads.thm_5_1", "direct", "window + sinks")]


def claims_study(Ns: list[int], M: int, sample: int, lemma: dict[str, Any],
                 lemma_blocks: dict[str, Any] | None = None) -> dict[str, Any]:
    """Bits studies of Thm 3.4, 3.5 and 5.1 (float family) next to ``lemma``, a Lemma 3.1 study on Ns, M;
    with ``lemma_blocks`` (Lemma 3.1's error-vs-blocks study at float:fp32 on Ns, M) the same for each."""
    studies: dict[str, Any] = {"two_heads.lemma_3_1": lemma}
    wanted = {"two_heads.thm_3_4": ("paper",), "two_heads.thm_3_5": ("paper", "direct"),
              "two_heads.thm_5_1": ("paper", "direct")}
    window = max(1, M // WINDOW_FRACTION)
    for claim, cons in wanted.items():
        extra = dict(window=window, sinks=1) if claim == "two_heads.thm_5_1" else {}
        studies[claim] = bits_study(Ns, M, "float", TARGET, cons, sample_blocks=sample, claim=claim, **extra)
    out: dict[str, Any] = {"Ns": Ns, "M": M, "window": window, "sinks": 1, "studies": studies, "blocks": {}}
    if lemma_blocks is not None:
        out["blocks"]["two_heads.lemma_3_1"] = lemma_blocks
        for claim, cons in wanted.items():
            extra = dict(window=window, sinks=1) if claim == "two_heads.thm_5_1" else {}
            out["blocks"][claim] = blocks_study(Ns, M, "float:fp32", cons, sample_blocks=sample, claim=claim, **extra)
    return out


def claims_table(study: dict[str, Any]) -> list[str]:
    """Markdown table: bits needed per construction and N, the slope per doubling and the verdict."""
    Ns = study["Ns"]
    md = ["| construction | mask | " + " | ".join(f"N={N}" for N in Ns) + " | slope (bits per doubling of N) | R² | "
          "verdict |", "|---|---|" + "---|" * len(Ns) + "---|---|---|"]
    for label, claim, con, mask in _rows_spec():
        v = study["studies"][claim]["constructions"][con]
        cells = ["not reached" if w is None else str(w) for w in v["width"]]
        md.append(f"| {label} | {mask} | " + " | ".join(cells) + f" | {v['slope']:+.2f} | {v['r2']:.2f} | "
                  f"{v['verdict']} |")
    return md


def blocks_lines(study: dict[str, Any]) -> list[str]:
    """Markdown lines on which blocks of each construction need the most bits."""
    md = []
    for label, claim, con, mask in _rows_spec():
        bl = study["blocks"].get(claim)
        if not bl or con not in bl["rows"]:
            continue
        pts = ", ".join(f"n={r['n']}: {r['error_bits']:.1f}" if math.isfinite(r["error_bits"]) else f"n={r['n']}: fail"
                        for r in bl["rows"][con])
        md.append(f"- {label} ({mask}): {pts} (slope {bl['fits'][con]['slope']:+.2f} bits per doubling of n, "
                  f"R² {bl['fits'][con]['r2']:.2f})")
    return md


def plot_claims(study: dict[str, Any], path: Path) -> None:
    """Plot bits needed against N for every construction."""
    import numpy as np

    from attnsim.verify.report.plots import figure, save

    fig, flat = figure(2 if study["blocks"] else 1, width=5.4, height=4.6)
    axes = [flat]
    markers = "oxs^vD<>"  # Lemma 3.1 paper/fused and Thm 3.4 often coincide; distinct markers keep all visible
    for k, (label, claim, con, mask) in enumerate(_rows_spec()):
        v = study["studies"][claim]["constructions"][con]
        pts = [(N, w) for N, w in zip(v["N"], v["width"]) if w is not None]
        style = markers[k] + ("--" if con == "direct" else "-")
        if pts:
            axes[0][0].plot(np.log2([p[0] for p in pts]), [p[1] for p in pts], style, label=f"{label} ({mask})",
                            alpha=0.8)
        bl = study["blocks"].get(claim)
        if bl and con in bl["rows"]:
            good = [(r["n"], r["error_bits"]) for r in bl["rows"][con] if math.isfinite(r["error_bits"])]
            axes[0][1].plot(np.log2([g[0] for g in good]), [g[1] for g in good], style, alpha=0.8)
    axes[0][0].set_xlabel("log2 N")
    axes[0][0].set_ylabel("bits needed (float width, E = 8)")
    axes[0][0].set_title(f"bits needed for error <= 2^{math.log2(TARGET):.0f}, M = {study['M']}")
    if study["blocks"]:
        axes[0][1].set_xlabel("log2 (N/M), merged blocks")
        axes[0][1].set_ylabel("error bits at float:fp32")
        axes[0][1].set_title("error vs merged blocks")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=3)
    save(fig, path)
