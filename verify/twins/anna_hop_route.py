"""Broken twins of Thm 5.4 / 5.6 by the paper's route (checkers in verify/claims/anna_hop_route.py).

One twin breaks the protocol (the radix sort stops a pass early, so predecessors are read in the
wrong order), the others the transformer (a round's last relay move dropped, one head fewer than
the formula); the check must fail each.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

from attnsim.sim.anna import hop_route
from attnsim.verify.twins import twin
from attnsim.verify.twins.anna_mpc_to_anna import _one_head_fewer, _relay_skips_last_move

_PARAMS = {"N": 64, "eps": 0.84, "alphabet": 3}


@contextmanager
def _sort_pass_short() -> Iterator[None]:
    original = hop_route.radix_sort

    def radix_sort(mpc: Any, leaves: range, key: Any, *, key_bound: int, base: int, **kw: Any) -> int:
        return original(mpc, leaves, key, key_bound=max(1, key_bound // base), base=base, **kw)

    with mock.patch.object(hop_route, "radix_sort", radix_sort):
        yield


for _claim, _params in (("anna.thm_5_4", _PARAMS), ("anna.thm_5_6", {**_PARAMS, "k": 5})):
    twin(_claim, "sort_pass_short", "the radix sort runs a pass too few: items leave (letter, position) order",
         params=_params, kind="construction")(_sort_pass_short)
    twin(_claim, "relay_skips_last_move", "the relay drops a round's last move, so words end a digit short of home",
         params=_params, kind="construction")(_relay_skips_last_move)
    twin(_claim, "one_head_fewer", "the relay gets ceiling(N^rho) - 1 heads, one below the exact formula",
         params=_params, kind="construction")(_one_head_fewer)
