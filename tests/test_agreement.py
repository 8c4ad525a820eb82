"""Agreement of an exact comparison, as the randomized ANNA checkers report it (verify/agreement.py)."""

from __future__ import annotations

import math

from attnsim.verify.agreement import exact_outcome


def test_a_refused_run_compares_nothing_and_a_compared_one_says_how_it_went():
    assert exact_outcome(True, False) == (True, math.inf)
    assert exact_outcome(False, False) == (False, 0.0)
    assert exact_outcome(True, True) == exact_outcome(False, True) == (None, None)
