"""The whole-model bench figure on a tiny GPT-2 shape: both sides run, agree, and report their spread."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers", reason="the torch extra is not installed (pip install -e '.[torch]')")

from attnsim.sim.errors import AttnsimError  # noqa: E402
from attnsim.verify.bench.whole_model import whole_model_ratio  # noqa: E402


def test_tiny_gpt2_whole_model_figure():
    """N = 64 through calls of length 17: n²·H·L calls, ≥ 40 bits, a ratio inside its own spread."""
    r = whole_model_ratio(N=64, M=16, embd=32, heads=2, layers=2, repeats=2, threads=1)
    assert r["calls"] == (64 // 16) ** 2 * 2 * 2
    assert r["error_bits"] >= 40
    assert r["ratio_min"] <= r["ratio"] <= r["ratio_max"]
    assert r["direct_peak_rss"] > 0 and r["simulation_peak_rss"] > 0
    e = r["engine"]  # the same calls batched by the engine
    assert e["error_bits"] >= 40 and e["ratio_min"] <= e["ratio"] <= e["ratio_max"] and e["peak_rss"] > 0


@pytest.mark.parametrize("kwargs, parameter", [(dict(N=60, M=16), "--N"), (dict(repeats=0), "--repeats")])
def test_whole_model_figure_refuses_bad_sizes(kwargs, parameter):
    with pytest.raises(AttnsimError, match=parameter):
        whole_model_ratio(**{**dict(N=64, M=16, embd=32, heads=2, layers=1), **kwargs})
