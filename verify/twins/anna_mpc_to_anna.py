"""Broken twins of the ANNA-simulates-MPC checkers (:mod:`attnsim.verify.claims.anna_mpc_to_anna`, and of the pieces in
:mod:`attnsim.verify.claims.anna_mpc_pieces`).

Each twin patches one thing the check relies on -- the relay's delivery, its last move, the digit a
move sets, the head a bundle rides, the code's payload size, a term or the fan-in of Lemma D.2's tree sum, the
code's validity test or its rows, an input/output slot, the ledger, the head count --
and ``attnsim teeth`` expects the check to fail it.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

import numpy as np

from attnsim.sim.anna import mpc_lowrank, mpc_protocols, mpc_to_anna, relay_routing
from attnsim.sim.anna.message_code import DecodingError, MessageCode
from attnsim.sim.anna.mpc_to_anna import MPCTransformer
from attnsim.sim.anna.relay_routing import RelayPlan
from attnsim.sim.ledger import Ledger
from attnsim.verify.claims import anna_mpc_to_anna as checks
from attnsim.verify.twins import twin

MPC_CLAIMS = ("anna.thm_4_1", "anna.thm_b_10", "anna.cor_b_14")
LOWRANK_CLAIMS = ("anna.thm_4_4", "anna.cor_d_3", "anna.thm_d_1")
_MPC_PARAMS = {"protocol": "sort", "N": 64, "P": 16}
_LOWRANK_PARAMS = {"N": 256, "P": 16, "depth": 2}


@contextmanager
def _relay_misdelivers() -> Iterator[None]:
    original = MPCTransformer.__call__

    def deliver(self: MPCTransformer, outboxes: list, r: int) -> list:
        inbox = original(self, outboxes, r)
        full = [m for m, recs in enumerate(inbox) if recs]
        if len(full) > 1:
            a, b = full[0], full[-1]
            inbox[a][0], inbox[b][0] = inbox[b][0], inbox[a][0]
        return inbox

    with mock.patch.object(MPCTransformer, "__call__", deliver):
        yield


@contextmanager
def _relay_skips_last_move() -> Iterator[None]:
    original = RelayPlan.layers

    def layers(self: RelayPlan) -> Iterator[tuple[str, int, int]]:
        return iter(list(original(self))[:-1])

    with mock.patch.object(RelayPlan, "layers", layers):
        yield


@contextmanager
def _move_along_wrong_digit() -> Iterator[None]:
    def move_targets(plan: RelayPlan, units: np.ndarray, level: int) -> np.ndarray:
        dim = (level + 1) % plan.hops
        return relay_routing.with_digit(plan, units[:, relay_routing.TOK], dim,
                                        relay_routing.digits(plan, units[:, relay_routing.DEST], level))

    with mock.patch.object(mpc_to_anna, "move_targets", move_targets):
        yield


@contextmanager
def _every_bundle_in_head_one() -> Iterator[None]:
    with mock.patch.object(RelayPlan, "head_of", lambda self, x, y, dim: np.ones_like(x)):
        yield


@contextmanager
def _ledger_keeps_first_head_only() -> Iterator[None]:
    original = MPCTransformer._record_head

    def record_head(self: MPCTransformer, head: int, width: int) -> str:
        if head == 0:
            return original(self, head, width)
        kept, self.ledger = self.ledger, Ledger()
        try:
            return original(self, head, width)
        finally:
            self.ledger = kept

    with mock.patch.object(MPCTransformer, "_record_head", record_head):
        yield


@contextmanager
def _one_head_fewer() -> Iterator[None]:
    original = checks._heads
    with mock.patch.object(checks, "_heads", lambda *a: original(*a) - 1):
        yield


@contextmanager
def _readout_shifted() -> Iterator[None]:
    original = MPCTransformer.readout

    def readout(self: MPCTransformer, outputs: dict) -> list:
        got = original(self, outputs)
        return got[1:] + got[:1]

    with mock.patch.object(MPCTransformer, "readout", readout):
        yield


for _claim in MPC_CLAIMS:
    twin(_claim, "relay_misdelivers", "each round the relay swaps the first messages of the first and the last "
         "token that receive any", params=_MPC_PARAMS, kind="construction")(_relay_misdelivers)
    twin(_claim, "ledger_keeps_first_head_only", "the ledger records only head 0 of each relay layer",
         params=_MPC_PARAMS, kind="ledger")(_ledger_keeps_first_head_only)
    twin(_claim, "one_head_fewer", "the relay gets ceiling(N^rho) - 1 heads, one below the exact formula",
         params=_MPC_PARAMS, kind="construction")(_one_head_fewer)
    twin(_claim, "readout_shifted", "the output layer hands token i the output of token i + 1",
         params=_MPC_PARAMS, kind="construction")(_readout_shifted)
    twin(_claim, "relay_skips_last_move", "the relay drops a round's last move, so words end a digit short of home",
         params=_MPC_PARAMS, kind="construction")(_relay_skips_last_move)
    twin(_claim, "move_along_wrong_digit", "a move sets the next digit to the destination's digit of this level",
         params=_MPC_PARAMS, kind="construction")(_move_along_wrong_digit)
    twin(_claim, "every_bundle_in_head_one", "every bundle rides head 1, so receivers average several senders",
         params=_MPC_PARAMS, kind="construction")(_every_bundle_in_head_one)


@contextmanager
def _tree_drops_last_part() -> Iterator[None]:
    def sum_parts(mem: list[tuple]) -> np.ndarray:
        parts = [np.array(rec[1:]) for rec in mem if rec[0] == "part"]
        return sum(parts[1:-1], parts[0])

    with mock.patch.object(mpc_lowrank, "_sum_parts", sum_parts):
        yield


@contextmanager
def _tree_fan_in_4() -> Iterator[None]:
    with mock.patch.object(mpc_protocols, "tree_fan", lambda memory, held, part_words: 4):
        yield


_FAN_PARAMS = {"N": 256, "P": 32, "eps": 0.875, "depth": 1}  # s = 128: Lemma D.2's fan-in is 12, two levels for 32


for _claim in LOWRANK_CLAIMS:
    twin(_claim, "tree_fan_in_4", "Lemma D.2's tree keeps fan-in 4 whatever the memory, so its depth grows like "
         "log P where the lemma's floor(s/(r m))-ary tree stays O(1/eps) levels", params=_FAN_PARAMS,
         kind="construction")(_tree_fan_in_4)
    twin(_claim, "tree_drops_last_part", "Lemma D.2's tree sum drops the last child's partial sum at every node",
         params=_LOWRANK_PARAMS, kind="construction")(_tree_drops_last_part)
    twin(_claim, "ledger_keeps_first_head_only", "the ledger records only head 0 of each relay layer",
         params=_LOWRANK_PARAMS, kind="ledger")(_ledger_keeps_first_head_only)


@contextmanager
def _no_validity_test() -> Iterator[None]:
    def decode_cells(self: MessageCode, cells: dict, count: int) -> dict:
        found: dict[int, list[int]] = {}
        for block in cells.values():
            c = int(block[0])
            if c:
                found.setdefault(int(block[1]) // c, [int(x) // c for x in block[3:]] + [0] * (self.block - len(block)))
        if count and len(found) != count:
            raise DecodingError(f"alpha: decoded {len(found)} of {count}")
        return found

    with mock.patch.object(MessageCode, "decode_cells", decode_cells):
        yield


@contextmanager
def _one_row() -> Iterator[None]:
    original = MessageCode.design.__func__

    def design(cls: type, senders: int, alpha: int, delta: int) -> MessageCode:
        return dataclasses.replace(original(cls, senders, alpha, delta), rows=1)

    with mock.patch.object(MessageCode, "design", classmethod(design)):
        yield


_CODE_PARAMS = {"q": 500, "alpha": 3, "trials": 40}
twin("anna.lemma_b_4", "no_validity_test", "a bucket is read as one message whatever its S1^2 = c S2 test says",
     params=_CODE_PARAMS, kind="construction")(_no_validity_test)
twin("anna.lemma_b_4", "one_row", "the code keeps one row of buckets, too few to separate alpha messages",
     params=_CODE_PARAMS, kind="construction")(_one_row)


@contextmanager
def _input_slots_rotated() -> Iterator[None]:
    original = MPCTransformer.place

    def place(self: MPCTransformer, placement: dict) -> dict:
        got = original(self, placement)
        return {m: recs[1:] + recs[:1] for m, recs in got.items()}

    with mock.patch.object(MPCTransformer, "place", place):
        yield


@contextmanager
def _ledger_doubles_head() -> Iterator[None]:
    original = MPCTransformer._layer

    def layer(self: MPCTransformer, keys: np.ndarray, values: Any, **kw: Any) -> Any:
        got = original(self, keys, values, **kw)
        self.ledger.record("anna_head", f"{self.tag}.layer{self.layers}.head1", round=self.layers,
                           shape=(self.tokens, 1, 1))
        return got

    with mock.patch.object(MPCTransformer, "_layer", layer):
        yield


_IO_PARAMS = {"N": 50, "block": 7}
twin("anna.lemma_b_5", "input_slots_rotated", "each machine's input records arrive one slot late (the last first)",
     params=_IO_PARAMS, kind="construction")(_input_slots_rotated)
twin("anna.lemma_b_5", "ledger_doubles_head", "the ledger writes a second head for the input layer",
     params=_IO_PARAMS, kind="ledger")(_ledger_doubles_head)
twin("anna.lemma_b_6", "readout_shifted", "the output layer hands token i the output of token i + 1",
     params=_IO_PARAMS, kind="construction")(_readout_shifted)
twin("anna.lemma_b_6", "ledger_doubles_head", "the ledger writes a second head for the output layer",
     params=_IO_PARAMS, kind="ledger")(_ledger_doubles_head)


@contextmanager
def _layout_constant_lowered() -> Iterator[None]:
    """The declared layout's constant 3 lowered to 1 in both places: the construction designs its code for
    payloads of 1 + capacity numbers (not 1 + 3 capacity) and paper_refs holds the width to B + 4 (not 3B + 4).
    Only the arrays that execute, three numbers per unit, can show it."""
    from attnsim.verify.twins._kit import upper_replaced

    original = MessageCode.design

    def design(tokens: int, alpha: int, delta: int) -> MessageCode:
        return original(tokens, alpha, 1 + (delta - 1) // mpc_to_anna.UNIT_NUMBERS)

    with mock.patch.object(MessageCode, "design", staticmethod(design)), \
            upper_replaced("anna.thm_4_1", "embedding_dim", "B + 4"):
        yield


twin("anna.thm_4_1", "layout_constant_lowered", "the declared width's constant 3 lowered to 1 in both the "
     "construction's code and paper_refs (3B + 4 -> B + 4)", kind="construction", params=_MPC_PARAMS)(
    _layout_constant_lowered)
