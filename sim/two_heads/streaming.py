"""two_heads.rebuttal_kv_memory — one head of Lemma 3.1 (fused scheme) that combines online.

The authors told reviewers that the simulation stores the keys, the values and a constant number of
fixed vectors, O(N·d) like a KV cache. Lemma 3.1's calls are independent (one round), and eq. (1) is a
sum over key blocks, so nothing forces a construction to hold all n² call outputs: this one feeds the
round's calls to the oracle one at a time, query block by query block, and adds each decoded output
[B, A] into the running sums of its query block; when the block's last key block has been seen it
writes y = Σ B / Σ A and drops the sums. Live beyond the input X: the output Y (N × m), one call's
input ((b + 1) × (2d + 2)) and its scores ((b + 1)²), one block's sums (b × (m + 1)) —
O(N·d + M²) words. The calls are the same n² fused calls as :func:`blocks.head_jobs` builds, in one
round (:meth:`Oracle.run_into`); each call is built from X and the weights alone.
"""

from __future__ import annotations

from typing import Iterator

from attnsim.sim.numerics import Array
from attnsim.sim.oracle import Oracle, OracleCall, OracleHead, OracleLayer
from attnsim.sim.two_heads.blocks import block_starts, decode_AB, fused_input, weights_step1


def simulate(X: Array, WQ: Array, WK: Array, WV: Array, oracle: Oracle, *, b: int,
             tag: str = "kv_stream") -> Array:
    """softmax((X W^Q)(X W^K)^T)(X W^V) from n² fused block-pair calls, combined as they arrive."""
    nm = oracle.nm
    N = X.shape[0]
    m = WV.shape[1]
    w1 = weights_step1(nm, WQ, WK, WV)
    starts = block_starts(N, b)

    def calls() -> Iterator[OracleCall]:
        for q0 in starts:
            for k0 in starts:
                Z1, pad = fused_input(nm, X, q0, k0, b)
                yield OracleCall(f"{tag}.fused", Z1, (OracleLayer((OracleHead(*w1),), decode_AB(pad)),))

    Y = nm.zeros((N, m))
    n = len(starts)
    num: dict[int, Array] = {}  # running sums of the query blocks whose pairs are still arriving
    den: dict[int, Array] = {}

    def fold(i: int, out: Array) -> None:
        q0 = starts[i // n]
        bq = min(b, N - q0)
        if q0 not in num:
            num[q0], den[q0] = nm.zeros((bq, m)), nm.zeros((bq, 1))
        num[q0] = nm.add(num[q0], out[:bq, :-1])
        den[q0] = nm.add(den[q0], out[:bq, -1:])
        if i % n == n - 1:  # the query block's last pair: divide and free its sums
            Y[q0:q0 + bq] = nm.safe_div(num.pop(q0), den.pop(q0))
            oracle.ledger.record("processing", f"{tag}.combine", round=oracle.round, shape=(bq, m),
                                 flops=2 * bq * n * (m + 1))

    oracle.run_into(calls(), fold)
    return Y
