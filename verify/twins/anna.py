"""Broken twins of the Algorithm 1 checker anna.alg_1 (verify/claims/anna.py), run with the cross-polytope family."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator
from unittest import mock

from attnsim.sim.anna import attention
from attnsim.sim.ledger import Ledger
from attnsim.verify.claims import anna as anna_claims
from attnsim.verify.twins import twin

_CP = {"N": 16, "runs": 3, "lsh": "cross-polytope"}


@twin("anna.alg_1", "last_table_dropped", "Algorithm 1 answers queries from all tables but the last", params=_CP)
@contextmanager
def _last_table_dropped() -> Iterator[None]:
    real = attention.anna_tables

    def short(q, k, v, hashes, **kw):
        return real(q, k, v, hashes[:-1] if len(hashes) > 1 else hashes, **kw)

    with mock.patch.object(anna_claims, "anna_tables", short):
        yield


@twin("anna.alg_1", "hash_entries_doubled", "the ledger writes every batch of hash evaluations twice", params=_CP)
@contextmanager
def _hash_entries_doubled() -> Iterator[None]:
    real = Ledger.record

    def record(self, kind, tag, *args, **kw):
        if kind == "hash":
            real(self, kind, tag, *args, **kw)
        return real(self, kind, tag, *args, **kw)

    with mock.patch.object(Ledger, "record", record):
        yield
