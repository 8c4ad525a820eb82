"""The bench's alternating timings: every function timed each round, no fixed predecessor."""

from __future__ import annotations

from attnsim.verify.bench.engine import ratio_spread, timed_samples


def test_rounds_rotate_so_no_function_always_follows_the_same_one():
    order: list[str] = []
    fns = {k: (lambda k=k: order.append(k)) for k in "abc"}
    times = timed_samples(fns, repeats=6, warm=False)
    assert {k: len(v) for k, v in times.items()} == {"a": 2 * 3, "b": 6, "c": 6}
    rounds = [order[i:i + 3] for i in range(0, len(order), 3)]
    assert rounds[:3] == [list("abc"), list("bca"), list("cab")]
    before_b = {order[i - 1] for i in range(1, len(order)) if order[i] == "b"}
    assert before_b == {"a", "c"}  # a fixed order would have put "a" before "b" every time


def test_ratio_spread_pairs_the_ith_runs():
    r = ratio_spread({"x": [2.0, 3.0, 8.0], "y": [1.0, 1.0, 2.0]}, "x", "y")
    assert (r["min"], r["median"], r["max"]) == (2.0, 3.0, 4.0)
