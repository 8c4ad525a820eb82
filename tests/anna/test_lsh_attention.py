"""Algorithms 1 and 2 and EMA (anna.alg_1, anna.alg_2, anna.def_ema)."""

from __future__ import annotations

import numpy as np
import pytest
from anna_cases import LSH_CASES
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.sim.anna.attention import anna_linear_memory, anna_tables, collision_counts, ema, ema_heads
from attnsim.sim.anna.errors import AnnaInputError
from attnsim.sim.anna.lsh import HyperplaneLSH, PStableLSH, draw_tables
from attnsim.sim.ledger import Ledger


def _setup(params: dict, seed: int):
    rng = np.random.default_rng(seed)
    N, Nk, m = params["N"], params.get("Nk", params["N"]), params["m"]
    fam = HyperplaneLSH(m) if params["family"] == "hyperplane" else PStableLSH(m, params["width"])
    q = rng.standard_normal((N, m))
    k = np.vstack(
        [q[: min(N, Nk)] + 0.05 * rng.standard_normal((min(N, Nk), m)), rng.standard_normal((max(0, Nk - N), m))]
    )
    v = rng.integers(-50, 51, size=(Nk, 3))
    return q, k, v, draw_tables(fam, params["ell"], params["z"], rng)


@pytest.mark.parametrize("case", LSH_CASES, ids=lambda c: c.name)
def test_alg1_equals_alg2_and_collision_weights(case):
    q, k, v, tables = _setup(case.params, case.seed)
    l1, l2 = Ledger(), Ledger()
    a1, a2 = anna_tables(q, k, v, tables, ledger=l1), anna_linear_memory(q, k, v, tables, ledger=l2)
    assert a1.same_as(a2)
    c = collision_counts(q, k, tables)
    assert np.array_equal(a1.counts, c.sum(axis=1)) and np.array_equal(a1.sums, c @ v)
    ell, z, N, Nk = len(tables), tables[0].z, len(q), len(k)
    assert l1.total("hash") == l2.total("hash") == ell * z * (N + Nk)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 12), st.integers(1, 5), st.integers(1, 4), st.integers(0, 10_000))
def test_alg1_equals_alg2_property(n, ell, z, seed):
    rng = np.random.default_rng(seed)
    q = rng.integers(-2, 3, size=(n, 2)).astype(float)
    k = rng.integers(-2, 3, size=(n + 1, 2)).astype(float)
    v = rng.integers(-9, 10, size=(n + 1, 2))
    tables = draw_tables(PStableLSH(2, 1.5), ell, z, rng)
    assert anna_tables(q, k, v, tables).same_as(anna_linear_memory(q, k, v, tables))


def test_alg1_at_r0_reproduces_ema_exactly():
    """App. B (Algorithm 1 as EMA at r = 0): identical points always collide, far ones (scaled apart) never do."""
    rng = np.random.default_rng(3)
    q = rng.integers(0, 4, size=(40, 2)) * 1000.0
    k = rng.integers(0, 4, size=(50, 2)) * 1000.0
    v = rng.integers(-9, 10, size=(50, 2))
    want = ema(q, k, v)
    tables = draw_tables(PStableLSH(2, 1.0), 3, 3, rng)
    got = anna_tables(q, k, v, tables)
    assert np.array_equal(got.counts, 3 * want.counts)
    assert np.array_equal(got.output_exact(), want.output_exact())


def test_ema_averages_exact_matches_and_outputs_zero_without_one():
    q = np.array([[1, 2], [5, 5], [0, 0]])
    k = np.array([[1, 2], [3, 3], [1, 2]])
    v = np.array([[1], [100], [4]])
    out = ema(q, k, v).output_exact()
    assert out[0, 0] == 2 + 1 / 2 and out[1, 0] == 0 and out[2, 0] == 0


def test_no_collision_outputs_zero_not_nan():
    q, k, v = np.array([[0.0]]), np.array([[100.0]]), np.array([[7]])
    tables = draw_tables(PStableLSH(1, 0.01), 2, 2, np.random.default_rng(0))
    res = anna_tables(q, k, v, tables)
    assert res.counts[0] == 0 and res.output()[0, 0] == 0.0


def test_linear_memory_uses_less_memory_than_tables():
    q, k, v, tables = _setup(dict(N=64, m=8, ell=30, z=6, family="hyperplane"), 1)
    l1, l2 = Ledger(), Ledger()
    anna_tables(q, k, v, tables, ledger=l1)
    anna_linear_memory(q, k, v, tables, ledger=l2)
    assert l2.total("memory_words") * 5 < l1.total("memory_words")


@pytest.mark.parametrize("bad, param", [
    (dict(q=np.array([[np.nan, 0.0]])), "queries"),
    (dict(v=np.zeros((3, 1))), "values"),
    (dict(k=np.zeros((2, 3))), "keys"),
])
def test_bad_inputs_name_the_parameter(bad, param):
    args = dict(q=np.zeros((2, 2)), k=np.zeros((2, 2)), v=np.zeros((2, 1)))
    args.update(bad)
    tables = draw_tables(HyperplaneLSH(2), 1, 1, np.random.default_rng(0))
    with pytest.raises(AnnaInputError, match=f"^{param}"):
        anna_tables(args["q"], args["k"], args["v"], tables)


@pytest.mark.parametrize("ell, z, param", [(0, 1, "ell"), (1, 0, "z")])
def test_bad_table_counts(ell, z, param):
    with pytest.raises(AnnaInputError, match=f"^{param}"):
        draw_tables(HyperplaneLSH(2), ell, z, np.random.default_rng(0))


@pytest.mark.parametrize("family, r, c", [(HyperplaneLSH(6), 0.3, 3.0), (PStableLSH(6, 2.0), 0.5, 3.0)])
def test_theorys_collision_probability_matches_the_drawn_family(family, r, c):
    from attnsim.theory.lsh import hyperplane_probabilities, pstable_probabilities

    want = dict(zip((r, c * r), hyperplane_probabilities(r, c) if isinstance(family, HyperplaneLSH)
                    else pstable_probabilities(r, c, family.width)))
    rng = np.random.default_rng(0)
    x = rng.standard_normal(6)
    x /= np.linalg.norm(x)
    d = rng.standard_normal(6)
    d -= d.dot(x) * x
    d /= np.linalg.norm(d)
    for dist in (r, c * r):
        theta = 2 * np.arcsin(dist / 2)
        y = np.cos(theta) * x + np.sin(theta) * d if isinstance(family, HyperplaneLSH) else x + dist * d
        g = family.draw(rng, 4000)  # 4000 independent hash functions side by side
        assert abs(np.mean(g.codes(x[None]) == g.codes(y[None])) - want[dist]) < 0.03


def test_collision_counts_equal_the_pairwise_definition():
    """The pair-listing count equals comparing every query's code with every key's code, table by table."""
    from attnsim.sim.anna.lsh import HyperplaneLSH, code_keys, draw_tables
    from attnsim.sim.anna.tasks import clustered_sphere_points

    rng = np.random.default_rng(3)
    q, k = clustered_sphere_points(rng, 40, 6, 0.3)
    k = k[:33]
    tables = draw_tables(HyperplaneLSH(6), 7, 3, rng)
    want = np.zeros((40, 33), dtype=np.int64)
    for g in tables:
        cq, ck = code_keys(g.codes(q)), code_keys(g.codes(k))
        want += cq[:, None] == ck[None, :]
    assert np.array_equal(collision_counts(q, k, tables), want)


def _row_searches(sorted_rows: list[tuple], key: tuple) -> tuple[int, int, int]:
    """Both binary searches of one query over tuples, one comparison per halving: (lo, hi, comparisons)."""
    found, ops = [], 0
    for left in (True, False):
        lo, hi = 0, len(sorted_rows)
        while lo < hi:
            mid, ops = (lo + hi) // 2, ops + 1
            if sorted_rows[mid] < key or (not left and sorted_rows[mid] == key):
                lo = mid + 1
            else:
                hi = mid
        found.append(lo)
    return found[0], found[1], ops


@settings(deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(1, 3), st.integers(1, 4), st.integers(0, 2**16),
       st.sampled_from([np.int64, np.float64, object]))
def test_ema_searches_all_queries_at_once_as_row_by_row_searches_do(nk, nq, d, alphabet, seed, dtype):
    rng = np.random.default_rng(seed)
    k, q = rng.integers(0, alphabet, size=(nk, d)), rng.integers(0, alphabet, size=(nq, d))
    v = rng.integers(-9, 10, size=(nk, 2)).astype(dtype)
    ledger = Ledger()
    got = ema(q, k, v, ledger=ledger, tag="t")
    order = np.lexsort(k.T[::-1])
    rows = [tuple(k[j]) for j in order]
    want_ops = 0
    for i in range(nq):
        lo, hi, ops = _row_searches(rows, tuple(q[i]))
        want_ops += ops
        assert got.counts[i] == hi - lo and (got.sums[i] == v[order[lo:hi]].sum(axis=0)).all()
    assert ledger.by_tag("compare") == {"t.search": want_ops}


@settings(deadline=None)
@given(st.integers(1, 4), st.integers(1, 30), st.integers(1, 5), st.integers(0, 2**16),
       st.sampled_from([np.int64, object]))
def test_ema_heads_equal_one_ema_per_head_with_zero_rows(H, n, alphabet, seed, dtype):
    rng = np.random.default_rng(seed)
    keys, q = rng.integers(-1, alphabet, size=(H, n)), rng.integers(0, alphabet, size=n)
    rows = np.flatnonzero(rng.random(H * n) < 0.4)
    v = np.zeros((H * n, 3), dtype=np.int64)
    v[rows] = rng.integers(-9, 10, size=(len(rows), 3))
    counts, hit, sums, compares = ema_heads(q, keys, v[rows].astype(dtype), rows)
    for h in range(H):
        ledger = Ledger()
        want = ema(q.reshape(-1, 1), keys[h].reshape(-1, 1), v[h * n:(h + 1) * n].astype(dtype), ledger=ledger, tag="t")
        assert (counts[h] == want.counts).all() and ledger.by_tag("compare") == {"t.search": compares[h]}
        mine = (hit >= h * n) & (hit < (h + 1) * n)
        assert (hit[mine] - h * n == np.flatnonzero(want.counts)).all()
        assert (sums[mine] == want.sums[hit[mine] - h * n]).all()
    with pytest.raises(AnnaInputError, match="rows"):
        ema_heads(q, keys, v[:1], [H * n])


@pytest.mark.parametrize("width, z", [(1.0, 3), (1e-3, 8)])
def test_reference_counts_equal_pairwise_hash_values_however_many_levels(width, z):
    """The independent reference's counts equal comparing all z hash values pair by pair, both when a point's
    values fit one 63-bit integer (width 1, z = 3) and when they do not (width 1e-3, z = 8: ~2^14 levels each)."""
    from attnsim.verify.lsh_reference import collision_counts as reference_counts

    rng = np.random.default_rng(5)
    q, k = 10 * rng.standard_normal((9, 4)), 10 * rng.standard_normal((7, 4))
    k[:3] = q[:3]  # some pairs collide in every table
    tables = draw_tables(PStableLSH(4, width), 5, z, rng)
    want = np.zeros((9, 7), dtype=np.int64)
    for g in tables:
        a, b = np.asarray(g.a), np.asarray(g.b)
        vq, vk = np.floor((q @ a.T + b) / g.w), np.floor((k @ a.T + b) / g.w)
        want += np.array([[np.array_equal(x, y) for y in vk] for x in vq])
    assert want[:3].diagonal().tolist() == [5, 5, 5]
    assert np.array_equal(reference_counts(q, k, tables), want)
