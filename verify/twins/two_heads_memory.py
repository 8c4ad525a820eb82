"""Broken twins of the KV-cache memory checker (``two_heads.rebuttal_kv_memory``)."""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

import numpy as np

from attnsim.sim.ledger import Ledger
from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads import blocks, streaming
from attnsim.verify.twins.breaks import wrapped
from attnsim.verify.twins.two_heads_breaks import block_shift
from attnsim.verify.twins.two_heads_exact import add

_SMALL = {"N": 2048, "M": 64, "d": 16, "points": 5, "engine_N": 0, "direct_N": 0}


def outputs_held() -> Any:
    """The oracle hands a round's outputs back only when all have run, so all n² outputs are held at once."""
    def held(self: Oracle, calls: Any, sink: Any) -> int:
        self.round += 1
        outputs = [self._execute(call) for call in calls]  # every output of the round at once
        for i, out in enumerate(outputs):
            sink(i, out)
        return len(outputs)

    return mock.patch.object(Oracle, "run_into", held)


def quadratic_scratch() -> Any:
    """The construction also holds N²/512 floats (N²/64 bytes) while it runs: a quadratic term small enough
    that the bytes' log-log exponent stays near the linear one; only the c2·N² term of the bytes' fit sees it."""
    def run(f: Any, X: Any, *a: Any, **k: Any) -> Any:
        scratch = np.ones(X.shape[0] ** 2 // 512)
        return f(X, *a, **k) + 0 * scratch[0]

    return wrapped(streaming.simulate, run)


@contextmanager
def merged_amounts_dropped() -> Iterator[None]:
    """A compact ledger that merges a like entry into the previous one but keeps only the previous amount."""
    original = Ledger.record

    def record(self: Ledger, kind: str, tag: str, **kw: Any) -> Any:
        held = len(self.entries)
        entry = original(self, kind, tag, **kw)
        if held and len(self.entries) == held:  # merged into the previous entry: its new amount is lost
            self.entries[-1] = entry = dataclasses.replace(entry, amount=entry.amount - kw.get("amount", 1))
        return entry

    with mock.patch.object(Ledger, "record", record):
        yield


add("two_heads.rebuttal_kv_memory", "ledger_drops_merged_amounts", "the compact ledger merges like calls but drops "
    "the merged call's amount", merged_amounts_dropped, _SMALL, kind="ledger")
add("two_heads.rebuttal_kv_memory", "quadratic_scratch", "the construction holds an extra N²/64 bytes: a quadratic "
    "term under the bytes' constant", quadratic_scratch, _SMALL, kind="construction")
add("two_heads.rebuttal_kv_memory", "all_outputs_held", "the construction holds all n² call outputs before "
    "combining", outputs_held, _SMALL, kind="construction")
add("two_heads.rebuttal_kv_memory", "padding_off_by_one", "the fused decode counts one padding row too many",
    lambda: wrapped(blocks.decode_AB, lambda f, pad: f(pad + 1)), {**_SMALL, "N": 2000},
    kind="construction")
add("two_heads.rebuttal_kv_memory", "block_boundary", "every block after the first starts one token late",
    block_shift, _SMALL, kind="construction")
