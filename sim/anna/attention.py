"""ANNA mechanisms: Algorithm 1 (anna.alg_1), Algorithm 2 (anna.alg_2) and EMA (anna.def_ema).

All three return a :class:`Retrieval`: per query the sum of retrieved values and their count, so
that outputs can be compared *exactly* (integer or rational values stay exact; the division is
done last). A query that retrieves nothing outputs 0 (the EMA convention;
docs/reconstructions.md, "A query that retrieves nothing outputs zero").

* :func:`anna_tables` -- Algorithm 1: ``ell`` tables keyed by g_u(k_j), each bucket holding
  (sum of values, count); a query sums the buckets it hits over all tables.
* :func:`anna_linear_memory` -- Algorithm 2: one table reused for ``ell`` rounds; buckets are
  created for the queries and keys add into existing buckets only. Same hashes, same output.
* :func:`ema` -- exact-match attention: keys merge-sorted lexicographically, each query binary-searched,
  every coordinate comparison counted; :func:`ema_heads` runs several one-word heads of a layer at once.

Implied weights (Algorithm 1): w_ij = c_ij / sum_j' c_ij', with c_ij the number of tables in which
q_i and k_j collide; :func:`collision_counts` computes c.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Sequence

import numpy as np

from attnsim.sim.anna.errors import as_matrix, require
from attnsim.sim.anna.lsh import TableHash, code_keys, code_levels, table_codes
from attnsim.sim.ledger import Ledger


@dataclass(frozen=True)
class Retrieval:
    """Per query: ``sums`` (Nq x mv) of retrieved values and ``counts`` (Nq) of retrieved keys."""

    sums: np.ndarray
    counts: np.ndarray

    def output(self) -> np.ndarray:
        """sums / counts as floats; rows with count 0 are 0."""
        out = np.zeros(self.sums.shape, dtype=np.float64)
        hit = self.counts > 0
        out[hit] = self.sums[hit].astype(np.float64) / self.counts[hit, None]
        return out

    def output_exact(self) -> np.ndarray:
        """sums / counts as Fractions (object array); rows with count 0 are 0. Values must be exact."""
        out = np.empty(self.sums.shape, dtype=object)
        for i in range(self.sums.shape[0]):
            for t in range(self.sums.shape[1]):
                c = int(self.counts[i])
                out[i, t] = Fraction(self.sums[i, t]) / c if c else Fraction(0)
        return out

    def same_as(self, other: "Retrieval") -> bool:
        """Exactly equal sums and counts (the Algorithm 1 = Algorithm 2 check)."""
        return bool(np.array_equal(self.counts, other.counts) and np.array_equal(self.sums, other.sums))


def qkv_inputs(q: object, k: object, v: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated query, key and value matrices (finite; as many values as keys; equal q/k dimension)."""
    qm = as_matrix(q, "queries")
    km = as_matrix(k, "keys")
    vm = as_matrix(v, "values", rows=km.shape[0])
    require(qm.shape[1] == km.shape[1], "keys", f"dimension {km.shape[1]} differs from the queries' {qm.shape[1]}")
    return qm, km, vm


def _zeros(rows: int, v: np.ndarray) -> np.ndarray:
    return (
        np.zeros((rows, v.shape[1]), dtype=v.dtype)
        if v.dtype != object
        else np.full((rows, v.shape[1]), 0, dtype=object)
    )


_BLOCK = 2**15
"""Code entries (tables x points x z) Algorithm 1 hashes and keys at once: it builds and probes its tables in
blocks whose scratch stays in cache (the same tables, buckets and counts as all ell tables in one go, for about
half the CPU at N = 128)."""


def anna_tables(q: object, k: object, v: object, hashes: Sequence[TableHash], *,
                ledger: Ledger | None = None, tag: str = "alg1") -> Retrieval:
    """Algorithm 1 of the paper (anna.alg_1): build all ``ell`` tables, then answer every query.

    All tables are held at once, as Algorithm 1 holds them. A bucket is keyed by its table u and its code
    g_u(k), so a block of tables is built in one pass over its key codes (:func:`_build`), and the queries
    look up their codes of a block in one pass too (:func:`_probe`).

    Ledger: ``hash`` (z evaluations per point per table), ``bucket`` (non-empty key buckets per
    table), ``collision`` (query-key pairs sharing a bucket) and one ``memory_words`` entry for the
    ``ell`` stored tables (per bucket: z code words, mv value words, 1 count word).
    """
    qm, km, vm = qkv_inputs(q, k, v)
    require(len(hashes) >= 1, "hashes", "need at least one table")
    step = max(1, _BLOCK // (max(qm.shape[0], km.shape[0], 1) * hashes[0].z))
    blocks = [hashes[lo:lo + step] for lo in range(0, len(hashes), step)]
    tables = [_build(block, km, vm, ledger, f"{tag}.hash_keys") for block in blocks]
    if ledger is not None:
        per_table = np.concatenate([table[3] for table in tables])
        for u, n in enumerate(per_table.tolist()):
            ledger.record("bucket", f"{tag}.buckets", round=u, amount=n)
        words = sum(n * (g.z + vm.shape[1] + 1) for n, g in zip(per_table.tolist(), hashes))
        ledger.record("memory_words", f"{tag}.tables", amount=words)
    sums, counts = _zeros(qm.shape[0], vm), np.zeros(qm.shape[0], dtype=np.int64)
    found = [_probe(block, table, qm, sums, counts, ledger, f"{tag}.hash_queries") for block, table in
             zip(blocks, tables)]  # block by block, table by table within one: each query adds its buckets in order
    if ledger is not None:
        for u, n in enumerate(np.concatenate(found).tolist()):
            ledger.record("collision", f"{tag}.collisions", round=u, amount=n)
    return Retrieval(sums, counts)


def _build(block: Sequence[TableHash], km: np.ndarray, vm: np.ndarray, ledger: Ledger | None,
           tag: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Algorithm 1's tables of a block of hashes: the bucket keys (sorted; :func:`_table_keys`), each bucket's
    value sum and key count, and each table's number of buckets."""
    keys, first, inv = np.unique(_table_keys(table_codes(block, km, ledger=ledger, tag=tag), code_levels(block)),
                                 return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    bsum = _zeros(len(keys), vm)
    np.add.at(bsum, inv, np.tile(vm, (len(block), 1)))
    per_table = np.bincount(first // km.shape[0], minlength=len(block))  # key row u*Nk + j lies in table u
    return keys, bsum, np.bincount(inv, minlength=len(keys)), per_table


def _probe(block: Sequence[TableHash], table: tuple[np.ndarray, ...], qm: np.ndarray, sums: np.ndarray,
           counts: np.ndarray, ledger: Ledger | None, tag: str) -> np.ndarray:
    """Every query looks up its bucket in each table of the block (:func:`_build`'s ``table``) and adds the
    bucket's sum and count to its own; returns each table's collisions (keys found by all queries)."""
    keys, bsum, bcnt, _ = table
    qk = _table_keys(table_codes(block, qm, ledger=ledger, tag=tag), code_levels(block))
    pos = np.minimum(np.searchsorted(keys, qk), len(keys) - 1)
    hit = np.flatnonzero(keys[pos] == qk)  # entry u*Nq + i: query i found its bucket of table u
    at, got = hit % qm.shape[0], bcnt[pos[hit]]
    np.add.at(sums, at, bsum[pos[hit]])
    np.add.at(counts, at, got)
    found = np.zeros(len(block), dtype=np.int64)
    np.add.at(found, hit // qm.shape[0], got)
    return found


def _table_keys(codes: np.ndarray, levels: list[int] | None) -> np.ndarray:
    """Row u*N + i: the key of point i's bucket in table u, (u, its z code values), from ``codes`` (ell x N x z)
    whose entries take ``levels`` (:func:`~attnsim.sim.anna.lsh.code_levels`)."""
    ell, n, z = codes.shape
    table = np.repeat(np.arange(ell, dtype=np.int64), n)[:, None]
    return code_keys(np.hstack([table, codes.reshape(ell * n, z)]), None if levels is None else [ell, *levels])


def anna_linear_memory(q: object, k: object, v: object, hashes: Sequence[TableHash], *,
                       ledger: Ledger | None = None, tag: str = "alg2") -> Retrieval:
    """Algorithm 2 (anna.alg_2): one table, ``ell`` rounds, O(N) words of memory.

    Each round creates empty buckets for the query codes, adds every key whose code hits one, then
    every query adds its bucket to its running (sum, count). The ``memory_words`` entry is the
    peak: the running sums and counts plus the largest single-round table.
    """
    qm, km, vm = qkv_inputs(q, k, v)
    require(len(hashes) >= 1, "hashes", "need at least one table")
    sums, counts = _zeros(qm.shape[0], vm), np.zeros(qm.shape[0], dtype=np.int64)
    peak_table = 0
    tags = {part: f"{tag}.{part}" for part in ("hash_queries", "hash_keys", "buckets", "collisions")}
    for u, g in enumerate(hashes):
        levels = code_levels([g])
        buckets, qinv = np.unique(code_keys(g.codes(qm, ledger=ledger, tag=tags["hash_queries"]), levels),
                                  return_inverse=True)
        kk = code_keys(g.codes(km, ledger=ledger, tag=tags["hash_keys"]), levels)
        pos = np.minimum(np.searchsorted(buckets, kk), len(buckets) - 1)
        hit = np.flatnonzero(buckets[pos] == kk)  # the keys whose code is a query's bucket
        bsum = _zeros(len(buckets), vm)
        np.add.at(bsum, pos[hit], vm[hit])
        got = np.bincount(pos[hit], minlength=len(buckets))[qinv]  # keys in each query's bucket
        sums += bsum[qinv]
        counts += got
        peak_table = max(peak_table, len(buckets) * (g.z + vm.shape[1] + 1))
        if ledger is not None:
            ledger.record("bucket", tags["buckets"], round=u, amount=len(buckets))
            ledger.record("collision", tags["collisions"], round=u, amount=int(got.sum()))
    if ledger is not None:
        ledger.record("memory_words", f"{tag}.table", amount=peak_table + qm.shape[0] * (vm.shape[1] + 1))
    return Retrieval(sums, counts)


def collision_counts(q: object, k: object, hashes: Sequence[TableHash]) -> np.ndarray:
    """c[i, j] = number of tables u with g_u(q_i) = g_u(k_j) (an Nq x Nk integer matrix).

    Every colliding (query, key) pair of every table is listed (keys sorted by bucket, each query
    takes its bucket's run of keys) and the pairs are counted, so the work is the number of
    collisions rather than Nq * Nk per table; no per-bucket sums are formed, unlike Algorithm 1.
    """
    qm, km = as_matrix(q, "queries"), as_matrix(k, "keys")
    nq, nk = qm.shape[0], km.shape[0]
    pairs = []
    for g in hashes:
        _, ids = np.unique(code_keys(np.vstack([g.codes(qm), g.codes(km)])), return_inverse=True)
        ids = ids.reshape(-1)
        qid, kid = ids[:nq], ids[nq:]
        order = np.argsort(kid, kind="stable")
        starts = np.searchsorted(kid[order], qid, side="left")
        lengths = np.searchsorted(kid[order], qid, side="right") - starts
        offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        keys = order[np.repeat(starts, lengths) + offsets]
        pairs.append(np.repeat(np.arange(nq), lengths) * nk + keys)
    flat = np.concatenate(pairs) if pairs else np.zeros(0, dtype=np.int64)
    return np.bincount(flat, minlength=nq * nk).reshape(nq, nk).astype(np.int64)


def ema(q: object, k: object, v: object, *, ledger: Ledger | None = None, tag: str = "ema",
        count_sort: bool = False) -> Retrieval:
    """Exact-match attention (App. B): the mean of v_j over keys equal to q_i, or 0 if none.

    The keys are sorted lexicographically and each query is found by two binary searches, so the
    work is O(d N log N) (App. B): O(N log N) comparisons of d-word keys. Every key comparison of the
    searches is counted (ledger ``compare``, ``<tag>.search``); with ``count_sort`` the keys are
    merge-sorted with every key comparison counted too (``<tag>.sort``), otherwise numpy's lexsort
    does it uncounted. The searches run for all queries at once on the rows' lexicographic ranks
    (:func:`_ranks`) and count exactly the comparisons row-by-row searches make (:func:`_bisect`).
    Entries are compared exactly, so pass integers (or exactly representable floats).
    """
    qm, km, vm = qkv_inputs(q, k, v)
    ops = [0]
    if count_sort:
        order_arr = np.asarray(_merge_sort([tuple(row) for row in km], ops), dtype=np.intp)
    else:
        order_arr = np.lexsort(km.T[::-1]).astype(np.intp)
    sort_ops = ops[0]
    if km.shape[1] == 1 and km.dtype.kind in "iu" and qm.dtype == km.dtype:  # one integer word: its own rank
        sorted_ranks, query_ranks = km[order_arr, 0], qm[:, 0]
    else:
        key_ranks, query_ranks = _ranks(km, qm)
        sorted_ranks = key_ranks[order_arr]
    lo = _bisect(sorted_ranks, query_ranks, ops, left=True)
    hi = _bisect(sorted_ranks, query_ranks, ops, left=False)
    sums = _run_sums(vm, order_arr, lo, hi)
    counts = np.maximum(hi - lo, 0).astype(np.int64)
    if ledger is not None:
        if count_sort:
            ledger.record("compare", f"{tag}.sort", amount=sort_ops)
        ledger.record("compare", f"{tag}.search", amount=ops[0] - sort_ops)
    return Retrieval(sums, counts)


def ema_heads(queries: np.ndarray, keys: np.ndarray, values: np.ndarray,
              rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """H exact-match heads (App. B) with one integer word per query and key and the same queries, run at once.

    Head h has the keys ``keys[h]`` (H x n); ``values`` holds the values of the keys ``rows`` (flat indices
    h n + j), every other key's value is 0 (a head in which most keys send nothing, without their zero rows).
    Each head is :func:`ema` on its own: its keys sorted, every query found by two binary searches whose
    comparisons are counted per head; only the output rows of the queries that match a key are formed (every
    other row is 0).

    Returns (counts (H x n), hit: the flat indices h n + i of the queries that match, the sums of their rows,
    the comparisons of each head).
    """
    qm, km = np.asarray(queries), np.asarray(keys)
    require(km.ndim == 2 and km.dtype.kind in "iu" and qm.ndim == 1 and qm.dtype.kind in "iu", "keys",
            "ema_heads takes one integer word per key (H x n) and per query (n)")
    H, n = km.shape
    low = min(int(km.min(initial=0)), int(qm.min(initial=0)))
    span = max(int(km.max(initial=0)), int(qm.max(initial=0))) - low + 1
    require(km.shape[0] * span < 2**62, "keys", "the heads' words must span less than 2^62 / H")
    shift = (np.arange(H, dtype=np.int64) * span - low)[:, None]  # head h's words move to [h span, (h + 1) span)
    words = (km + shift).reshape(-1)
    order = np.argsort(words, kind="stable")  # every head's keys sorted, in its own block of n
    flat, wanted = words[order], (qm[None, :] + shift).reshape(-1)
    start = (np.arange(H, dtype=np.int64) * n)[:, None]
    lo = np.searchsorted(flat, wanted, side="left").reshape(H, n) - start
    hi = np.searchsorted(flat, wanted, side="right").reshape(H, n) - start
    halvings = _halvings(n)
    compares = halvings[lo].sum(axis=1) + halvings[hi].sum(axis=1)
    counts = np.maximum(hi - lo, 0).astype(np.int64)
    vm, at = _sparse_values(values, rows, H * n)  # key j's value: row at[j] of vm (the last, zero, if not in rows)
    hit = np.flatnonzero(counts)
    sums = _run_sums(vm, at[order], (lo + start).reshape(-1)[hit], (hi + start).reshape(-1)[hit])
    return counts, hit, sums, compares


def _sparse_values(v: object, rows: object, keys: int) -> tuple[np.ndarray, np.ndarray]:
    """``v`` (values of the keys ``rows``) with a zero row appended, and per key its row there."""
    idx = np.asarray(rows, dtype=np.intp).reshape(-1)
    vm = as_matrix(v, "values", rows=len(idx))
    require(bool(((idx >= 0) & (idx < keys)).all()), "rows", f"must be key indices in 0..{keys - 1}")
    at = np.full(keys, len(idx), dtype=np.intp)
    at[idx] = np.arange(len(idx))
    require(bool((at[idx] == np.arange(len(idx))).all()), "rows", "must be distinct key indices")
    return np.vstack([vm, _zeros(1, vm)]), at


def _ranks(km: np.ndarray, qm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer ranks of the key rows and the query rows in one lexicographic order: equal rows get equal
    ranks and rank order is row order, so comparing ranks is comparing the rows (as tuples)."""
    both = np.vstack([km, qm]) if km.dtype == qm.dtype else np.vstack([km.astype(object), qm.astype(object)])
    ranks = np.zeros(both.shape[0], dtype=np.int64)
    if both.shape[0] and both.shape[1]:
        order = np.lexsort(both.T[::-1])
        rows = both[order]
        new = np.zeros(len(rows), dtype=bool)
        new[1:] = np.asarray(rows[1:] != rows[:-1]).any(axis=1)
        ranks[order] = np.cumsum(new)
    return ranks[:km.shape[0]], ranks[km.shape[0]:]


def _run_sums(vm: np.ndarray, order: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Row i: ``vm[order[lo_i:hi_i]].sum(axis=0)`` (0 where the run is empty), each distinct run summed once.
    Integer values: all runs in one ``reduceat`` (the same integers, wrapping as ``sum`` does); other values
    run by run, in ``sum``'s own order."""
    sums = _zeros(len(lo), vm)
    hit = np.flatnonzero(hi > lo)
    if not len(hit):
        return sums
    if vm.dtype.kind in "iu" and bool((hi[hit] - lo[hit] == 1).all()):  # every run one key: its row
        sums[hit] = vm[order[lo[hit]]]
        return sums
    if vm.dtype.kind in "iu":
        runs, which = np.unique(np.stack([lo[hit], hi[hit]], axis=1), axis=0, return_inverse=True)
        lengths = runs[:, 1] - runs[:, 0]
        starts = np.cumsum(lengths) - lengths
        rows = np.repeat(runs[:, 0] - starts, lengths) + np.arange(int(lengths.sum()))
        sums[hit] = np.add.reduceat(vm[order[rows]], starts, axis=0)[which.reshape(-1)]
        return sums
    done: dict[tuple[int, int], np.ndarray] = {}
    for i in hit:
        run = (int(lo[i]), int(hi[i]))
        if run not in done:
            done[run] = vm[order[run[0]:run[1]]].sum(axis=0)
        sums[i] = done[run]
    return sums


def _merge_sort(items: list[tuple], ops: list[int]) -> list[int]:
    """Indices of ``items`` in stable lexicographic order: a bottom-up merge sort with sentinels, so every
    element placed costs one key comparison (N per level); the comparisons are added to ops[0]."""
    runs = [[i] for i in range(len(items))]
    while len(runs) > 1:
        merged = []
        for a, b in zip(runs[::2], runs[1::2]):
            out, i, j = [], 0, 0
            while i < len(a) or j < len(b):
                ops[0] += 1  # the next element against the other run's head (or its sentinel)
                if j == len(b) or (i < len(a) and items[a[i]] <= items[b[j]]):
                    out.append(a[i])
                    i += 1
                else:
                    out.append(b[j])
                    j += 1
            merged.append(out)
        runs = merged + ([runs[-1]] if len(runs) % 2 else [])
    return runs[0] if runs else []


def _bisect(items: np.ndarray, keys: np.ndarray, ops: list[int], *, left: bool) -> np.ndarray:
    """Per key: the first index whose item is >= key (``left``) or > key, as a binary search over the sorted
    ``items`` finds it; one comparison per key per halving, counted in ops[0]. The search's comparison at
    ``mid`` goes right exactly when mid lies before the answer, so its halvings depend on the answer alone:
    numpy's search finds the answers and :func:`_halvings` counts them."""
    found = np.searchsorted(items, keys, side="left" if left else "right").astype(np.int64)
    ops[0] += int(_halvings(len(items))[found].sum())
    return found


@lru_cache(maxsize=64)
def _halvings(n: int) -> np.ndarray:
    """halvings[p]: the comparisons a binary search (lo = 0, hi = n; mid = (lo + hi) // 2; go right, lo = mid + 1,
    when the item at mid lies before the key, else hi = mid) makes when its answer is p, for p = 0 .. n."""
    answer = np.arange(n + 1)
    lo = np.zeros(n + 1, dtype=np.int64)
    hi = np.full(n + 1, n, dtype=np.int64)
    steps = np.zeros(n + 1, dtype=np.int64)
    while True:
        active = lo < hi
        if not active.any():
            steps.flags.writeable = False
            return steps
        steps += active
        mid = (lo + hi) // 2
        right = active & (mid < answer)
        lo = np.where(right, mid + 1, lo)
        hi = np.where(active & ~right, mid, hi)
