"""Broken twins of anna.lemma_b_12 (checker in verify/claims/anna_relay.py)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

from attnsim.sim.anna import mpc_to_anna
from attnsim.sim.anna.relay_routing import RelayPlan
from attnsim.sim.ledger import Ledger
from attnsim.verify.twins import twin
from attnsim.verify.twins._kit import formula_shifted

_POINT = {"N": 256, "P": 16, "eps": 0.875, "k": 4}


class _BaseTwoPlan:
    """RelayPlan whose design ignores the capacity: base 2 always, so D = ceiling(log2 P) digits."""

    @staticmethod
    def design(machines: int, base: int, memory: int) -> RelayPlan:
        return RelayPlan.design(machines, 2, memory)


@twin("anna.lemma_b_12", "relay_base_two", "the relay routes along base-2 digits whatever the capacity k, "
      "spending ceiling(log2 P)^2 relay rounds a round", params=_POINT, kind="construction")
@contextmanager
def _relay_base_two() -> Iterator[None]:
    with mock.patch.object(mpc_to_anna, "RelayPlan", _BaseTwoPlan):
        yield


@twin("anna.lemma_b_12", "relay_layer_unrecorded", "the ledger loses the heads of the first relay layer",
      params=_POINT, kind="ledger")
@contextmanager
def _relay_layer_unrecorded() -> Iterator[None]:
    real = Ledger.record

    def record(self: Ledger, kind: str, tag: str, *args: Any, **kw: Any) -> Any:
        if kind == "anna_head" and kw.get("round") == 1:
            return None
        return real(self, kind, tag, *args, **kw)

    with mock.patch.object(Ledger, "record", record):
        yield


@twin("anna.lemma_b_12", "rounds_formula_plus_one", "the exact count R D^2 is read one too high", params=_POINT,
      kind="formula")
@contextmanager
def _rounds_formula() -> Iterator[None]:
    with formula_shifted("anna.lemma_b_12", "rounds"):
        yield
