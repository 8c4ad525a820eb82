"""MPC simulation of one ANNA layer implemented by Algorithm 1 (anna.thm_4_2 / Thm C.3).

Machines: T token machines (b tokens each) followed by P sort machines. All machines share the
hash draws g_1..g_ell (the theorem assumes shared seeds). Ten rounds:

1. fan-out: each token machine hashes its tokens locally and emits, per table u, a key item
   (u, g_u(k_j), 0, j, v_j) and a query item (u, g_u(q_i), 1, i) to the sort machines;
2-7. the 2 N ell items are sorted by (u, code, kind, index) (:func:`sample_sort`), so every
   bucket of every table becomes one run of consecutive items;
8. each sort machine sends the (value sum, count) of the key items in its first and last run to
   the root sort machine;
9. the root adds up the pieces of runs that cross machines and returns the totals;
10. every query item sends its run's (sum, count) to its token machine, which adds the ell
   answers: (sum_u, count_u) summed over u -- exactly Algorithm 1's (sums, counts).

Deviations from App. C: tokens fan out to the ell tables in one round (needs s >= 2 ell
(z + 4 + mv) words; the paper uses s/m-ary fan-out trees), runs are aggregated through the root
rather than s/m-ary trees with meta-info machines (needs about 2 P (z + 5 + mv) <= s), and the
sort is one-level (see :mod:`attnsim.sim.anna.mpc_sort`). The machine count is T + P with
P = ceil(2 N ell / block), block = floor(s / (2 (z + 4 + mv))) -- the paper's O(N^{1+3rho} m / s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from attnsim.sim.anna.attention import Retrieval, qkv_inputs
from attnsim.sim.anna.errors import require
from attnsim.sim.anna.lsh import TableHash
from attnsim.sim.anna.mpc import MPC
from attnsim.sim.anna.mpc_sort import sample_sort
from attnsim.sim.ledger import Ledger


@dataclass(frozen=True)
class MPCLayerRun:
    """Result of one ANNA layer run on the MPC machine: the retrieval, rounds and machine counts."""
    retrieval: Retrieval
    rounds: int
    machines: int
    token_machines: int
    sort_machines: int


def _scalar(x: object) -> object:
    return int(x) if isinstance(x, (int, np.integer)) else x


def anna_layer_mpc(q: object, k: object, v: object, hashes: Sequence[TableHash], *, memory: int,
                   ledger: Ledger | None = None) -> MPCLayerRun:
    """Algorithm 1's (sums, counts) for every query, computed on an MPC machine with s = ``memory``."""
    qm, km, vm = qkv_inputs(q, k, v)
    require(qm.shape[0] == km.shape[0], "queries", "the layer needs one query and one key per token")
    require(len(hashes) >= 1, "hashes", "need at least one table")
    N, mv, ell, z = qm.shape[0], vm.shape[1], len(hashes), hashes[0].z
    require(all(g.z == z for g in hashes), "hashes", "all tables must concatenate the same number z of hashes")
    rw = z + 4 + mv
    b = memory // (2 * ell * rw)
    require(b >= 1, "s", f"local memory {memory} is below 2*ell*(z+4+mv) = {2 * ell * rw} words (one token's fan-out)")
    block = memory // (2 * rw)
    T, P = -(-N // b), -(-(2 * N * ell) // block)
    led = ledger if ledger is not None else Ledger()
    mpc = MPC(T + P, memory, ledger=led, tag="mpc_anna")
    sort_machines = range(T, T + P)
    root = T
    mpc.load({m: [("tok", i) for i in range(m * b, min(N, (m + 1) * b))] for m in range(T)})
    qcodes = [g.codes(qm, ledger=led, tag="mpc_anna.hash_queries") for g in hashes]
    kcodes = [g.codes(km, ledger=led, tag="mpc_anna.hash_keys") for g in hashes]

    def fan_out(m, mem):
        out = []
        for _, i in mem:
            for u in range(ell):
                n = 2 * (i * ell + u)
                out.append((T + n // block, ("it", u, *map(int, kcodes[u][i]), 0, i, *map(_scalar, vm[i]))))
                out.append((T + (n + 1) // block, ("it", u, *map(int, qcodes[u][i]), 1, i)))
        return out

    mpc.round(fan_out, label="fan_out")
    sample_sort(mpc, sort_machines, key=lambda r: tuple(r[1:z + 4]), block=block, record_words=rw, key_words=z + 3)

    def runs(mem):
        """Consecutive pieces (run key, key-value sum, key count, query indices)."""
        pieces: list[list] = []
        for r in mem:
            rk = tuple(r[1:z + 2])
            if not pieces or pieces[-1][0] != rk:
                pieces.append([rk, [0] * mv, 0, []])
            if r[z + 2] == 0:
                pieces[-1][1] = [a + b_ for a, b_ in zip(pieces[-1][1], r[z + 4:])]
                pieces[-1][2] += 1
            else:
                pieces[-1][3].append(r[z + 3])
        return pieces

    def report_ends(m, mem):
        out = [(m, r) for r in mem]
        if m in sort_machines and mem:
            ps = runs(mem)
            ends = [ps[0]] if len(ps) == 1 else [ps[0], ps[-1]]
            out += [(root, ("piece", m, *p[0], *p[1], p[2])) for p in ends]
        return out

    mpc.round(report_ends, label="run_ends")

    def totals(m, mem):
        out = [(m, r) for r in mem if r[0] == "it"]
        if m == root:
            pieces = [(r[1], tuple(r[2:z + 3]), r[z + 3:z + 3 + mv], r[z + 3 + mv]) for r in mem if r[0] == "piece"]
            total: dict[tuple, tuple[list, int]] = {}
            for _, rk, vs, c in pieces:
                acc_v, acc_c = total.get(rk, ([0] * mv, 0))
                total[rk] = ([a + x for a, x in zip(acc_v, vs)], acc_c + c)
            out += [(sender, ("total", *rk, *total[rk][0], total[rk][1])) for sender, rk, _, _ in pieces]
        return out

    mpc.round(totals, label="run_totals")

    def answer(m, mem):
        if m not in sort_machines:
            return []
        known = {tuple(r[1:z + 2]): (list(r[z + 2:z + 2 + mv]), r[z + 2 + mv]) for r in mem if r[0] == "total"}
        out = []
        for rk, vs, c, queries in runs([r for r in mem if r[0] == "it"]):
            vs, c = known.get(rk, (vs, c))
            out += [(i // b, ("res", i, *vs, c)) for i in queries]
        return out

    mpc.round(answer, label="answer")
    sums = np.zeros((N, mv), dtype=vm.dtype) if vm.dtype != object else np.full((N, mv), 0, dtype=object)
    counts = np.zeros(N, dtype=np.int64)
    for mem in mpc.memory[:T]:
        for r in mem:
            sums[r[1]] += np.array(r[2:2 + mv], dtype=sums.dtype)
            counts[r[1]] += r[2 + mv]
    return MPCLayerRun(Retrieval(sums, counts), mpc.rounds, led.total("mpc_machine", "mpc_anna"), T, P)
