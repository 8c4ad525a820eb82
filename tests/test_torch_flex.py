"""FlexAttention block masks against attnsim's block counts, the report section, and the bench figure."""

from __future__ import annotations

import subprocess
import sys

import pytest
from limits import limit

from attnsim.sim.masks import Causal, Full, Sink, SlidingWindow
from attnsim.verify.report import flex_blocks

torch = pytest.importorskip("torch", reason="the torch extra is not installed (pip install -e '.[torch]')")


@pytest.mark.skipif(not flex_blocks.flex_available()[0], reason="this torch has no FlexAttention")
def test_block_counts_equal_flex_tiles():
    cases = [(m, N, 16) for m in (Full(), Causal(), SlidingWindow(5), SlidingWindow(16), Sink(2, 6))
             for N in (96, 90)]
    rows = flex_blocks.compare(cases)
    assert all(r.ours == r.flex for r in rows), flex_blocks.markdown(rows)
    full = [r for r in rows if r.mask == "full" and r.N == 96][0]
    assert (full.flex_partial, full.flex_full) == (0, 36)
    assert full.calls_paper == 2 * full.ours and full.calls_fused == full.ours
    causal = [r for r in rows if r.mask == "causal" and r.N == 96][0]
    assert causal.ours == 21 and causal.calls_fused == 36 and causal.ours_strict > causal.ours
    table = flex_blocks.markdown(rows)
    assert table.count("| yes |") == len(rows)


def test_flex_mask_mods_match_materialize():
    q = torch.arange(12)[:, None]
    kv = torch.arange(12)[None, :]
    for mask in (Full(), Causal(), SlidingWindow(3), Sink(2, 3)):
        got = flex_blocks.mask_mod(mask)(0, 0, q, kv).expand(12, 12).numpy()
        assert (got == mask.materialize(12)).all(), mask


def test_section_states_why_it_is_skipped(monkeypatch):
    monkeypatch.setattr(flex_blocks, "flex_available", lambda: (False, "no FlexAttention here"))
    text = flex_blocks.section(quick=True)
    assert "Skipped: no FlexAttention here" in text and "|" not in text


def test_bench_function_and_cli():
    from attnsim.verify.bench.torch_sdpa import torch_sdpa_ratio

    r = torch_sdpa_ratio(N=128, M=32, d=8, repeats=1, engine="torch-oracle")
    assert r["ratio"] > 0 and r["error_bits"] >= 40 and r["engine"] == "torch-oracle"
    p = subprocess.run([sys.executable, "-m", "attnsim.verify.cli", "bench", "--torch", "--N", "0"],
                       capture_output=True, text=True, timeout=limit(300))
    assert p.returncode == 2 and "--N" in p.stderr + p.stdout and "Traceback" not in p.stderr
