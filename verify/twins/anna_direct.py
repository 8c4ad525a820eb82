"""Broken twins of anna.cor_b_9 (checker in verify/claims/anna_direct.py)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

from attnsim.sim.anna import mpc_direct
from attnsim.sim.anna.lsh import PStableLSH
from attnsim.sim.anna.message_code import MessageCode
from attnsim.sim.anna.transformer import LSHAttention
from attnsim.sim.ledger import Ledger
from attnsim.verify.twins import twin
from attnsim.verify.twins._kit import formula_shifted

_KHOP = {"protocol": "khop", "N": 128, "P": 128}  # two machines address one receiver in one head


class _OneBucketCode:
    """MessageCode whose design ignores alpha: one bucket, so averaged messages cannot be told apart."""

    @staticmethod
    def design(senders: int, alpha: int, delta: int) -> MessageCode:
        return MessageCode.design(senders, 1, delta)


@twin("anna.cor_b_9", "code_alpha_one", "Lemma B.4's code is designed for alpha = 1 though a head averages two "
      "messages for one receiver", params=_KHOP, kind="construction")
@contextmanager
def _code_alpha_one() -> Iterator[None]:
    with mock.patch.object(mpc_direct, "MessageCode", _OneBucketCode):
        yield


@twin("anna.cor_b_9", "wide_buckets", "the routing heads' p-stable buckets are 50 ids wide, so a receiver also "
      "collects messages addressed to other ids", params=_KHOP, kind="construction")
@contextmanager
def _wide_buckets() -> Iterator[None]:
    wide = LSHAttention.draw(PStableLSH(1, 50.0), 1, 4, 0)
    real = mpc_direct.DirectTransformer._layer

    def layer(self: mpc_direct.DirectTransformer, keys: Any, values: Any, **kw: Any) -> Any:
        if kw.get("width") != self.code.width:
            return real(self, keys, values, **kw)
        narrow, self.mechanism = self.mechanism, wide
        try:
            return real(self, keys, values, **kw)
        finally:
            self.mechanism = narrow

    with mock.patch.object(mpc_direct.DirectTransformer, "_layer", layer):
        yield


@twin("anna.cor_b_9", "routing_layer_unrecorded", "the ledger loses the heads of the first routing layer",
      params=_KHOP, kind="ledger")
@contextmanager
def _routing_layer_unrecorded() -> Iterator[None]:
    real = Ledger.record

    def record(self: Ledger, kind: str, tag: str, *args: Any, **kw: Any) -> Any:
        if kind == "anna_head" and kw.get("round") == 1:
            return None
        return real(self, kind, tag, *args, **kw)

    with mock.patch.object(Ledger, "record", record):
        yield


@twin("anna.cor_b_9", "width_formula_plus_one", "the exact width T B (s + 4) is read one too high", params=_KHOP,
      kind="formula")
@contextmanager
def _width_formula() -> Iterator[None]:
    with formula_shifted("anna.cor_b_9", "embedding_dim"):
        yield
