"""An EMA transformer that runs an MPC protocol (anna.thm_4_1 = Thm B.10 / Cor B.14, Lemmas B.4-B.6, B.13).

One token per machine (plus relay tokens, below), with id p_i = i. The protocol's local steps are
the token-wise maps (arbitrary functions, as the paper allows); attention only moves data, in
exact-match heads (EMA, the r = 0 case of ANNA, App. B). The transformer is

    input layer (Lemma B.5) -> D relay layers per protocol round -> output layer (Lemma B.6)

and every layer writes one ``anna_head`` ledger entry per head (round = layer index, shape =
(tokens, query/key dimension, value dimension)), so layers, heads and width are read off the ledger.

**Relay layers (our reading of Lemma B.12 + Lemma B.13, docs/anna_mpc_to_anna.md).** Theorem B.10
first makes every machine talk to at most k = O(N^rho) others per round and then routes each round
with k heads. We do the first step by relaying: machine ids are written with D base-k digits
(k^D >= P); in relay layer t a message moves to the token whose id has digit t replaced by the
destination's digit t, so after D layers it is home. In a relay layer a token sends to at most k - 1
tokens (those differing from it in digit t) and hears from at most k - 1, so one layer has k - 1
heads: head h carries a token's h-th outgoing bundle (all its messages for one neighbour), the
query of token y is p_y and the key of a sender is the id of its h-th neighbour. A receiver may get
several bundles in one head; EMA averages them and the code of Lemma B.4 (``message_code``, alpha =
k - 1) separates them. The value width of a head is that code's width for bundles of at most
``bundle_words`` words; a bundle over that is refused (:class:`RelayOverflowError`), never cut.

Messages to oneself stay in the token (its state carries them). At the end every machine's inbox
is sorted by (sender, order of sending): exactly what direct delivery gives.

**EMA output in exact form.** A head's output row is sum_j w_ij v_j with w_ij = 1/count over the
matching senders. We compute the matching with :func:`~attnsim.sim.anna.attention.ema` and keep the
row as (sum of the matching values, count), the rational vector sums/count without rounding; values
are stored sparsely (only the buckets a code writes), which is the same product.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from attnsim.sim.anna.attention import Retrieval, ema
from attnsim.sim.anna.errors import require
from attnsim.sim.anna.message_code import DecodingError, MessageCode, add_cells
from attnsim.sim.anna.mpc import Message, Record
from attnsim.sim.errors import AttnsimError
from attnsim.sim.ledger import Ledger

_MESSAGE_HEAD = 4  # numbers before a record's words in a bundle: destination, sender, order, length


class RelayOverflowError(AttnsimError):
    """A relay bundle is longer than the layer's value width allows (``bundle_words``)."""


@dataclass(frozen=True)
class RelayPlan:
    """The fixed architecture: base k, D digits, tokens, and the code of the relay heads."""

    machines: int
    base: int
    hops: int
    bundle_words: int
    code: MessageCode

    @classmethod
    def design(cls, machines: int, base: int, bundle_words: int) -> "RelayPlan":
        """D = the fewest base-k digits that number P machines; the code for alpha = k - 1 and such bundles."""
        require(isinstance(machines, int) and machines >= 1, "P", f"must be a positive integer, got {machines!r}")
        require(isinstance(base, int) and base >= 2, "k", f"the relay base must be an integer >= 2, got {base!r}")
        require(isinstance(bundle_words, int) and bundle_words >= 1, "bundle_words",
                f"must be a positive integer, got {bundle_words!r}")
        hops = 1
        while base ** hops < machines:
            hops += 1
        delta = 1 + 2 * bundle_words  # a message of w words takes 5 + 2 w <= 2 (w + 4) numbers
        return cls(machines, base, hops, bundle_words, MessageCode.design(base ** hops, base - 1, delta))

    @property
    def tokens(self) -> int:
        """Relay tokens k^D (the first P of them are the machines)."""
        return self.base ** self.hops

    @property
    def heads(self) -> int:
        """Heads of a relay layer: one per neighbour, k - 1."""
        return self.base - 1

    def digit(self, x: int, t: int) -> int:
        """Digit t (0 = least significant) of id x in base k."""
        return (x // self.base ** t) % self.base

    def neighbour(self, x: int, t: int, value: int) -> int:
        """The id x with digit t replaced by ``value``."""
        return x + (value - self.digit(x, t)) * self.base ** t


class WordCodec:
    """Words (ints, or short string tags of a protocol) as pairs of integers; tags get a fixed codebook."""

    def __init__(self) -> None:
        """An empty codebook: tags get codes in the order they are first seen."""
        self.codes: dict[str, int] = {}
        self.names: list[str] = []

    def encode(self, record: Record) -> list[int]:
        """[length, (kind, value) per word]: kind 0 for an int, 1 for a tag's codebook index."""
        out = [len(record)]
        for w in record:
            if isinstance(w, str):
                if w not in self.codes:
                    self.codes[w] = len(self.names)
                    self.names.append(w)
                out += [1, self.codes[w]]
            else:
                require(isinstance(w, (int, np.integer)), "record", f"words must be int or str, got {type(w).__name__}")
                out += [0, int(w)]
        return out

    def decode(self, numbers: list[int], at: int) -> tuple[Record, int]:
        """The record starting at ``numbers[at]`` and the position after it."""
        n = numbers[at]
        pairs = numbers[at + 1:at + 1 + 2 * n]
        rec = tuple(self.names[pairs[i + 1]] if pairs[i] == 1 else pairs[i + 1] for i in range(0, 2 * n, 2))
        return rec, at + 1 + 2 * n


class MPCTransformer:
    """The transformer for a protocol on P machines whose input is in blocks of ``block`` tokens.

    Pass :meth:`place` as the MPC's ``place`` hook, the object itself as its ``deliver`` hook, and
    call :meth:`readout` on the machines' outputs.
    """

    def __init__(self, *, inputs: int, machines: int, block: int, base: int, bundle_words: int,
                 ledger: Ledger, tag: str = "thm_4_1") -> None:
        """The layers for ``inputs`` tokens on ``machines`` machines (base-``base`` relay, ``block`` words)."""
        require(isinstance(inputs, int) and inputs >= 1, "N", f"must be a positive integer, got {inputs!r}")
        require(isinstance(block, int) and block >= 1, "block", f"must be a positive integer, got {block!r}")
        require(-(-inputs // block) <= machines, "P", f"{machines} machines cannot hold {inputs} inputs in blocks "
                                                      f"of {block}")
        self.N, self.block = inputs, block
        self.plan = RelayPlan.design(machines, base, bundle_words)
        self.ledger, self.tag = ledger, tag
        self.codec = WordCodec()
        self.layers = 0
        self.max_bundle_words = 0
        self.max_token_words = 0
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

    # ------------------------------------------------------------------ Lemma B.13: one round in D layers
    def __call__(self, outboxes: list[list[Message]], r: int) -> list[list[Record]]:
        """Deliver round ``r``'s messages through the relay layers (the MPC machine's ``deliver`` hook)."""
        plan = self.plan
        at: list[list[tuple[int, int, int, Record]]] = [[] for _ in range(plan.tokens)]
        for src, out in enumerate(outboxes):
            for seq, (dest, rec) in enumerate(out):
                at[src].append((dest, src, seq, rec))
        for t in range(plan.hops):
            at = self._hop(at, t, r)
        inbox: list[list[Record]] = []
        for m in range(len(outboxes)):
            require(all(msg[0] == m for msg in at[m]), "relay", f"a message stopped at token {m}, not its destination")
            inbox.append([msg[3] for msg in sorted(at[m], key=lambda msg: (msg[1], msg[2]))])
        return inbox

    def _hop(self, at: list[list[tuple[int, int, int, Record]]], t: int, r: int) -> list[list[tuple]]:
        plan = self.plan
        new: list[list[tuple]] = [[] for _ in range(plan.tokens)]
        bundles: list[dict[int, list[tuple]]] = []
        for x, msgs in enumerate(at):
            self.max_token_words = max(self.max_token_words, sum(len(m[3]) + _MESSAGE_HEAD for m in msgs))
            out: dict[int, list[tuple]] = {}
            for msg in msgs:
                v = plan.digit(msg[0], t)
                if v == plan.digit(x, t):
                    new[x].append(msg)
                else:
                    out.setdefault(plan.neighbour(x, t, v), []).append(msg)
            bundles.append(out)
        for h in range(plan.heads):
            keys = np.full((plan.tokens, 1), -1, dtype=np.int64)
            cells: list[dict[tuple[int, int], np.ndarray]] = [{} for _ in range(plan.tokens)]
            for x, out in enumerate(bundles):
                targets = sorted(out)
                if h < len(targets):
                    y = targets[h]
                    keys[x, 0] = y
                    cells[x] = plan.code.encode_cells(x, self._payload(out[y], x, y, t))
            matched = self._layer(keys, None, head=h, width=plan.code.width)
            for y in range(plan.tokens):
                senders = [int(j) for j in np.flatnonzero(matched.sums[y])]
                if not senders:
                    continue
                self.ledger.record("decode", f"{self.tag}.layer{self.layers}.head{h}", round=self.layers,
                                   amount=len(senders))
                self.max_alpha = max(self.max_alpha, len(senders))
                total: dict[tuple[int, int], np.ndarray] = {}
                for j in senders:
                    add_cells(total, cells[j])
                try:
                    decoded = plan.code.decode_cells(total, len(senders))
                except DecodingError:
                    self.ledger.record("decode_failure", f"{self.tag}.layer{self.layers}.head{h}", round=self.layers)
                    raise
                for payload in decoded.values():
                    new[y] += self._unpack(payload)
        self.layers += 1
        return new

    def _payload(self, msgs: list[tuple], x: int, y: int, t: int) -> list[int]:
        words = sum(len(m[3]) + _MESSAGE_HEAD for m in msgs)
        self.max_bundle_words = max(self.max_bundle_words, words)
        if words > self.plan.bundle_words:
            raise RelayOverflowError(f"bundle_words: relay layer {t}: token {x} would send {words} words to token "
                                     f"{y}, over the layer's {self.plan.bundle_words}")
        out = [len(msgs)]
        for dest, src, seq, rec in msgs:
            out += [dest, src, seq, *self.codec.encode(rec)]
        return out

    def _unpack(self, payload: list[int]) -> list[tuple]:
        msgs, at = [], 1
        for _ in range(payload[0]):
            dest, src, seq = payload[at:at + 3]
            rec, at = self.codec.decode(payload, at + 3)
            msgs.append((dest, src, seq, rec))
        return msgs

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
    def _layer(self, keys: np.ndarray, values: np.ndarray | None, *, head: int = 0, width: int | None = None,
               queries: np.ndarray | None = None) -> Retrieval:
        """One EMA head of layer :attr:`layers` (query p_i unless given).

        ``values`` None is a relay head: only the k^D relay tokens take part (the others have no
        key any query asks for), and the values are one-hot sender columns, so the output row says
        which encodings the receiver averages; the encodings themselves are summed sparsely.
        """
        n = keys.shape[0]
        q = queries if queries is not None else np.arange(n).reshape(-1, 1)
        v = values if values is not None else np.eye(n, dtype=np.int64)
        tag = f"{self.tag}.layer{self.layers}.head{head}"
        self.ledger.record("anna_head", tag, round=self.layers, shape=(self.tokens, 1, width or v.shape[1]))
        return ema(q, keys, v, ledger=self.ledger, tag=tag)


@dataclass(frozen=True)
class TransformerRun:
    """The transformer's N outputs and what its run measured (sizes are in the ledger)."""

    outputs: list[tuple[int, ...]]
    plan: RelayPlan
    max_bundle_words: int
    max_token_words: int
    max_alpha: int


def run_protocol(protocol: Callable[..., object], *, inputs: int, machines: int, block: int, base: int,
                 bundle_words: int, ledger: Ledger, tag: str = "thm_4_1") -> TransformerRun:
    """Run ``protocol(place=..., deliver=...)`` inside :class:`MPCTransformer`; read the outputs out (Lemma B.6).

    ``protocol`` returns an object with ``outputs`` (per machine, {input index: output words}).
    """
    model = MPCTransformer(inputs=inputs, machines=machines, block=block, base=base, bundle_words=bundle_words,
                           ledger=ledger, tag=tag)
    run = protocol(place=model.place, deliver=model)
    return TransformerRun(model.readout(run.outputs), model.plan, model.max_bundle_words, model.max_token_words,
                          model.max_alpha)
