"""Time limits of the subprocesses tests start, scaled for a loaded machine.

A limit only stops a hung child; it must never fail a slow but healthy one. The limits are written
for an idle 2-core machine and multiplied by ``ATTNSIM_TEST_TIMEOUT_SCALE`` (default 4: the suite
must pass while the machine runs two other CPU-bound jobs).
"""

import os

SCALE = float(os.environ.get("ATTNSIM_TEST_TIMEOUT_SCALE", "4"))


def limit(seconds: float) -> float:
    """``seconds`` scaled for a loaded machine."""
    return seconds * SCALE
