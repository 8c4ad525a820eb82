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
