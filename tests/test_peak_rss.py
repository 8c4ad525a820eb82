"""Peak memory figures are each process's own: a child started by spawn does not report its parent's."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from attnsim.verify.procs import in_fresh_process, peak_rss


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is read from Linux's /proc")
def test_spawned_child_reports_its_own_peak():
    """With 400 MB resident in the parent, a spawned child that allocates nothing reports far less
    (``getrusage``'s ru_maxrss would report the parent's resident set, inherited across fork + exec)."""
    ballast = np.ones(50_000_000)  # 400 MB, touched
    parent = peak_rss()
    child = in_fresh_process(peak_rss)
    assert parent >= ballast.nbytes
    assert child < parent - 300 * 2**20


def test_fresh_process_answers_or_says_it_died():
    """The one way to measure in a clean interpreter: a value comes back; a child that dies says so."""
    assert in_fresh_process(max, 3, 7) == 7
    with pytest.raises(RuntimeError, match="code 3"):
        in_fresh_process(os._exit, 3)
