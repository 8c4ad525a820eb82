"""Broken twins of anna.thm_4_2, anna.thm_c_1 and anna.def_ema (checkers in
verify/claims/anna_mpc_small.py)."""

from __future__ import annotations

from bisect import bisect_right
from contextlib import contextmanager
from typing import Iterator
from unittest import mock

import numpy as np

from attnsim.sim.anna import attention, mpc_radix, mpc_small, mpc_splitter_sort
from attnsim.sim.anna.mpc import MPC
from attnsim.sim.anna.mpc_tree import levels
from attnsim.sim.ledger import Ledger
from attnsim.verify.twins import twin

# H = 2, the splitter sort, s >= N: fast
_SMALL_4_2 = {"N": 32, "layers": 2, "r": 0.1, "c": 14.0, "eps1": 0.75, "s_scale": 200.0}
_SMALL_C_1 = {"N": 64, "layers": 2, "eps1": 0.5, "s_scale": 40.0, "sort": "radix"}  # the radix sort's twins
_SPLIT_C_1 = {"N": 1024, "layers": 1, "eps1": 0.5, "s_scale": 100.0}  # the splitter sort, several levels


@contextmanager
def _walk_one_child_right() -> Iterator[None]:
    """Lemma C.2's splitter sort sends a record below a node's first splitter to the child right of its own."""
    def shifted(cut, x, *args, **kw):
        c = bisect_right(cut, x, *args, **kw)
        return 1 if c == 0 and cut else c

    with mock.patch.object(mpc_splitter_sort, "bisect_right", shifted):
        yield


for _claim, _params in (("anna.thm_4_2", _SMALL_4_2), ("anna.thm_c_1", _SPLIT_C_1)):
    twin(_claim, "sort_walk_one_child_right", "Lemma C.2's splitter sort sends a record below a node's first "
         "splitter to the child right of its own", params=_params, kind="construction")(_walk_one_child_right)


@twin("anna.thm_4_2", "suffix_dropped", "a query ignores the key sums of its bucket on machines to its right",
      params=_SMALL_4_2, kind="construction")
@contextmanager
def _suffix_dropped() -> Iterator[None]:
    real = mpc_small.tree_scan

    def scan(mpc, leaves, fan, monoid, summary, apply, *, label):
        return real(mpc, leaves, fan, monoid, summary, lambda m, mem, pre, suf: apply(m, mem, pre, ()), label=label)

    with mock.patch.object(mpc_small, "tree_scan", scan):
        yield


@twin("anna.thm_4_2", "memory_limit_lifted",
      "the referee and the planner allow 4 s words, and the plan packs 4 times the items per machine",
      params=_SMALL_4_2, kind="oracle-limit")
@contextmanager
def _memory_limit_lifted() -> Iterator[None]:
    real_b = mpc_small.SmallMemoryPlan.per_machine

    def roomy(P: int, s: int, **kw) -> MPC:
        return MPC(P, 4 * s, **kw)

    plan = mpc_small.SmallMemoryPlan
    with mock.patch.object(mpc_small, "MPC", roomy), mock.patch.object(plan, "reasons", lambda p: []), \
            mock.patch.object(plan, "per_machine", property(lambda p: 4 * real_b.fget(p))):
        yield


@twin("anna.thm_4_2", "ledger_drops_run_rounds", "the ledger loses the rounds that send run sums down the tree",
      params=_SMALL_4_2, kind="ledger")
@contextmanager
def _ledger_drops_run_rounds() -> Iterator[None]:
    real = Ledger.record

    def record(self, kind, tag, *args, **kw):
        if kind == "mpc_round" and tag.endswith("runs.down"):
            return None
        return real(self, kind, tag, *args, **kw)

    with mock.patch.object(Ledger, "record", record):
        yield


@twin("anna.thm_c_1", "sort_digit_short", "the radix sort makes one pass fewer than the key has digits",
      params=_SMALL_C_1, kind="construction")
@contextmanager
def _sort_digit_short() -> Iterator[None]:
    with mock.patch.object(mpc_radix, "radix_passes", lambda bound, base: max(1, levels(bound, base) - 1)):
        yield


@twin("anna.thm_c_1", "left_part_doubled", "a run crossing a machine's left edge counts its left part twice",
      params=_SMALL_C_1, kind="construction")
@contextmanager
def _left_part_doubled() -> Iterator[None]:
    real = mpc_small.tree_scan

    def twice(pre: tuple, mv: int) -> tuple:
        return (*pre[:4 + mv], *(2 * x for x in pre[4 + mv:])) if pre else pre

    def scan(mpc, leaves, fan, monoid, summary, apply, *, label):
        return real(mpc, leaves, fan, monoid, summary,
                    lambda m, mem, pre, suf: apply(m, mem, twice(pre, (len(pre) - 5) // 2), suf), label=label)

    with mock.patch.object(mpc_small, "tree_scan", scan):
        yield


@contextmanager
def radix_ranks_reversed() -> Iterator[None]:
    """The radix sort's scans rank a machine's records of equal key in reverse: the sort is no longer stable."""
    real = mpc_radix.tree_scan

    def scan(mpc, leaves, fan, monoid, summary, apply, *, label):
        return real(mpc, leaves, fan, monoid, summary,
                    lambda m, mem, pre, suf: apply(m, mem[::-1], pre, suf), label=label)

    with mock.patch.object(mpc_radix, "tree_scan", scan):
        yield



# ---------------------------------------------------------------- exact-match attention (App. B)

_EMA = {"N": 256}


@twin("anna.def_ema", "search_past_the_run", "each query's right binary search stops one key past its run of "
      "equal keys", params=_EMA, kind="construction")
@contextmanager
def _ema_search_past() -> Iterator[None]:
    real = attention._bisect

    def bisect(items, keys, ops, *, left):
        out = real(items, keys, ops, left=left)
        return out if left else np.minimum(len(items), out + 1)

    with mock.patch.object(attention, "_bisect", bisect):
        yield


@twin("anna.def_ema", "last_merge_skipped", "the merge sort stops one level short: the keys are two sorted halves "
      "one after the other", params=_EMA, kind="construction")
@contextmanager
def _ema_last_merge() -> Iterator[None]:
    real = attention._merge_sort

    def sort(items, ops):
        h = len(items) // 2
        return real(items[:h], ops) + [h + j for j in real(items[h:], ops)]

    with mock.patch.object(attention, "_merge_sort", sort):
        yield
