"""The figures of docs/engine.md that do not vary from run to run: the engine's fixed limits, the sizes, run counts
and targets of `attnsim bench`, and the calls and rounds of `attnsim run` (Lemma 3.1 of the two-heads paper: one
call per block pair with the fused scheme, two with the paper's). The measured ratios, times, memory and the bits
of the N = 65536 run are not held here (they vary, or take minutes)."""

from __future__ import annotations

import inspect
import re

import pytest
from doc_page import Page

import attnsim.verify.bench.torch_sdpa as torch_sdpa
import attnsim.verify.bench.whole_model as whole_model
from attnsim.sim.engine.batch import MAX_SCORES
from attnsim.sim.engine.causal_pairs import EXP_HEADROOM
from attnsim.verify.bench.engine import (
    FLOAT_RUNS,
    FUSED_TARGET,
    TARGET_SIZE,
    bench_sizes,
    run_bench,
    torch_oracle_figure,
    whole_model_figure,
)
from attnsim.verify.long_run import run_layer

_PAGE = Page("engine.md")
DOC = _PAGE.text
TEXT = _PAGE.flat
_table = _PAGE.table


def _size(cell: str) -> tuple[int, int]:
    m = re.search(r"N=(\d+) M=(\d+)", cell)
    return int(m[1]), int(m[2])


def test_engine_limits():
    """'sub-batches of at most 2²⁴ scores' and 'a row whose shift exceeds its synthetic score by more than 600'."""
    m = re.search(r"sub-batches of at most 2(\S+) scores", TEXT)
    assert m
    power = int(m[1].translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")))
    assert MAX_SCORES == 2 ** power
    m = re.search(r"exceeds its synthetic score by more than (\d+) would risk underflowing", TEXT)
    assert m and EXP_HEADROOM == float(m[1])


def test_bench_table_sizes_targets_and_runs(monkeypatch: pytest.MonkeyPatch):
    """The measured table's rows are the figures `attnsim bench` runs: the float64 sizes (one with --quick, three
    in the full bench), their target, the torch figure's size and target, the whole model's layers and target, and
    how many runs each median takes."""
    rows = _table("| figure | quick 1 | quick 2 | quick 3 | full 1 | full 2 |")
    fused = [r for r in rows if r[0].startswith("fused / direct")]
    assert [_size(r[0]) for r in fused if r[1]] == [(N, M) for N, M, _ in bench_sizes(True)]
    assert [_size(r[0]) for r in fused] == [(N, M) for N, M, _ in bench_sizes(False)]
    head = re.search(r"N=(\d+) M=(\d+) d=(\d+) \(target ≤ ([\d.]+)\)", fused[0][0])
    assert (int(head[1]), int(head[2]), int(head[3])) == TARGET_SIZE and float(head[4]) == FUSED_TARGET
    assert all("target" not in r[0] for r in fused[1:])

    torch_row = next(r[0] for r in rows if r[0].startswith("torch oracle"))
    seen: list = []
    monkeypatch.setattr(torch_sdpa, "torch_sdpa_ratio", lambda *a, **k: seen.append(a) or {})
    torch_oracle_figure(5, "engine")
    assert seen[0][:2] == _size(torch_row)
    assert float(re.search(r"target ≤ ([\d.]+)", torch_row)[1]) == torch_sdpa.TARGET

    model_row = next(r for r in rows if r[0].startswith("whole GPT-2"))
    runs: list = []
    monkeypatch.setattr(whole_model, "whole_model_ratio", lambda **k: runs.append(k) or {})
    whole_model_figure(True)
    whole_model_figure(False)
    quick, full = runs
    assert int(re.search(r"\((\d+) layers", model_row[1])[1]) == quick["layers"]
    assert int(re.search(r"\((\d+) layers", model_row[4])[1]) == full["layers"]
    assert float(re.search(r"target ≤ ([\d.]+)", model_row[0])[1]) == whole_model.WHOLE_MODEL_TARGET

    m = re.search(r"the float64 figure the median of (\d+) alternating runs, rotated; the others of (\d+)", TEXT)
    assert m
    repeats = inspect.signature(run_bench).parameters["repeats"].default
    assert (FLOAT_RUNS * repeats, repeats) == (int(m[1]), int(m[2]))


@pytest.mark.parametrize("scheme, per_pair", [("fused", 1), ("paper", 2)])
def test_calls_of_attnsim_run(scheme: str, per_pair: int):
    """`attnsim run` makes one call per block pair (two with the paper's scheme) in one round: run at a small size
    here, the count (N/M)² then gives the page's '4096 calls, 1 round' at N = 65536, M = 1024."""
    rec, _ = run_layer(512, 64, 8, scheme=scheme)
    assert (rec["calls"], rec["rounds"]) == (per_pair * (512 // 64) ** 2, 1)
    m = re.search(r"\| `attnsim run --N (\d+) --M (\d+) --d (\d+) --check-rows (\d+)` \| (\d+) calls, (\d+) round, .*?"
                  r"(\d+) rows checked", DOC)
    assert m
    default = inspect.signature(run_layer).parameters["scheme"].default
    assert re.search(r"Its default scheme is `(\w+)`", TEXT)[1] == default
    if scheme == "fused":  # the command's default scheme
        assert ((int(m[1]) // int(m[2])) ** 2, 1) == (int(m[5]), int(m[6]))
        assert int(m[7]) == int(m[4])
