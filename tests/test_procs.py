"""Pool workers stop when told to: SIGTERM ends a worker even when the parent turns SIGTERM into an exception."""

from __future__ import annotations

import os
import signal

import pytest

from attnsim.verify.procs import signals_deferred, worker_pool


class _Stop(BaseException):
    pass


def _raise_stop(signum: int, frame: object) -> None:
    raise _Stop()


def _sigterm_is_default() -> bool:
    return signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_worker_sigterm_is_default_under_a_raising_parent_handler() -> None:
    """A parent handler that raises must not reach the workers (they would catch it as a task's failure and
    go on with the next task, so stopping the pool would wait for them)."""
    before = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        pool = worker_pool(1)
        try:
            assert pool.submit(_sigterm_is_default).result() is True
        finally:
            pool.shutdown(wait=True)
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_signal_held_while_workers_start_is_raised_afterwards_not_lost() -> None:
    """SIGINT that lands while workers start is neither acted on in the middle (a half-started cluster) nor
    dropped (the interrupt that a SIG_IGN window lost): it becomes KeyboardInterrupt once the block is lifted."""
    reached_the_end = False
    with pytest.raises(KeyboardInterrupt):
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            reached_the_end = True
    assert reached_the_end
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, [])


def _dispositions() -> tuple[object, object, set]:
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    return signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), blocked


def test_a_worker_forked_while_signals_are_held_ignores_sigint_and_blocks_nothing() -> None:
    """A pool worker forked inside the hold is born with SIGINT and SIGTERM blocked; once it runs, SIGINT is
    ignored, SIGTERM has its default action and nothing stays blocked."""
    pool = worker_pool(1)
    try:
        with signals_deferred():
            fut = pool.submit(_dispositions)
        assert fut.result() == (signal.SIG_IGN, signal.SIG_DFL, set())
    finally:
        pool.shutdown(wait=True)


def _nap(seconds: float) -> float:
    import time

    time.sleep(seconds)
    return seconds


def test_stop_pool_leaves_no_manager_thread_to_race_the_exit_hook() -> None:
    """After ``stop_pool`` the executor's manager thread has ended (its wake-up pipe closed by itself), so the
    interpreter's exit hook cannot write to a pipe that thread is closing (``OSError: Bad file descriptor``)."""
    from attnsim.verify.procs import stop_pool

    with signals_deferred():
        pool = worker_pool(2)
    futures = [pool.submit(_nap, 30.0) for _ in range(4)]
    while not all(p.is_alive() for p in pool._processes.values()) or len(pool._processes) < 2:
        pass
    manager = pool._executor_manager_thread
    assert manager is not None and manager.is_alive()
    stop_pool(pool)
    assert not manager.is_alive()
    assert all(f.cancelled() or f.done() for f in futures[2:])


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_pool_workers_run_blas_on_one_thread() -> None:
    """The pool's workers fill the cores themselves: each worker's BLAS runs one thread (this process's BLAS,
    which the workers inherit, is raised to two first, so a worker without the limit would report two)."""
    import numpy  # noqa: F401  (loads the BLAS library that threadpoolctl reports)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):
        assert set(_blas_threads()) == {2}
        pool = worker_pool(1)
        try:
            threads = pool.submit(_blas_threads).result()
        finally:
            pool.shutdown(wait=True)
    assert threads and set(threads) == {1}
