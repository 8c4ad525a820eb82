"""Induction heads and k-hop by the paper's route (anna.thm_5_4 = Lemma F.3, anna.thm_5_6 = Thm F.4, App. F.2).

The MPC protocol of :func:`attnsim.sim.anna.khop.khop_mpc` (successor, sort by (letter, position),
read the sorted predecessor, then one pointer-doubling round per binary digit of k) with local
memory s < N, sorted by the constant-round radix sort of :mod:`attnsim.sim.anna.mpc_radix` (our
stand-in for Lemma C.2's sort; its rounds do not grow with N). Run inside the EMA transformer of
:mod:`attnsim.sim.anna.mpc_to_anna` it is the ANNA-transformer of Thm 5.4 / 5.6: Thm 4.1 applied
to these protocols, as App. F.2 does.

The radix and the fan-in of its histogram trees are f = max(2, floor(sqrt(s) / 3)) (the same
choice as the small-memory protocols of :mod:`attnsim.sim.anna.mpc_small`): the keys are
letter * N + position < |Sigma| N, so the sort takes ceil(log_f(|Sigma| N)) passes of
2 ceil(log_f P) + 1 rounds, a constant in N for s = N^eps.
"""

from __future__ import annotations

from math import isqrt

import numpy as np

from attnsim.sim.anna.khop import TOKEN_WORDS, khop_mpc
from attnsim.sim.anna.mpc import MPC, Deliver, Place
from attnsim.sim.anna.mpc_protocols import ProtocolRun
from attnsim.sim.anna.mpc_radix import radix_sort
from attnsim.sim.ledger import Ledger


def radix_fan(memory: int) -> int:
    """f = max(2, floor(sqrt(s) / 3)): the radix and the histogram trees' fan-in."""
    return max(2, isqrt(memory) // 3)


def hop_route_protocol(text: np.ndarray, *, hops: int, memory: int, ledger: Ledger | None = None,
                       place: Place | None = None, deliver: Deliver | None = None) -> ProtocolRun:
    """k-hop (output i = the letter sigma^k(i) lands on, or the sink) on ceil(N / (s/16)) machines of s words."""
    letters = np.asarray(text, dtype=np.int64)
    N = len(letters)
    bound = (int(letters.max(initial=0)) + 1) * N
    f = radix_fan(memory)

    def sort(mpc: MPC, machines: range, key, block: int, **_: int) -> None:
        radix_sort(mpc, machines, lambda r: key(r)[0], key_bound=bound, base=f, fan=f, per_machine=block,
                   label="1hop.sort")

    run = khop_mpc(letters, hops, memory=memory, ledger=ledger, deliver=deliver, place=place, sort=sort)
    outputs: dict[int, dict[int, tuple[int, ...]]] = {
        m: {r[1]: (int(r[5]),) for r in mem if r[0] == "state"} for m, mem in enumerate(run.memory)}
    return ProtocolRun(outputs, run.rounds, run.machines, memory, memory // TOKEN_WORDS)

