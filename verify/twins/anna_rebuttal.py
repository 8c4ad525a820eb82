"""Broken twins of the ANNA rebuttal checkers (anna.rebuttal_hash_tables, anna.rebuttal_linear_memory in
:mod:`attnsim.verify.claims.rebuttal_memory`; kept apart from that module's Two Heads twins).

They break the proof's table count, the concatenation length of the empirical runs, the count formula
of paper_refs, one round of Algorithm 2, and the ledger's memory entry.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Any, Iterator

from attnsim.verify.twins import twin
from attnsim.verify.twins._kit import formula_shifted, ledger_scaled, wrapped

_R = "attnsim.verify.claims.rebuttal_memory"
_TABLES = {"table": "reviewer", "emp_N": 16, "seeds": 10}
_LINMEM = {"N": 256, "points": 3}


@twin("anna.rebuttal_hash_tables", "tables_formula_plus_one", "the exact table count is read one too high",
      params=_TABLES, kind="formula")
@contextmanager
def _tables_formula() -> Iterator[None]:
    with formula_shifted("anna.rebuttal_hash_tables", "tables"):
        yield


@twin("anna.rebuttal_hash_tables", "one_table_short", "the proof's ell is computed one table short",
      params=_TABLES, kind="formula")
@contextmanager
def _tables_short() -> Iterator[None]:
    with wrapped(f"{_R}.ideal_parameters", result=lambda pp: dataclasses.replace(pp, ell=pp.ell - 1)):
        yield


@twin("anna.rebuttal_hash_tables", "empirical_runs_one_hash", "the empirical eta runs hash with z = 1, so far keys "
      "collide", params=_TABLES, kind="construction")
@contextmanager
def _tables_short_codes() -> Iterator[None]:
    with wrapped("attnsim.verify.claims.anna_lsh.draw_tables", args=lambda f, ell, z, rng: ((f, ell, 1, rng), {})):
        yield


def _skip_last_table(q: Any, k: Any, v: Any, tables: Any, **kw: Any) -> tuple[tuple, dict]:
    return (q, k, v, tables[:-1]), kw


@twin("anna.rebuttal_linear_memory", "last_round_skipped", "Algorithm 2 skips the last of its ell rounds",
      params=_LINMEM, kind="construction")
@contextmanager
def _linmem_round() -> Iterator[None]:
    with wrapped(f"{_R}.anna_linear_memory", args=_skip_last_table):
        yield


@twin("anna.rebuttal_linear_memory", "table_kept_per_round", "the ledger charges Algorithm 2 for a table per "
      "round (words grow like N^1.5)", params=_LINMEM, kind="ledger")
@contextmanager
def _linmem_ledger() -> Iterator[None]:
    with ledger_scaled("memory_words", lambda a: a * max(1, int(a ** 0.5)), tag_prefix="alg2"):
        yield
