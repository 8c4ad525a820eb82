"""The report's plots: one style for every figure, and the generic per-claim plots (matplotlib, Agg).

Every figure of the report, the per-topic sections' included, is made by :func:`figure` and written by
:func:`save`: one set of fonts and sizes (:data:`STYLE`, readable at page width), ≥ 150 dpi, a light
grid, and :func:`log_axes` for logarithmic axes with enough labelled ticks to read values off.

Generic plots, drawn from check records only:

- ``<claim>_counts.png``: every counted resource that varies over the sweep (calls first, at most
  three) against the bound's own variable (the claim's limit variable, ``n = ceil(N/b)`` for Lemma 3.1;
  N/M where a record does not fix it): measured (dots) and predicted by the exact formula (crosses) per
  series of fixed parameters, and the bound drawn with the constant that decided it, named in the legend
  (:func:`deciding_line`).
- ``<claim>_error.png``: bits of agreement against the numerics' precision in bits, for every
  numerics in the claim's table (``mp:B`` → B, ``float64`` → 53, ``float:E.M`` → M + 1,
  ``fixed:qI.F`` → F); exact numerics are drawn at the right edge, labelled "exact".
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any, Sequence

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
MAX_PANELS = 3
PAD = 4.0
"""Points between a panel's texts and their neighbours (and the figure's edge)."""
MIN_PANEL = 1.6
"""Inches of a panel's height that texts around it never squeeze away (the figure grows instead)."""
BELOW = "attnsim-legend-below"
"""The gid of a panel legend that :func:`save` places under the panel."""
MARKERS = "osD^v<>p*h"
_EXACT = ("exact", "fraction", "symbolic")


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


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def x_value(record: dict[str, Any], limit: str) -> tuple[str, float] | None:
    """(name, value) of the x axis of a counts plot: the bound's own variable (the record's size, the claim's
    limit variable), else N/M when both are parameters."""
    size = record.get("size") or {}
    if _num(size.get("value")) and size.get("var"):
        return str(size["var"]), float(size["value"])
    p = record.get("params", {})
    if _num(p.get(limit)):
        return limit, float(p[limit])
    if _num(p.get("N")) and _num(p.get("M")):
        return "N/M", p["N"] / p["M"]
    return None


def deciding_line(entry: dict[str, Any], containment: dict[str, Any] | None) -> tuple[str, float] | None:
    """(what, value) of the bound line a record's resource is held to, with the constant that decided it: the
    proof's upper formula; the paper's constant or a frozen one times the bound; the bound times the limit of
    exact count / bound (a tight containment's leading constant). None when no constant decides (the growth test
    judges the bound's shape only)."""
    value = _num(entry.get("value"))
    upper = _num((entry.get("upper") or {}).get("value"))
    if upper is not None:
        return f"proof's upper formula {entry['upper'].get('formula', '')} (decides: measured <= it)", upper
    if value is None:
        return None
    if entry.get("constant") == "paper" and _num(entry.get("C")):
        return f"{entry['C']:g} × bound (the paper's constant, {entry.get('stated_by')})", entry["C"] * value
    lead = _num(_number((containment or {}).get("leading_constant_here")))
    if (containment or {}).get("verdict") == "tight" and lead:
        return f"{lead:.3g} × bound (limit of exact count / bound: the exact count decides)", lead * value
    if entry.get("constant") == "frozen" and _num(entry.get("C")):
        return (f"{entry['C']:g} × bound (frozen at {entry.get('calibrated_at'):g}: a guard; the growth test "
                "decides)"), entry["C"] * value
    return None


def _number(text: Any) -> Any:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def precision_bits(numerics: str | None) -> float | None:
    """Bits of precision of a numerics name (None for exact numerics and unknown names)."""
    if not numerics or numerics.split(":")[0] in _EXACT:
        return None
    kind, _, rest = numerics.partition(":")
    if kind == "mp":
        return float(rest.split(":")[0]) if rest.split(":")[0].isdigit() else None
    if kind == "float64":
        return 53.0
    if kind in ("float", "fixed") and rest:
        from attnsim.sim.numerics.fixed_formats import parse_format

        try:
            return float(parse_format(kind, rest.split(":")[0]).bits)
        except ValueError:
            return None
    return None


def _series_key(record: dict[str, Any], xname: str, limit: str) -> tuple:
    """The parameters held fixed along one curve (everything but the x variables), and the numerics."""
    varying = {"N", "M", limit, xname}
    p = record.get("params", {})
    return tuple(sorted((k, str(v)) for k, v in p.items() if k not in varying and v is not None))


def _series_label(key: tuple, keys: Sequence[tuple]) -> str:
    """Only the parameters that differ between series (the others are the same for all)."""
    differing = {k for k, _ in key if len({dict(other).get(k) for other in keys}) > 1}
    return ", ".join(f"{k}={v}" for k, v in key if k in differing) or "all checks"


def counts_plot(summary: dict[str, Any], records: list[dict[str, Any]], path: Path) -> bool:
    """Measured vs predicted vs bound per resource; False (and no file) when nothing varies."""
    pts = [(x_value(r, summary["limit"]), r) for r in records]
    pts = [(x, r) for x, r in pts if x is not None]
    if len(pts) < 2:
        return False
    xname = pts[0][0][0]
    panels = []
    for res in summary["resources"]:
        rows = [(x[1], _num(r.get("counts", {}).get(res)), _num(r.get("predicted", {}).get(res)),
                 _num((r.get("bounds", {}).get(res) or {}).get("value")), _series_key(r, xname, summary["limit"]),
                 deciding_line((r.get("bounds") or {}).get(res) or {}, (r.get("containment") or {}).get(res)))
                for x, r in pts]
        rows = [row for row in rows if row[1] is not None]
        if len({row[1] for row in rows}) > 1:
            panels.append((res, sorted(rows, key=lambda row: row[0])))
    panels.sort(key=lambda p: p[0] != "calls")
    panels = panels[:MAX_PANELS]
    if not panels:
        return False
    fig, axes = figure(len(panels), width=4.0, height=3.4)
    handles: dict[str, Any] = {}
    for ax, (res, rows) in zip(axes, panels):
        keys = list(dict.fromkeys(row[4] for row in rows))
        decided = all(row[5] is not None for row in rows if row[3] is not None)
        ratios = [row[1] / row[3] for row in rows if row[3]]
        c = None if decided else (ratios[0] if ratios else None)
        for k, key in enumerate(keys):
            mine = [row for row in rows if row[4] == key]
            label = _series_label(key, keys) if len(keys) > 1 else "measured"
            line = ax.plot([r[0] for r in mine], [r[1] for r in mine], MARKERS[k % len(MARKERS)], label=label)[0]
            pred = [(r[0], r[2]) for r in mine if r[2] is not None]
            if pred:
                ax.plot(*zip(*pred), "x", color="black", markersize=8, label="exact formula" if k == 0 else None)
            if decided:
                bound = sorted({(r[0], r[5][1]) for r in mine if r[5] is not None})
                what = next((r[5][0] for r in mine if r[5] is not None), "")
            else:  # no constant decides: the bound's shape, through the first point (the growth test's question)
                bound = sorted({(r[0], c * r[3]) for r in mine if r[3] is not None and c})
                what = f"bound × {c:.3g} (through the first point: shape only, the growth test decides)" if c else ""
            if bound:  # a curve per series; a series of one point gets a bar at its bound
                ax.plot(*zip(*bound), "--" if len(bound) > 1 else "_", markersize=16, color=line.get_color(),
                        alpha=0.8, label=what if k == 0 else None)
        positive = all(v > 0 for row in rows for v in (row[0], row[1]))
        if positive:
            log_axes(ax)
        ax.set_xlabel(xname)
        ax.set_ylabel(res)
        bound = summary["resources"][res]["bound"]
        ax.set_title(wrap(f"{res}: {formula_text(bound, summary['paper'])}" if bound else
                          f"{res} (exact count only)", 4.0, STYLE["axes.titlesize"]))
        handles.update({lab: h for h, lab in zip(*ax.get_legend_handles_labels()) if lab not in handles})
    # one legend for every panel, below them: the series are the same in each
    labels = [wrap(label, 4.0 * len(panels), STYLE["legend.fontsize"]) for label in handles]
    widest = max(len(line) for label in labels for line in label.split("\n"))
    columns = max(1, min(3, len(handles), int(len(panels) * 4.0 * 72 / 5.5 / (widest + 6))))
    fig.legend(list(handles.values()), labels, loc="lower center", ncol=columns)
    fig.suptitle(wrap(f"{summary['label']} ({summary['id']})", 4.0 * len(panels), STYLE["figure.titlesize"]))
    save(fig, path)
    return True


def error_plot(summary: dict[str, Any], records: list[dict[str, Any]], path: Path) -> bool:
    """Bits of agreement vs precision bits for every numerics run; False when fewer than two were."""
    names = list(dict.fromkeys(r.get("numerics") for r in records if r.get("agree") is not None))
    finite = {n: precision_bits(n) for n in names}
    precisions = sorted({b for b in finite.values() if b is not None})
    if len(set(names)) < 2 or not precisions:
        return False
    exact_x = precisions[-1] * 1.3 + 4
    fig, (ax,) = figure(width=5.4, height=3.8)
    for k, name in enumerate(names):
        x = finite[name] if finite[name] is not None else exact_x
        mine = [r for r in records if r.get("numerics") == name and r.get("agree") is not None]
        ys = [_num(r.get("error_bits")) for r in mine]
        ys = [exact_x if y is None and r.get("error_bits") in (math.inf, "inf") else y for y, r in zip(ys, mine)]
        good = [(x, y) for y, r in zip(ys, mine) if y is not None and r.get("agree")]
        bad = [(x, y) for y, r in zip(ys, mine) if y is not None and not r.get("agree")]
        if good:
            ax.plot(*zip(*good), MARKERS[k % len(MARKERS)], label=f"{name}")
        if bad:
            ax.plot(*zip(*bad), MARKERS[k % len(MARKERS)], mfc="none", color="#b00020",
                    label=f"{name}: does not agree")
    lo, hi = precisions[0], precisions[-1]
    ax.plot([lo, hi], [lo, hi], ":", color="grey", label="agreement = precision")
    ticks = precisions + ([exact_x] if any(v is None for v in finite.values()) else [])
    ax.set_xticks(ticks, [f"{t:g}" if t != exact_x else "exact" for t in ticks])
    ax.set_xlabel("precision of the numerics (bits)")
    ax.set_ylabel("agreement with the reference (bits)")
    ax.set_title(f"{summary['label']}: agreement against precision")
    legend(ax)
    save(fig, path)
    return True


def growth_plot(results: Sequence[Any], path: Path) -> bool:
    """``<claim>_growth.png``: per bounded resource of one claim (a :class:`~attnsim.verify.growth.ResourceGrowth`),
    measured (dots) against the size on log-log axes, with the line that decided it, named in the legend: the exact
    count or the proof's upper formula, the paper's constant times the bound; where the growth test decides, the
    bound's shape through the first point (and a frozen constant's guard). Titled with the evidence, the verdict and
    the fitted slope of measured / bound. False when no resource has two positive points."""
    drawn = [g for g in results if len([m for m in g.measured if m > 0]) >= 2]
    if not drawn:
        return False
    cols = min(3, len(drawn))
    fig, axes = figure(cols, math.ceil(len(drawn) / cols), width=4.2, height=3.3, panels=len(drawn))
    for ax, g in zip(axes, drawn):
        pts = [(s, m, b) for s, m, b in zip(g.sizes, g.measured, g.bound_values) if m > 0 and b > 0]
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], "o", label="measured")
        for label, ys in _growth_lines(g, pts):
            ax.plot(xs, ys, "--", label=wrap(label, 4.0, STYLE["legend.fontsize"]))
        slope = "" if g.slope is None else f", slope of measured / bound {g.slope:+.2f}"
        ax.set_title(wrap(f"{g.resource}: {g.verdict} by the {g.evidence}{slope}", 4.2, STYLE["axes.titlesize"]))
        ax.set_xlabel(g.size_var)
        ax.set_ylabel(g.resource)
        log_axes(ax)
        legend(ax)
    save(fig, path)
    return True


def _growth_lines(g: Any, pts: Sequence[tuple[float, float, float]]) -> list[tuple[str, list[float]]]:
    """(legend, values at the points) of the lines a growth panel draws: the one that decided, named."""
    keep = [k for k, (s, m, b) in enumerate(zip(g.sizes, g.measured, g.bound_values)) if m > 0 and b > 0]
    bound = formula_text(g.bound)
    if g.evidence == "exact count" and len(g.exact) == len(g.sizes):
        return [(f"exact count {g.formula} (decides: ==; {g.containment})", [g.exact[k] for k in keep])]
    if g.evidence == "proof's inequality" and len(g.upper) == len(g.sizes):
        return [(f"proof's upper formula {g.formula} (decides: <=; {g.containment})", [g.upper[k] for k in keep])]
    if g.evidence == "paper's constant":
        c = float(g.formula.split(" ")[0])
        return [(f"{g.formula} {bound} (the paper's constant decides)", [c * p[2] for p in pts])]
    c = pts[0][1] / pts[0][2]
    lines = [(f"bound {bound} × {c:.3g}, through the first point (shape only: the growth test decides)",
              [c * p[2] for p in pts])]
    frozen = g.guard.split(" x bound")[0] if g.guard != "no constant" else ""
    if frozen:
        lines.append((f"{g.guard.split(':')[0]} (a guard beside the verdict)", [float(frozen) * p[2] for p in pts]))
    return lines
