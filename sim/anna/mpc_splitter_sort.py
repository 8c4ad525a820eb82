"""Lemma C.2's sort (App. C; Goodrich et al. 2011 for the bound): a randomized splitter-tree sample sort whose
rounds are O(log N / log s), i.e. O(1/(eps' - eps)) for items of O(N^eps) words and memory s = O(N^eps').

Proof of the round count and the loads: docs/anna_lemma_c_2.md. One *level* sorts the records on a range of
K machines into B buckets, each bucket on its own sub-range, and then sorts every bucket in parallel by the
same level (:mod:`attnsim.sim.anna.mpc_lockstep`); a range of one machine sorts locally. A level is

1. ``sample`` (1 round): every record joins the sample with probability p and its key goes to one of
   the A = floor(sqrt K) block machines at random;
2. ``heads`` (1 round): block a sends its keys to the roots of row a and of column a of the A x A pair
   machines (machine a A + b of the range is pair (a, b));
3. ``rows/cols`` (D_A rounds, :func:`~attnsim.sim.anna.mpc_multicast.multicast`): every pair (a, b) holds
   blocks a and b; locally it counts, for each key of block a, the keys of block b below it;
4. ``ranks`` (D_A rounds, :func:`~attnsim.sim.anna.mpc_multicast.sum_up`): row a's root sums the counts:
   every sample key learns its rank, and the sample size S;
5. ``splitters`` (1 round): the keys of rank floor(t S / B), t = 1 .. B-1, are the splitters; each goes to
   the node of the f-ary splitter tree (depth h = ceil(log_f B)) that holds it;
6. ``path`` (D_K rounds): every tree node's keys reach every machine of the node's sub-range;
7. ``walk`` (h rounds): each record descends one tree level a round, to a random machine of the child's
   sub-range; after h rounds it lies in its bucket's sub-range.

Records' keys (``key(record)``, tuples of words) must be distinct; the output is then exact whatever the
random draws: the sort is Las Vegas in its loads, which the referee holds to s in every round (a draw
that would overload a machine is refused, never delivered). The rounds do not depend on the draws.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from dataclasses import dataclass
from math import isqrt
from typing import Callable

from attnsim.sim.anna.errors import require
from attnsim.sim.anna.mpc import MPC, Record
from attnsim.sim.anna.mpc_lockstep import Local, Part, Round, parallel, run
from attnsim.sim.anna.mpc_multicast import heap_depth, multicast, sum_up
from attnsim.sim.anna.mpc_sort import sample_sort_part, sort_memory_needed
from attnsim.sim.anna.mpc_tree import levels

Key = Callable[[Record], tuple]
_SMP, _ROW, _COL, _CNT, _KEY = "§smp", "§row", "§col", "§cnt", "§key"


def is_item(rec: Record) -> bool:
    """A record being sorted, not one of the sort's own (their first word starts with §)."""
    return not (isinstance(rec[0], str) and rec[0].startswith("§"))


@dataclass(frozen=True)
class SortShape:
    """The sort's sizes for local memory ``s`` words and keys of ``key_words`` words (docs/anna_lemma_c_2.md)."""

    s: int
    key_words: int
    record_words: int
    oversample: int = 16

    def direct(self, K: int) -> bool:
        """Whether K machines sort by the one-level regular sample sort: its root's K (K - 1) splitter words
        (:func:`~attnsim.sim.anna.mpc_sort.sort_memory_needed` with no records) take at most a quarter of s."""
        return sort_memory_needed(K, 0, self.record_words, self.key_words) <= self.s // 4

    @property
    def direct_rounds(self) -> int:
        """Rounds of the one-level sample sort (:mod:`attnsim.sim.anna.mpc_sort`)."""
        return 6

    @property
    def block(self) -> int:
        """beta: room for sample keys on a block machine (it expects beta / 4 of them)."""
        return max(1, isqrt(self.s // (self.key_words + 2)) // 2)

    @property
    def block_fan(self) -> int:
        """Fan-out of the row/column multicasts and of the rank sums (a relay sends fan * 2 beta keys)."""
        return max(2, self.s // (16 * self.block * (self.key_words + 2)))

    @property
    def fans_fit(self) -> bool:
        """Whether s is large enough that the block multicasts' fan is at least 2 without clamping (about
        256 (key_words + 2) words); below it a relay's expected sample keys alone can overload a machine."""
        return self.s // (16 * self.block * (self.key_words + 2)) >= 2

    @property
    def tree_fan(self) -> int:
        """f: children of a splitter-tree node (f - 1 keys per node)."""
        return max(2, isqrt(self.s // (4 * (self.key_words + 4))))

    def path_fan(self, depth: int) -> int:
        """Fan-out of the path multicast when a machine relays the keys of ``depth`` nodes at once."""
        return max(2, self.s // (4 * max(1, depth) * self.tree_fan * (self.key_words + 4)))


@dataclass(frozen=True)
class Level:
    """One level of the sort on K machines expecting ``expect`` records (module docstring)."""

    shape: SortShape
    K: int
    expect: int

    @property
    def blocks(self) -> int:
        """A: sample blocks; the A^2 pair machines are the first A^2 of the range."""
        return max(1, isqrt(self.K))

    @property
    def sample_target(self) -> int:
        """The expected sample size, p * expect."""
        return max(1, min(self.expect, self.blocks * self.shape.block // 4))

    @property
    def buckets(self) -> int:
        """B: buckets of this level, at most one machine each and at least 2."""
        return min(self.K, max(2, self.sample_target // self.shape.oversample))

    @property
    def depth(self) -> int:
        """h: levels of the splitter tree."""
        return levels(self.buckets, self.shape.tree_fan)

    @property
    def rounds(self) -> int:
        """Rounds of this level before its buckets start (steps 1-7)."""
        d_blocks = heap_depth(self.blocks, self.shape.block_fan)
        d_path = heap_depth(self.K, self.shape.path_fan(self.depth))
        return 3 + 2 * d_blocks + d_path + self.depth

    def bucket_range(self, lo: int, b: int) -> range:
        """The machines of bucket b."""
        return range(lo + b * self.K // self.buckets, lo + (b + 1) * self.K // self.buckets)


def sort_rounds(shape: SortShape, K: int, expect: int) -> int:
    """Rounds the sort takes on K machines expecting ``expect`` records: the same for every draw."""
    if K <= 1:
        return 0
    if shape.direct(K):
        return shape.direct_rounds
    lvl = Level(shape, K, expect)
    return lvl.rounds + max(sort_rounds(shape, len(lvl.bucket_range(0, b)), max(1, expect // lvl.buckets))
                            for b in range(lvl.buckets))


def splitter_sort(mpc: MPC, machines: range, key: Key, *, key_words: int, record_words: int, seed: int,
                  oversample: int = 16, label: str = "sort") -> int:
    """Sort the records on ``machines`` by ``key`` (distinct keys); afterwards machine order is key order.
    Returns the rounds its plan takes (:func:`sort_rounds`), which the ledger must show."""
    require(len(machines) >= 1, "machines", "need at least one machine")
    require(oversample >= 1, "oversample", f"must be >= 1, got {oversample}")
    shape = SortShape(mpc.s, key_words, record_words, oversample)
    expect = sum(1 for m in machines for rec in mpc.memory[m] if is_item(rec))
    run(mpc, _level(shape, key, machines.start, machines.stop, max(1, expect), seed, 0, label))
    return sort_rounds(shape, len(machines), max(1, expect))


def _level(shape: SortShape, key: Key, lo: int, hi: int, expect: int, seed: int, depth: int, label: str) -> Part:
    here = range(lo, hi)
    K = hi - lo
    if K == 1:
        yield Local(here, lambda m, mem: sorted((r for r in mem if is_item(r)), key=key))
        return
    if shape.direct(K):
        yield from sample_sort_part(here, key, None, label=f"{label}.direct")
        return
    lvl = Level(shape, K, expect)
    A, B, h, f = lvl.blocks, lvl.buckets, lvl.depth, shape.tree_fan
    rng = random.Random(f"{seed}:{lo}:{hi}:{depth}")
    p = lvl.sample_target / expect  # 1 when the range expects no more records than a full sample

    def items(m: int, mem: list[Record]) -> list[Record]:
        return [r for r in mem if is_item(r)]

    def sample(m: int, mem: list[Record]):
        return [(lo + rng.randrange(A), (_SMP, 0, *key(r))) for r in mem if is_item(r) and rng.random() < p]

    yield Round(here, sample, items, f"{label}.sample")

    def heads(m: int, mem: list[Record]):
        a = m - lo
        got = [r[2:] for r in mem if r[0] == _SMP]
        return [(lo + a * A, (_ROW, a, *k)) for k in got] + [(lo + a, (_COL, a, *k)) for k in got]

    yield Round(here, heads, items, f"{label}.heads")
    rows = {(_ROW, a): [lo + a * A + b for b in range(A)] for a in range(A)}
    cols = {(_COL, b): [lo + a * A + b for a in range(A)] for b in range(A)}
    yield from multicast(here, {**rows, **cols}, shape.block_fan, label=f"{label}.blocks")

    def count(m: int, mem: list[Record]) -> list[Record]:
        t = m - lo
        if t >= A * A:
            return mem
        a, b = divmod(t, A)
        row = sorted(r[2:] for r in mem if r[0] == _ROW)
        col = sorted(r[2:] for r in mem if r[0] == _COL)
        below = [bisect_right(col, x) for x in row]
        kept = [r for r in mem if is_item(r) or (r[0] == _ROW and b == 0)]
        return kept + [(_CNT, a, len(col), *below)]

    yield Local(here, count)
    yield from sum_up(here, {(_CNT, a): [lo + a * A + b for b in range(A)] for a in range(A)}, shape.block_fan,
                      label=f"{label}.ranks")
    span = [f ** (h - j) for j in range(h)]  # buckets under one node of level j
    first = [sum(-(-B // span[i]) for i in range(j)) for j in range(h)]  # node id of (j, 0)

    def node_range(j: int, v: int) -> range:
        return range(lvl.bucket_range(lo, v * span[j]).start, lvl.bucket_range(lo, min(B, (v + 1) * span[j]) - 1).stop)

    def splitters(m: int, mem: list[Record]):
        if (m - lo) % A or m - lo >= A * A:
            return []
        cnt = next((r for r in mem if r[0] == _CNT), None)
        if cnt is None:
            return []
        S, ranks = cnt[2], cnt[3:]
        row = sorted(r[2:] for r in mem if r[0] == _ROW)
        out = []
        for x, r in zip(row, ranks):  # splitter t is the key of rank floor(t S / B); equal splitters: empty buckets
            for t in range(max(1, -(-r * B // S)), min(B, -(-(r + 1) * B // S))):
                j = next(j for j in range(h) if t % (span[j] // f) == 0)
                v, c = divmod(t, span[j])
                out.append((node_range(j, v).start, (_KEY, first[j] + v, c // (span[j] // f), *x)))
        return out

    yield Round(here, splitters, items, f"{label}.splitters")
    nodes = {(_KEY, first[j] + v): list(node_range(j, v)) for j in range(h) for v in range(-(-B // span[j]))}
    yield from multicast(here, nodes, shape.path_fan(h), label=f"{label}.path")
    bucket_of = [b for b in range(B) for _ in lvl.bucket_range(lo, b)]

    def keys_of(mem: list[Record], node: int) -> list[tuple]:
        return [tuple(r[3:]) for r in sorted((r for r in mem if r[0] == _KEY and r[1] == node), key=lambda r: r[2])]

    for j in range(h):
        def walk(m: int, mem: list[Record], j: int = j):
            v = bucket_of[m - lo] // span[j]
            cut = keys_of(mem, first[j] + v)
            out = []
            for r in mem:
                if is_item(r):
                    child = v * f + bisect_right(cut, key(r))
                    dest = node_range(j + 1, child) if j + 1 < h else lvl.bucket_range(lo, child)
                    out.append((dest[rng.randrange(len(dest))], r))
            return out

        yield Round(here, walk, lambda m, mem: [r for r in mem if not is_item(r)], f"{label}.walk")
    yield Local(here, items)
    yield from parallel([_level(shape, key, b.start, b.stop, max(1, expect // B), seed, depth + 1, label)
                         for b in (lvl.bucket_range(lo, b) for b in range(B))])
