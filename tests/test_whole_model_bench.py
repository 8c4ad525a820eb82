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
    for side in (r, r["call_by_call"]):  # the batched engine (the headline figure), then call by call
        assert side["error_bits"] >= 40
        assert side["ratio_min"] <= side["ratio"] <= side["ratio_max"]
        assert side["peak_rss"] > 0
    assert r["direct_peak_rss"] > 0 and r["target"] == 1.2


@pytest.mark.parametrize("kwargs, parameter", [(dict(N=60, M=16), "--N"), (dict(repeats=0), "--repeats")])
def test_whole_model_figure_refuses_bad_sizes(kwargs, parameter):
    with pytest.raises(AttnsimError, match=parameter):
        whole_model_ratio(**{**dict(N=64, M=16, embd=32, heads=2, layers=1), **kwargs})
