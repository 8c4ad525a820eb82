"""The report's plot style and the numerics its error plots place."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pytest

from attnsim.verify.report import claim_plots, plots


@pytest.mark.parametrize("name, bits", [("float64", 53), ("mp:200", 200), ("float:fp32", 24), ("float:bf16", 8),
                                        ("float:e4m3", 4), ("float:8.7", 8), ("fixed:q16.16", 16),
                                        ("float:fp16:rz", 11), ("exact", None), ("symbolic", None)])
def test_every_numerics_format_has_a_precision(name, bits):
    assert claim_plots.precision_bits(name) == bits


def test_error_plot_draws_every_numerics_of_the_table(tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(claim_plots, "save", lambda fig, path: drawn.append(fig.axes[0].get_legend_handles_labels()[1]))
    names = ["exact", "float64", "float:fp32", "float:e4m3", "fixed:q16.16", "mp:100"]
    records = [{"numerics": n, "agree": n != "float:e4m3", "error_bits": math.inf if n == "exact" else 3.0}
               for n in names]
    assert claim_plots.error_plot({"label": "Lemma 3.1"}, records, tmp_path / "e.png")
    labels = drawn[0]
    assert all(any(lab.startswith(n) for lab in labels) for n in names), labels


def test_one_style_readable_and_at_least_150_dpi(tmp_path):
    fig, (ax,) = plots.figure()
    ax.plot([1, 2, 4, 8, 16], [1, 4, 16, 64, 256], "o")
    plots.log_axes(ax)
    assert plt.rcParams["legend.fontsize"] >= 8 and plt.rcParams["font.size"] >= 9
    labels = [t for t in ax.get_xticks() if 1 <= t <= 16]
    assert len(labels) >= 4  # powers of two across a short range, not one tick
    plots.save(fig, tmp_path / "p.png")
    assert plots.DPI >= 150 and plt.imread(tmp_path / "p.png").shape[1] >= 5.0 * plots.DPI * 0.95
