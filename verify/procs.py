"""Worker processes that cannot outlive the command that started them, and what a process has held.

A pool worker asks the kernel for a signal when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``
through ctypes), so SIGKILL or SIGTERM of ``attnsim`` takes its workers with it. Where prctl is not
available a watchdog thread polls ``os.getppid()`` and ends the worker once the parent is gone.
Interrupting the parent cancels what is queued and terminates the running workers instead of waiting
for their chunks to finish; the workers ignore SIGINT themselves (a terminal's Ctrl-C reaches the whole
process group), so an interrupt is the parent's one line, never a traceback per worker.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Iterator

PR_SET_PDEATHSIG = 1
WATCHDOG_SECONDS = 1.0


def die_with_parent(parent: int) -> None:
    """Pool initializer: end this process when ``parent`` exits (signal from the kernel, else a watchdog),
    silently, and leave Ctrl-C to the parent (a terminal sends SIGINT to every process of the group; the
    parent stops its workers itself, so theirs would only print tracebacks); SIGTERM ends a worker at once."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        # A fork inherits the parent's SIGTERM handler, which raises an exception: a worker told to stop
        # would catch it as its task's failure, print a traceback and take the next queued task.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except ValueError:  # not the main thread (a Dask worker's task): the fork inherited the parent's choice
        pass
    armed = False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch, args=(parent,), daemon=True, name="attnsim-parent-watchdog").start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCHDOG_SECONDS)
    os._exit(1)


@contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT in this (main) thread while worker processes are forked, so that they inherit it."""
    try:
        before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool whose workers die with this process."""
    return ProcessPoolExecutor(max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),))


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel queued work and terminate running workers now (an interrupt must not wait for them)."""
    procs = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=2)


def peak_rss() -> int:
    """This process's peak resident memory in bytes: ``VmHWM`` of ``/proc/self/status`` where Linux has it.

    ``getrusage``'s ``ru_maxrss`` is not used where VmHWM exists: a process started by fork + exec (a
    ``spawn`` child) inherits in it the resident set its parent had when it forked, so a child of a
    big parent would report the parent's size instead of its own.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def in_fresh_process(target: Callable[..., Any], *args: Any) -> Any:
    """``target(*args)`` in a fresh interpreter (``spawn``) that dies with this process; its return value.

    For measurements that must not see this process's state: its peak resident set (VmHWM starts
    over), its heap, its threads. A child that ends without answering raises ``RuntimeError``.
    """
    import multiprocessing as mp
    import queue as queue_mod

    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    child = ctx.Process(target=_answer, args=(target, args, os.getpid(), results), daemon=True)
    child.start()
    try:
        while True:
            try:
                return results.get(timeout=1.0)
            except queue_mod.Empty:
                if not child.is_alive():
                    raise RuntimeError(f"{getattr(target, '__name__', target)}: the child process ended with "
                                       f"code {child.exitcode} before answering") from None
    finally:
        child.join(timeout=10)


def _answer(target: Callable[..., Any], args: tuple, parent: int, results: Any) -> None:
    die_with_parent(parent)
    results.put(target(*args))
