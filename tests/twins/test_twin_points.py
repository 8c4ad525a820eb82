"""Every twin's point and every grid point is a point its claim accepts: a parameter renamed in a claim but not
in a twin (or a grid) is refused here, without running anything, instead of failing a report's teeth pass."""

from __future__ import annotations

import pytest

from attnsim.verify.registry import all_checkers, get_checker
from attnsim.verify.twins import all_twins

TWINS = all_twins()
CHECKERS = sorted(all_checkers())


@pytest.mark.parametrize("twin", TWINS, ids=[f"{t.claim}:{t.name}" for t in TWINS])
def test_a_twins_point_is_a_point_of_its_claim(twin) -> None:
    params = get_checker(twin.claim).resolve(dict(twin.params))
    assert set(twin.params) <= set(params)


@pytest.mark.parametrize("claim", CHECKERS)
def test_every_grid_point_is_a_point_of_its_claim(claim: str) -> None:
    chk = get_checker(claim)
    for quick in (True, False):
        for point in chk.grid(quick) if chk.grid else ():
            params = {k: v for k, v in point.items() if k not in ("numerics", "seed")}  # the sweep pins these apart
            chk.resolve(params)
