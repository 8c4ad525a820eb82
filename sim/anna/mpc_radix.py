"""A multi-level MPC sort for small local memory (Lemma C.2, App. C; reconstruction in docs/anna_small_memory.md).

The records to sort sit on the machines ``leaves`` (a range of P machines), at most ``per_machine``
records each; every record has an integer sort key in [0, key_bound). The sort is a least-
significant-digit radix sort in base ``base``: one pass per base-``base`` digit,
passes = min{p >= 1 : base^p >= key_bound}. A pass is

1. an f-ary :func:`attnsim.sim.anna.mpc_tree.tree_scan` (2 D rounds, D = tree depth) of the
   per-machine digit histograms: each machine learns, per digit, how many records lie on the
   machines to its left and to its right, hence the global position (rank) of each of its records
   in the order (digit, previous order);
2. one routing round: a record of rank t goes to machine ``leaves[t // per_machine]``; the
   receiver sorts what it got stably by the digit (delivery keeps sender order, which is the
   previous order), so machine j holds ranks j * per_machine .. (j + 1) * per_machine - 1 in order.

Every machine therefore ends each pass with exactly ``per_machine`` records (the last with the
rest): the loads are exact, no sampling can overflow a machine. Rounds: passes * (2 D + 1).
With base and fan of order N^{Theta(eps')} and keys of O(log N) bits both the number of passes
and D are O(1/(eps' - eps)), so the sort takes O(1/(eps' - eps)^2) rounds -- a constant in N, but
a square in 1/(eps' - eps) where Goodrich et al.'s sort (the paper's Lemma C.2) has a single
factor; the docs file states this deviation.
"""

from __future__ import annotations

from operator import add
from typing import Callable

from attnsim.sim.anna.errors import require
from attnsim.sim.anna.mpc import MPC, Record
from attnsim.sim.anna.mpc_tree import Monoid, levels, tree_scan


def radix_passes(key_bound: int, base: int) -> int:
    """min{p >= 1 : base^p >= key_bound}: passes of the radix sort."""
    return max(1, levels(key_bound, base))


def radix_sort(mpc: MPC, leaves: range, key: Callable[[Record], int], *, key_bound: int, base: int, fan: int,
               per_machine: int, label: str = "sort") -> int:
    """Sort the records on ``leaves`` by ``key`` (module docstring); returns the number of passes."""
    require(base >= 2, "base", f"the radix must be >= 2, got {base}")
    require(per_machine >= 1, "per_machine", f"must be >= 1, got {per_machine}")
    require(key_bound >= 1, "key_bound", f"must be >= 1, got {key_bound}")
    passes = radix_passes(key_bound, base)
    zero = (0,) * base
    histograms = Monoid(zero, lambda a, b: tuple(map(add, a, b)))  # digit counts add entrywise
    for p in range(passes):
        unit = base**p

        def digit(r: Record, unit: int = unit) -> int:
            return (key(r) // unit) % base

        def histogram(m: int, mem: list[Record], unit: int = unit) -> tuple:
            counts = [0] * base
            for k in map(key, mem):
                counts[(k // unit) % base] += 1
            return tuple(counts)

        def place(m: int, mem: list[Record], pre: tuple, suf: tuple, unit: int = unit) -> list[Record]:
            ds = [(k // unit) % base for k in map(key, mem)]  # each record's digit
            own = [0] * base
            for d in ds:
                own[d] += 1
            total = [a + b + c for a, b, c in zip(pre, own, suf)]
            start, acc = [], 0
            for d in range(base):
                start.append(acc + pre[d])
                acc += total[d]
            seen = [0] * base
            ranked = []
            for r, d in zip(mem, ds):
                ranked.append(("rank", start[d] + seen[d], *r))
                seen[d] += 1
            return ranked

        tree_scan(mpc, leaves, fan, histograms, histogram, place, label=f"{label}.histogram")

        def route(m: int, mem: list[Record]):  # machines outside the sort keep their records
            return [(leaves[r[1] // per_machine], r[2:]) for r in mem] if m in leaves else []

        mpc.round(route, label=f"{label}.route", keep=lambda m, mem: mem if m not in leaves else [])
        mpc.local(lambda m, mem, digit=digit: sorted(mem, key=digit) if m in leaves else mem)
    return passes
