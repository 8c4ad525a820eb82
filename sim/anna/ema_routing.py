"""One MPC round's messages delivered by one EMA layer (anna.thm_b_2 / Lemma B.3).

Every MPC machine is one token with id p_i = i. Head h carries the h-th message of every machine:
the query of token i is p_i ("messages for me"), the key of token j is the id of the destination
of its h-th message (or -1, which no token asks for, when it has none), and the value is the
message's encoding. Exact-match attention then hands token i the *average* of the encodings of
all h-th messages addressed to it.

[Deviation: docs/reconstructions.md, "Routing without the encoding of Lemma B.4"] Instead of the sparse multi-hash
encoding of Lemma B.4 (dimension O(alpha^4 Delta log q)) every sender writes into its own block of the value vector:
block j = (1, length, word encodings ..., 0 padding). The receiver reads the block's first entry,
1/n for n messages averaged together, multiplies the block by n and decodes exactly (the EMA
output is an exact rational). The value dimension is q (2 Delta + 2) for q machines and records of
at most Delta words -- linear in q, so this is only sensible for small q.

A word is an int or a str (protocols tag records with short strings); it is encoded as two
numbers (0, int) or (1, index in a codebook of tags), the codebook being part of the fixed program.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from attnsim.sim.anna.attention import ema
from attnsim.sim.anna.errors import require
from attnsim.sim.anna.mpc import Message, Record
from attnsim.sim.ledger import Ledger


class EMARouter:
    """A ``deliver`` function for :class:`~attnsim.sim.anna.mpc.MPC`: each round is one EMA layer."""

    def __init__(self, *, ledger: Ledger, tag: str = "route") -> None:
        """A router that writes each delivered round to ``ledger`` under ``tag``."""
        self.ledger, self.tag = ledger, tag
        self.P = 0
        self.codebook: dict[str, int] = {}
        self.names: list[str] = []

    def _encode_word(self, w: object) -> tuple[int, int]:
        if isinstance(w, str):
            if w not in self.codebook:
                self.codebook[w] = len(self.names)
                self.names.append(w)
            return 1, self.codebook[w]
        require(isinstance(w, (int, np.integer)), "record", f"words must be int or str, got {type(w).__name__}")
        return 0, int(w)

    def _decode_word(self, kind: int, value: int) -> object:
        return self.names[value] if kind == 1 else value

    def __call__(self, outboxes: list[list[Message]], r: int) -> list[list[Record]]:
        """Deliver round ``r``'s outboxes with one EMA layer; returns each machine's inbox."""
        self.P = len(outboxes)
        heads = max((len(o) for o in outboxes), default=0)
        delta = max((len(rec) for o in outboxes for _, rec in o), default=0)
        width = 2 * delta + 2
        received: list[list[tuple[int, int, Record]]] = [[] for _ in range(self.P)]
        queries = np.arange(self.P).reshape(-1, 1)
        for h in range(heads):
            keys = np.full((self.P, 1), -1, dtype=np.int64)
            values = np.zeros((self.P, self.P * width), dtype=np.int64)
            for j, out in enumerate(outboxes):
                if h < len(out):
                    dest, rec = out[h]
                    keys[j, 0] = dest
                    block = [1, len(rec)] + [x for w in rec for x in self._encode_word(w)]
                    values[j, j * width:j * width + len(block)] = block
            tag = f"{self.tag}.layer{r}.head{h}"
            self.ledger.record("anna_head", tag, round=r, shape=(self.P, 1, self.P * width))
            averaged = ema(queries, keys, values, ledger=self.ledger, tag=tag).output_exact()
            for i in range(self.P):
                for j in range(self.P):
                    received[i] += self._decode_block(averaged[i, j * width:(j + 1) * width], j, h)
        return [[rec for _, _, rec in sorted(box, key=lambda t: (t[0], t[1]))] for box in received]

    def _decode_block(self, block: np.ndarray, sender: int, head: int) -> list[tuple[int, int, Record]]:
        if block[0] == 0:
            return []
        n = 1 / Fraction(block[0])
        nums = [int(x * n) for x in block]
        words = nums[2:2 + 2 * nums[1]]
        rec = tuple(self._decode_word(words[t], words[t + 1]) for t in range(0, len(words), 2))
        return [(sender, head, rec)]
