"""Fig. 1a and Fig. 1b of the paper, redrawn from our measured grids (the report's plot style)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from attnsim.verify.report.plots import MARKERS, figure, save


def match2_figure(result: dict[str, Any], path: Path) -> Path:
    """Fig. 1a: Algorithm 1's Match2 test error against ell, one line per z, at the figure's beta, one panel per
    hash family run; the surrogate's own softmax error dashed."""
    config = result["config"]
    beta = result["betas"][f"{config['figure_beta']:g}"]
    families = config["families"]
    fig, axes = figure(ncols=len(families))
    top = max(max(max(row) for row in beta["grids"][f]["anna_mean"]) for f in families)
    for ax, family in zip(axes, families):
        grid = beta["grids"][family]
        for i, (z, errs) in enumerate(zip(grid["zs"], grid["anna_mean"])):
            ax.plot(config["ells"], errs, marker=MARKERS[i % len(MARKERS)], label=f"z = {z}")
        ax.axhline(beta["softmax_error"], color="black", linestyle="--", linewidth=1, label="softmax surrogate")
        ax.set_ylim(0, 1.05 * max(top, beta["softmax_error"]) or 1)
        ax.set_xlabel("ℓ (hash tables)")
        ax.set_ylabel(f"test error (mean of {config['runs']} runs)")
        ax.set_title(f"Match2, β = {config['figure_beta']:g}, {beta['steps']} steps; {family} LSH")
        ax.legend()
    save(fig, path)
    return path


def induction_figure(result: dict[str, Any], path: Path) -> Path:
    """Fig. 1b: induction-heads test error with Algorithm 1 in both layers, one heat map per hash family run; rows
    ell_1, columns ell_2; each cell the mean of the runs, minimised over z."""
    config = result["config"]
    families = config["families"]
    grids = [np.asarray(result["grids"][f]["anna_best"]) for f in families]
    top = max(0.75, max(float(g.max()) for g in grids))
    fig, axes = figure(ncols=len(families), width=5.6, height=4.4)
    for ax, family, grid in zip(axes, families, grids):
        im = ax.imshow(grid, cmap="viridis_r", vmin=0, vmax=top, aspect="auto")
        ax.set_xticks(range(len(config["ells2"])), [str(e) for e in config["ells2"]])
        ax.set_yticks(range(len(config["ells1"])), [str(e) for e in config["ells1"]])
        ax.set_xlabel("ℓ₂ (layer-2 tables)")
        ax.set_ylabel("ℓ₁ (layer-1 tables)")
        ax.grid(False)
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6.5, color="white" if v > 0.4 else "black")
        ax.set_title(f"Induction heads, β = {config['beta']:g}, {result['steps']} steps, {family} LSH; "
                     "min over z")
        fig.colorbar(im, ax=ax, label="test error")
    save(fig, path)
    return path
