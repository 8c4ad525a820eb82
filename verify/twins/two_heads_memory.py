"""Broken twins of the KV-cache memory checker (``two_heads.rebuttal_kv_memory``)."""

from __future__ import annotations

from typing import Any
from unittest import mock

from attnsim.sim.oracle import Oracle
from attnsim.sim.two_heads import blocks
from attnsim.verify.twins.breaks import wrapped
from attnsim.verify.twins.two_heads_breaks import block_shift
from attnsim.verify.twins.two_heads_exact import add

_SMALL = {"N": 4096, "M": 64, "d": 16, "points": 4, "engine": 0, "direct": 0}


def outputs_held() -> Any:
    """The oracle hands a round's outputs back only when all have run, so all n² outputs are held at once."""
    def held(self: Oracle, calls: Any, sink: Any) -> int:
        self.round += 1
        outputs = [self._execute(call) for call in calls]  # every output of the round at once
        for i, out in enumerate(outputs):
            sink(i, out)
        return len(outputs)

    return mock.patch.object(Oracle, "run_into", held)


add("two_heads.rebuttal_kv_memory", "all_outputs_held", "the construction holds all n² call outputs before "
    "combining", outputs_held, _SMALL, kind="construction")
add("two_heads.rebuttal_kv_memory", "padding_off_by_one", "the fused decode counts one padding row too many",
    lambda: wrapped(blocks.decode_AB, lambda f, pad: f(pad + 1)), {**_SMALL, "N": 1000, "points": 3},
    kind="construction")
add("two_heads.rebuttal_kv_memory", "block_boundary", "every block after the first starts one token late",
    block_shift, {**_SMALL, "N": 1024, "points": 3}, kind="construction")
