"""Broken twins of the ANNA checkers (:mod:`attnsim.verify.claims.anna`, :mod:`attnsim.verify.claims.anna_lsh`).

Each twin breaks one thing a check relies on: a value row or a hash table of Algorithms 1 and 2, the
concatenation length z that keeps far keys out of a bucket (Thm 3.4 / A.1, App. A), the hop count of
k-hop (Thm F.4), a value row of the low-rank product
(Lemma D.2), a layer of the butterfly (Prop. E.3), a ledger entry, or a count formula of paper_refs;
Algorithm 1 is also broken with the cross-polytope family, once with the asymptotic collision
probabilities in place of the measured ones.
Parameters are small so every twin runs in seconds.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

import numpy as np

from attnsim.sim.anna import attention, khop, mpc_radix
from attnsim.sim.anna.lsh import code_keys as _code_keys
from attnsim.sim.anna.mpc_tree import levels
from attnsim.sim.ledger import Ledger
from attnsim.verify.claims import anna_lsh as lsh_claims
from attnsim.verify.lsh_sensitivity import sensitivity
from attnsim.verify.twins import twin
from attnsim.verify.twins._kit import formula_shifted, ledger_scaled, wrapped
from attnsim.verify.twins.anna_hop_route import splitter_positions_reversed
from attnsim.verify.twins.anna_mpc_small import radix_ranks_reversed
from attnsim.verify.twins.breaks import replaced

_C = "attnsim.verify.claims.anna"
_L = "attnsim.verify.claims.anna_lsh"
_LSH = {"N": 32, "seeds": 10}


def _drop_last_value(q: Any, k: Any, v: Any, tables: Any, **kw: Any) -> tuple[tuple, dict]:
    v = np.array(v, copy=True)
    v[-1] = 0
    return (q, k, v, tables), kw


def _skip_first_table(q: Any, k: Any, v: Any, tables: Any, **kw: Any) -> tuple[tuple, dict]:
    return (q, k, v, tables[1:]), kw


def _short_codes(family: Any, ell: int, z: int, rng: Any) -> tuple[tuple, dict]:
    return (family, ell, 1, rng), {}


# ---------------------------------------------------------------- Algorithm 1 (Thm 3.4 / A.1)

@twin("anna.alg_1", "value_row_dropped", "Algorithm 1 builds its tables without the last key's value row",
      params=_LSH, kind="construction")
@contextmanager
def _alg1_value_row() -> Iterator[None]:
    with wrapped(f"{_L}.anna_tables", args=_drop_last_value):
        yield


@twin("anna.alg_1", "hash_ledger_doubled", "the ledger counts the first table's key hashes twice", params=_LSH,
      kind="ledger")
@contextmanager
def _alg1_ledger() -> Iterator[None]:
    with ledger_scaled("hash", lambda a: 2 * a, tag_prefix="alg1.hash_keys", first_only=True):
        yield


@twin("anna.alg_1", "one_hash_per_table", "tables hash with z = 1: far keys share buckets, eta_hat is far above "
      "the proof's eta", params=_LSH, kind="construction")
@contextmanager
def _alg1_short_codes() -> Iterator[None]:
    with wrapped(f"{_L}.draw_tables", args=_short_codes):
        yield


# ---------------------------------------------------------------- Algorithm 2

@twin("anna.alg_2", "first_round_skipped", "Algorithm 2 skips the first of its ell rounds", params=_LSH,
      kind="construction")
@contextmanager
def _alg2_round() -> Iterator[None]:
    with wrapped(f"{_L}.anna_linear_memory", args=_skip_first_table):
        yield


@twin("anna.alg_2", "hash_count_formula_plus_one", "the exact count 2 N ell z is read one too high", params=_LSH,
      kind="formula")
@contextmanager
def _alg2_formula() -> Iterator[None]:
    with formula_shifted("anna.alg_2", "hash_evaluations"):
        yield


@twin("anna.alg_2", "one_hash_per_table", "rounds hash with z = 1: far keys share buckets, eta_hat above the "
      "proof's eta", params=_LSH, kind="construction")
@contextmanager
def _alg2_short_codes() -> Iterator[None]:
    with wrapped(f"{_L}.draw_tables", args=_short_codes):
        yield


def _shorter_codes(family: Any, ell: int, z: int, rng: Any) -> tuple[tuple, dict]:
    """At most half the proof's z per table and more tables, with ell * z (the hash count) kept."""
    zz = max(d for d in range(1, z) if (ell * z) % d == 0 and 2 * d <= z) if z > 1 else z
    return (family, ell * z // zz, zz, rng), {}


def _short_key(codes: Any, levels: Any = None) -> Any:
    return _code_keys(np.asarray(codes)[:, :-1], None if levels is None else levels[:-1])


for _claim in ("anna.alg_1", "anna.alg_2"):
    twin(_claim, "lookup_key_short", "buckets are looked up by the first z - 1 of the z hash values (a loosened "
         "key): far keys share buckets", params=_LSH, kind="construction")(lambda: replaced(_code_keys, _short_key))


twin("anna.alg_1", "codes_shorter_more_tables", "shorter codes in more tables (the same 2 N ell z hash evaluations): "
     "far keys collide often, so only the failure rate against the proof's eta can see it", params=_LSH,
     kind="construction")(lambda: wrapped(f"{_L}.draw_tables", args=_shorter_codes))


# ---------------------------------------------------------------- Theorem 5.2: Match2

def _last_answer_shifted(model: Any) -> Any:
    def broken(x: Any, **kw: Any) -> Any:
        out = np.array(model(x, **kw), copy=True)
        out[-1] = out[-2] if len(out) > 1 and out[-2] != out[-1] else 1 - out[-1]
        return out
    return broken


@twin("anna.thm_5_2", "last_answer_off_by_one", "the last position answers with its neighbour's label",
      params={"examples": 20, "mechanism": "ema"}, kind="construction")
@contextmanager
def _match2_shift() -> Iterator[None]:
    with wrapped(f"{_C}.match2_transformer", result=_last_answer_shifted):
        yield


@twin("anna.thm_5_2", "layers_formula_plus_one", "the exact layer count 1 is read as 2",
      params={"examples": 20, "mechanism": "ema"}, kind="formula")
@contextmanager
def _match2_formula() -> Iterator[None]:
    with formula_shifted("anna.thm_5_2", "layers"):
        yield


# ---------------------------------------------------------------- Theorem F.4: k-hop

_KHOP = {"N": 256, "strings": 2, "sort": "letter", "eps1": 0.5, "s_scale": 6.0}  # s = 96 < N: the letter sort


twin("anna.khop", "sort_positions_reversed", "Lemma F.3's splitter sort orders the items of one letter in the "
     "first half of the string by decreasing position", params={"N": 2048, "strings": 1},
     kind="construction")(splitter_positions_reversed)


@twin("anna.khop", "one_hop_short", "pointer doubling answers k - 1 hops", params=_KHOP, kind="construction")
@contextmanager
def _khop_short() -> Iterator[None]:
    with wrapped(f"{_C}.khop_mpc", args=lambda text, k, **kw: ((text, max(1, k - 1)), kw)):
        yield


@twin("anna.khop", "round_dropped", "the ledger drops the entries of round 0", params=_KHOP, kind="ledger")
@contextmanager
def _khop_ledger() -> Iterator[None]:
    original = Ledger.record

    def record(self: Ledger, kind: str, tag: str, **kw: Any) -> Any:
        if kind == "mpc_round" and kw.get("round", 0) == 0:
            return None
        return original(self, kind, tag, **kw)

    with mock.patch.object(Ledger, "record", record):
        yield


@twin("anna.khop", "machine_limit_quadrupled", "the MPC machine admits 4 s words a round and the protocol uses them",
      params=_KHOP, kind="oracle-limit")
@contextmanager
def _khop_limit() -> Iterator[None]:
    with wrapped(f"{_C}.khop_mpc", args=lambda text, k, memory, **kw: ((text, k), {**kw, "memory": 4 * memory})):
        yield


twin("anna.khop", "letter_sort_unstable", "the sort by letter ranks a machine's items of equal letter in reverse, "
     "so equal letters lose their position order", params=_KHOP, kind="construction")(radix_ranks_reversed)


@twin("anna.khop", "letter_pass_short", "the sort by letter makes one radix pass fewer than 32 letters need "
      "in base f = 3", params={**_KHOP, "alphabet": 32}, kind="construction")
@contextmanager
def _khop_pass_short() -> Iterator[None]:
    with mock.patch.object(mpc_radix, "radix_passes", lambda bound, base: max(1, levels(bound, base) - 1)):
        yield


@twin("anna.khop", "tokens_per_machine_halved", "the protocol packs s/32 tokens per machine instead of s/16, "
      "using twice the machines the formula counts", params=_KHOP, kind="construction")
@contextmanager
def _khop_sparse() -> Iterator[None]:
    with mock.patch.object(khop, "TOKEN_WORDS", 2 * khop.TOKEN_WORDS):
        yield


@twin("anna.khop", "rounds_formula_plus_one", "the exact round count is read one too high", params=_KHOP,
      kind="formula")
@contextmanager
def _khop_formula() -> Iterator[None]:
    with formula_shifted("anna.khop", "rounds"):
        yield


# ---------------------------------------------------------------- Theorem B.2: EMA routing

def _first_value_doubled(qp: Any, kp: Any, v: Any, **kw: Any) -> tuple[tuple, dict]:
    v = np.array(v, copy=True)
    v[0] = 2 * v[0]
    return (qp, kp, v), kw


@twin("anna.lemma_d_2", "value_row_doubled", "the tree sum adds the first value row twice", params={"N": 100},
      kind="construction")
@contextmanager
def _lowrank_doubled() -> Iterator[None]:
    with wrapped(f"{_C}.lowrank_mpc", args=_first_value_doubled):
        yield


@twin("anna.lemma_d_2", "machines_formula_plus_one", "the exact machine count T is read one too high",
      params={"N": 100}, kind="formula")
@contextmanager
def _lowrank_formula() -> Iterator[None]:
    with formula_shifted("anna.lemma_d_2", "machines"):
        yield


@twin("anna.lemma_d_2", "machine_limit_quadrupled", "the MPC machine admits 4 s words a round and the tree uses "
      "them", params={"N": 100}, kind="oracle-limit")
@contextmanager
def _lowrank_limit() -> Iterator[None]:
    with wrapped(f"{_C}.lowrank_mpc", args=lambda qp, kp, v, memory, **kw: ((qp, kp, v), {**kw, "memory": 4 * memory})):
        yield


# ---------------------------------------------------------------- Proposition E.3: Reformer vs SUM

def _last_layer_repeats(patterns: list) -> list:
    return patterns[:-1] + [patterns[-2]] if len(patterns) > 1 else patterns


@twin("anna.prop_e_3", "butterfly_layer_repeated", "the last butterfly layer chunks the same digit as the one "
      "before it", params={"L": 3}, kind="construction")
@contextmanager
def _butterfly_short() -> Iterator[None]:
    with wrapped(f"{_C}.butterfly_patterns", result=_last_layer_repeats):
        yield


def _sum_drops_last(model: Any) -> Any:
    def broken(x: Any, **kw: Any) -> Any:
        x = np.array(x, copy=True)
        x[-1] = 0
        return model(x, **kw)
    return broken


@twin("anna.prop_e_3", "sum_drops_last_token", "the one-layer ANNA SUM leaves out the last token", params={"L": 3},
      kind="construction")
@contextmanager
def _sum_short() -> Iterator[None]:
    with wrapped(f"{_C}.sum_transformer", result=_sum_drops_last):
        yield


# --- anna.alg_1 with the cross-polytope family (--lsh cross-polytope)

_CP = {"N": 16, "seeds": 3, "lsh": "cross-polytope"}


@twin("anna.alg_1", "cross_polytope_last_table_dropped",
      "with cross-polytope hashes, Algorithm 1 answers queries from all tables but the last", params=_CP,
      kind="construction")
@contextmanager
def _cp_last_table_dropped() -> Iterator[None]:
    real = attention.anna_tables

    def short(q, k, v, hashes, **kw):
        return real(q, k, v, hashes[:-1] if len(hashes) > 1 else hashes, **kw)

    with mock.patch.object(lsh_claims, "anna_tables", short):
        yield


def _leading_term(family: str, radius: float, approx: float, dim: int) -> Any:
    """(p1, p2) from Andoni et al.'s leading term dim^(-u^2/(4 - u^2)): far too optimistic at small dim."""
    real = sensitivity(family, radius, approx, dim)
    p1, p2 = (dim ** (-u * u / (4 - u * u)) for u in (radius, radius * approx))
    return dataclasses.replace(real, p1=p1, p2=p2, how="leading term of Andoni et al.'s Thm 1")


@twin("anna.alg_1", "cross_polytope_leading_term_rho",
      "the cross-polytope family's p1, p2 (and so rho, z, ell) from the asymptotic leading term: ell is too small, "
      "near keys miss every table and eta_hat lies above the proof's eta", params={"lsh": "cross-polytope"},
      kind="formula")
@contextmanager
def _cp_leading_term() -> Iterator[None]:
    with mock.patch.object(lsh_claims, "sensitivity", _leading_term):
        yield
