"""Each number the paper states about its experiments (§6, App. G) against ours, with a verdict.

A row is ``reproduced`` when ours meets the paper's statement as written, ``close`` when it misses by no more
than the row's stated tolerance, and ``differs`` otherwise, with the reason read off our own measurements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

MATCH2_TOLERANCE = 0.01
"""Match2: within one token in a hundred of the paper's 0 error is ``close``."""
LEARNED = 0.1
"""Match2: a best beta is only named, and a fall with ell only read, where Algorithm 1's error reaches at most this
(chance is about 0.5)."""
INDUCTION_READING = 0.05
"""Induction: the paper's "≈ 0.2" read as 0.2 ± 0.05 (``reproduced``)."""
INDUCTION_TOLERANCE = 0.10
"""Induction: within 0.10 of 0.2 is ``close``."""
RANDOM_GUESS = 0.75
"""Random guessing among the four letters (App. G.2)."""
TREND_POINTS = 3
"""A trend is read only over at least this many table counts (the correlation of two points is always ±1)."""
FALLS = -0.5
"""The error "falls with ell" (Match2, z = 1) or "with ell_1" (induction) only when its correlation with ell is at
most this (a correlation near 0 is a flat row, not a trend)."""


@dataclass(frozen=True)
class Row:
    """One statement of the paper, our number, the verdict and why."""

    statement: str
    paper: str
    ours: str
    verdict: str
    reason: str

    def cells(self) -> list[str]:
        """The row as table cells."""
        return [self.statement, self.paper, self.ours, self.verdict, self.reason]


HEADER = ["paper's statement", "paper", "ours", "verdict", "why"]


def _at_least(ells: list[int], low: int) -> list[int]:
    return [i for i, e in enumerate(ells) if e >= low]


def _correlation(xs: list[int], ys: np.ndarray) -> float | None:
    """The correlation of the error ``ys`` with the table counts ``xs`` (0 for a flat line); None below
    :data:`TREND_POINTS` counts, where no trend can be read."""
    if len(xs) < TREND_POINTS:
        return None
    return float(np.corrcoef(xs, ys)[0, 1]) if np.std(ys) > 0 else 0.0


def match2_rows(result: dict[str, Any]) -> list[Row]:
    """Match2, for each hash family run: 0 error at ell >= 8 with z = 1 (beta = 0.1), the error falling with ell at
    z = 1 (the shape of Fig. 1a), the best beta and the lowest cell; then the surrogate's own error."""
    config, betas = result["config"], result["betas"]
    rows = [row for family in config["families"] for row in _family_rows(config, betas, family)]
    soft = betas[f"{config['figure_beta']:g}"]["softmax_error"]
    rows.append(Row("softmax surrogate error, β = 0.1 (the baseline)", "not stated", f"{soft:.4f}", "—",
                    "what Algorithm 1's error is read against"))
    return rows


def _family_rows(config: dict[str, Any], betas: dict[str, Any], family: str) -> list[Row]:
    fig = betas[f"{config['figure_beta']:g}"]
    grid, tag = fig["grids"][family], f" [{family}]"
    cols = _at_least(config["ells"], 8)
    rows = []
    soft = fig["softmax_error"]
    if not cols or 1 not in grid["zs"]:
        rows.append(Row(f"Algorithm 1, β = 0.1, z = 1, ℓ ≥ 8: error{tag}", "0", "not measured", "differs",
                        "the grid run has no ℓ ≥ 8 at z = 1"))
    else:
        worst = max(grid["anna_mean"][grid["zs"].index(1)][i] for i in cols)
        if worst == 0:
            verdict, why = "reproduced", "every ℓ ≥ 8 cell is exactly 0 over all runs"
        elif worst <= MATCH2_TOLERANCE:
            verdict, why = "close", f"within the tolerance {MATCH2_TOLERANCE} of 0"
        elif soft > MATCH2_TOLERANCE:
            verdict, why = "differs", (f"the surrogate itself errs on {soft:.3f} of tokens with its softmax after "
                                       f"{fig['steps']} steps: the training did not reach the paper's model "
                                       f"(Algorithm 1 adds {worst - soft:+.3f}; the command's diagnosis and "
                                       "docs/experiments.md)")
        else:
            verdict, why = "differs", f"the softmax surrogate errs on {soft:.3f}; Algorithm 1 adds the rest"
        rows.append(Row(f"Algorithm 1, β = 0.1, z = 1, ℓ ≥ 8: error (max over ℓ of the mean of runs){tag}", "0",
                        f"{worst:.4f}", verdict, why))
    falls_row = f"z = 1: the error falls as ℓ grows (the shape of Fig. 1a){tag}"
    line = np.asarray(grid["anna_mean"][grid["zs"].index(1)]) if 1 in grid["zs"] else np.zeros(0)
    slope = _correlation(config["ells"], line) if len(line) else None
    if slope is None:
        rows.append(Row(falls_row, "falls to 0 by ℓ = 8", "not measured", "differs",
                        f"a trend needs z = 1 at {TREND_POINTS} or more ℓ (two points always correlate ±1)"))
    else:
        falls, learned = slope <= FALLS, float(line.min()) <= LEARNED
        at_zero = bool(cols) and max(line[i] for i in cols) <= MATCH2_TOLERANCE  # the statement itself: 0 by ℓ = 8
        rows.append(Row(falls_row, "falls to 0 by ℓ = 8",
                        f"{line[0]:.3f} at ℓ = {config['ells'][0]}, {line[-1]:.3f} at ℓ = {config['ells'][-1]} "
                        f"(correlation of ℓ with the error {slope:+.2f})",
                        "reproduced" if at_zero or falls and learned else "differs",
                        f"within {MATCH2_TOLERANCE} of 0 at every ℓ ≥ 8" if at_zero else
                        f"no ℓ solves Match2 here (every error > {LEARNED}): a trend in ℓ is noise" if not learned
                        else f"falls with ℓ, ending {line[-1] - soft:+.3f} from the surrogate's own softmax error"
                        if falls else f"does not fall with ℓ (correlation above {FALLS})"))
    best = {b: float(np.mean([v["grids"][family]["anna_mean"][v["grids"][family]["zs"].index(1)][i] for i in cols]))
            for b, v in betas.items() if cols and 1 in v["grids"][family]["zs"]}
    if len(best) < 2:
        rows.append(Row(f"best β (Algorithm 1 error, z = 1, mean over ℓ ≥ 8){tag}", "0.1", "not measured", "differs",
                        "fewer than two β were run (--betas)"))
    else:
        winner = min(best, key=lambda b: (best[b], float(b)))
        listing = ", ".join(f"β = {b}: {e:.4f} (softmax {betas[b]['softmax_error']:.4f})" for b, e in best.items())
        ok = winner == f"{config['figure_beta']:g}"
        learned = best[winner] <= LEARNED
        added = {b: e - betas[b]["softmax_error"] for b, e in best.items()}
        least = min(added, key=lambda b: (added[b], float(b)))
        rows.append(Row(f"best β (Algorithm 1 error, z = 1, mean over ℓ ≥ 8){tag}", "0.1", f"{winner} ({listing})",
                        "reproduced" if ok and learned else "differs",
                        f"no β's model solves Match2 here (every error > {LEARNED}): which is lowest says nothing"
                        if not learned else "lowest mean error" if ok else
                        "another β has the lower Algorithm 1 error here; by the error Algorithm 1 adds to its own "
                        f"softmax, β = {least} is lowest ("
                        + ", ".join(f"{b}: {a:+.4f}" for b, a in added.items()) + ")"))
    lowest = float(np.min(grid["anna_mean"]))
    rows.append(Row(f"β = 0.1 can reach 0 error (lowest cell of the grid){tag}", "0", f"{lowest:.4f}",
                    "reproduced" if lowest == 0 else "close" if lowest <= MATCH2_TOLERANCE else "differs",
                    "a cell with every run exact" if lowest == 0 else
                    f"softmax surrogate error {soft:.4f} after {fig['steps']} steps"))
    return rows


def induction_rows(result: dict[str, Any]) -> list[Row]:
    """Induction heads, for each hash family run: the error at (ell_1, ell_2) = (32, 4), random guessing, and the
    trend with ell_1; then the surrogate's own error."""
    config, soft = result["config"], result["softmax_error"]
    rows = [row for family in config["families"] for row in _induction_family_rows(result, family)]
    rows.append(Row("softmax surrogate error, β = 1 (the baseline)", "not stated", f"{soft:.3f}", "—",
                    f"after {result['steps']} steps (paper: 400,000)"))
    return rows


def _induction_family_rows(result: dict[str, Any], family: str) -> list[Row]:
    config, grid, tag = result["config"], result["grids"][family], f" [{family}]"
    mean = np.asarray(grid["anna_mean"])  # z x ell_1 x ell_2
    best = np.asarray(grid["anna_best"])
    soft = result["softmax_error"]
    rows = []
    e1, e2, zs = config["ells1"], config["ells2"], config["zs"]
    if not (32 in e1 and 4 in e2):
        rows.append(Row(f"error at ℓ₁ = 32, ℓ₂ = 4{tag}", "≈ 0.2", "not measured", "differs",
                        "the grid run has no such cell"))
    else:
        i, j = e1.index(32), e2.index(4)
        cells = [("z = 2", mean[zs.index(2), i, j])] if 2 in zs else []
        cells.append(("min over z", best[i, j]))
        for name, v in cells:
            gap = abs(v - 0.2)
            verdict = "reproduced" if gap <= INDUCTION_READING else "close" if gap <= INDUCTION_TOLERANCE else "differs"
            short = (f"the softmax surrogate itself errs on {soft:.3f} after {result['steps']} of the paper's "
                     "400,000 steps")
            why = (f"within ±{INDUCTION_READING} of 0.2" if verdict == "reproduced" else
                   f"within ±{INDUCTION_TOLERANCE} of 0.2" if verdict == "close" else
                   short if soft > 0.2 + INDUCTION_TOLERANCE else "Algorithm 1 adds error the softmax has not")
            rows.append(Row(f"error at ℓ₁ = 32, ℓ₂ = 4, {name}{tag}", "≈ 0.2", f"{v:.3f}", verdict, why))
        v = float(best[i, j])
        rows.append(Row(f"below random guessing at ℓ₁ = 32, ℓ₂ = 4{tag}", f"< {RANDOM_GUESS}", f"{v:.3f}",
                        "reproduced" if v < RANDOM_GUESS else "differs",
                        "below the four-letter guess" if v < RANDOM_GUESS else "no better than guessing"))
    by_ell1 = best.min(axis=1)
    slope = _correlation(e1, by_ell1)
    if slope is None:
        rows.append(Row(f"more layer-1 tables lower the error, below 0.1{tag}", "< 0.1 at large ℓ₁", "not measured",
                        "differs", f"a trend needs {TREND_POINTS} or more ℓ₁ (two points always correlate ±1)"))
        return rows
    low = float(by_ell1[-1])
    learned = float(by_ell1.min()) < RANDOM_GUESS
    rows.append(Row(f"more layer-1 tables lower the error, below 0.1{tag}", "< 0.1 at large ℓ₁",
                    f"{low:.3f} at ℓ₁ = {e1[-1]} (correlation of ℓ₁ with the error {slope:+.2f})",
                    "differs" if not learned else
                    "reproduced" if low < 0.1 and slope <= FALLS else "close" if slope <= FALLS else "differs",
                    f"no ℓ₁ does better than random guessing ({RANDOM_GUESS}): a trend in ℓ₁ is noise" if not learned
                    else "falls with ℓ₁ and ends below 0.1" if low < 0.1 and slope <= FALLS else
                    "falls with ℓ₁ but stays above 0.1" if slope <= FALLS else
                    f"does not fall with ℓ₁ (correlation above {FALLS})"))
    return rows
