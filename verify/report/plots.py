"""The report's one style for every figure (matplotlib, Agg).

Every figure of the report, the per-topic sections' and the generic per-claim plots'
(:mod:`attnsim.verify.report.claim_plots`) included, is made by :func:`figure` and written by :func:`save`: one
set of fonts and sizes (:data:`STYLE`, readable at page width), ≥ 150 dpi, a light grid, and :func:`log_axes` for
logarithmic axes with enough labelled ticks to read values off.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.font_manager import FontProperties  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator  # noqa: E402
from matplotlib.transforms import ScaledTranslation  # noqa: E402

DPI = 160
STYLE = {"font.size": 10, "axes.titlesize": 10.5, "axes.labelsize": 10, "legend.fontsize": 8.5,
         "xtick.labelsize": 9, "ytick.labelsize": 9, "figure.titlesize": 11, "axes.grid": True,
         "grid.alpha": 0.3, "grid.linewidth": 0.6, "lines.markersize": 6, "legend.framealpha": 0.85,
         "savefig.dpi": DPI, "figure.dpi": DPI, "axes.spines.top": False, "axes.spines.right": False,
         "axes.titley": 1.0}
"""``axes.titley`` fixed at the top of the panel: no plot draws tick labels above a panel, and matplotlib's search
for them measures the panel's y axis once more per title (a tenth of the claim sections' CPU)."""
PAD = 4.0
"""Points between a panel's texts and their neighbours (and the figure's edge)."""
MIN_PANEL = 1.6
"""Inches of a panel's height that texts around it never squeeze away (the figure grows instead)."""
BELOW = "attnsim-legend-below"
"""The gid of a panel legend that :func:`save` places under the panel."""
MARKERS = "osD^v<>p*h"


def figure(ncols: int = 1, nrows: int = 1, width: float = 5.0, height: float = 3.6,
           panels: int | None = None) -> tuple[Any, list[Any]]:
    """A figure in the report's style with a grid of ``nrows × ncols`` places of ``width × height`` inches each
    (their labels and titles included; :func:`save` lays them out), the first ``panels`` of them (default:
    all) holding a panel, row by row."""
    plt.rcParams.update(STYLE)
    fig = plt.figure(figsize=(width * ncols, height * nrows))
    return fig, [fig.add_subplot(nrows, ncols, k + 1) for k in range(panels or nrows * ncols)]


def wrap(text: str, inches: float, size: float) -> str:
    """``text`` broken at spaces into lines that fit ``inches`` at ``size`` points (a glyph is about 0.6 em wide
    on average): a long bound in a panel title would run into its neighbour's, a long label past the figure."""
    return textwrap.fill(text, max(12, int(inches * 72 / (0.6 * size))))


def _inches(artist: Any, renderer: Any) -> tuple[float, float]:
    """(width, height) in inches of a text or legend; nothing for an empty or hidden one."""
    if not artist.get_visible() or (hasattr(artist, "get_text") and not artist.get_text()):
        return 0.0, 0.0
    box = artist.get_window_extent(renderer)
    return box.width / renderer.dpi, box.height / renderer.dpi


def _tick_labels(axis: Any, renderer: Any) -> tuple[float, float]:
    """(width, height) in inches of the widest and tallest tick label (major or minor) plus its tick and pad,
    from the locators and formatters alone (no tick is built)."""
    lo, hi = sorted(axis.get_view_interval())
    font = FontProperties(size=plt.rcParams[f"{axis.axis_name}tick.labelsize"])
    sizes = [(0.0, 0.0)]
    for ticks, locs in ((axis.major, axis.get_majorticklocs()), (axis.minor, axis.get_minorticklocs())):
        labels = ticks.formatter.format_ticks([v for v in locs if lo <= v <= hi])
        sizes += [renderer.get_text_width_height_descent(s, font, ismath="$" in s)[:2] for s in labels if s]
    extra = (plt.rcParams["xtick.major.size"] + plt.rcParams["xtick.major.pad"]) * renderer.dpi / 72
    return (max(w for w, _ in sizes) + extra) / renderer.dpi, (max(h for _, h in sizes) + extra) / renderer.dpi


def _arrange(fig: Any) -> None:
    """Lay the panels out on a grid with room, measured from the texts themselves, for tick labels, axis
    labels and titles around each panel, a figure title above, and legends below (the figure's, and a
    panel's placed below it by :func:`legend`). One pass of text metrics: a layout engine would build and
    measure every tick, twice, before the figure is drawn once more."""
    renderer = fig.canvas.get_renderer()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    if not axes:
        return
    nrows, ncols = fig.axes[0].get_subplotspec().get_gridspec().get_geometry()
    pad = PAD / 72
    xticks = [_tick_labels(ax.xaxis, renderer) for ax in axes]
    left = max(_tick_labels(ax.yaxis, renderer)[0] + _inches(ax.yaxis.label, renderer)[0] for ax in axes) + 2 * pad
    under = max(h + _inches(ax.xaxis.label, renderer)[1] for ax, (_, h) in zip(axes, xticks)) + pad
    for ax in axes:  # a legend placed below its panel goes under the x label
        leg = ax.get_legend()
        if leg is not None and leg.get_gid() == BELOW:
            leg.set_bbox_to_anchor((0.5, 0), transform=ax.transAxes + ScaledTranslation(0, -under, fig.dpi_scale_trans))
    below = max((_inches(leg, renderer)[1] + pad for ax in axes if (leg := ax.get_legend()) is not None
                 and leg.get_gid() == BELOW), default=0.0)
    over = max(_inches(ax.title, renderer)[1] for ax in axes) + 2 * pad
    lines = fig.get_suptitle().count("\n") + 1 if fig.get_suptitle() else 0
    title = lines * plt.rcParams["figure.titlesize"] * 1.3 / 72 + pad if lines else 0.0
    top = over + title
    bottom = under + below + pad + sum(_inches(leg, renderer)[1] + pad for leg in fig.legends)
    width, height = fig.get_size_inches()
    wrapped = (nrows * max(ax.get_title().count("\n") for ax in axes) * plt.rcParams["axes.titlesize"] * 1.2
               + max(lines - 1, 0) * plt.rcParams["figure.titlesize"] * 1.3) / 72
    if wrapped:  # a title's extra lines (:func:`wrap`) make the figure taller, not its panels shorter
        height += wrapped
        fig.set_size_inches(width, height)
    right = max(w for w, _ in xticks) / 2 + pad  # the last x label overhangs
    needed = top + bottom + nrows * MIN_PANEL + (nrows - 1) * (over + under + below)
    if height < needed:  # long legends and titles make the figure taller, never a panel too short to draw
        height = needed
        fig.set_size_inches(width, height)
    panel_w = (width - left - right - (ncols - 1) * (left + right)) / ncols
    panel_h = (height - top - bottom - (nrows - 1) * (over + under + below)) / nrows
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height,
                        wspace=(left + right) / panel_w, hspace=(over + under + below) / panel_h)


def save(fig: Any, path: Path, dpi: int = DPI) -> None:
    """Lay ``fig`` out (:func:`_arrange`), draw it once and write it to ``path`` at ``dpi`` (fast zlib: the
    report inlines every plot, drawing is what costs) and free it; a refused write names ``path`` (not
    "stdout")."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.set_dpi(dpi)
        _arrange(fig)
        fig.savefig(path, dpi=dpi, pil_kwargs={"compress_level": 1})
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    finally:
        plt.close(fig)


def legend(ax: Any, entries: int | None = None) -> None:
    """A legend inside the panel; below it when there are more than five entries."""
    labels = ax.get_legend_handles_labels()[1]
    n = entries if entries is not None else len(labels)
    if n == 0:
        return
    if n > 5 or any("\n" in label for label in labels):  # :func:`save` anchors it under the x label
        ax.legend(loc="upper center", ncol=2 if n > 5 else 1, frameon=False).set_gid(BELOW)
    else:
        ax.legend(loc="best")


def _plain(v: float, _: Any = None) -> str:
    return f"{v:g}" if 1e-3 <= abs(v) < 1e6 or v == 0 else f"{v:.0e}"


def log_axes(ax: Any, x: bool = True, y: bool = True) -> None:
    """Logarithmic axes with plain labels: powers of 2 across a short range, 1-2-5 steps across a long one; no
    minor ticks (unlabelled, off the powers of 2, and a third of the cost of drawing the report's plots)."""
    for flag, axis, scale in ((x, ax.xaxis, ax.set_xscale), (y, ax.yaxis, ax.set_yscale)):
        if not flag:
            continue
        scale("log")
        lo, hi = sorted(axis.get_data_interval())
        span = hi / lo if lo > 0 and math.isfinite(hi / lo) else 1e9
        if span < 1e3:
            axis.set_major_locator(LogLocator(base=2, numticks=12))
        else:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
        axis.set_major_formatter(FuncFormatter(_plain))
        axis.set_minor_locator(NullLocator())


def formula_text(formula: Any, paper: str | None = None) -> str:
    """A bound in a title, in the notation of :mod:`attnsim.theory.notation` (``O(n²·H/(H′·L′))``)."""
    from attnsim.theory.notation import bound_text

    return bound_text(formula, paper)
