"""Worker processes that cannot outlive the command that started them, and what a process has held.

A pool worker asks the kernel for a signal when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``
through ctypes), so SIGKILL or SIGTERM of ``attnsim`` takes its workers with it. Where prctl is not
available a watchdog thread polls ``os.getppid()`` and ends the worker once the parent is gone.
Interrupting the parent cancels what is queued and terminates the running workers instead of waiting
for their chunks to finish; the workers ignore SIGINT themselves (a terminal's Ctrl-C reaches the whole
process group) and die of SIGTERM without a word, so an interrupt is the parent's one line, never a
traceback per worker. While workers are being started, SIGINT and SIGTERM are held
(:func:`signals_deferred`): a worker is never born with the parent's handlers armed, and the parent
loses no interrupt that lands meanwhile.
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


HELD = (signal.SIGINT, signal.SIGTERM)
"""The signals held while workers start, and set to a worker's own dispositions once it runs."""


def die_with_parent(parent: int) -> None:
    """Pool initializer: end this process when ``parent`` exits (signal from the kernel, else a watchdog),
    silently, and leave Ctrl-C to the parent (a terminal sends SIGINT to every process of the group; the
    parent stops its workers itself, so theirs would only print tracebacks); SIGTERM ends a worker at once.
    A worker forked while the parent held both signals (:func:`signals_deferred`) has them blocked until
    here, where they are unblocked once their dispositions are set (a Ctrl-C that came meanwhile is dropped)."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        # A fork inherits the parent's SIGTERM handler, which raises an exception: a worker told to stop
        # would catch it as its task's failure, print a traceback and take the next queued task.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)
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
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while worker processes start (or stop), then act on any that came.

    Both are blocked in this (main) thread, so every thread started meanwhile (a Dask cluster's event
    loop, the threads that fork its workers) and every process those fork inherit the block: a worker
    never meets a Ctrl-C before :func:`die_with_parent` has set it to be ignored. A signal that reaches
    this process meanwhile (this thread, or another thread that does not block it) is recorded instead
    of raising in the middle of a half-started cluster, and raised again here once the block is lifted:
    an interrupt at any moment is acted upon, never lost. Outside the main thread this does nothing.
    """
    caught: list[int] = []

    def hold(signum: int, frame: object) -> None:
        caught.append(signum)

    try:
        before = {s: signal.signal(s, hold) for s in HELD if signal.getsignal(s) is not None}
    except ValueError:  # not the main thread: nothing to change
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a signal that came while blocked reaches ``hold`` here
        for s, handler in before.items():
            signal.signal(s, handler)
        if caught:
            signal.raise_signal(caught[0])  # its own handler now: KeyboardInterrupt, or the command's SIGTERM


def pool_worker(parent: int) -> None:
    """Pool initializer: :func:`die_with_parent`, and BLAS held to one thread for the worker's life. The pool's
    workers already fill the cores; a BLAS thread pool in each would only spin between small products and
    take CPU from the other workers (OpenBLAS splits a product by output tiles, so the numbers are the same)."""
    die_with_parent(parent)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool whose workers die with this process and use one BLAS thread each."""
    return ProcessPoolExecutor(max_workers=workers, initializer=pool_worker, initargs=(os.getpid(),))


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel queued work and terminate running workers now (an interrupt must not wait for them).

    The pool's manager thread is joined too: left running, it closes its wake-up pipe while the
    interpreter's exit hook writes to it, and the process ends with ``OSError: Bad file descriptor``
    printed after the command's own last line (seen when SIGTERM reached a report and its workers).
    """
    procs = list(getattr(pool, "_processes", {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=2)
    if manager is not None:
        manager.join(timeout=5)


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
    with signals_deferred():  # born with Ctrl-C blocked until it ignores it (``_answer``)
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
