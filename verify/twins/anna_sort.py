"""Broken twins of anna.lemma_c_2 (checker in verify/claims/anna_sort.py; the sort in sim/anna/mpc_splitter_sort.py).

The growth twin in eps' - eps (rounds x 1/(eps'-eps) over the gap sweep: rounds growing like 1/(eps'-eps)^2) is
registered with every parameter sweep in verify/twins/growth.py.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Iterator
from unittest import mock

from attnsim.sim.anna import mpc_sort, mpc_splitter_sort
from attnsim.sim.anna.mpc import MPC
from attnsim.sim.ledger import Ledger
from attnsim.verify.twins import twin

_LOADS = {"N": 4096, "eps": 0.0625, "eps1": 0.1875, "s_scale": 128.0}  # s = 609: two levels, one-machine buckets
_CASE = {**_LOADS, "draws": 1}  # a construction broken on every draw shows it on one


@twin("anna.lemma_c_2", "walk_one_child_right", "a record below a node's first splitter descends to the child "
      "right of its own", params=_CASE, kind="construction")
@contextmanager
def _walk_one_child_right() -> Iterator[None]:
    def shifted(cut, x, *args, **kw):
        c = bisect_right(cut, x, *args, **kw)
        return 1 if c == 0 and cut else c

    with mock.patch.object(mpc_splitter_sort, "bisect_right", shifted):
        yield


@twin("anna.lemma_c_2", "small_range_routed_right", "where a range is small enough for the one-level sample sort, "
      "records of odd key below its first splitter are routed to the second machine", params=_CASE,
      kind="construction")
@contextmanager
def _small_range_routed_right() -> Iterator[None]:
    def shifted(cut, x, *args, **kw):
        c = bisect_right(cut, x, *args, **kw)
        return 1 if c == 0 and cut and x[0] % 2 else c

    with mock.patch.object(mpc_sort, "bisect_right", shifted):
        yield


@twin("anna.lemma_c_2", "placement_skewed_to_half", "the sort's random placements (a sample key's block, a record's "
      "machine in its child's range) fall in the first half of every range: loads about double, and most draws, "
      "not all, are refused", params=_LOADS, kind="construction")
@contextmanager
def _placement_skewed_to_half() -> Iterator[None]:
    class Skewed(random.Random):
        def randrange(self, *args, **kw):  # type: ignore[override]
            if len(args) == 1 and not kw:
                return super().randrange(max(1, args[0] // 2))
            return super().randrange(*args, **kw)

    with mock.patch.object(mpc_splitter_sort, "random", SimpleNamespace(Random=Skewed)):
        yield


@twin("anna.lemma_c_2", "ledger_drops_walk", "the ledger loses every walk round of the sort", params=_CASE,
      kind="ledger")
@contextmanager
def _ledger_drops_walk() -> Iterator[None]:
    real = Ledger.record

    def record(self, kind, tag, *args, **kw):
        if kind == "mpc_round" and tag.endswith(".walk"):
            return None
        return real(self, kind, tag, *args, **kw)

    with mock.patch.object(Ledger, "record", record):
        yield


@twin("anna.lemma_c_2", "memory_limit_lifted", "the referee allows 4 s words a machine and the sort plans for them "
      "(4 times the room for samples, splitter paths and records)", params=_CASE, kind="oracle-limit")
@contextmanager
def _memory_limit_lifted() -> Iterator[None]:
    from attnsim.verify.claims import anna_sort

    def roomy(P: int, s: int, **kw) -> MPC:
        return MPC(P, 4 * s, **kw)

    real_shape = anna_sort._shape

    def packed(ctx) -> dict[str, int]:  # four times the records a machine at the start
        shape = real_shape(ctx)
        return {**shape, "b": 4 * shape["b"], "P": -(-ctx.params["N"] // (4 * shape["b"]))}

    with mock.patch.object(anna_sort, "MPC", roomy), mock.patch.object(anna_sort, "_shape", packed):
        yield
