"""MPC sorting by one-level regular sample sort (Lemma C.2 where s >= P^2; the ``samplesort`` protocol of anna.thm_4_1).

Records to sort carry a sort key (a tuple of words, unique per record) given by ``key``. They sit
on the machines of ``machines`` (a range), at most ``block`` records per machine. Afterwards the
machine ``machines[j]`` holds, in sorted order, exactly the records of ranks j*block ..
(j+1)*block - 1. Six rounds:

1. every machine sorts locally and sends P-1 regular samples of its keys to the root;
2. the root picks P-1 splitters from the P(P-1) samples and sends them to every machine;
3. every record goes to the machine of its splitter interval (regular sampling keeps each
   interval below 2*block records, Shi & Schaeffer 1992);
4. every machine sends its record count to the root;
5. the root answers each machine with the number of records before it;
6. every record goes to machine rank // block.

Deviation from the paper: Lemma C.2 cites Goodrich et al. 2011, which sorts in O(1/(eps'-eps))
rounds for any eps' > eps. One level of sampling needs the root to hold P(P-1) keys, i.e.
s >= P^2 (|key| + 1) words -- roughly s >= N^{2/3}; :func:`sort_memory_needed` gives the figure
and :func:`sample_sort` refuses smaller s up front.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Callable

from attnsim.sim.anna.errors import require
from attnsim.sim.anna.mpc import MPC, Record
from attnsim.sim.anna.mpc_lockstep import Local, Part, Round, run

Key = Callable[[Record], tuple]
_SAMPLE, _SPLIT, _COUNT, _OFFSET = "sample", "split", "count", "offset"


def sort_memory_needed(P: int, block: int, record_words: int, key_words: int) -> int:
    """Words the sample sort needs per machine: the root's samples/splitters plus 2*block records."""
    return max(P * (P - 1) * (key_words + 2) + block * record_words, 2 * block * record_words)


def sample_sort(mpc: MPC, machines: range, key: Key, block: int, *, record_words: int, key_words: int) -> None:
    """Sort the records on ``machines`` (see the module docstring); six MPC rounds."""
    P = len(machines)
    require(block >= 1, "block", f"must be >= 1, got {block}")
    need = sort_memory_needed(P, block, record_words, key_words)
    require(mpc.s >= need, "s", f"local memory {mpc.s} is too small for a one-level sample sort over "
                                f"{P} machines of {block} records ({record_words} words each): need >= {need}")
    run(mpc, sample_sort_part(machines, key, block, label="sort"))


def sample_sort_part(machines: range, key: Key, block: int | None, *, label: str) -> Part:
    """:func:`sample_sort` as a lockstep part (:mod:`attnsim.sim.anna.mpc_lockstep`), memory checked by the caller;
    ``block=None``: ceil(records / P) a machine, the root's count of the records telling every machine."""
    P, root = len(machines), machines[0]
    index = {m: j for j, m in enumerate(machines)}

    def items(mem: list[Record]) -> list[Record]:
        return [r for r in mem if r[0] not in (_SAMPLE, _SPLIT, _COUNT, _OFFSET)]

    def samples(m: int, mem: list[Record]):
        if m not in index:
            return [(m, r) for r in mem]
        own = sorted(mem, key=key)
        picks = [own[(t * len(own)) // P] for t in range(1, P)] if own else []
        return [(m, r) for r in own] + [(root, (_SAMPLE, *key(r))) for r in picks]

    def splitters(m: int, mem: list[Record]):
        out = [(m, r) for r in items(mem)]
        if m == root:
            keys = sorted(tuple(r[1:]) for r in mem if r[0] == _SAMPLE)
            cut = [keys[(t * len(keys)) // P] for t in range(1, P)] if keys else []
            out += [(dest, (_SPLIT, t, *c)) for dest in machines for t, c in enumerate(cut)]
        return out

    def route(m: int, mem: list[Record]):
        if m not in index:
            return [(m, r) for r in mem]
        cut = [tuple(r[2:]) for r in sorted((r for r in mem if r[0] == _SPLIT), key=lambda r: r[1])]
        return [(machines[bisect_right(cut, key(r))], r) for r in items(mem)]

    def counts(m: int, mem: list[Record]):
        out = [(m, r) for r in mem]
        return out + [(root, (_COUNT, index[m], len(mem)))] if m in index else out

    def offsets(m: int, mem: list[Record]):
        out = [(m, r) for r in items(mem)]
        if m == root:
            sizes = dict((r[1], r[2]) for r in mem if r[0] == _COUNT)
            before, blk = 0, block or max(1, -(-sum(sizes.values()) // P))
            for j in range(P):
                out.append((machines[j], (_OFFSET, before, blk)))
                before += sizes.get(j, 0)
        return out

    def place(m: int, mem: list[Record]):
        if m not in index:
            return [(m, r) for r in mem]
        start, blk = next(r[1:] for r in mem if r[0] == _OFFSET)
        own = sorted(items(mem), key=key)
        return [(machines[(start + t) // blk], r) for t, r in enumerate(own)]

    for step, name in ((samples, "sample"), (splitters, "splitters"), (route, "route"), (counts, "count"),
                       (offsets, "offsets"), (place, "place")):
        yield Round(machines, step, _nothing, f"{label}.{name}")
    yield Local(machines, lambda m, mem: sorted(mem, key=key))


def _nothing(m: int, mem: list[Record]) -> list[Record]:
    return []  # every step of the sample sort sends a machine's records to itself explicitly
