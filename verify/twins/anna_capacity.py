"""Broken twins of anna.lemma_b_13 (checker in verify/claims/anna_capacity.py)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

from attnsim.sim.anna import mpc_capacity
from attnsim.sim.anna.message_code import MessageCode
from attnsim.sim.ledger import Ledger
from attnsim.verify.twins import twin
from attnsim.verify.twins._kit import formula_shifted

_POINT = {"N": 256, "P": 32, "fan": 3}  # rotated outboxes: up to 3 senders share a head for one receiver


class _AlphaOneCode:
    """MessageCode whose design ignores alpha: one bucket, so averaged bundles cannot be told apart."""

    @staticmethod
    def design(senders: int, alpha: int, delta: int) -> MessageCode:
        return MessageCode.design(senders, 1, delta)


@twin("anna.lemma_b_13", "code_alpha_one", "Lemma B.4's code is designed for alpha = 1 though a head averages "
      "bundles of up to k senders for one receiver", params=_POINT, kind="construction")
@contextmanager
def _code_alpha_one() -> Iterator[None]:
    with mock.patch.object(mpc_capacity, "MessageCode", _AlphaOneCode):
        yield


@twin("anna.lemma_b_13", "routes_with_s_heads", "the routing layers keep Thm B.2's s heads instead of the capacity's k",
      params=_POINT, kind="construction")
@contextmanager
def _routes_with_s_heads() -> Iterator[None]:
    real = mpc_capacity.CapacityTransformer.__init__

    def init(self: mpc_capacity.CapacityTransformer, **kw: Any) -> None:
        real(self, **kw)
        self.heads = kw["memory"]

    with mock.patch.object(mpc_capacity.CapacityTransformer, "__init__", init):
        yield


@twin("anna.lemma_b_13", "bundle_reversed", "a bundle of several records arrives with its records in reverse order",
      params=_POINT, kind="construction")
@contextmanager
def _bundle_reversed() -> Iterator[None]:
    real = mpc_capacity.CapacityTransformer.decode_item

    def decode(self: mpc_capacity.CapacityTransformer, payload: list[int]) -> list[Any]:
        return real(self, payload)[::-1]

    with mock.patch.object(mpc_capacity.CapacityTransformer, "decode_item", decode):
        yield


@twin("anna.lemma_b_13", "routing_layer_unrecorded", "the ledger loses the heads of the first routing layer",
      params=_POINT, kind="ledger")
@contextmanager
def _routing_layer_unrecorded() -> Iterator[None]:
    real = Ledger.record

    def record(self: Ledger, kind: str, tag: str, *args: Any, **kw: Any) -> Any:
        if kind == "anna_head" and kw.get("round") == 1:
            return None
        return real(self, kind, tag, *args, **kw)

    with mock.patch.object(Ledger, "record", record):
        yield


@twin("anna.lemma_b_13", "width_formula_plus_one", "the exact width T B (2 s + 4) is read one too high",
      params=_POINT, kind="formula")
@contextmanager
def _width_formula() -> Iterator[None]:
    with formula_shifted("anna.lemma_b_13", "embedding_dim"):
        yield
