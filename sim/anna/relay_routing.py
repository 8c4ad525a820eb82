"""One MPC round as D^2 capacity-k relay layers whose loads stay below s + 2 k D words (anna.thm_4_1, Lemma B.12).

Thm B.10 first turns an MPC protocol into one in which every machine talks to at most k = O(N^rho)
machines per round (Lemma B.12 = Sanford et al. 2024a, Prop. 24) and then routes each round with
k heads (Lemma B.13). This module is our conversion, a pure integer schedule (no attention); the
transformer of :mod:`attnsim.sim.anna.mpc_to_anna` carries its bundles in exact-match heads. The
proof of the load bound is in docs/anna_mpc_to_anna.md; in short:

* Tokens are numbered 0 .. k^D - 1 (the first P are the machines) and written with D base-k
  digits. A *group along dimension i* is the k tokens that differ only in digit i; in a layer along
  dimension i a token sends only to its group, so it talks to at most k - 1 others.
* Every message is cut into *units*, one per word: (destination, source, sequence number, index in
  the record, word). Levels l = D-1, ..., 0 fix the destination's digit l in turn. Entering level
  l, every unit already agrees with its token on the digits above l. Its *class* is the
  destination's digit l.
* Level l deals along dimensions 0, ..., l-1 in turn: a *count* layer (each token tells its group
  how many units of each class it holds), then a *deal* layer (the group's units of class v, in
  the order (member, local order), go round-robin to the members: the j-th to the member whose
  digit is j mod k). Then a *move* layer along dimension l sends every unit of class v to the group
  member whose digit l is v.
* Dealing keeps every token within i of its block's average per class after i dimensions, so the
  move hands a token fewer than s + k l units (the block it collects from holds the units of k^l
  destinations, at most s each), and no token ever holds s + 2 k D units or more.

A round takes sum_l (2 l + 1) = D^2 layers, each with k - 1 heads: head h carries every token's
bundle for the group member whose digit is its own plus h (mod k), so a receiver hears from one
sender per head (Lemma B.4's code with alpha = 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import chain
from typing import Callable, Iterator

import numpy as np

from attnsim.sim.anna import relay_plan as RP
from attnsim.sim.anna.errors import require
from attnsim.sim.errors import AttnsimError

Layer = tuple[str, int, int]  # (kind: "count" | "deal" | "move", dimension, level)


class RelayError(AttnsimError):
    """Units did not end where they belong: at their destination, every record whole."""


@dataclass(frozen=True)
class RelayPlan:
    """The fixed architecture: base k, D digits, k^D tokens, and the unit capacity s + 2 k D."""

    machines: int
    base: int
    hops: int
    memory: int

    @classmethod
    def design(cls, machines: int, base: int, memory: int) -> "RelayPlan":
        """D = the fewest base-k digits that number P machines, for a protocol with memory s."""
        require(isinstance(machines, int) and machines >= 1, "P", f"must be a positive integer, got {machines!r}")
        require(isinstance(base, int) and base >= 2, "k", f"the relay base must be an integer >= 2, got {base!r}")
        require(isinstance(memory, int) and memory >= 1, "s", f"must be a positive integer, got {memory!r}")
        hops = 1
        while base ** hops < machines:
            hops += 1
        return cls(machines, base, hops, memory)

    @property
    def tokens(self) -> int:
        """Relay tokens k^D (the first P of them are the machines)."""
        return self.base ** self.hops

    @property
    def heads(self) -> int:
        """Heads of a relay layer: one per other group member, k - 1."""
        return self.base - 1

    @property
    def capacity(self) -> int:
        """Units a token may hold or send in one bundle: s + 2 k D (the proved load bound)."""
        return RP.capacity(self.memory, self.base, self.hops)

    def layers(self) -> Iterator[Layer]:
        """The D^2 layers of one round, in order."""
        for level in reversed(range(self.hops)):
            for dim in range(level):
                yield "count", dim, level
                yield "deal", dim, level
            yield "move", level, level

    def head_of(self, x: np.ndarray, y: np.ndarray, dim: int) -> np.ndarray:
        """The head that carries x's bundle for y (same group along ``dim``): digit(y) - digit(x) mod k."""
        return RP.head_between(RP.ARRAY, x, y, self.base ** dim, self.base)


TOK, DEST, SRC, SEQ, IDX, WORD = range(6)
"""Columns of a unit array: the token holding the unit, then (destination, source, sequence, index, word)."""


def sort_rows(*columns: np.ndarray) -> np.ndarray:
    """The stable order of the rows by ``columns[0]``, then ``columns[1]``, ... (``np.lexsort`` of the columns
    reversed), from one combined integer key (one sort, not one a column) when the columns' ranges allow it."""
    if not len(columns[0]):
        return np.lexsort(columns[::-1])
    cols = np.stack(columns)
    lows, highs = cols.min(axis=1).tolist(), cols.max(axis=1).tolist()
    widths = [high - low + 1 for low, high in zip(lows, highs)]
    if math.prod(widths) >= 2**62:
        return np.lexsort(columns[::-1])
    scale = np.array([math.prod(widths[t + 1:]) for t in range(len(widths))], dtype=np.int64)
    return np.argsort(((cols - np.array(lows)[:, None]) * scale[:, None]).sum(axis=0), kind="stable")


def units_of(outboxes: list[list[tuple[int, tuple]]], words: Callable[[list], list[int]]) -> np.ndarray:
    """Every machine's messages cut into units, one row per word (``words`` codes a list of words as integers)."""
    srcs: list[int] = []
    dests: list[int] = []
    seqs: list[int] = []
    lens: list[int] = []
    flat: list[object] = []
    for src, out in enumerate(outboxes):
        if out:
            srcs += [src] * len(out)
            seqs += range(len(out))
            to, recs = zip(*out)
            dests += to
            lens += map(len, recs)
            flat += chain.from_iterable(recs)
    n = np.array(lens, dtype=np.int64)
    src = np.repeat(np.array(srcs, dtype=np.int64), n)
    idx = np.arange(len(flat)) - np.repeat(np.cumsum(n) - n, n)
    return np.stack([src, np.repeat(np.array(dests, dtype=np.int64), n), src,
                     np.repeat(np.array(seqs, dtype=np.int64), n), idx, np.array(words(flat), dtype=np.int64)], 1)


def digits(plan: RelayPlan, ids: np.ndarray, t: int) -> np.ndarray:
    """Digit t of every id."""
    return RP.digit(RP.ARRAY, ids, plan.base ** t, plan.base)


def with_digit(plan: RelayPlan, ids: np.ndarray, t: int, value: np.ndarray) -> np.ndarray:
    """Every id with digit t replaced by ``value``."""
    return RP.with_digit(RP.ARRAY, ids, plan.base ** t, plan.base, value)


def class_counts(plan: RelayPlan, units: np.ndarray, level: int) -> np.ndarray:
    """(tokens, k): how many units each token holds of each class (the destination's digit ``level``)."""
    cls = digits(plan, units[:, DEST], level)
    flat = np.bincount(units[:, TOK] * plan.base + cls, minlength=plan.tokens * plan.base)
    return flat.reshape(plan.tokens, plan.base)


def deal_targets(plan: RelayPlan, units: np.ndarray, dim: int, level: int, group_counts: np.ndarray) -> np.ndarray:
    """Each unit's receiver in a deal layer; ``group_counts[x, c, v]`` = class-v count of x's member with digit c.

    Member c's class-v units, in their local order (destination, source, sequence, index), take the
    pooled indices after those of members 0 .. c-1; the j-th pooled unit goes to member j mod k.
    """
    tok = units[:, TOK]
    cls = digits(plan, units[:, DEST], level)
    before = np.cumsum(group_counts, axis=1) - group_counts  # before[x, c, v] = sum of members < c
    mine = digits(plan, np.arange(plan.tokens), dim)
    start = before[np.arange(plan.tokens), mine]  # (tokens, k)
    order = sort_rows(tok, cls, units[:, DEST], units[:, SRC], units[:, SEQ], units[:, IDX])
    key = tok[order] * plan.base + cls[order]
    first = np.concatenate(([0], np.flatnonzero(np.diff(key)) + 1))
    rank = np.arange(len(order)) - np.repeat(first, np.diff(np.concatenate((first, [len(order)]))))
    pooled = np.empty(len(order), dtype=np.int64)
    pooled[order] = start[tok[order], cls[order]] + rank
    return RP.deal_target(RP.ARRAY, tok, pooled, plan.base ** dim, plan.base)


def move_targets(plan: RelayPlan, units: np.ndarray, level: int) -> np.ndarray:
    """Each unit's receiver in the move layer of ``level``: the member with the destination's digit."""
    return RP.move_target(RP.ARRAY, units[:, TOK], units[:, DEST], plan.base ** level, plan.base)


def inboxes(plan: RelayPlan, units: np.ndarray, machines: int,
            unwords: Callable[[np.ndarray], list]) -> list[list[tuple]]:
    """The machines' inboxes from the delivered units: records reassembled, in order of (source, sequence)."""
    if len(units) and (units[:, TOK] >= machines).any():
        raise RelayError("relay: a unit stopped at a padding token")
    wrong = units[:, TOK] != units[:, DEST]
    if wrong.any():
        raise RelayError(f"relay: a unit stopped at token {int(units[wrong][0, TOK])}, not its destination")
    boxes: list[list[tuple]] = [[] for _ in range(machines)]
    u = units[sort_rows(units[:, TOK], units[:, SRC], units[:, SEQ], units[:, IDX])]
    if not len(u):
        return boxes
    rec = u[:, [TOK, SRC, SEQ]]
    same = np.concatenate(((rec[1:] == rec[:-1]).all(axis=1), [False]))  # the next unit is of the same record
    u = u[~(same & np.concatenate((u[1:, IDX] == u[:-1, IDX], [False])))]  # a repeated word: the last one stands
    first = np.concatenate(([True], (u[1:, [TOK, SRC, SEQ]] != u[:-1, [TOK, SRC, SEQ]]).any(axis=1)))
    starts = np.flatnonzero(first)
    ends = np.concatenate((starts[1:], [len(u)]))
    at = np.arange(len(u)) - np.repeat(starts, ends - starts)
    bad = np.flatnonzero(np.add.reduceat(u[:, IDX] != at, starts)) if len(starts) else starts
    if len(bad):
        raise RelayError(f"relay: a record reached machine {int(u[starts[bad[0]], TOK])} with words missing or "
                         "repeated")
    words = unwords(u[:, WORD])
    for tok, a, b in zip(u[starts, TOK].tolist(), starts.tolist(), ends.tolist()):
        boxes[tok].append(tuple(words[a:b]))
    return boxes
