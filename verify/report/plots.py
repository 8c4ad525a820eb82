"""Generic per-claim plots of the report, drawn from check records only (matplotlib, Agg backend).

- ``<claim>_counts.png``: every counted resource that varies over the sweep (calls first, at most
  three), measured (dots) and predicted by the exact formula (crosses) against N/M (or the claim's
  limit variable, when it is a parameter), with the paper's bound times c = max measured/bound
  over the sweep (dashed; the symbolic leading constant when no bound value is known): every dot
  on or below it; log-log when every value is positive.
- ``<claim>_error.png``: bits of agreement against the numerics' precision in bits (``mp:B`` → B,
  ``float64`` → 53), with the line "agreement = precision".

Papers add their own figures through ``report_section``. Plots are small (a few per claim) so that
the quick report stays cheap.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

MAX_PANELS = 3
_BITS = {"float64": 53, "float32": 24, "bf16": 8, "fp16": 11}


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def x_value(record: dict[str, Any], limit: str) -> tuple[str, float] | None:
    """The x axis of a record's plot: N/M when both are set, else the claim's limit variable."""
    p = record.get("params", {})
    if _num(p.get("N")) and _num(p.get("M")):
        return "N/M", p["N"] / p["M"]
    if _num(p.get(limit)):
        return limit, float(p[limit])
    return None


def precision_bits(numerics: str | None) -> float | None:
    """Mantissa bits of a numerics name (``mp:BITS``, ``float64``, ``float32``, ...), or None."""
    if not numerics:
        return None
    if m := re.match(r"^mp:(\d+)$", numerics):
        return float(m.group(1))
    for name, bits in _BITS.items():
        if name in numerics:
            return float(bits)
    return None


def _loglog(ax: Any) -> None:
    """Log-log axes with plain tick labels (no mathtext: cheaper to draw, same information)."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(plain)
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(NullFormatter())


def _constant(summary: dict[str, Any], resource: str) -> float:
    try:
        return float(summary["resources"][resource]["leading_constant"])
    except (KeyError, TypeError, ValueError):
        return 1.0


def counts_plot(summary: dict[str, Any], records: list[dict[str, Any]], path: Path) -> bool:
    """Measured vs predicted vs bound per resource; False (and no file) when nothing varies."""
    pts = [(x_value(r, summary["limit"]), r) for r in records]
    pts = [(x, r) for x, r in pts if x is not None]
    if len(pts) < 2:
        return False
    xlabel = pts[0][0][0]
    panels = []
    for res in summary["resources"]:
        rows = [(x[1], _num(r.get("counts", {}).get(res)), _num(r.get("predicted", {}).get(res)),
                 _num((r.get("bounds", {}).get(res) or {}).get("value"))) for x, r in pts]
        rows = [row for row in rows if row[1] is not None]
        if len({row[1] for row in rows}) > 1:
            panels.append((res, sorted(rows)))
    panels.sort(key=lambda p: p[0] != "calls")
    panels = panels[:MAX_PANELS]
    if not panels:
        return False
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    for ax, (res, rows) in zip(axes[0], panels):
        xs = [r[0] for r in rows]
        ax.plot(xs, [r[1] for r in rows], "o", label="measured")
        pred = [(r[0], r[2]) for r in rows if r[2] is not None]
        if pred:
            ax.plot(*zip(*pred), "x", markersize=9, label="exact formula")
        ratios = [r[1] / r[3] for r in rows if r[3]]
        c = max(ratios) if ratios else _constant(summary, res)
        bound = sorted({(r[0], c * r[3]) for r in rows if r[3] is not None})
        if bound:
            unique_x = len({b[0] for b in bound}) == len(bound)
            ax.plot(*zip(*bound), "--" if unique_x else "_", markersize=14,
                    label=f"{c:.3g} × bound O({summary['resources'][res]['bound']})")
        values = [v for r in rows for v in r[1:] if v is not None] + xs
        if min(values) > 0:
            _loglog(ax)
        ax.set_xlabel(xlabel)
        ax.set_title(res)
        ax.legend(fontsize=7)
    fig.suptitle(f"{summary['label']} ({summary['id']})", fontsize=9)
    fig.subplots_adjust(left=0.1, right=0.97, bottom=0.16, top=0.82, wspace=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=72)
    plt.close(fig)
    return True


def error_plot(summary: dict[str, Any], records: list[dict[str, Any]], path: Path) -> bool:
    """Bits of agreement vs precision bits; False when fewer than two precisions were run."""
    pts = [(precision_bits(r.get("numerics")), _num(r.get("error_bits")), r.get("agree")) for r in records]
    pts = [p for p in pts if p[0] is not None and p[1] is not None]
    if len({p[0] for p in pts}) < 2:  # one precision says nothing about the trend
        return False
    fig, ax = plt.subplots(figsize=(4.2, 3.4))
    for ok, marker, label in ((True, "o", "agrees"), (False, "s", "does not agree")):
        sel = [(p[0], p[1]) for p in pts if bool(p[2]) is ok]
        if sel:
            ax.plot(*zip(*sel), marker, linestyle="none", label=label)
    lo, hi = min(p[0] for p in pts), max(p[0] for p in pts)
    ax.plot([lo, hi], [lo, hi], ":", label="agreement = precision")
    ax.set_xlabel("precision (bits)")
    ax.set_ylabel("agreement (bits)")
    ax.set_title(f"{summary['label']}: error vs bits", fontsize=9)
    ax.legend(fontsize=7)
    fig.subplots_adjust(left=0.16, right=0.97, bottom=0.15, top=0.9)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=72)
    plt.close(fig)
    return True
