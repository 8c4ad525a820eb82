"""The figures of docs/torch.md that do not vary from run to run: the projected layout's head width, the calls and
rounds of Theorem 3.5's causal construction (fused: n² per head and layer; the paper's scheme: 2n²) on an imported
GPT-2, the size of a layer's call inputs at the example's defaults, the score columns an imported head fills, and
the sizes and targets the bench runs. Times, speed ratios, memory and the bits of the N = 8192 runs are not held
here (they vary, or take minutes)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from doc_page import Page
from transformers import GPT2Config

import attnsim.verify.bench.torch_sdpa as torch_sdpa
import attnsim.verify.bench.whole_model as whole_model
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.torch.maps import SLOTS
from attnsim.sim.torch.model_import import IMPORT_RTOL, from_gpt2
from attnsim.sim.torch.oracle import live_columns
from attnsim.sim.two_heads import causal
from attnsim.sim.two_heads.jobs import run_one_per_call
from attnsim.verify.bench.engine import torch_oracle_figure, whole_model_figure
from attnsim.verify.cli.bench import TORCH_SIZE

ROOT = Path(__file__).parents[1]
_PAGE = Page("torch.md")
DOC = _PAGE.text
TEXT = _PAGE.flat
EXAMPLE = (ROOT / "examples" / "gpt2_long_context.py").read_text()

# a small GPT-2 imported and simulated in a second: sequence N, blocks of M, width E, H heads, L layers
N, M, E, H, L = 96, 32, 32, 2, 2


def _default(flag: str) -> int:
    """The example's default for ``--flag``."""
    return int(re.search(rf'add_argument\("--{flag}", type=int, default=(\d+)\)', EXAMPLE)[1])


@cache
def _simulated(scheme: str) -> tuple[Any, Oracle, list]:
    """The small GPT-2 through Theorem 3.5's causal construction; the spec, the oracle and every job."""
    model = whole_model.gpt2_model(N, E, H, L, 0)
    im = from_gpt2(model, N)
    oracle = Oracle(OracleSpec(max_len=M + 1, dim=2 * im.spec.m + 2, causal=True), get_numerics("float64", 0))
    seen: list = []

    def spy(orc: Oracle, jobs: Any) -> list:
        jobs = list(jobs)
        seen.extend(jobs)
        return run_one_per_call(orc, jobs)

    x = np.random.default_rng(0).standard_normal((N, E)) * 0.1
    causal.simulate(im.spec, im.weights, im.model_input(x), oracle, b=M, scheme=scheme, runner=spy)
    return im.spec, oracle, seen


def test_head_width_of_the_projected_layout():
    """m = 5·d_h for the import, against E + 1 + d_h for a block [x | 1 | o_h]: 320 and 833 for GPT-2 small."""
    m = re.search(r"m = 5·d_h instead of E \+ 1 \+ d_h .*?; (\d+) vs (\d+) for GPT-2 small\)", TEXT)
    assert m
    spec, _, _ = _simulated("fused")
    assert spec.m == SLOTS * (E // H) == 5 * (E // H)
    small = GPT2Config()  # GPT-2 small's shape
    d_h = small.n_embd // small.n_head
    assert SLOTS * d_h == int(m[1])
    assert small.n_embd + 1 + d_h == int(m[2])


def test_import_tolerance():
    """'im.verify(x)  # attnsim reference vs torch forward, ≤ 1e-10 or ImportMismatchError'."""
    m = re.search(r"reference vs torch forward, ≤ (1e-\d+)", DOC)
    assert m and IMPORT_RTOL == float(m[1])


def test_calls_of_the_two_schemes():
    """Theorem 3.5 on an imported GPT-2: n² calls per head and layer with the fused scheme, 2n² with the paper's,
    one round per layer."""
    assert "n² calls in all against the paper scheme's 2n² (Thm 3.5)" in TEXT
    n = N // M
    for scheme, per_head in (("fused", n * n), ("paper", 2 * n * n)):
        _, oracle, _ = _simulated(scheme)
        assert oracle.ledger.total("oracle") == per_head * H * L, scheme
        assert oracle.ledger.rounds() == L, scheme


def test_every_call_and_the_score_columns_a_head_fills():
    """Each call is M + 1 rows of [x_key, x_query, 1, ind] (2m + 2 columns), and an imported head's W^Q and W^K
    share d_h + 1 of their m + 1 columns."""
    m = re.search(r"an imported head fills d_h \+ 1 of its m \+ 1", TEXT)
    assert m
    spec, _, jobs = _simulated("fused")
    assert jobs
    for job in jobs:
        assert job.Z.shape == (M + 1, 2 * spec.m + 2)
        score, _ = live_columns(np.asarray(job.WQ), np.asarray(job.WK), np.asarray(job.WV))
        assert np.asarray(job.WQ).shape[1] == spec.m + 1
        assert len(score) == E // H + 1


def test_calls_and_rounds_of_the_example_and_its_inputs_per_layer():
    """The table's calls / rounds at the example's defaults, n²·H·L with n = N/M (the formula the calls above
    follow), and 'at N = 8192 a GPT-2 layer's inputs alone are ~8 GB': a layer's n²·H calls of M + 1 rows of
    2m + 2 float64 numbers."""
    row = re.search(r"\| example, defaults \(N = (\d+), M = (\d+), (\d+) layers\): calls / rounds \| ([\d ]+) / (\d+) "
                    r"\| ([\d ]+) / (\d+) \|", DOC)
    assert row
    Nd, Md, Ld = int(row[1]), int(row[2]), int(row[3])
    assert (_default("N"), _default("M"), _default("layers")) == (Nd, Md, Ld)
    heads, d_h = _default("heads"), _default("embd") // _default("heads")
    calls = (Nd // Md) ** 2 * heads * Ld
    for c, r in ((row[4], row[5]), (row[6], row[7])):
        assert (int(c.replace(" ", "")), int(r)) == (calls, Ld)
    gb = re.search(r"at N = (\d+) a GPT-2 layer's inputs alone are ~(\d+) GB", TEXT)
    assert gb and int(gb[1]) == Nd
    layer_bytes = (Nd // Md) ** 2 * heads * (Md + 1) * (2 * SLOTS * d_h + 2) * 8
    assert round(layer_bytes / 1e9) == int(gb[2])


def test_bench_sizes_and_targets(monkeypatch: pytest.MonkeyPatch):
    """What `attnsim bench` runs: the torch figure at N = 8192, M = 512, d = 64, held to ≤ 1.5; the whole model at
    GPT-2-small shape, N = 2048, M = 256, 12 layers, 3 timed runs (5 and 2 layers with --quick), held to ≤ 1.2,
    its call-by-call row on n² calls of M + 1 = 257 rows."""
    torch_size = re.search(r"`attnsim bench --torch --N (\d+) --M (\d+) --d (\d+)`", TEXT)
    assert torch_size
    size = tuple(int(v) for v in torch_size.groups())
    assert (TORCH_SIZE["N"], TORCH_SIZE["M"], TORCH_SIZE["d"]) == size
    seen: list = []
    monkeypatch.setattr(torch_sdpa, "torch_sdpa_ratio", lambda *a, **k: seen.append((a, k)) or {})
    torch_oracle_figure(5, "engine")
    assert seen[0][0] == size
    assert re.search(r"projected once per head; held to ≤ ([\d.]+)\)", TEXT)[1] == str(torch_sdpa.TARGET)

    runs: list = []
    monkeypatch.setattr(whole_model, "whole_model_ratio", lambda **k: runs.append(k) or {})
    whole_model_figure(False)
    whole_model_figure(True)
    full, quick = runs
    m = re.search(r"at GPT-2-small shape, N = (\d+), M = (\d+), (\d+) layers, each side in its own process \(one "
                  r"untimed run, then (\d+) timed; (\d+) with `--quick`\)", TEXT)
    assert m
    small = GPT2Config()
    assert (full["N"], full["M"], full["layers"], full["repeats"]) == (int(m[1]), int(m[2]), int(m[3]), int(m[4]))
    assert (full["embd"], full["heads"]) == (small.n_embd, small.n_head) == (quick["embd"], quick["heads"])
    assert quick["repeats"] == int(m[5]) and (quick["N"], quick["M"]) == (full["N"], full["M"])
    few = re.search(r"`--quick` runs (\d+) of the (\d+) layers", TEXT)
    assert few and (quick["layers"], full["layers"]) == (int(few[1]), int(few[2]))
    held = re.search(r"The headline row is the batched engine \(`attnsim.sim.engine.causal`, held to ≤ ([\d.]+) of the "
                     r"direct forward", TEXT)
    assert held and float(held[1]) == whole_model.WHOLE_MODEL_TARGET
    rows = re.search(r"`TorchOracle` runs SDPA on n² calls of (\d+) rows", TEXT)
    assert rows and int(rows[1]) == full["M"] + 1
