"""Peak memory figures are each process's own: a child started by spawn does not report its parent's."""

from __future__ import annotations

import multiprocessing as mp
import sys

import numpy as np
import pytest

from attnsim.verify.procs import peak_rss


def _child_peak(queue) -> None:
    queue.put(peak_rss())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is read from Linux's /proc")
def test_spawned_child_reports_its_own_peak():
    """With 400 MB resident in the parent, a spawned child that allocates nothing reports far less
    (``getrusage``'s ru_maxrss would report the parent's resident set, inherited across fork + exec)."""
    ballast = np.ones(50_000_000)  # 400 MB, touched
    parent = peak_rss()
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    p = ctx.Process(target=_child_peak, args=(queue,))
    p.start()
    child = queue.get(timeout=60)
    p.join(timeout=30)
    assert parent >= ballast.nbytes
    assert child < parent - 300 * 2**20
