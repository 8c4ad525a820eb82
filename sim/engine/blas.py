"""Run a block of numpy code with single-threaded BLAS (the engine threads over batches instead).

The engine's batches are many medium GEMMs interleaved with exp; a multi-threaded BLAS spins its
helper threads between GEMMs and competes with the exp for the cores, so the engine instead runs
batches on its own threads with one BLAS thread each. The thread count is set through
``threadpoolctl`` when it is installed, else through OpenBLAS's own entry point found among the
loaded libraries; with neither, nothing changes (the results are the same either way: OpenBLAS
splits a GEMM between threads by output tiles, never along the summed dimension).
"""

from __future__ import annotations

import ctypes
import re
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

_lock = threading.Lock()
_depth = 0


def _openblas_setter() -> tuple[Callable[[int], None], Callable[[], int]] | None:
    try:
        maps = open("/proc/self/maps").read()
    except OSError:
        return None
    for path in sorted(set(re.findall(r"(/\S*openblas\S*\.so\S*)", maps))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (
            ("scipy_openblas", "64_"),
            ("openblas", "64_"),
            ("openblas", ""),
            ("scipy_openblas", ""),
        ):
            s, g = f"{prefix}_set_num_threads{suffix}", f"{prefix}_get_num_threads{suffix}"
            if hasattr(lib, s) and hasattr(lib, g):
                setf, getf = getattr(lib, s), getattr(lib, g)
                setf.argtypes, getf.restype = [ctypes.c_int], ctypes.c_int
                return setf, getf
    return None


_SETTER = _openblas_setter()
_saved = 0


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Within the block (re-entrant), BLAS uses one thread; restored afterwards."""
    global _depth, _saved
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-not-found]
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
        return
    with _lock:
        if _depth == 0 and _SETTER is not None:
            _saved = _SETTER[1]()
            _SETTER[0](1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _SETTER is not None:
                _SETTER[0](_saved)
