"""Scratch arrays that outlive one batch: a batch's score matrix and value products, kept per thread.

A batch's scores are megabytes, freed as soon as its outputs are out. glibc hands blocks of that size
back to the operating system when they are freed (directly, or by trimming the top of the heap), so
the next batch's scores arrive as fresh pages, each costing a page fault when first written: on a
virtual machine, more than the exp over them. Inside :func:`scratch_space`, :func:`scratch` returns
views of arrays that the thread keeps until the space closes; outside it, fresh arrays. The next
request for the same name on the same thread overwrites them, so only what is used up before that
may live here: temporaries inside one function, the single-threaded serial scheduler's batch
outputs, each of which its consumer takes before asking for the next, and a round's projections
(dropped with the round). The engine opens a space per simulation; a caller that runs many (a sweep,
a timing loop) can open one around them all, so that the pages are touched once.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

import numpy as np

_local = threading.local()


@contextmanager
def scratch_space() -> Iterator[None]:
    """Within the block (re-entrant, per thread), :func:`scratch` reuses this thread's arrays."""
    outer = getattr(_local, "arrays", None) is None
    if outer:
        _local.arrays = {}
    try:
        yield
    finally:
        if outer:
            _local.arrays = None


def scratch(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float64 array of ``shape``: this thread's array ``name`` (grown as needed)
    inside a :func:`scratch_space`, a new one outside."""
    arrays = getattr(_local, "arrays", None)
    size = int(np.prod(shape))
    if arrays is None:
        return np.empty(shape)
    buf = arrays.get(name)
    if buf is None or buf.size < size:
        buf = arrays[name] = np.empty(size)
    return buf[:size].reshape(shape)
