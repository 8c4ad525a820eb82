"""Broken twins of Thm 5.4 / 5.6 by the paper's route (checkers in verify/claims/anna_hop_route.py).

Two twins break the protocol's letter sort (it ranks a machine's items of equal letter in reverse, so
equal letters leave position order; it makes one pass fewer than the alphabet needs), one the exact
layer formula (it counts the passes of a sort of the whole key letter * N + position), the others the
transformer (a round's last relay move dropped, one head fewer than the formula); the check must fail
each.
"""

from __future__ import annotations

import dataclasses
from contextlib import AbstractContextManager, contextmanager
from typing import Callable, Iterator
from unittest import mock

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna import khop, mpc_radix
from attnsim.sim.anna.mpc_tree import levels
from attnsim.verify.twins import twin
from attnsim.verify.twins.anna_mpc_small import radix_ranks_reversed
from attnsim.verify.twins.anna_mpc_to_anna import _one_head_fewer, _relay_skips_last_move

_PARAMS = {"N": 64, "eps": 0.84, "sigma": 0.25, "sort": "letter"}  # 3 letters, s = 32, f = 2: two letter passes
_SPLIT = {"N": 2048, "eps": 0.91}  # Lemma C.2's splitter sort at its smallest memory (s = 1024 < N)


@contextmanager
def splitter_positions_reversed() -> Iterator[None]:
    """Lemma F.3's splitter sort orders the items of one letter among the first 1024 positions by decreasing
    position (every pointer still lands on a position of the string, so the referee has nothing to refuse)."""
    real = khop.splitter_sort

    def by_letter(mpc, machines, key, **kw):
        N = sum(1 for m in machines for r in mpc.memory[m] if r[0] == "item")  # an item's key is letter * N + position
        return real(mpc, machines, key=lambda r: (r[1] // N, -(r[1] % N) if r[1] % N < 1024 else r[1] % N), **kw)

    with mock.patch.object(khop, "splitter_sort", by_letter):
        yield


@contextmanager
def _letter_pass_short() -> Iterator[None]:
    with mock.patch.object(mpc_radix, "radix_passes", lambda bound, base: max(1, levels(bound, base) - 1)):
        yield


def _whole_key_passes(claim_id: str) -> Callable[[], AbstractContextManager[None]]:
    @contextmanager
    def broken() -> Iterator[None]:
        claim = get_claim(claim_id)
        wrong = dataclasses.replace(claim, definitions={**claim.definitions,
                                                        "passes": "ceiling(log(alphabet*N)/log(f))"})
        with mock.patch("attnsim.verify.check.get_claim", lambda cid: wrong if cid == claim_id else get_claim(cid)):
            yield
    return broken


for _claim, _params in (("anna.thm_5_4", _PARAMS), ("anna.thm_5_6", {**_PARAMS, "k": 5})):
    twin(_claim, "letter_sort_unstable", "the letter sort ranks a machine's items of equal letter in reverse: "
         "equal letters leave position order", params=_params, kind="construction")(radix_ranks_reversed)
    twin(_claim, "letter_pass_short", "the letter sort makes one radix pass fewer than 3 letters need in base 2",
         params=_params, kind="construction")(_letter_pass_short)
    twin(_claim, "whole_key_passes", "the exact layer formula counts the passes of a sort of the whole key "
         "letter * N + position, not of the letter alone", params=_params, kind="formula")(_whole_key_passes(_claim))
    twin(_claim, "relay_skips_last_move", "the relay drops a round's last move, so words end a digit short of home",
         params=_params, kind="construction")(_relay_skips_last_move)
    twin(_claim, "one_head_fewer", "the relay gets ceiling(N^rho) - 1 heads, one below the exact formula",
         params=_params, kind="construction")(_one_head_fewer)
    twin(_claim, "sort_positions_reversed", "Lemma F.3's splitter sort orders the items of one letter in the "
         "first half of the string by decreasing position",
         params={**_SPLIT, **({"k": 5} if _claim.endswith("6") else {})}, kind="construction")(
        splitter_positions_reversed)
