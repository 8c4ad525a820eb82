"""Lemma B.13 (anna.lemma_b_13): a (gamma, eps, rho)-MPC routed by one ANNA layer of k heads a round.

In a (gamma, eps, rho)-MPC every machine sends to and receives from at most k = O(N^rho) machines a round
(App. B, after Sanford et al. 2024a). Lemma B.13 routes such a protocol as Lemma B.3 routes any protocol,
with k heads instead of s: head h carries each machine's *bundle* for its h-th destination (every record it
sends there that round, at most s words), and a receiver hears at most k senders, so Lemma B.4's code runs
with alpha = k and Delta = O(s). Input and output layers are those of Thm B.2's transformer
(:class:`~attnsim.sim.anna.mpc_direct.DirectTransformer`), as is the exact head arithmetic.

A bundle's payload is (number of records, then each record's length and words): at most 1 + 2s numbers for
records of at least one word, so Delta = 2s + 1. A machine whose outbox names more than k destinations is
refused: the protocol is not of capacity k.
"""

from __future__ import annotations

from typing import Callable

from attnsim.sim.anna.errors import require
from attnsim.sim.anna.message_code import MessageCode
from attnsim.sim.anna.mpc import Message, Record
from attnsim.sim.anna.mpc_direct import DirectRun, DirectTransformer
from attnsim.sim.anna.transformer import Mechanism
from attnsim.sim.ledger import Ledger


def bundle_delta(memory: int) -> int:
    """Payload numbers of one bundle: its record count, then a length and the words of each record."""
    return 2 * memory + 1


class CapacityTransformer(DirectTransformer):
    """Lemma B.13's transformer for a capacity-``capacity`` protocol on P machines of ``memory`` words."""

    def __init__(self, *, inputs: int, machines: int, block: int, memory: int, capacity: int, mechanism: Mechanism,
                 ledger: Ledger, tag: str = "lemma_b_13") -> None:
        """Thm B.2's layers with k = ``capacity`` heads and Lemma B.4's code at alpha = k, Delta = 2 s + 1."""
        require(isinstance(capacity, int) and capacity >= 1, "k", f"must be a positive integer, got {capacity!r}")
        super().__init__(inputs=inputs, machines=machines, block=block, memory=memory, mechanism=mechanism,
                         ledger=ledger, tag=tag)
        self.heads = capacity
        self.code = MessageCode.design(max(inputs, self.plan.tokens), capacity, bundle_delta(memory))
        self.max_contacts = 0

    def items(self, outboxes: list[list[Message]], r: int) -> list[list[tuple[int, list[Record]]]]:
        """Each machine's bundles, one per destination in the order the outbox first names it."""
        bundles = []
        for m, out in enumerate(outboxes):
            by_dest: dict[int, list[Record]] = {}
            for dest, rec in out:
                require(len(rec) >= 1, "record", f"machine {m} sends an empty record in round {r}")
                by_dest.setdefault(dest, []).append(rec)
            require(len(by_dest) <= self.heads, "k",
                    f"machine {m} sends to {len(by_dest)} machines in round {r}, "
                    f"more than the capacity k = {self.heads}")
            self.max_contacts = max(self.max_contacts, len(by_dest))
            bundles.append(list(by_dest.items()))
        return bundles

    def encode_item(self, records: list[Record]) -> list[int]:
        """(number of records, each record's length and words)."""
        return [len(records), *(x for rec in records for x in self.codec.encode(rec))]

    def decode_item(self, payload: list[int]) -> list[Record]:
        """The inverse of :meth:`encode_item`."""
        out, at = [], 1
        for _ in range(payload[0]):
            rec, at = self.codec.decode(payload, at)
            out.append(rec)
        return out


def run_capacity(protocol: Callable[..., object], *, inputs: int, machines: int, block: int, memory: int,
                 capacity: int, mechanism: Mechanism, ledger: Ledger) -> tuple[DirectRun, int]:
    """Run ``protocol(place=..., deliver=...)`` inside :class:`CapacityTransformer`; the outputs, code and
    largest averaging, and the most destinations one machine's outbox named in a round."""
    model = CapacityTransformer(inputs=inputs, machines=machines, block=block, memory=memory, capacity=capacity,
                                mechanism=mechanism, ledger=ledger)
    run = protocol(place=model.place, deliver=model)
    return DirectRun(model.readout(run.outputs), model.code, model.max_alpha), model.max_contacts
