"""Low-rank attention on the MPC machine by tree summation (anna.lemma_d_2, App. D).

Low-rank attention outputs Q'(X) K'(X)^T V(X) (no normaliser, §4.3), computed as
Q' (K'^T V) with K'^T V = sum_i k'_i v_i^T, an r x mv matrix. Token i lives on machine i // b.

1. every machine forms the partial sum of k'_i v_i^T over its tokens (local);
2. up-sweep: an f-ary tree over the machines adds the partials, one level per round;
3. down-sweep: the total is sent back down the same tree, one level per round;
4. every token outputs q'_i^T (K'^T V) (local).

Rounds: 2 * ceil(log_f T) for T = ceil(N / b) machines (0 when T = 1); machines: T <= N, the
lemma's O(N). A machine keeps its tokens (b tokens of 2 + 2r + mv words, at most s/2) and
receives at most f partial matrices of r*mv + 1 words (at most s/2), which fixes b and f.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnsim.sim.anna.errors import as_matrix, require
from attnsim.sim.anna.mpc import MPC
from attnsim.sim.ledger import Ledger


@dataclass(frozen=True)
class LowRankRun:
    """Result of low-rank attention on the MPC machine: output, rounds, machines and tree fan-in."""
    output: np.ndarray
    rounds: int
    machines: int
    fan_in: int


def _words(rank: int, mv: int) -> tuple[int, int]:
    """Words of a token (id, tag, its query and key features, its value) and of a partial matrix (tag and r x mv)."""
    return 2 + 2 * rank + mv, 1 + rank * mv


def memory_shortfall(memory: int, rank: int, mv: int) -> str | None:
    """Why ``memory`` words cannot hold a token in one half and two partial matrices in the other (the least the
    tree needs, fan 2), for features of ``rank`` and values of ``mv`` words; None where they can."""
    tok_words, part_words = _words(rank, mv)
    if (memory // 2) // tok_words >= 1 and tree_fan(memory, memory - memory // 2, part_words) >= 2:
        return None
    return (f"local memory {memory} is too small: need >= {2 * max(tok_words, 2 * part_words)} words for rank {rank} "
            f"and value dimension {mv}")


def lowrank_mpc(qp: object, kp: object, v: object, *, memory: int, ledger: Ledger | None = None) -> LowRankRun:
    """Q'(K'^T V) on an MPC machine with local memory ``memory`` words."""
    Q, K = as_matrix(qp, "query features"), as_matrix(kp, "key features")
    V = as_matrix(v, "values", rows=K.shape[0])
    require(Q.shape == K.shape, "key features", f"shape {K.shape} differs from the query features' {Q.shape}")
    N, r, mv = Q.shape[0], Q.shape[1], V.shape[1]
    short = memory_shortfall(memory, r, mv)
    require(short is None, "s", short or "")
    tok_words, part_words = _words(r, mv)
    b = (memory // 2) // tok_words
    f = tree_fan(memory, memory - memory // 2, part_words)  # tokens keep one half, partials the other
    T = -(-N // b)
    mpc = MPC(T, memory, ledger=ledger, tag="lowrank")
    mpc.load({m: [("tok", i, *Q[i], *K[i], *V[i]) for i in range(m * b, min(N, (m + 1) * b))] for m in range(T)})

    def partial(m, mem):
        acc = np.zeros((r, mv), dtype=np.result_type(K.dtype, V.dtype))
        for rec in mem:
            acc += np.outer(np.array(rec[2 + r:2 + 2 * r]), np.array(rec[2 + 2 * r:]))
        return mem + [("part", *acc.ravel().tolist())]

    mpc.local(partial)
    tree_sweeps(mpc, f, T)
    out = np.zeros((N, mv), dtype=np.result_type(Q.dtype, K.dtype, V.dtype))
    for mem in mpc.memory:
        total = _sum_parts(mem).reshape(r, mv)
        for rec in (rec for rec in mem if rec[0] == "tok"):
            out[rec[1]] = np.array(rec[2:2 + r]) @ total
    return LowRankRun(out, mpc.rounds, T, f)


def tree_fan(memory: int, held: int, part_words: int) -> int:
    """Lemma D.2's tree arity floor(s / (r m)) as our machines store it: the partial matrices of
    ``part_words`` = r m + 1 words (the matrix and a tag) that fit in the s words beside the ``held`` words
    a machine keeps (its tokens).

    Lemma D.2 sums the N matrices k'_i v_i^T on a floor(s/(r m))-ary tree, so the tree has
    O(log N / log(s/(r m))) = O(1/(eps' - eps)) levels; any fan-in Theta(s/(r m)) keeps that depth, and
    this one is at least floor(s / (2 (r m + 1))) whenever the tokens take at most half the memory.
    """
    return (memory - held) // part_words


def tree_sweeps(mpc: MPC, f: int, T: int, *, label: str = "") -> None:
    """Steps 2 and 3: every machine below T ends holding the sum of all machines' "part" records.

    Each of the T machines holds one ("part", ...) record; ``2 * ceil(log_f T)`` rounds.
    """
    levels = 0
    while f ** levels < T:
        levels += 1
    for lv in range(levels):
        mpc.round(_up(f, lv), label=f"{label}up{lv}")
    for lv in reversed(range(levels)):
        mpc.round(_down(f, lv, T), label=f"{label}down{lv}")


def _sum_parts(mem: list[tuple]) -> np.ndarray:
    parts = [np.array(rec[1:]) for rec in mem if rec[0] == "part"]
    return sum(parts[1:], parts[0])


def _up(f: int, level: int):
    """Machines at multiples of f^level send their subtree sum to the multiple of f^(level+1) below."""
    def step(m, mem):
        out = [(m, rec) for rec in mem if rec[0] == "tok"]
        if m % f ** level:
            return out
        return out + [(m - m % f ** (level + 1), ("part", *_sum_parts(mem).tolist()))]
    return step


def _down(f: int, level: int, T: int):
    """A machine at a multiple of f^(level+1) sends the total to its children at multiples of f^level."""
    def step(m, mem):
        out = [(m, rec) for rec in mem if rec[0] == "tok"]
        if m % f ** (level + 1):
            return out + [(m, rec) for rec in mem if rec[0] == "part"]
        total = ("part", *_sum_parts(mem).tolist())
        return out + [(c, total) for c in range(m, min(m + f ** (level + 1), T), f ** level)]
    return step
