"""One plan, all of it used: the constructions call every proved function of ``sim/two_heads/plan.py``,
the prover proves every one of them, and no construction keeps a second copy of the plan's arithmetic.

A second copy is found by changing the plan in a way that is still correct (another slot layout of the
packed stream, query rows in reverse order): a construction that reads the plan everywhere stays exact,
one that recomputes an index on its own breaks.
"""

from __future__ import annotations

import inspect
from collections import Counter
from dataclasses import replace
from typing import Any
from unittest import mock

import numpy as np
import pytest

from attnsim.sim.two_heads import plan as P
from attnsim.verify.check import run_check
from attnsim.verify.prove.claims import CLAIMS, obligations

# what the constructions read off a layout on Python ints; the prover reads the same segments as
# solver formulas (``verify/prove/layouts.py``, cross-checked by tests/test_prove.py)
INT_READERS = {"seg_tokens", "query_map", "query_rows", "query_tokens", "steps"}
GRID = [  # small exact runs of every construction that calls the plan
    ("two_heads.lemma_3_1", dict(N=5, M=3, d=2)),
    ("two_heads.cor_3_2", dict(N=5, M=3, d=2, H=2, L=1, scheme="fused")),
    ("two_heads.thm_3_4", dict(N=5, M=3, d=2, H=2, L=1, Hp=2, Lp=2)),
    ("two_heads.thm_3_5", dict(N=5, M=3, d=2, H=2, L=1, Hp=2, Lp=2)),
    ("two_heads.claim_b_6", dict(N=5, M=3, d=2)),
    ("two_heads.thm_5_1", dict(N=9, M=4, d=2, H=1, L=1, Hp=1, Lp=2, window=1, sinks=1)),
]


def plan_functions() -> set[str]:
    """The public functions defined in plan.py."""
    return {n for n, f in vars(P).items() if inspect.isfunction(f) and f.__module__ == P.__name__
            and not n.startswith("_")}


def _counting(calls: Counter) -> list[Any]:
    patches = []
    for name in plan_functions():
        original = getattr(P, name)

        def wrapped(*args: Any, _f: Any = original, _n: str = name, **kwargs: Any) -> Any:
            calls[_n] += 1
            return _f(*args, **kwargs)

        patches.append(mock.patch.object(P, name, wrapped))
    return patches


def _with_counts(run: Any) -> Counter:
    calls: Counter = Counter()
    patches = _counting(calls)
    for p in patches:
        p.start()
    try:
        run()
    finally:
        for p in patches:
            p.stop()
    return calls


def test_every_plan_function_is_proved_and_run():
    proved = _with_counts(lambda: [ob.build() for claim in CLAIMS for ob in obligations(claim)])
    run = _with_counts(lambda: [run_check(c, p, "exact") for c, p in GRID])
    everything = plan_functions()
    assert everything - INT_READERS <= set(proved), f"never proved: {sorted(everything - INT_READERS - set(proved))}"
    assert everything <= set(run), f"never called by a construction: {sorted(everything - set(run))}"


def _pass(claim: str, params: dict[str, Any]) -> bool:
    return run_check(claim, params, "exact")["verdict"] == "pass"


def test_another_slot_layout_keeps_the_packed_constructions_exact():
    """Output slots before input slots in each head's block: correct only if every reader of the
    stream (packing, ψ, head weights, the read-back) takes its columns from ``plan.slot_columns``."""
    def outputs_first(head: Any, layer: Any, layers: Any, w: Any, o: Any) -> tuple[Any, Any]:
        lo = P.head_block(head, layers, w, o)[0]
        return lo + layers * o + layer * w, lo + layer * o

    with mock.patch.object(P, "slot_columns", outputs_first):
        for claim, params in GRID:
            if claim in ("two_heads.thm_3_4", "two_heads.thm_3_5"):
                assert _pass(claim, params), claim


def test_query_rows_are_read_where_the_layout_puts_them():
    """Lemma 3.1's calls with the query half written bottom-up: correct only if the combination reads
    each call's rows and writes each query's output through the layout's query segment."""
    original = P.pair_layout

    def reversed_queries(*args: Any, **kwargs: Any) -> P.Layout:
        lay = original(*args, **kwargs)
        segs = tuple(replace(s, first=s.first + (s.hi - s.lo) - 1, step=-1) if s.what == "query" else s
                     for s in lay.segs)
        return replace(lay, segs=segs)

    with mock.patch.object(P, "pair_layout", reversed_queries):
        for claim, params in GRID[:3]:
            assert _pass(claim, params), claim


@pytest.mark.parametrize("name", ["chunk_start", "job_length", "model_head_columns", "slot_index"])
def test_breaking_a_plan_function_breaks_its_construction(name):
    """A construction with its own copy of a plan function would not notice the plan changing."""
    original = getattr(P, name)
    broken = {
        "chunk_start": lambda b, r, s, k: original(b, r, s, k) + (k > 0),
        "job_length": lambda ops, N, b: original(ops, N, b) + 1,
        "model_head_columns": lambda h, m: original((h + 1) % 2, m),
        "slot_index": lambda h, layer, layers: original(h, (layer + 1) % layers, layers),
    }[name]
    claims = {"chunk_start": "two_heads.thm_5_1", "job_length": "two_heads.thm_3_4",
              "model_head_columns": "two_heads.cor_3_2", "slot_index": "two_heads.thm_3_4"}
    claim, params = next((c, p) for c, p in GRID if c == claims[name])
    with mock.patch.object(P, name, broken):
        try:
            ok = _pass(claim, params)
        except Exception:  # noqa: BLE001 - a refusal or crash also shows the plan is read
            ok = False
    assert not ok


def _tokens(Z: Any, col: int) -> list[int]:
    """Token (0-based) in each row of one half of a call's input (row t of the test input is [t + 1, 0])."""
    return [int(round(float(v))) - 1 for v in np.asarray(Z, dtype=float)[:, col]]


def _expected(lay: P.Layout, what: str) -> list[int]:
    """The plan's token per row for ``what`` (key or query) rows, −1 for every other row."""
    out = [-1] * lay.rows
    for seg in lay.segs:
        if seg.what == what:
            for r, t in zip(*P.seg_tokens(seg)):
                out[r] = t
    return out


def _pair_layouts(N: int, b: int, fused: bool) -> list[P.Layout]:
    n = P.num_blocks(P.INT, N, b)
    out = []
    for c in range(P.pair_count(n, fused)):
        tq, tk, si = P.pair_index(P.INT, n, fused, c)
        starts = P.block_start(tq, b), P.block_start(tk, b)
        lens = [P.block_len(P.INT, N, b, x) for x in starts]
        out.append(P.pair_layout(P.INT, lens[0], lens[1], starts[0], starts[1], P.steps(fused)[si]))
    return out


def _causal_layouts(N: int, b: int, fused: bool) -> list[P.Layout]:
    out = []
    for tq in range(P.num_blocks(P.INT, N, b)):
        for c in range(P.causal_row_count(tq, fused)):
            tk, pi, si = P.causal_row_call(P.INT, tq, fused, c)
            q0, k0 = P.block_start(tq, b), P.block_start(tk, b)
            out.append(P.causal_layout(b, P.block_len(P.INT, N, b, q0), P.block_len(P.INT, N, b, k0), q0, k0,
                                       (*P.CAUSAL_PARTS, "own")[pi], P.steps(fused)[si]))
    return out


def _window_layouts(N: int, b: int, r: int, s: int, fused: bool) -> list[P.Layout]:
    out = []
    for c in range(P.window_count(P.num_chunks(P.INT, N, b, r, s), fused)):
        pi, k, si = P.window_index(P.INT, fused, c)
        out.append(P.window_layout(P.INT, N, b, r, s, P.WINDOW_PARTS[pi], k, P.steps(fused)[si]))
    return out


TRACE_GRID = [(N, b) for b in (1, 2, 3, 5) for N in (1, b, b + 1, 3 * b + 2)]


@pytest.mark.parametrize("fused", [False, True], ids=["paper", "fused"])
def test_the_calls_touch_the_tokens_the_plan_says(fused):
    _trace(fused)


def test_the_trace_sees_a_construction_that_reads_its_own_rows():
    """The trace's twin: a layout builder that writes a segment's tokens in reverse order is found."""
    from attnsim.sim.two_heads import blocks

    original = blocks.token_rows
    backwards = lambda X, tokens: original(X, tokens[::-1])  # noqa: E731
    with mock.patch.object(blocks, "token_rows", backwards), pytest.raises(AssertionError):
        _trace(False)


def _trace(fused: bool) -> None:
    """Each construction's calls, in order, hold in every row exactly the key and query tokens the plan's
    enumeration and layouts say (traced on the data: row t of the input is [t + 1, 0]), on a grid of sizes;
    a construction that placed or ordered tokens by arithmetic of its own would differ here."""
    from attnsim.sim.numerics.floating import Float64
    from attnsim.sim.two_heads.blocks import head_jobs
    from attnsim.sim.two_heads.causal import causal_head_jobs
    from attnsim.sim.two_heads.window import window_head_jobs

    nm, m = Float64(), 2
    W = nm.array(np.eye(m))
    scheme = "fused" if fused else "paper"
    checked = 0
    for N, b in TRACE_GRID:
        X = nm.array(np.array([[t + 1, 0] for t in range(N)], dtype=float))
        runs = [(head_jobs(nm, X, W, W, W, b, scheme, "t")[0], _pair_layouts(N, b, fused)),
                (causal_head_jobs(nm, X, W, W, W, b, scheme, "t")[0], _causal_layouts(N, b, fused))]
        for r, s in ((1, 0), (1, 1), (2, 1)):
            if s + r < b:
                runs.append((window_head_jobs(nm, X, W, W, W, b, r, s, scheme, "t")[0],
                             _window_layouts(N, b, r, s, fused)))
        for jobs, layouts in runs:
            assert len(jobs) == len(layouts), (N, b)
            for job, lay in zip(jobs, layouts):
                assert job.Z.shape[0] == lay.rows, (N, b, job.tag)
                assert _tokens(job.Z, 0) == _expected(lay, "key"), (N, b, job.tag)
                assert _tokens(job.Z, m) == _expected(lay, "query"), (N, b, job.tag)
                checked += 1
    assert checked > 300
