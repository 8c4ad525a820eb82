"""f-ary scan trees on the referee MPC machine (the s/m-ary trees of App. C, proofs of Thm C.1 / C.3).

A tree over the leaf machines ``leaves`` (a range of P machines) has fan-in ``f`` and depth
D = min{d >= 0 : f^d >= P}. Level 0 are the leaves; level h has ceil(P / f^h) nodes, node j
covering the leaves j f^h .. (j + 1) f^h - 1. Tree nodes are *hosted* on leaf machines, so a tree
adds no machine: node j of level h >= 1 lives on leaf ``min(j f^h + f^(h-1) - 1, P - 1)``, the last
leaf of its first child's range. Two nodes of different levels never share a leaf (j f^h + f^(h-1)
is f^(h-1) modulo f^h, and 0 modulo every smaller power), except at the clamp P - 1, where every
clamped node has a single child and so stores a single value, which it drops once sent up (its way down needs no
sibling's value), so they do not pile up on leaf P - 1.

:func:`tree_scan` computes, for every leaf, the combination of the summaries of all leaves to its
left (``prefix``) and to its right (``suffix``) under an associative ``combine``: D rounds up
(every node sends its value to its parent, which keeps the f child values) and D rounds down
(every node sends each child the prefix and suffix of its range). It is the building block of the
multi-level sort (:mod:`attnsim.sim.anna.mpc_radix`) and of the run aggregation of
:mod:`attnsim.sim.anna.mpc_small`. Values are tuples of words; every record travels in an MPC
round, so the referee holds every host to s words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from attnsim.sim.anna.errors import require
from attnsim.sim.anna.mpc import MPC, Record

Value = tuple
_UP, _DOWN = "tree_up", "tree_down"


def levels(count: int, fan: int) -> int:
    """min{d >= 0 : fan^d >= count}: the depth of an f-ary tree over ``count`` leaves."""
    require(fan >= 2, "fan", f"a tree needs fan-in >= 2, got {fan}")
    d, reach = 0, 1
    while reach < count:
        d, reach = d + 1, reach * fan
    return d


@dataclass(frozen=True)
class TreeLayout:
    """Where the nodes of an f-ary tree over P leaves live (module docstring)."""

    P: int
    fan: int

    @property
    def depth(self) -> int:
        """Levels of the tree over the P machines."""
        return levels(self.P, self.fan)

    def width(self, h: int) -> int:
        """Number of nodes on level h."""
        return -(-self.P // self.fan**h)

    def host(self, h: int, j: int) -> int:
        """The leaf (0-based, within the tree) hosting node j of level h."""
        if h == 0:
            return j
        return min(j * self.fan**h + self.fan ** (h - 1) - 1, self.P - 1)

    def children(self, h: int, j: int) -> range:
        """Node ids on level h - 1 below node j of level h."""
        return range(j * self.fan, min((j + 1) * self.fan, self.width(h - 1)))


@dataclass(frozen=True)
class Monoid:
    """An associative ``combine`` with its ``identity``; values are tuples of words."""

    identity: Value
    combine: Callable[[Value, Value], Value]

    def fold(self, values: Sequence[Value]) -> Value:
        """Combine ``values`` left to right, starting from the identity."""
        acc = self.identity
        for v in values:
            acc = self.combine(acc, v)
        return acc


_TREE = (_UP, _DOWN)  # a record is a tree record when it starts with one of these


def tree_scan(mpc: MPC, leaves: range, fan: int, monoid: Monoid, summary: Callable[[int, list[Record]], Value],
              apply: Callable[[int, list[Record], Value, Value], list[Record]], *, label: str) -> None:
    """Give every leaf the (prefix, suffix) of the leaf summaries under ``monoid``; 2 D rounds.

    ``summary(machine, records)`` is evaluated on each leaf's own records (tree records excluded)
    in the first round; records that are not tree records stay in place (sent to self). When the
    last round has delivered, each leaf replaces its records by ``apply(machine, records, prefix,
    suffix)`` (local computation on what it holds).
    """
    lay = TreeLayout(len(leaves), fan)
    D = lay.depth
    pos = {m: t for t, m in enumerate(leaves)}
    ident = monoid.identity
    if D == 0:
        mpc.local(lambda m, mem: apply(m, mem, ident, ident) if m in pos else mem)
        return

    # node j of level h is hosted on leaf host(h, j), one node a leaf per level (module docstring)
    hosting = [{lay.host(h, j): j for j in range(lay.width(h))} for h in range(D + 1)]

    def hosted(t: int, h: int) -> list[int]:
        """Node ids of level h hosted on leaf t."""
        j = hosting[h].get(t)
        return [] if j is None else [j]

    def stored(mem: list[Record], h: int, j: int) -> list[Value]:
        vals = sorted((r for r in mem if r[0] == _UP and r[1] == h and r[2] == j), key=lambda r: r[3])
        return [tuple(r[4:]) for r in vals]

    def up(h: int):
        def step(m: int, mem: list[Record]):  # besides keeping what sent_up(h) keeps
            out: list = []
            t = pos.get(m)
            if t is None:
                return out
            sources = [t] if h == 1 else hosted(t, h - 1)
            for j in sources:
                val = (summary(m, [r for r in mem if not r or r[0] not in _TREE]) if h == 1
                       else monoid.fold(stored(mem, h - 1, j)))
                parent = j // fan
                out.append((leaves[lay.host(h, parent)], (_UP, h, parent, j - parent * fan, *val)))
            return out
        return step

    def kept(h: int):
        hosts = {leaves[t] for t in hosting[h]}  # only they hold level h's tree records (up, and down from h + 1)

        def keep(m: int, mem: list[Record]) -> list[Record]:
            if m not in hosts:
                return mem
            return [r for r in mem if not (r[0] == _UP and r[1] == h) and not (r[0] == _DOWN and r[1] == h)]
        return keep

    def down(h: int):
        def step(m: int, mem: list[Record]):  # besides keeping all but level h's tree records (kept(h))
            out: list = []
            t = pos.get(m)
            if t is None:
                return out
            for j in hosted(t, h):
                if h == D:
                    pre, suf = ident, ident
                else:
                    rec = next(r for r in mem if r[0] == _DOWN and r[1] == h and r[2] == j)
                    pre, suf = tuple(rec[4:4 + rec[3]]), tuple(rec[4 + rec[3]:])
                vals = stored(mem, h, j)
                k = len(vals)
                left = [ident]  # left[c]: the fold of vals[:c]; right[c]: of vals[c:] (the monoid is associative)
                for v in vals:
                    left.append(monoid.combine(left[-1], v))
                right = [ident] * (k + 1)
                for c in range(k - 1, -1, -1):
                    right[c] = monoid.combine(vals[c], right[c + 1])
                for c, child in enumerate(lay.children(h, j)):
                    p = monoid.combine(pre, left[min(c, k)])
                    s = monoid.combine(right[min(c + 1, k)], suf)
                    out.append((leaves[lay.host(h - 1, child)], (_DOWN, h - 1, child, len(p), *p, *s)))
            return out
        return step

    def sent_up(h: int):
        """Keep for round up(h): a node of level h - 1 with a single child drops its stored value once it has sent it
        on, since its way down needs no sibling's value. Clamped nodes have one child, and all sit on leaf P - 1:
        kept, their values would pile up there, one a level."""
        singles: dict[int, set[int]] = {}
        for j in range(lay.width(h - 1)) if h >= 2 else ():
            if len(lay.children(h - 1, j)) == 1:
                singles.setdefault(leaves[lay.host(h - 1, j)], set()).add(j)

        def keep(m: int, mem: list[Record]) -> list[Record]:
            gone = singles.get(m)
            if not gone:
                return mem
            return [r for r in mem if not (r[0] == _UP and r[1] == h - 1 and r[2] in gone)]
        return keep

    for h in range(1, D + 1):
        mpc.round(up(h), label=f"{label}.up", keep=sent_up(h))
    for h in range(D, 0, -1):
        mpc.round(down(h), label=f"{label}.down", keep=kept(h))

    def finish(m: int, mem: list[Record]) -> list[Record]:
        if m not in pos:
            return mem
        rec = next(r for r in mem if r[0] == _DOWN and r[1] == 0)
        own = [r for r in mem if not r or r[0] not in _TREE]
        return apply(m, own, tuple(rec[4:4 + rec[3]]), tuple(rec[4 + rec[3]:]))

    mpc.local(finish)
