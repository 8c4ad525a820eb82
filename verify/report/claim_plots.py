"""The generic per-claim plots of the report, drawn from check records only (in the style of
:mod:`attnsim.verify.report.plots`):

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
from pathlib import Path
from typing import Any, Sequence

from attnsim.verify.cost import EXACT_KINDS
from attnsim.verify.report.plots import MARKERS, STYLE, figure, formula_text, legend, log_axes, save, wrap

MAX_PANELS = 3
"""Resources drawn in one counts plot at most."""


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
    if not numerics or numerics.split(":")[0] in EXACT_KINDS:
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
