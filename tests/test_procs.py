"""Pool workers stop when told to: SIGTERM ends a worker even when the parent turns SIGTERM into an exception."""

from __future__ import annotations

import signal

from attnsim.verify.procs import worker_pool


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
