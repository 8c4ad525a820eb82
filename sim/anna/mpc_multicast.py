"""Multicast and sum trees over lists of machines, as lockstep parts (:mod:`attnsim.sim.anna.mpc_lockstep`).

A *group* is a list of machines; position 0 is its root. Positions form an F-ary heap: the children of
position t are t F + 1 .. t F + F, so a group of g machines has depth
D(g) = min{d >= 0 : (F^(d+1) - 1)/(F - 1) >= g}, which is at most ceil(log_F g).

Groups are keyed by ``(tag, gid)``: a group's records are those whose first two words are its key.

* :func:`multicast`: the root's records of the group reach every member in D rounds; each round the members
  of one heap depth send them to their children, and everyone keeps what it holds.
* :func:`sum_up`: every member holds one vector record ``(tag, gid, *numbers)``; in D rounds,
  deepest positions first, each member sends the entrywise sum of its own vector and of those its
  children sent it to its parent; a last local step adds up what the root holds, so it ends with one
  record, the group's sum.

Groups run at the same time; a machine may be a member of several groups, and the referee counts
every word it relays. Depths are computed here once (:func:`heap_depth`) and read by the sorts.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from attnsim.sim.anna.mpc import Message, Record
from attnsim.sim.anna.mpc_lockstep import Local, Part, Round, keep_all

Group = Sequence[int]
GroupKey = tuple[str, int]


def heap_depth(size: int, fan: int) -> int:
    """D(size): rounds a multicast over ``size`` machines takes with fan-out ``fan`` (module docstring)."""
    d, reach, width = 0, 1, 1
    while reach < size:
        width *= fan
        d, reach = d + 1, reach + width
    return d


def _position_depth(t: int, fan: int) -> int:
    d, first, width = 0, 0, 1
    while t >= first + width:
        first += width
        width *= fan
        d += 1
    return d


def _members(groups: dict[GroupKey, Group]) -> dict[int, list[tuple[GroupKey, int]]]:
    at: dict[int, list[tuple[GroupKey, int]]] = {}
    for gid, machines in groups.items():
        for t, m in enumerate(machines):
            at.setdefault(m, []).append((gid, t))
    return at


def multicast(machines: range, groups: dict[GroupKey, Group], fan: int, *, label: str) -> Part:
    """Copy each group root's ``(tag, gid, ...)`` records to every member of the group; D rounds."""
    at = _members(groups)
    depth = max((heap_depth(len(g), fan) for g in groups.values()), default=0)
    for r in range(depth):
        def step(m: int, mem: list[Record], r: int = r) -> Iterable[Message]:
            out: list[Message] = []
            for gid, t in at.get(m, ()):
                if _position_depth(t, fan) != r:
                    continue
                group = groups[gid]
                kids = [group[c] for c in range(t * fan + 1, min(t * fan + fan + 1, len(group)))]
                if kids:
                    payload = [rec for rec in mem if rec[:2] == gid]
                    out += [(k, rec) for k in kids for rec in payload]
            return out
        yield Round(machines, step, keep_all, f"{label}.multicast")


def sum_up(machines: range, groups: dict[GroupKey, Group], fan: int, *, label: str) -> Part:
    """Sum every member's ``(tag, gid, *numbers)`` vector onto the group's root; D rounds."""
    at = _members(groups)
    depth = max((heap_depth(len(g), fan) for g in groups.values()), default=0)
    for r in range(depth, 0, -1):
        def sending(m: int, r: int = r) -> list[tuple[GroupKey, int]]:
            return [(gid, t) for gid, t in at.get(m, ()) if _position_depth(t, fan) == r]

        def keep(m: int, mem: list[Record], sending=sending) -> list[Record]:
            gone = {gid for gid, _ in sending(m)}
            return [rec for rec in mem if rec[:2] not in gone] if gone else mem

        def step(m: int, mem: list[Record], sending=sending) -> Iterable[Message]:
            out: list[Message] = []
            for gid, t in sending(m):
                vecs = [rec[2:] for rec in mem if rec[:2] == gid]
                total = tuple(map(sum, zip(*vecs)))
                out.append((groups[gid][(t - 1) // fan], (*gid, *total)))
            return out
        yield Round(machines, step, keep, f"{label}.sum")

    roots = {g[0]: key for key, g in groups.items()}

    def combine(m: int, mem: list[Record]) -> list[Record]:
        key = roots.get(m)
        if key is None:
            return mem
        vecs = [rec[2:] for rec in mem if rec[:2] == key]
        return [rec for rec in mem if rec[:2] != key] + [(*key, *map(sum, zip(*vecs)))]

    yield Local(machines, combine)
