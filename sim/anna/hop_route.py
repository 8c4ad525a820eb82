"""Induction heads and k-hop by the paper's route (anna.thm_5_4 = Lemma F.3, anna.thm_5_6 = Thm F.4, App. F.2).

The MPC protocol of :func:`attnsim.sim.anna.khop.khop_mpc` (successor, sort by (letter, position),
read the sorted predecessor, then one pointer-doubling round per binary digit of k) with local
memory s < N. Run inside the EMA transformer of :mod:`attnsim.sim.anna.mpc_to_anna` it is the
ANNA-transformer of Thm 5.4 / 5.6: Thm 4.1 applied to these protocols, as App. F.2 does.

The sort is :func:`attnsim.sim.anna.khop.letter_sort`: the items start in position order, so a stable
LSD radix sort by the letter alone puts them in (letter, position) order. With radix and tree fan-in
f = max(2, floor(sqrt(s) / 3)) it takes ceil(log_f |Sigma|) passes of 2 ceil(log_f P) + 1 rounds: one
pass of O(1/eps) rounds for a fixed alphabet and s = N^eps, where a sort of the whole key
letter * N + position (Lemma C.2 in general, by our radix sort) takes O(1/eps) passes
(docs/anna_small_memory.md).
"""

from __future__ import annotations

import numpy as np

from attnsim.sim.anna.errors import require
from attnsim.sim.anna.khop import SORTS, TOKEN_WORDS, khop_mpc, letter_sort, splitter_letter_sort
from attnsim.sim.anna.mpc import Deliver, Place
from attnsim.sim.anna.mpc_protocols import ProtocolRun
from attnsim.sim.ledger import Ledger


def hop_route_protocol(text: np.ndarray, *, hops: int, memory: int, alphabet: int | None = None,
                       ledger: Ledger | None = None, place: Place | None = None,
                       deliver: Deliver | None = None, sort: str = "splitter", seed: int = 0) -> ProtocolRun:
    """k-hop (output i = the letter sigma^k(i) lands on, or the sink) on ceil(N / (s/16)) machines of s words.

    ``alphabet``: the letters are 0 .. alphabet - 1 (default: the largest letter + 1). ``sort``: Lemma C.2's
    splitter sort (:func:`attnsim.sim.anna.khop.splitter_letter_sort`, draws from ``seed``) or the letter sort,
    which makes ceil(log_f alphabet) passes.
    """
    require(sort in SORTS, "sort", f"one of {', '.join(SORTS)}, got {sort!r}")
    letters = np.asarray(text, dtype=np.int64)
    size = int(letters.max(initial=0)) + 1 if alphabet is None else alphabet
    require(int(letters.min(initial=0)) >= 0 and int(letters.max(initial=0)) < size, "alphabet",
            f"letters must lie in 0..{size - 1}")
    run = khop_mpc(letters, hops, memory=memory, ledger=ledger, deliver=deliver, place=place,
                   sort=letter_sort(size, len(letters)) if sort == "letter" else splitter_letter_sort(seed))
    outputs: dict[int, dict[int, tuple[int, ...]]] = {
        m: {r[1]: (int(r[5]),) for r in mem if r[0] == "state"} for m, mem in enumerate(run.memory)}
    return ProtocolRun(outputs, run.rounds, run.machines, memory, memory // TOKEN_WORDS)
