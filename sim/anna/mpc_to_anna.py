"""An EMA transformer that runs an MPC protocol (anna.thm_4_1 = Thm B.10 / Cor B.14, Lemmas B.4-B.6, B.13).

One token per machine (plus relay tokens, below), with id p_i = i. The protocol's local steps are
the token-wise maps (arbitrary functions, as the paper allows); attention only moves data, in
exact-match heads (EMA, the r = 0 case of ANNA, App. B). The transformer is

    input layer (Lemma B.5) -> D^2 relay layers per protocol round -> output layer (Lemma B.6)

and every layer writes one ``anna_head`` ledger entry per head (round = layer index, shape =
(tokens, query/key dimension, value dimension)), so layers, heads and width are read off the ledger.

**Relay layers (our Lemma B.12 + Lemma B.13, docs/anna_mpc_to_anna.md).** Each round is the
schedule of :mod:`attnsim.sim.anna.relay_routing`: D^2 layers in which a token talks only to the
k - 1 others of its group along one digit, and no token holds or sends s + 2 k D units (words with
their address) or more. Head h of a layer carries every token's bundle for the group member whose
digit is its own plus h (mod k): the query of token y is p_y, the key of a sender is the id of that
member (or -1 when it sends nothing), so a receiver matches exactly one sender per head. The value
is Lemma B.4's code (``message_code``) with alpha = 1 for a bundle of up to s + 2 k D units of
three numbers each (destination, address, word): the fixed width 3 (s + 2 k D) + 4 of every head.

**EMA output in exact form.** A head's output row is sum_j w_ij v_j with w_ij = 1/count over the
matching senders. We compute the matching with :func:`~attnsim.sim.anna.attention.ema` (values:
the sender's id) and keep the row as (sum of the matching encodings, count), the rational vector
sums/count without rounding; encodings are stored sparsely (only the rows of tokens that send, and of
each only its leading numbers up to the longest payload of the layer: the rest are zero), which is the
same product. The k - 1 heads of a relay layer run at once (:func:`~attnsim.sim.anna.attention.ema_heads`)
and each is written to the ledger as its own head, with the full width. A word is one number: 2 v for an
integer v, 2 c + 1 for the c-th string tag of the protocol's fixed codebook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from attnsim.sim.anna import relay_plan as RP
from attnsim.sim.anna.attention import Retrieval, ema, ema_heads
from attnsim.sim.anna.errors import require
from attnsim.sim.anna.message_code import DecodingError, MessageCode
from attnsim.sim.anna.mpc import Message, Record
from attnsim.sim.anna.relay_routing import (
    DEST,
    IDX,
    SEQ,
    SRC,
    TOK,
    WORD,
    RelayPlan,
    class_counts,
    deal_targets,
    digits,
    inboxes,
    move_targets,
    sort_rows,
    units_of,
)
from attnsim.sim.errors import AttnsimError
from attnsim.sim.ledger import Ledger

UNIT_NUMBERS = 3  # a unit in a bundle: destination, address (source, sequence, index), word


class RelayOverflowError(AttnsimError):
    """A token would hold or send more units than the relay's proved capacity s + 2 k D."""


class WordCodec:
    """Words (ints, or short string tags of a protocol) as one integer each; tags get a fixed codebook."""

    def __init__(self) -> None:
        """An empty codebook: tags get codes in the order they are first seen."""
        self.codes: dict[str, int] = {}
        self.names: list[str] = []

    def word(self, w: object) -> int:
        """2 v for an int v, 2 c + 1 for the tag with codebook index c."""
        if isinstance(w, str):
            if w not in self.codes:
                self.codes[w] = len(self.names)
                self.names.append(w)
            return 2 * self.codes[w] + 1
        require(isinstance(w, (int, np.integer)), "record", f"words must be int or str, got {type(w).__name__}")
        return 2 * int(w)

    def words(self, ws: list[object]) -> list[int]:
        """:meth:`word` of every entry of ``ws`` (integers take the short way: 2 v)."""
        word, integer = self.word, np.integer
        return [2 * w if type(w) is int else 2 * int(w) if isinstance(w, integer) else word(w) for w in ws]

    def unword(self, n: int) -> object:
        """The inverse of :meth:`word`."""
        return self.names[n // 2] if n % 2 else n // 2

    def unwords(self, ns: np.ndarray) -> list[object]:
        """:meth:`unword` of every entry of the integer array ``ns``."""
        out = (ns // 2).tolist()
        for i in np.flatnonzero(ns % 2).tolist():
            out[i] = self.names[out[i]]
        return out

    def encode(self, record: Record) -> list[int]:
        """[length, one number per word]."""
        return [len(record), *(self.word(w) for w in record)]

    def decode(self, numbers: list[int], at: int) -> tuple[Record, int]:
        """The record starting at ``numbers[at]`` and the position after it."""
        n = numbers[at]
        return tuple(self.unword(x) for x in numbers[at + 1:at + 1 + n]), at + 1 + n


class MPCTransformer:
    """The transformer for a protocol on P machines whose input is in blocks of ``block`` tokens.

    Pass :meth:`place` as the MPC's ``place`` hook, the object itself as its ``deliver`` hook, and
    call :meth:`readout` on the machines' outputs.
    """

    def __init__(self, *, inputs: int, machines: int, block: int, base: int, memory: int,
                 ledger: Ledger, tag: str = "thm_4_1") -> None:
        """The layers for ``inputs`` tokens on ``machines`` machines of ``memory`` words (base-``base`` relay)."""
        require(isinstance(inputs, int) and inputs >= 1, "N", f"must be a positive integer, got {inputs!r}")
        require(isinstance(block, int) and block >= 1, "block", f"must be a positive integer, got {block!r}")
        require(-(-inputs // block) <= machines, "P", f"{machines} machines cannot hold {inputs} inputs in blocks "
                                                      f"of {block}")
        self.N, self.block = inputs, block
        self.plan = RelayPlan.design(machines, base, memory)
        self.code = MessageCode.design(self.plan.tokens, 1, 1 + UNIT_NUMBERS * self.plan.capacity)
        self.ledger, self.tag = ledger, tag
        self.codec = WordCodec()
        self.layers = 0
        self.max_bundle_units = 0
        self.max_token_units = 0
        self.max_alpha = 0

    @property
    def tokens(self) -> int:
        """Tokens of the transformer: the N input tokens and the k^D relay tokens overlap (ids from 0)."""
        return max(self.N, self.plan.tokens)

    # ------------------------------------------------------------------ Lemma B.5: input layer
    def place(self, placement: dict[int, list[Record]]) -> dict[int, list[Record]]:
        """One EMA head: input token i (record t of machine m is token m * block + t) to machine m."""
        owner: dict[int, Record] = {}
        for m, recs in placement.items():
            require(len(recs) <= self.block, "block", f"machine {m} gets {len(recs)} input records > {self.block}")
            for t, rec in enumerate(recs):
                owner[m * self.block + t] = rec
        require(all(i < self.N for i in owner), "N", f"the placement names tokens beyond N = {self.N}")
        width = 1 + max((len(self.codec.encode(r)) for r in owner.values()), default=1)
        values = np.zeros((self.tokens, self.block * width), dtype=np.int64)
        keys = np.full((self.tokens, 1), -1, dtype=np.int64)
        for i, rec in owner.items():
            enc = [1] + self.codec.encode(rec)
            slot = (i % self.block) * width
            values[i, slot:slot + len(enc)] = enc
            keys[i, 0] = i // self.block
        got = self._layer(keys, values)
        self.layers += 1
        out: dict[int, list[Record]] = {}
        for m in range(self.plan.machines):
            sums, count = got.sums[m], int(got.counts[m])
            recs = []
            for t in range(self.block):
                cell = [int(x) for x in sums[t * width:(t + 1) * width]]
                if count and cell[0]:
                    recs.append(self.codec.decode(cell, 1)[0])
            if recs:
                out[m] = recs
        return out

    # ------------------------------------------------------------------ Lemmas B.12 + B.13: one round in D^2 layers
    def __call__(self, outboxes: list[list[Message]], r: int) -> list[list[Record]]:
        """Deliver round ``r``'s messages through the relay layers (the MPC machine's ``deliver`` hook)."""
        plan = self.plan
        units = units_of(outboxes, self.codec.words)
        ids = np.arange(plan.tokens)
        group = np.zeros((plan.tokens, plan.base, plan.base), dtype=np.int64)  # x's members' class counts
        for kind, dim, level in plan.layers():
            self._hold(units)
            if kind == "count":
                own = class_counts(plan, units, level)
                receivers, senders, counts = self._count_layer(own, dim)
                group[:] = 0
                group[ids, digits(plan, ids, dim)] = own
                group[receivers, digits(plan, senders, dim)] = counts
                continue
            targets = (deal_targets(plan, units, dim, level, group) if kind == "deal"
                       else move_targets(plan, units, level))
            stay = targets == units[:, TOK]
            moving = units[~stay]
            moving[:, TOK] = targets[~stay]
            units = np.vstack([units[stay], self._carry(moving, units[~stay, TOK], dim)])
        self._hold(units)
        return inboxes(plan, units, len(outboxes), self.codec.unwords)

    def _hold(self, units: np.ndarray) -> None:
        most = int(np.bincount(units[:, TOK], minlength=1).max()) if len(units) else 0
        self.max_token_units = max(self.max_token_units, most)
        if most > self.plan.capacity:
            raise RelayOverflowError(f"relay: a token holds {most} units, over the capacity s + 2 k D = "
                                     f"{self.plan.capacity}")

    def _carry(self, units: np.ndarray, sources: np.ndarray, dim: int) -> np.ndarray:
        """Bundles (every unit from ``sources`` to its token column) through one relay layer; the units as received."""
        plan, s = self.plan, self.plan.memory
        order = sort_rows(sources, units[:, TOK], units[:, DEST], units[:, SRC], units[:, SEQ], units[:, IDX])
        units, sources = units[order], sources[order]
        pair = sources * plan.tokens + units[:, TOK]
        first = np.concatenate(([0], np.flatnonzero(np.diff(pair)) + 1)) if len(pair) else np.zeros(0, dtype=np.int64)
        sizes = np.diff(np.concatenate((first, [len(pair)])))
        if len(sizes):
            self.max_bundle_units = max(self.max_bundle_units, int(sizes.max()))
            if sizes.max() > plan.capacity:
                raise RelayOverflowError(f"relay: a bundle of {int(sizes.max())} units, over the capacity "
                                         f"s + 2 k D = {plan.capacity}")
        slot = np.arange(len(pair)) - np.repeat(first, sizes)
        head = plan.head_of(sources, units[:, TOK], dim)
        tags = RP.pack_tag(units[:, SRC], units[:, SEQ], units[:, IDX], s)
        numbers = np.stack([units[:, DEST], tags, units[:, WORD]], 1)
        cols = 1 + UNIT_NUMBERS * slot[:, None] + np.arange(UNIT_NUMBERS)
        riding = np.flatnonzero((head >= 1) & (head < plan.base))
        pick = riding[np.argsort(head[riding], kind="stable")]  # by head, then as sorted: by source
        hd, held, to = head[pick] - 1, sources[pick], units[pick, TOK]
        change = (held[1:] != held[:-1]) | (hd[1:] != hd[:-1])
        new = np.concatenate(([True], change)) if len(held) else change
        senders, row, of_head = held[new], np.cumsum(new) - 1, hd[new]
        keys = np.full((plan.heads, plan.tokens), -1, dtype=np.int64)
        keys[hd, held] = to
        longest = int(sizes.max()) if len(sizes) else 0  # numbers past the longest bundle are zero in every head
        payloads = np.zeros((len(senders), 1 + UNIT_NUMBERS * longest), dtype=np.int64)  # senders' rows
        payloads[:, 0] = sizes[np.searchsorted(pair[first], senders * plan.tokens + keys[of_head, senders])]
        payloads[row.reshape(-1, 1), cols[pick]] = numbers[pick]
        receivers, _, got = self._relay_heads(keys, of_head, senders, payloads)  # every head's bundles, in head order
        self.layers += 1
        n = got[:, 0]
        body = got[:, 1:].reshape(len(n), longest, UNIT_NUMBERS)[np.arange(longest) < n[:, None]]
        src, seq, idx = RP.unpack_tag(RP.ARRAY, body[:, 1], s)
        return np.stack([np.repeat(receivers, n), body[:, 0], src, seq, idx, body[:, 2]], 1)

    def _count_layer(self, own: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every token sends its class counts to each other member of its group along ``dim``.

        Returns (receiver, sender, counts) per delivered message.
        """
        plan = self.plan
        ids = np.arange(plan.tokens)
        keys = np.stack([RP.head_receiver(RP.ARRAY, ids, plan.base ** dim, plan.base, h)
                         for h in range(1, plan.base)])
        receivers, senders, got = self._relay_heads(keys, np.repeat(np.arange(plan.heads), plan.tokens),
                                                    np.tile(ids, plan.heads), np.tile(own, (plan.heads, 1)))
        self.layers += 1
        return receivers, senders, got[:, :plan.base]

    def _relay_heads(self, keys: np.ndarray, head: np.ndarray, senders: np.ndarray,
                     payloads: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The heads of one relay layer, run at once (:func:`~attnsim.sim.anna.attention.ema_heads`): head h has
        the keys ``keys[h]`` (query p_i), and sender ``senders[r]`` (rows in order of ``head``) sends Lemma B.4's
        encoding of ``payloads[r]`` in head ``head[r]`` when it has a key there; every other value is 0.

        Each head is written to the ledger as when it ran alone, in head order: its ``anna_head`` entry, its
        comparisons, and ``decode`` (the receivers that matched) or ``decode_failure``, which stops the layer.
        Returns (receiver, sender, payload) per receiver that matched a sender, in head order.
        """
        n = keys.shape[1]
        sending = keys[head, senders] >= 0
        head, senders = head[sending], senders[sending]
        values = self.code.encode_rows(senders, payloads[sending])
        counts, hit, sums, compares = ema_heads(np.arange(n), keys, values, head * n + senders)
        matched = counts.reshape(-1)[hit]
        try:
            decoded, failure = self.code.decode_rows(sums, matched), None
        except DecodingError as exc:  # some head's average does not decode: found below, head by head
            decoded, failure = None, exc
        cut = np.searchsorted(hit, np.arange(len(keys) + 1) * n).tolist()
        for h, (most, compared) in enumerate(zip(counts.max(axis=1, initial=0).tolist(), compares.tolist())):
            where = self._record_head(h, values.shape[1])  # the value columns that execute, not the code's capacity
            self.ledger.record("compare", f"{where}.search", amount=compared)
            self.max_alpha = max(self.max_alpha, most)
            if failure is not None:
                try:
                    self.code.decode_rows(sums[cut[h]:cut[h + 1]], matched[cut[h]:cut[h + 1]])
                except DecodingError:
                    self.ledger.record("decode_failure", where, round=self.layers)
                    raise
            self.ledger.record("decode", where, round=self.layers, amount=cut[h + 1] - cut[h])
        if failure is not None:
            raise failure
        return hit % n, *decoded

    # ------------------------------------------------------------------ Lemma B.6: output layer
    def readout(self, outputs: dict[int, dict[int, tuple[int, ...]]]) -> list[tuple[int, ...]]:
        """One EMA head: token i asks machine i // block for its output; returns the N outputs."""
        arity = max((len(v) for out in outputs.values() for v in out.values()), default=1)
        width = 1 + arity
        values = np.zeros((self.tokens, self.block * width), dtype=np.int64)
        keys = np.full((self.tokens, 1), -1, dtype=np.int64)
        for m, out in outputs.items():
            keys[m, 0] = m
            for i, y in out.items():
                require(i // self.block == m, "output", f"machine {m} holds output {i}, which belongs to "
                                                        f"machine {i // self.block}")
                values[m, (i % self.block) * width:(i % self.block + 1) * width] = [1, *y]
        queries = np.array([[i // self.block] if i < self.N else [-2] for i in range(self.tokens)])
        got = self._layer(keys, values, queries=queries)
        self.layers += 1
        result = []
        for i in range(self.N):
            cell = got.sums[i, (i % self.block) * width:(i % self.block + 1) * width]
            require(int(got.counts[i]) == 1 and cell[0] == 1, "output", f"no machine holds output {i}")
            result.append(tuple(int(x) for x in cell[1:]))
        return result

    # ------------------------------------------------------------------ one EMA head, counted
    def _layer(self, keys: np.ndarray, values: np.ndarray, *, queries: np.ndarray | None = None) -> Retrieval:
        """The one EMA head of layer :attr:`layers` (query p_i unless given), recorded with its value width."""
        q = queries if queries is not None else np.arange(keys.shape[0]).reshape(-1, 1)
        return ema(q, keys, values, ledger=self.ledger, tag=self._record_head(0, values.shape[1]))

    def _record_head(self, head: int, width: int) -> str:
        """Write head ``head`` of layer :attr:`layers` to the ledger (tokens, query/key dimension 1, value ``width``);
        returns its tag."""
        tag = f"{self.tag}.layer{self.layers}.head{head}"
        self.ledger.record("anna_head", tag, round=self.layers, shape=(self.tokens, 1, width))
        return tag


@dataclass(frozen=True)
class TransformerRun:
    """The transformer's N outputs and what its run measured (sizes are in the ledger)."""

    outputs: list[tuple[int, ...]]
    plan: RelayPlan
    code: MessageCode
    max_bundle_units: int
    max_token_units: int
    max_alpha: int


def run_protocol(protocol: Callable[..., object], *, inputs: int, machines: int, block: int, base: int,
                 memory: int, ledger: Ledger, tag: str = "thm_4_1") -> TransformerRun:
    """Run ``protocol(place=..., deliver=...)`` inside :class:`MPCTransformer`; read the outputs out (Lemma B.6).

    ``protocol`` returns an object with ``outputs`` (per machine, {input index: output words}).
    """
    model = MPCTransformer(inputs=inputs, machines=machines, block=block, base=base, memory=memory,
                           ledger=ledger, tag=tag)
    run = protocol(place=model.place, deliver=model)
    return TransformerRun(model.readout(run.outputs), model.plan, model.code, model.max_bundle_units,
                          model.max_token_units, model.max_alpha)
