"""MPC simulation of an L-layer, H-head ANNA-transformer in small local memory (anna.thm_4_2 = Thm C.3, App. C).

The protocol follows the proof of Thm C.3 with the reconstruction stated in
docs/anna_small_memory.md. All hash draws are shared (the theorem assumes shared seeds). The H heads of
a layer run as parallel copies, as the proof has them: a token's leaves are its (head, table) pairs.

Machines: T = ceil(N / bt) token machines (bt tokens each, their states; bt = floor(s / (6 + mv + H (mv + 1)))) then
Ps = ceil(2 N H ell / b) sort machines (b items each, b even); every tree of the protocol is hosted
on these machines, so the protocol uses T + Ps machines for every layer. The fan-in of all trees
is ``fan`` = max(2, floor(sqrt(s) / 3)).

One layer, in rounds:

1. fan-out (1 + Fo rounds, Fo = ceil(log_fan(H ell)), 0 for one leaf): each token machine sends each token's
   state to the root of that token's f-ary fan-out tree, which travels down to the H ell leaves, one per
   (head, table); a node of depth h covers fan^(Fo - h) leaves and lives on the sort machine of the item
   slot of its first leaf; leaf (i, j) lives on the sort machine of item slot 2 (i H ell + j) and makes the
   key item (g_j(k_i), 0, i, v_i) and the query item (g_j(q_i), 1, i) locally (the codes of the z
   concatenated hashes are packed into one word together with j);
2. sort by that word, so every bucket of every table is a run of consecutive items. The sort is Lemma
   C.2's, by default our splitter-tree sample sort (:mod:`attnsim.sim.anna.mpc_splitter_sort`, O(1/(eps' -
   eps)) rounds, b = 2 floor(s / (16 (4 + mv))) items a machine, loads held by the referee); ``sort="radix"``
   is the labelled alternative, the LSD radix sort (:mod:`attnsim.sim.anna.mpc_radix`, passes (2 D + 1)
   rounds with exact loads, O(1/(eps' - eps)^2); b = 2 floor(s / (6 (6 + mv))));
3. run aggregation (an f-ary :func:`attnsim.sim.anna.mpc_tree.tree_scan`, 2 D rounds): each
   machine learns the (value sum, count) of the key items of the runs that cross its left and
   right edges, so every query item knows the (sum, count) of its bucket;
4. fan-in (Fo + 1 rounds): the H ell answers of token i are added up the reversed fan-out tree, head by head
   (a vector of H (mv + 1) words), and the root sends the totals to the token machine, which divides and
   applies the layer's update psi to the H rows. A leaf's answer travels to its tree node as its own head's
   (sum, count) alone (mv + 4 words, within the plan's 6 + mv a sort item), and joins the vector there.

So a layer takes 2 (Fo + 1) + sort + 2 D rounds, where D = ceil(log_fan Ps) and sort is the sort's count
(the radix sort's passes (2 D + 1), passes = ceil(log_fan(H ell alphabet^z)); the splitter sort's plan,
:func:`attnsim.sim.anna.mpc_splitter_sort.sort_rounds`, the same for every draw). The result is Algorithm 1's
(sums, counts) for every (layer, head), exactly (values are exact words).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from operator import itemgetter
from typing import Sequence

import numpy as np

from attnsim.sim.anna.anna_stack import AnnaStack, State, exact_row
from attnsim.sim.anna.attention import Retrieval
from attnsim.sim.anna.errors import require
from attnsim.sim.anna.lsh import table_codes
from attnsim.sim.anna.mpc import MPC, Record
from attnsim.sim.anna.mpc_radix import radix_passes, radix_sort
from attnsim.sim.anna.mpc_splitter_sort import SortShape, sort_rounds, splitter_sort
from attnsim.sim.anna.mpc_tree import Monoid, levels, tree_scan
from attnsim.sim.ledger import Ledger

SORTS = ("splitter", "radix")
"""Lemma C.2's sort: our splitter-tree sample sort (the default), or the LSD radix sort (the labelled alternative)."""
SORT_KEY_WORDS = 3
"""A sort item's key: (packed code, token, side), distinct as the splitter sort needs (a bucket's keys and queries
interleave by token, as the radix sort by code alone leaves them)."""


@dataclass(frozen=True)
class SmallMemoryPlan:
    """The protocol's sizes for N tokens, H heads of ell tables of z entries over ``alphabet``, value width mv,
    memory s, and the sort (:data:`SORTS`)."""

    N: int
    ell: int
    z: int
    alphabet: int
    mv: int
    s: int
    heads: int = 1
    sort: str = "splitter"

    @property
    def leaves(self) -> int:
        """(head, table) pairs a token fans out to."""
        return self.heads * self.ell

    @property
    def answer_words(self) -> int:
        """Words of a token's answer vector: (value sums, count) per head."""
        return self.heads * (self.mv + 1)

    @property
    def fan(self) -> int:
        """The fan-out f of every tree: ⌊√s/3⌋ children per node."""
        return math.isqrt(self.s) // 3

    @property
    def per_machine(self) -> int:
        """b: items per sort machine (even, so both items of a leaf share a machine): an eighth of s in items of
        4 + mv words for the splitter sort (as Lemma C.2's check loads it), a third of s in records of 6 + mv
        words (an item and its rank) for the radix sort."""
        if self.sort == "radix":
            return 2 * (self.s // (6 * (6 + self.mv)))
        return 2 * (self.s // (16 * (4 + self.mv)))

    @property
    def tokens_per_machine(self) -> int:
        """Tokens a token machine holds: each one's state (2 + mv words) and its answers' record (4 + H (mv + 1))."""
        return self.s // (6 + self.mv + self.answer_words)

    @property
    def token_machines(self) -> int:
        """Machines holding the tokens' states."""
        return -(-self.N // self.tokens_per_machine)

    @property
    def sort_machines(self) -> int:
        """Machines holding the 2 N H ℓ sort items."""
        return -(-(2 * self.N * self.leaves) // self.per_machine)

    @property
    def key_bound(self) -> int:
        """An upper bound on a packed (leaf, bucket) key."""
        return self.leaves * self.alphabet**self.z

    @property
    def fanout_depth(self) -> int:
        """Levels of the fan-out tree from a token to its H ℓ leaves."""
        return levels(self.leaves, self.fan)

    @property
    def tree_depth(self) -> int:
        """Levels of the aggregation tree over the sort machines."""
        return levels(self.sort_machines, self.fan)

    @property
    def passes(self) -> int:
        """Radix-sort passes over keys below ``key_bound`` (the radix sort's; 0 for the splitter sort)."""
        return radix_passes(self.key_bound, self.fan) if self.sort == "radix" else 0

    @property
    def sort_rounds(self) -> int:
        """Rounds of one layer's sort: passes (2 D + 1) for the radix sort, the splitter sort's plan (the same
        for every draw) over the 2 N H ℓ items on the sort machines."""
        if self.sort == "radix":
            return self.passes * (2 * self.tree_depth + 1)
        shape = SortShape(self.s, SORT_KEY_WORDS, 4 + self.mv)
        return sort_rounds(shape, self.sort_machines, 2 * self.N * self.leaves)

    @property
    def layer_rounds(self) -> int:
        """Rounds of one layer: fan-out, sort, run sums, fan-in."""
        return 2 * (self.fanout_depth + 1) + self.sort_rounds + 2 * self.tree_depth

    def reasons(self) -> list[str]:
        """Why this memory is too small for the protocol (empty when it fits); it reads only s, mv, the heads and the
        sort (:func:`memory_reasons`).

        The tree check counts a host's items, the records it sends its f children on the way down
        and two more values; a leaf that hosts several clamped single-child nodes at the right edge
        can need a few values more, which the referee MPC machine still refuses with a clear error.
        """
        out = []
        if self.sort not in SORTS:
            return [f"unknown sort {self.sort!r}: one of {', '.join(SORTS)}"]
        if self.fan < 2:
            out.append(f"s = {self.s} is below 36 words: the trees need fan-in floor(sqrt(s)/3) >= 2")
        vw = max(self.fan, 5 + 2 * self.mv, self.answer_words)
        need = self.per_machine * (6 + self.mv) + self.fan * (4 + 2 * vw) + 2 * (4 + vw)
        if self.fan >= 2 and self.per_machine >= 2 and self.s < need:
            out.append(f"s = {self.s} cannot hold {self.per_machine} items and a scan-tree node with {self.fan} "
                       f"children ({need} words)")
        if self.sort == "splitter" and not SortShape(self.s, SORT_KEY_WORDS, 4 + self.mv).fans_fit:
            out.append(f"s = {self.s} is too small for the splitter sort's multicast fans (about "
                       f"{256 * (SORT_KEY_WORDS + 2)} words); the radix sort runs in less")
        if self.per_machine < 2:
            least = 12 * (6 + self.mv) if self.sort == "radix" else 32 * (4 + self.mv)
            out.append(f"s = {self.s} holds fewer than 2 items of {4 + self.mv} words with room for the "
                       f"{self.sort} sort (need s >= {least})")
        return out


def memory_reasons(s: int, mv: int, heads: int, sort: str) -> list[str]:
    """Why a machine of s words is too small for the protocol with values of mv words, ``heads`` heads and ``sort``
    (empty when it fits), before any tokens or tables are drawn: :meth:`SmallMemoryPlan.reasons` does not read the
    plan's N, tables or alphabet."""
    return SmallMemoryPlan(N=0, ell=0, z=0, alphabet=0, mv=mv, s=s, heads=heads, sort=sort).reasons()


@dataclass(frozen=True)
class SmallMemoryRun:
    """Final states, every (layer, head)'s Algorithm 1 (sums, counts), layer-major, and the plan that was run."""

    states: list[State]
    layers: list[Retrieval]
    plan: SmallMemoryPlan


def _summary_monoid(mv: int) -> Monoid:
    """Run summaries (first key, last key, one run?, first-run sum+count, last-run sum+count); () is empty."""

    def combine(a: tuple, b: tuple) -> tuple:
        if not a:
            return b
        if not b:
            return a
        join = a[1] == b[0]
        fa, la = a[3:4 + mv], a[4 + mv:]
        fb, lb = b[3:4 + mv], b[4 + mv:]
        first = tuple(x + y for x, y in zip(fa, fb)) if a[2] and join else fa
        last = tuple(x + y for x, y in zip(lb, la)) if b[2] and join else lb
        return (a[0], b[1], int(bool(a[2] and b[2] and join)), *first, *last)

    return Monoid((), combine)


def _runs(items: Sequence[Record], mv: int) -> dict[int, list]:
    """Per sort key on one machine: [value sums..., key count] over its key items."""
    runs: dict[int, list] = {}
    for r in items:
        acc = runs.setdefault(r[1], [0] * mv + [0])
        if r[2] == 0:
            for t in range(mv):
                acc[t] += r[4 + t]
            acc[mv] += 1
    return runs


def anna_stack_mpc(stack: AnnaStack, states: Sequence[State], *, memory: int, ledger: Ledger | None = None,
                   sort: str = "splitter", seed: int = 0) -> SmallMemoryRun:
    """Run ``stack`` on ``states`` on an MPC machine with s = ``memory`` words (module docstring); ``sort`` names
    Lemma C.2's sort (:data:`SORTS`), ``seed`` the splitter sort's draws."""
    N, mv = len(states), stack.mv
    require(N >= 2, "states", f"need at least 2 tokens, got {N}")
    require(len(stack.layers) >= 1, "layers", "need at least one layer")
    require(sort in SORTS, "sort", f"one of {', '.join(SORTS)}, got {sort!r}")
    first = stack.layers[0]
    H = first.heads
    require(len(first.hashes) >= H, "hashes", "need at least one table a head")
    ell, z, A = len(first.hashes) // H, first.hashes[0].z, first.hashes[0].alphabet
    require(A is not None, "hashes", "the small-memory protocol packs codes into words: use the hyperplane or "
                                     "cross-polytope family")
    for layer in stack.layers:
        require(layer.heads == H and len(layer.hashes) == H * ell
                and all(g.z == z and g.alphabet == A for g in layer.hashes), "hashes",
                "every layer needs the same heads, tables a head, concatenation length and family")
    plan = SmallMemoryPlan(N, ell, z, A, mv, memory, H, sort)
    require(not plan.reasons(), "s", "; ".join(plan.reasons()))
    led = ledger if ledger is not None else Ledger()
    T, b, bt, f = plan.token_machines, plan.per_machine, plan.tokens_per_machine, plan.fan
    Fo, leaves, aw = plan.fanout_depth, plan.leaves, plan.answer_words
    mpc = MPC(T + plan.sort_machines, memory, ledger=led, tag="mpc_small")
    machines = range(T, T + plan.sort_machines)
    mpc.load({m: [("tok", i, *states[i]) for i in range(m * bt, min(N, (m + 1) * bt))] for m in range(T)})
    unit = A**z
    outputs: list[Retrieval] = []

    def spread(j: int, acc: Sequence) -> list:
        """Leaf j's (value sums, count), placed in its head's slot of a token's answer vector."""
        slot = (j // ell) * (mv + 1)
        return [*([0] * slot), *acc, *([0] * (aw - slot - mv - 1))]

    def width(h: int) -> int:
        """Tables under one fan-out node of depth h."""
        return f ** (Fo - h)

    def host(h: int, i: int, j: int) -> int:
        """Machine of fan-out node j of depth h of token i (depth -1: the token machine)."""
        return i // bt if h < 0 else T + (2 * (i * leaves + j * width(h))) // b

    def to_root(m: int, mem: list[Record]):
        return [(m, r) for r in mem] + [(host(0, r[1], 0), ("fo", r[1], 0, 0, *r[2:])) for r in mem]

    for li, layer in enumerate(stack.layers):
        mpc.round(to_root, label="fan_out")
        for h in range(1, Fo + 1):
            def fan_out(m: int, mem: list[Record], h: int = h):
                out = []
                for r in mem:
                    if r[0] == "tok":
                        out.append((m, r))
                    elif r[0] == "fo" and r[2] == h - 1:
                        i, j, x = r[1], r[3], r[4:]
                        for child in range(j * f, (j + 1) * f):
                            if child * width(h) < leaves:
                                out.append((host(h, i, child), ("fo", i, h, child, *x)))
                return out

            mpc.round(fan_out, label="fan_out")

        def make_items(m: int, mem: list[Record], layer=layer) -> list[Record]:
            if m not in machines:
                return mem
            held: dict[tuple, list[int]] = {}  # (token, state, head) -> the tables of its leaves held here
            for r in mem:
                held.setdefault((r[1], tuple(r[4:]), r[3] // ell), []).append(r[3])
            codes = {}
            for (i, x, h), us in held.items():  # a token's key and query, hashed by all its tables here at once
                tables = [layer.hashes[u] for u in us]
                got = table_codes(tables, np.asarray([layer.key(x, i, h), layer.query(x, i, h)]))
                codes.update(((i, x, u), g.pack(c)) for u, g, c in zip(us, tables, got))
            items = []
            for r in mem:
                i, u, x = r[1], r[3], tuple(r[4:])
                kcode, qcode = codes[i, x, u]
                items.append(("it", u * unit + kcode, 0, i, *layer.value(x, i, u // ell)))
                items.append(("it", u * unit + qcode, 1, i))
            return items

        mpc.local(make_items)
        if plan.sort == "radix":
            radix_sort(mpc, machines, key=itemgetter(1), key_bound=plan.key_bound, base=f, fan=f, per_machine=b)
        else:
            splitter_sort(mpc, machines, key=itemgetter(1, 3, 2), key_words=SORT_KEY_WORDS, record_words=4 + mv,
                          seed=seed * 7919 + li, label="sort")
        monoid = _summary_monoid(mv)

        def summary(m: int, items: list[Record]) -> tuple:
            if not items:
                return ()
            runs = _runs(items, mv)
            fk, lk = items[0][1], items[-1][1]
            return (fk, lk, int(fk == lk), *runs[fk], *runs[lk])

        def answer(m: int, items: list[Record], pre: tuple, suf: tuple) -> list[Record]:
            runs = _runs(items, mv)
            out = []
            for r in items:
                if r[2] != 1:
                    continue
                acc = list(runs[r[1]])
                if pre and pre[1] == r[1]:
                    acc = [a + x for a, x in zip(acc, pre[4 + mv:])]
                if suf and suf[0] == r[1]:
                    acc = [a + x for a, x in zip(acc, suf[3:4 + mv])]
                out.append(("ans", r[3], r[1] // unit, *acc))
            return out

        tree_scan(mpc, machines, f, monoid, summary, answer, label="runs")
        for h in range(Fo, -1, -1):
            def fan_in(m: int, mem: list[Record], h: int = h):
                out = [(m, r) for r in mem if r[0] == "tok"]
                partial: dict[tuple[int, int], list] = {}
                for r in mem:
                    if r[0] == "ans" and h > 0:  # a leaf's answer goes up alone, in its head's mv + 1 words
                        out.append((host(h - 1, r[1], r[2] // f), ("fl", *r[1:])))
                        continue
                    if r[0] == "ans":
                        i, j, acc = r[1], r[2], spread(r[2], r[3:])
                    elif r[0] == "fl" and h == Fo - 1:
                        i, j, acc = r[1], r[2] // f, spread(r[2], r[3:])
                    elif r[0] == "fi" and r[2] == h:
                        i, j, acc = r[1], r[3], r[4:]
                    else:
                        continue
                    key = (i, j // f)
                    partial[key] = [a + x for a, x in zip(partial.get(key, [0] * aw), acc)]
                for (i, j), acc in partial.items():
                    out.append((host(h - 1, i, j), ("fi", i, h - 1, j, *acc)))
                return out

            mpc.round(fan_in, label="fan_in")

        def finish(m: int, mem: list[Record], layer=layer) -> list[Record]:
            if m >= T:
                return mem
            got: dict[int, list] = {}
            for r in mem:
                if r[0] == "fi":
                    got[r[1]] = [a + x for a, x in zip(got.get(r[1], [0] * aw), r[4:])]
            out = []
            for r in mem:
                if r[0] == "tok":
                    acc = got.get(r[1], [0] * aw)
                    rows = sum((exact_row(acc[t:t + mv], acc[t + mv]) for t in range(0, aw, mv + 1)), ())
                    out.append(("tok", r[1], *layer.update(tuple(r[2:]), r[1], rows)))
                    out.append(("out", r[1], *acc))
            return out

        mpc.local(finish)
        outputs.extend(_harvest(mpc, T, N, mv, h) for h in range(H))
        mpc.local(lambda m, mem: [r for r in mem if r[0] != "out"])
    final: list[State] = [()] * N
    for m in range(T):
        for r in mpc.memory[m]:
            final[r[1]] = tuple(r[2:])
    return SmallMemoryRun(final, outputs, plan)


def _harvest(mpc: MPC, T: int, N: int, mv: int, head: int) -> Retrieval:
    """Read head ``head``'s (sums, counts) of the layer off the token machines' ``out`` records."""
    sums = np.full((N, mv), 0, dtype=object)
    counts = np.zeros(N, dtype=np.int64)
    at = 2 + head * (mv + 1)
    for m in range(T):
        for r in mpc.memory[m]:
            if r[0] == "out":
                sums[r[1]] = [Fraction(x) if isinstance(x, Fraction) else x for x in r[at:at + mv]]
                counts[r[1]] = r[at + mv]
    return Retrieval(sums, counts)
