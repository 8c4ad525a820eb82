"""Executors of a sweep's tasks: ``serial`` (in this process), ``processes`` (a local process pool) and
``dask`` (``dask.distributed``: an embedded quiet ``LocalCluster``, or an existing cluster at
``scheduler="tcp://host:port"``). A task is a picklable function of (chunk, cache root); its results stream
back as tasks finish. A lost Dask scheduler, or no live worker for :data:`NO_WORKER_SECONDS`, becomes a
:class:`~attnsim.verify.registry.ResumableError`: what finished is already cached.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import FIRST_COMPLETED, wait
from contextlib import ExitStack
from typing import Any, Callable, Iterator

from attnsim.verify.dask_local import local_cluster, quiet_dask_logs
from attnsim.verify.guards import check_workers
from attnsim.verify.procs import signals_deferred, stop_pool, worker_pool
from attnsim.verify.registry import ResumableError, UsageError

__all__ = ["EXECUTORS", "Task", "check_executor", "reachable", "run_tasks"]

EXECUTORS = ("serial", "processes", "dask")
CONNECT_SECONDS = 2
"""How long a Dask client tries to reach ``--scheduler`` before the sweep refuses it."""
NO_WORKER_SECONDS = float(os.environ.get("ATTNSIM_DASK_NO_WORKER_SECONDS", "30"))
"""A Dask sweep with no live worker for this long stops (resumably) instead of waiting forever."""
POLL_SECONDS = 1.0


Task = Callable[[list, "str | None"], list]  # a picklable function of (chunk, cache root) -> results


def _serial(chunks: list, cache_root: str | None, workers: int, scheduler: str | None,
            task: Task) -> Iterator[list]:
    for chunk in chunks:
        yield task(chunk, cache_root)


def _processes(chunks: list, cache_root: str | None, workers: int, scheduler: str | None,
               task: Task) -> Iterator[list]:
    pool = worker_pool(workers)
    try:
        with signals_deferred():  # the first submit forks the workers: none is born with Ctrl-C armed
            pending = {pool.submit(task, chunk, cache_root) for chunk in chunks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def _dask(chunks: list, cache_root: str | None, workers: int, scheduler: str | None,
          task: Task) -> Iterator[list]:
    """On the cluster at ``scheduler``, or on an embedded quiet LocalCluster (:mod:`attnsim.verify.dask_local`);
    Dask's loggers stay silent throughout (an interrupt or a lost worker is the sweep's own one line)."""
    from dask.distributed import Client

    with ExitStack() as stack:
        stack.enter_context(quiet_dask_logs())
        if scheduler:
            try:
                client = Client(scheduler, timeout=f"{CONNECT_SECONDS}s")
            except (OSError, TimeoutError) as exc:
                raise UsageError(f"--scheduler: cannot reach {scheduler} within {CONNECT_SECONDS} s "
                                 f"({type(exc).__name__})") from None
            stack.callback(_close_quietly, client)
        else:
            client = stack.enter_context(local_cluster(workers))
        _ignore_abandoned_gathers(client)
        futures = [client.submit(task, chunk, cache_root, pure=False) for chunk in chunks]
        try:
            yield from _dask_results(client, futures)
        finally:
            try:
                client.cancel(futures)
            except Exception:  # a lost scheduler cannot cancel; nothing is left to cancel
                pass


def _close_quietly(client: Any) -> None:
    try:
        client.close(timeout=CONNECT_SECONDS)
    except Exception:  # closing a client whose scheduler is gone
        pass


def _ignore_abandoned_gathers(client: Any) -> None:
    """Keep the client's event loop from printing distributed's internal ``AllExit`` tasks.

    A gather abandoned after its worker died (``result(timeout=…)`` below) leaves tasks whose
    ``AllExit`` nobody retrieves; asyncio reports each, traceback and all, on stderr when it is
    garbage-collected — possibly after the sweep has ended with its own one-line error. Other
    exceptions still go to the loop's default handler.
    """
    loop = getattr(getattr(client, "loop", None), "asyncio_loop", None)
    if loop is None:
        return

    def handler(loop: Any, context: dict) -> None:
        if type(context.get("exception")).__name__ == "AllExit":
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


def _dask_results(client: Any, futures: list) -> Iterator[list]:
    """Results as they finish; a sweep with no live worker for :data:`NO_WORKER_SECONDS`, a lost scheduler
    or a worker killed repeatedly becomes a :class:`ResumableError` (what finished is already cached)."""
    from concurrent.futures import CancelledError

    from dask.distributed import wait as dask_wait
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    lost = (KilledWorker, CancelledError, CommClosedError, OSError)
    with quiet_dask_logs():
        pending = set(futures)
        idle_since: float | None = None
        while pending:
            try:
                done, not_done = dask_wait(list(pending), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done, not_done = set(), pending
            except lost as exc:
                raise ResumableError(f"dask: lost the scheduler ({type(exc).__name__})") from None
            pending = set(not_done)
            gathered = False
            for fut in done:
                try:
                    result = fut.result(timeout=POLL_SECONDS)
                except TimeoutError:
                    # Finished on a worker that died before its result was fetched: dask reschedules the task,
                    # so it waits again, and the check for live workers below decides how long.
                    pending.add(fut)
                    continue
                except KilledWorker:
                    raise ResumableError("dask: a worker died repeatedly running the same task "
                                         "(KilledWorker)") from None
                except lost as exc:
                    raise ResumableError(f"dask: lost the scheduler ({type(exc).__name__})") from None
                gathered = True
                yield result
            if gathered:
                idle_since = None
                continue
            try:
                alive = len(client.nthreads())
            except lost as exc:
                raise ResumableError(f"dask: lost the scheduler ({type(exc).__name__})") from None
            if alive:
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > NO_WORKER_SECONDS:
                raise ResumableError(f"dask: no live worker for {NO_WORKER_SECONDS:g} s")


_RUNNERS = {"serial": _serial, "processes": _processes, "dask": _dask}


def check_executor(executor: str) -> None:
    """Refuse an executor name that is not one of :data:`EXECUTORS`, naming ``--executor``."""
    if executor not in EXECUTORS:
        raise UsageError(f"--executor: must be one of {', '.join(EXECUTORS)}; got {executor!r}")


def run_tasks(task: Task, chunks: list[list], *, executor: str = "serial", workers: int | None = None,
              scheduler: str | None = None, cache_root: str | None = None) -> Iterator[list]:
    """``task(chunk, cache_root)`` for every chunk on ``executor``, results as they finish: the checks of a
    sweep, and other work than checks (the broken twins of :mod:`attnsim.verify.teeth`) on the same pools."""
    check_executor(executor)
    return _RUNNERS[executor](chunks, cache_root, check_workers(workers), scheduler, task)


def reachable(scheduler: str) -> None:
    """Refuse a ``tcp://HOST:PORT`` scheduler that accepts no connection within :data:`CONNECT_SECONDS`."""
    import socket
    from urllib.parse import urlsplit

    where = urlsplit(scheduler)
    try:
        socket.create_connection((where.hostname or "", where.port or 0), timeout=CONNECT_SECONDS).close()
    except (OSError, ValueError) as exc:
        raise UsageError(f"--scheduler: cannot reach {scheduler} within {CONNECT_SECONDS} s "
                         f"({type(exc).__name__})") from None
