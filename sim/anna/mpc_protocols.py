"""Deterministic MPC protocols that the transformer of anna.thm_4_1 executes, each with a direct answer.

Every protocol takes N inputs on P machines in blocks of b = N / P (token i on machine i // b) and
leaves output i on machine i // b, as Section 1.2's MPC model asks. The local memory s is the
least power of two the protocol needs, so eps = log s / log N is a rational number.

* ``sort``       -- sort N integers: bitonic merge-split over P = 2^p machines (Batcher 1968), p(p+1)/2
                    rounds in which every machine exchanges its block with one partner; s >= 6 b words.
* ``samplesort`` -- the same task by the one-level sample sort of :mod:`~attnsim.sim.anna.mpc_sort`
                    (six rounds, but the root holds P(P-1) samples: s of order P^2).
* ``sum``        -- inclusive prefix sums by an f-ary tree: up-sweep of subtree sums, down-sweep of
                    offsets, 2 ceil(log_f P) rounds.
* ``khop``       -- k-hop by pointer doubling (:mod:`~attnsim.sim.anna.khop`) with the bitonic sort.
* ``lowrank``    -- an L-layer low-rank-attention model, each layer by Lemma D.2's tree sums of fan-in
                    about s / (r m) (:func:`~attnsim.sim.anna.mpc_lowrank.tree_sweeps`, ``tree_fan``);
                    see :func:`lowrank_reference`.

``place`` and ``deliver`` are the MPC's hooks (:class:`~attnsim.sim.anna.mpc.MPC`): None runs the
protocol directly, the hooks of :class:`~attnsim.sim.anna.mpc_to_anna.MPCTransformer` run it in the
transformer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from attnsim.sim.anna.errors import as_matrix, require
from attnsim.sim.anna.khop import khop_mpc
from attnsim.sim.anna.mpc import MPC, Deliver, Place, Record
from attnsim.sim.anna.mpc_lowrank import tree_fan, tree_sweeps
from attnsim.sim.anna.mpc_sort import sample_sort, sort_memory_needed
from attnsim.sim.ledger import Ledger

Outputs = dict[int, dict[int, tuple[int, ...]]]


@dataclass(frozen=True)
class ProtocolRun:
    """Per machine its outputs {input index: output words}; rounds, machines, memory and block used."""

    outputs: Outputs
    rounds: int
    machines: int
    memory: int
    block: int

    def vector(self) -> list[tuple[int, ...]]:
        """The N outputs in index order, read straight off the machines (the direct answer's form)."""
        flat = {i: y for out in self.outputs.values() for i, y in out.items()}
        return [flat[i] for i in range(len(flat))]


def power_of_two_at_least(n: int) -> int:
    """The least power of two >= n."""
    return 1 << max(0, (int(n) - 1).bit_length())


def sort_need(b: int) -> int:
    """Words a machine of the bitonic sort needs for blocks of b items of 3 words (its own and its partner's)."""
    return 6 * b


def samplesort_need(b: int, machines: int) -> int:
    """Words the one-level sample sort needs for b items of 3 words on each of ``machines``."""
    return sort_memory_needed(machines, b, 3, 1)


def sum_need(b: int, machines: int, fan_in: int = 4) -> int:
    """Words the prefix-sum tree of fan-in ``fan_in`` needs (:func:`sum_memory_needed`)."""
    return sum_memory_needed(b, fan_in, _tree_levels(machines, fan_in))


def khop_need(b: int) -> int:
    """Words k-hop keeps for b tokens: 16 a token."""
    return 16 * b


def _lowrank_sizes(b: int, d: int, r: int) -> tuple[int, int]:
    """Words of a machine's b tokens (2 + d each) and of one partial matrix (1 + r d)."""
    return b * (2 + d), 1 + r * d


def lowrank_need(b: int, d: int, r: int) -> int:
    """Words the low-rank protocol needs: its tokens and room for two partial matrices (Lemma D.2's tree at
    fan-in 2)."""
    held, part = _lowrank_sizes(b, d, r)
    return held + 2 * part


def _tree_levels(machines: int, fan_in: int) -> int:
    levels = 0
    while fan_in ** levels < machines:
        levels += 1
    return levels


def _memory(need: int, memory: int | None) -> int:
    """The protocol's memory: the least power of two >= ``need``, or ``memory`` when given (>= need)."""
    if memory is None:
        return power_of_two_at_least(need)
    require(isinstance(memory, int) and memory >= need, "s", f"local memory {memory!r} is below the {need} words "
                                                             "this protocol needs")
    return memory


def _layout(N: int, machines: int, *, power_of_two: bool) -> int:
    require(isinstance(machines, int) and machines >= 1, "P", f"must be a positive integer, got {machines!r}")
    require(N % machines == 0, "P", f"{machines} machines must divide N = {N} (equal blocks)")
    if power_of_two:
        require(machines & (machines - 1) == 0, "P", f"the bitonic sort needs a power of two, got {machines}")
    return N // machines


def _int_vector(x: object, param: str) -> np.ndarray:
    arr = as_matrix(x, param)
    require(arr.shape[1] == 1, param, f"expected one column, got shape {arr.shape}")
    require(np.issubdtype(arr.dtype, np.integer), param, f"expected integers, got dtype {arr.dtype}")
    return arr[:, 0].astype(np.int64)


# ---------------------------------------------------------------- bitonic merge-split sort

def bitonic_sort(mpc: MPC, machines: range, key: Callable[[Record], tuple], block: int, *,
                 record_words: int, key_words: int = 1) -> None:
    """Sort ``block`` records per machine over 2^p machines: p(p+1)/2 rounds of merge-split with one partner.

    Same arguments as :func:`~attnsim.sim.anna.mpc_sort.sample_sort` (``key_words`` is unused); the
    machine ``machines[j]`` ends with ranks j*block .. (j+1)*block - 1 in order.
    """
    P = len(machines)
    require(P & (P - 1) == 0, "P", f"the bitonic sort needs a power-of-two number of machines, got {P}")
    require(mpc.s >= 2 * block * record_words, "s", f"local memory {mpc.s} is below the {2 * block * record_words} "
                                                    "words of two blocks")
    index = {m: j for j, m in enumerate(machines)}
    counts = {len(mpc.memory[m]) for m in machines}
    require(counts == {block}, "block",
            f"every machine must hold exactly {block} records, found sizes {sorted(counts)}")
    mpc.local(lambda m, mem: sorted(mem, key=key) if m in index else mem)
    p = P.bit_length() - 1
    for stage in range(1, p + 1):
        for j in reversed(range(stage)):
            def exchange(m: int, mem: list[Record], j: int = j) -> list[tuple[int, Record]]:
                if m not in index:
                    return [(m, r) for r in mem]
                partner = machines[index[m] ^ (1 << j)]
                return [(m, r) for r in mem] + [(partner, r) for r in mem]

            def split(m: int, mem: list[Record], j: int = j, stage: int = stage) -> list[Record]:
                if m not in index:
                    return mem
                i = index[m]
                ascending = (i >> stage) & 1 == 0
                merged = sorted(mem, key=key)
                low = (i < (i ^ (1 << j))) == ascending
                return merged[:block] if low else merged[block:]

            mpc.round(exchange, label=f"bitonic.{stage}.{j}")
            mpc.local(split)


def _sorted_outputs(mpc: MPC, P: int, block: int, word: int) -> Outputs:
    return {m: {m * block + t: (int(rec[word]),) for t, rec in enumerate(mpc.memory[m])} for m in range(P)}


def sort_protocol(x: object, *, machines: int, memory: int | None = None, ledger: Ledger | None = None,
                  place: Place | None = None, deliver: Deliver | None = None) -> ProtocolRun:
    """Sort the integers ``x`` (output i = the i-th smallest) by :func:`bitonic_sort`."""
    xs = _int_vector(x, "x")
    N = len(xs)
    b = _layout(N, machines, power_of_two=True)
    s = _memory(sort_need(b), memory)
    mpc = MPC(machines, s, ledger=ledger, tag="sort", deliver=deliver, place=place)
    mpc.load({m: [("item", int(xs[i]) * N + i, int(xs[i])) for i in range(m * b, (m + 1) * b)]
              for m in range(machines)})
    bitonic_sort(mpc, range(machines), key=lambda r: (r[1],), block=b, record_words=3)
    return ProtocolRun(_sorted_outputs(mpc, machines, b, 2), mpc.rounds, machines, s, b)


def samplesort_protocol(x: object, *, machines: int, memory: int | None = None, ledger: Ledger | None = None,
                        place: Place | None = None, deliver: Deliver | None = None) -> ProtocolRun:
    """Sort the integers ``x`` by the one-level sample sort (six rounds, s of order P^2 words)."""
    xs = _int_vector(x, "x")
    N = len(xs)
    b = _layout(N, machines, power_of_two=False)
    s = _memory(samplesort_need(b, machines), memory)
    mpc = MPC(machines, s, ledger=ledger, tag="samplesort", deliver=deliver, place=place)
    mpc.load({m: [("item", int(xs[i]) * N + i, int(xs[i])) for i in range(m * b, (m + 1) * b)]
              for m in range(machines)})
    sample_sort(mpc, range(machines), key=lambda r: (r[1],), block=b, record_words=3, key_words=1)
    return ProtocolRun(_sorted_outputs(mpc, machines, b, 2), mpc.rounds, machines, s, b)


# ---------------------------------------------------------------- prefix sums by an f-ary tree

def prefix_sum_protocol(x: object, *, machines: int, fan_in: int = 4, memory: int | None = None,
                        ledger: Ledger | None = None, place: Place | None = None,
                        deliver: Deliver | None = None) -> ProtocolRun:
    """Inclusive prefix sums of ``x``: subtree sums up an f-ary tree, offsets down it; 2 ceil(log_f P) rounds."""
    xs = _int_vector(x, "x")
    N = len(xs)
    b = _layout(N, machines, power_of_two=False)
    require(isinstance(fan_in, int) and fan_in >= 2, "fan_in", f"must be an integer >= 2, got {fan_in!r}")
    levels = _tree_levels(machines, fan_in)
    s = _memory(sum_need(b, machines, fan_in), memory)
    mpc = MPC(machines, s, ledger=ledger, tag="sum", deliver=deliver, place=place)
    mpc.load({m: [("tok", i, int(xs[i])) for i in range(m * b, (m + 1) * b)] for m in range(machines)})
    mpc.local(lambda m, mem: mem + [("sub", 0, sum(r[2] for r in mem if r[0] == "tok"))])
    for lv in range(levels):
        mpc.round(_sum_up(fan_in, lv), label=f"sum.up{lv}")
        mpc.local(_sum_combine(fan_in, lv))
    for lv in reversed(range(levels)):
        mpc.round(_sum_down(fan_in, lv, levels), label=f"sum.down{lv}")
    outputs: Outputs = {}
    for m in range(machines):
        offset = next((r[2] for r in mpc.memory[m] if r[0] == "off" and r[1] == 0), 0)
        acc, out = offset, {}
        for _, i, v in sorted(r for r in mpc.memory[m] if r[0] == "tok"):
            acc += v
            out[i] = (acc,)
        outputs[m] = out
    return ProtocolRun(outputs, mpc.rounds, machines, s, b)


def sum_memory_needed(b: int, f: int, levels: int) -> int:
    """The most words a machine of the prefix-sum tree sends in a round (what it keeps counts as sent): its b
    tokens (3 words each); its subtree sums, its own and one a level it is a root of (3 each); the f children's sums
    it received at each such level (4 each); and in a round down, the f offsets it sends (3 each)."""
    return 3 * b + 3 * (levels + 1) + 4 * f * levels + 3 * f


def _sum_up(f: int, level: int):
    """Roots of level-``level`` subtrees send their sum to the root of the level above."""
    def step(m, mem):
        out = [(m, r) for r in mem]
        if m % f ** level:
            return out
        total = next(r[2] for r in mem if r[0] == "sub" and r[1] == level)
        return out + [(m - m % f ** (level + 1), ("up", level, m, total))]
    return step


def _sum_combine(f: int, level: int):
    def local(m, mem):
        if m % f ** (level + 1):
            return mem
        return mem + [("sub", level + 1, sum(r[3] for r in mem if r[0] == "up" and r[1] == level))]
    return local


def _sum_down(f: int, level: int, levels: int):
    """A level-(``level`` + 1) root tells each child subtree the sum of everything before it."""
    def step(m, mem):
        out = [(m, r) for r in mem if not (r[0] == "off" and r[1] == level + 1)]
        if m % f ** (level + 1):
            return out
        offset = 0 if level + 1 == levels else next(r[2] for r in mem if r[0] == "off" and r[1] == level + 1)
        for _, _, child, total in sorted((r for r in mem if r[0] == "up" and r[1] == level), key=lambda r: r[2]):
            out.append((child, ("off", level, offset)))
            offset += total
        return out
    return step


# ---------------------------------------------------------------- k-hop by pointer doubling

def khop_protocol(text: object, *, hops: int, machines: int, memory: int | None = None,
                  ledger: Ledger | None = None, place: Place | None = None,
                  deliver: Deliver | None = None) -> ProtocolRun:
    """k-hop (output i = the letter sigma^k(i) lands on, or the sink); s = 16 N / P words (16 per token)."""
    letters = _int_vector(text, "text")
    N = len(letters)
    b = _layout(N, machines, power_of_two=True)
    require(memory is None or memory == khop_need(b), "s",
            f"k-hop keeps 16 words per token: s = {khop_need(b)} for P = {machines}")
    run = khop_mpc(letters, hops, memory=khop_need(b), ledger=ledger, deliver=deliver, place=place, sort=bitonic_sort)
    outputs = {m: {r[1]: (int(r[5]),) for r in mem if r[0] == "state"} for m, mem in enumerate(run.memory)}
    return ProtocolRun(outputs, run.rounds, machines, khop_need(b), b)


# ---------------------------------------------------------------- an L-layer low-rank transformer

@dataclass(frozen=True)
class LowRankLayer:
    """Integer feature maps X -> X W^Q (rank r), X W^K (rank r), X W^V (width d)."""

    wq: np.ndarray
    wk: np.ndarray
    wv: np.ndarray


def lowrank_reference(x: np.ndarray, layers: Sequence[LowRankLayer], modulus: int) -> np.ndarray:
    """The model directly: X <- (Q'(X) (K'(X)^T V(X))) mod ``modulus`` per layer (low-rank attention, Section 4.3).

    The reduction mod ``modulus`` is each layer's token-wise map (any token-wise map is allowed);
    it keeps the integers bounded over many layers.
    """
    out = np.asarray(x, dtype=np.int64)
    for layer in layers:
        out = ((out @ layer.wq) @ ((out @ layer.wk).T @ (out @ layer.wv))) % modulus
    return out


def lowrank_protocol(x: object, layers: Sequence[LowRankLayer], *, modulus: int, machines: int,
                     memory: int | None = None, ledger: Ledger | None = None, place: Place | None = None,
                     deliver: Deliver | None = None) -> ProtocolRun:
    """:func:`lowrank_reference` on the MPC machine: Lemma D.2's tree sums once per layer, one protocol.

    The trees have Lemma D.2's fan-in (:func:`~attnsim.sim.anna.mpc_lowrank.tree_fan`): every partial
    matrix that fits beside a machine's b tokens, f = floor((s - b (2 + d)) / (1 + r d)), so each layer takes
    2 ceil(log_f P) rounds, O(1/eps) for s = N^eps (a fixed fan-in would take rounds growing like log P).
    Without ``memory``, s is the least power of two that leaves room for f = 2.
    """
    X = as_matrix(x, "x")
    require(np.issubdtype(X.dtype, np.integer), "x", f"expected integers, got dtype {X.dtype}")
    N, d = X.shape
    b = _layout(N, machines, power_of_two=False)
    require(len(layers) >= 1, "layers", "need at least one layer")
    r = layers[0].wq.shape[1]
    for i, lay in enumerate(layers):
        require(lay.wq.shape == (d, r) and lay.wk.shape == (d, r) and lay.wv.shape == (d, d), "layers",
                f"layer {i} must have W^Q, W^K of shape ({d}, {r}) and W^V of shape ({d}, {d})")
    held, part = _lowrank_sizes(b, d, r)
    s = _memory(lowrank_need(b, d, r), memory)
    fan_in = tree_fan(s, held, part)
    mpc = MPC(machines, s, ledger=ledger, tag="lowrank", deliver=deliver, place=place)
    mpc.load({m: [("tok", i, *(int(v) for v in X[i])) for i in range(m * b, (m + 1) * b)] for m in range(machines)})
    for li, lay in enumerate(layers):
        def partial(m, mem, lay=lay):
            toks = [rec for rec in mem if rec[0] == "tok"]
            acc = np.zeros((r, d), dtype=np.int64)
            for rec in toks:
                row = np.array(rec[2:], dtype=np.int64)
                acc += np.outer(row @ lay.wk, row @ lay.wv)
            return toks + [("part", *(int(v) for v in acc.ravel()))]

        def apply(m, mem, lay=lay):
            parts = [np.array(rec[1:], dtype=np.int64) for rec in mem if rec[0] == "part"]
            total = sum(parts[1:], parts[0]).reshape(r, d)
            return [("tok", rec[1], *(int(v) for v in ((np.array(rec[2:], dtype=np.int64) @ lay.wq) @ total) % modulus))
                    for rec in mem if rec[0] == "tok"]

        mpc.local(partial)
        tree_sweeps(mpc, fan_in, machines, label=f"layer{li}.")
        mpc.local(apply)
    outputs = {m: {rec[1]: tuple(int(v) for v in rec[2:]) for rec in mpc.memory[m]} for m in range(machines)}
    return ProtocolRun(outputs, mpc.rounds, machines, s, b)
