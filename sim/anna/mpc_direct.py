"""Thm B.2 / Cor B.9 (anna.cor_b_9): one ANNA layer per MPC round, Lemma B.3's routing, Lemma B.4's code at alpha = s.

The transformer of Thm B.2 has one token per machine (ids p_i = i; the N input tokens share the
first ids) and L = R + 2 layers for R delivered rounds: the input layer of Lemma B.5, one routing
layer per round (Lemma B.3), the output layer of Lemma B.6 (the paper counts R + 1, folding the last
local step into the output layer). The layers are those of :class:`~attnsim.sim.anna.mpc_to_anna.MPCTransformer`
(input and output layers, word codec) with two changes:

* **Routing (Lemma B.3).** A round's messages travel through *one* layer of H = s heads. Head h
  carries the h-th record of every machine's outbox (a machine sends at most s words, so at most s
  records): the query of token y is p_y, the key of machine m is the id of the destination of its
  h-th record (-1 when it has none), the value is Lemma B.4's encoding of (sender m, the record's
  length and words). Several machines may address the same receiver in one head; the head then
  *averages* their encodings, and the receiver decodes all of them. Their number is at most the
  words it receives, so at most s: the code is :class:`~attnsim.sim.anna.message_code.MessageCode`
  with alpha = s and Delta = s + 1 (Lemma B.3 uses alpha = Delta = s), of width T B (s + 4).
  Inboxes are rebuilt in sender order, then head order, which is the order of direct delivery.
* **The mechanism is ANNA.** Every head runs ``mechanism``: Algorithm 1 at r = 0 (narrow p-stable
  hashes of the one-dimensional ids, drawn once from a seed), which retrieves exactly the keys equal
  to the query unless two different ids share a bucket in a table (the eta of Thm 3.4); or EMA.
  Cor B.9 is this: EMA is ANNA with r = 0, so Thm B.2's bounds hold for ANNA-transformers.

The head output sum_j w_ij v_j is computed exactly by linearity: the mechanism retrieves one-hot
rows (which senders a query collected, with multiplicity), and the receiver's row is that multiset's
sum of sparse encodings over its count (the same rational vector without forming T x width arrays).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from attnsim.sim.anna.attention import Retrieval
from attnsim.sim.anna.errors import require
from attnsim.sim.anna.message_code import DecodingError, MessageCode, add_cells
from attnsim.sim.anna.mpc import Message, Record
from attnsim.sim.anna.mpc_to_anna import MPCTransformer
from attnsim.sim.anna.transformer import Mechanism
from attnsim.sim.ledger import Ledger


class DirectTransformer(MPCTransformer):
    """Thm B.2's transformer for a protocol on P machines of ``memory`` words, every head by ``mechanism``."""

    def __init__(self, *, inputs: int, machines: int, block: int, memory: int, mechanism: Mechanism,
                 ledger: Ledger, tag: str = "cor_b_9") -> None:
        """The input, routing and output layers (module docstring); heads run ``mechanism``."""
        super().__init__(inputs=inputs, machines=machines, block=block, base=2, memory=memory, ledger=ledger, tag=tag)
        self.machines, self.heads, self.mechanism = machines, memory, mechanism
        self.code = MessageCode.design(max(inputs, self.plan.tokens), memory, memory + 1)

    def items(self, outboxes: list[list[Message]], r: int) -> list[list[tuple[int, list[Record]]]]:
        """What head h carries for each machine: its h-th (destination, records); here one record each (Lemma B.3)."""
        require(max(map(len, outboxes), default=0) <= self.heads, "s",
                f"a machine sends more than s = {self.heads} records in round {r}")
        return [[(dest, [rec]) for dest, rec in out] for out in outboxes]

    def encode_item(self, records: list[Record]) -> list[int]:
        """The payload of one item: the record's length and words."""
        return self.codec.encode(records[0])

    def decode_item(self, payload: list[int]) -> list[Record]:
        """The inverse of :meth:`encode_item`."""
        return [self.codec.decode(payload, 0)[0]]

    def __call__(self, outboxes: list[list[Message]], r: int) -> list[list[Record]]:
        """Deliver round ``r``'s messages through one layer of heads (the MPC machine's ``deliver`` hook)."""
        items = self.items(outboxes, r)
        received: list[list[tuple[int, int, Record]]] = [[] for _ in outboxes]
        for h in range(self.heads):
            keys = np.full((self.tokens, 1), -1, dtype=np.int64)
            cells = {}
            for m, out in enumerate(items):
                if h < len(out):
                    keys[m, 0] = out[h][0]
                    cells[m] = self.code.encode_cells(m, self.encode_item(out[h][1]))
            senders = sorted(cells)  # one-hot columns of the senders; other tokens' values are 0
            onehot = np.zeros((self.tokens, len(senders)), dtype=np.int64)
            onehot[senders, np.arange(len(senders))] = 1
            got = self._layer(keys, onehot, head=h, width=self.code.width)
            for y in np.flatnonzero(got.counts[:self.machines]):
                total: dict = {}
                for col in np.flatnonzero(got.sums[y]):
                    for _ in range(int(got.sums[y, col])):
                        add_cells(total, cells[senders[col]])
                self.max_alpha = max(self.max_alpha, int(got.counts[y]))
                where = f"{self.tag}.layer{self.layers}.head{h}"
                try:
                    decoded = self.code.decode_cells(total, int(got.counts[y]))
                except DecodingError:
                    self.ledger.record("decode_failure", where, round=self.layers)
                    raise
                self.ledger.record("decode", where, round=self.layers, amount=len(decoded))
                for m, payload in decoded.items():
                    received[y].extend((m, h, rec) for rec in self.decode_item(payload))
        self.layers += 1
        return [[rec for _, _, rec in sorted(box, key=lambda t: (t[0], t[1]))] for box in received]

    def _layer(self, keys: np.ndarray, values: np.ndarray, *, head: int = 0, width: int | None = None,
               queries: np.ndarray | None = None) -> Retrieval:
        """One head of layer :attr:`layers` by the mechanism (query p_i unless given), recorded with ``width``."""
        q = queries if queries is not None else np.arange(keys.shape[0]).reshape(-1, 1)
        tag = f"{self.tag}.layer{self.layers}.head{head}"
        self.ledger.record("anna_head", tag, round=self.layers, shape=(self.tokens, 1, width or values.shape[1]))
        return self.mechanism(q, keys, values, ledger=self.ledger, tag=tag)


@dataclass(frozen=True)
class DirectRun:
    """The transformer's N outputs, its code, and the most messages one head averaged for one receiver."""

    outputs: list[tuple[int, ...]]
    code: MessageCode
    max_alpha: int


def run_direct(protocol: Callable[..., object], *, inputs: int, machines: int, block: int, memory: int,
               mechanism: Mechanism, ledger: Ledger, tag: str = "cor_b_9") -> DirectRun:
    """Run ``protocol(place=..., deliver=...)`` inside :class:`DirectTransformer` and read the N outputs out.

    ``protocol`` returns an object with ``outputs`` (per machine, {input index: output words}).
    """
    model = DirectTransformer(inputs=inputs, machines=machines, block=block, memory=memory, mechanism=mechanism,
                              ledger=ledger, tag=tag)
    run = protocol(place=model.place, deliver=model)
    return DirectRun(model.readout(run.outputs), model.code, model.max_alpha)
