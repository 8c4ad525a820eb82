"""An embedded Dask cluster that starts, runs and stops without a word of its own.

Used by the sweeps (``--scheduler local`` of ``attnsim report``) and by ``attnsim run --scheduler local``.
The cluster has one single-threaded worker process per worker, started by fork where the platform has it
(forked workers inherit the loaded checkers; a spawned worker would import sympy and every construction
again, several seconds each). While it starts and while it stops, SIGINT and SIGTERM are held
(:func:`~attnsim.verify.procs.signals_deferred`): the workers are born with both blocked, set SIGINT to be
ignored and SIGTERM to end them silently (:func:`~attnsim.verify.procs.die_with_parent`, which also has
the kernel end them with this process), and an interrupt that lands meanwhile is raised once the cluster
is up (or down), so it is never lost and never leaves a half-started cluster behind. distributed's,
tornado's and asyncio's loggers stay silent throughout: an interrupt or a lost worker is the command's
own one line.
"""

from __future__ import annotations

import logging
import os
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

from attnsim.verify.procs import die_with_parent, signals_deferred

CLOSE_SECONDS = 2
"""How long closing the client waits for its scheduler."""


@contextmanager
def quiet_dask_logs() -> Iterator[None]:
    """Silence the client side's dask, tornado and asyncio loggers while a cluster is in use.

    When a worker dies or is stopped, distributed logs its own recovery (``Couldn't gather …
    rescheduling``, the traceback of a cancelled gather, a nanny's restart) on stderr; the command
    reports the outcome itself in one line, so those lines would only bury it. Levels are restored
    afterwards.

    The warning that a coroutine was never awaited is dropped for the rest of the process, not only here:
    a client stopped by an interrupt leaves tornado's pending futures behind, and Python warns about them
    whenever they are collected, which can be after this block. No code of ours is a coroutine.
    """
    import distributed  # noqa: F401 - its loggers exist (and have their levels) before they are silenced

    warnings.filterwarnings("ignore", message=r"coroutine '.*' was never awaited", category=RuntimeWarning)

    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] in ("distributed", "tornado", "asyncio")]
    loggers = [logging.getLogger(n) for n in {*names, "distributed", "tornado", "asyncio"}]
    saved = [(lg, lg.level) for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in saved:
            lg.setLevel(level)


@contextmanager
def local_cluster(workers: int) -> Iterator[Any]:
    """A client of a new LocalCluster of ``workers`` single-threaded worker processes, closed on the way
    out (interrupts held while it starts and stops, loggers silent)."""
    import multiprocessing

    import dask
    from dask.distributed import Client, LocalCluster

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    cluster = client = None
    with quiet_dask_logs():
        try:
            with signals_deferred(), dask.config.set({"distributed.worker.multiprocessing-method": method}):
                # No dashboard; the scheduler's HTTP routes (which it serves even then) on a free port, not
                # 8787: a second cluster on the machine would otherwise print a UserWarning about the port.
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"},
                                       silence_logs=logging.CRITICAL)
                client = Client(cluster)
                client.run(die_with_parent, os.getpid())  # a killed parent takes its workers with it, silently
            yield client
        finally:
            with signals_deferred():
                if client is not None:
                    try:
                        client.close(timeout=CLOSE_SECONDS)
                    except Exception:  # a client whose scheduler is already gone
                        pass
                if cluster is not None:
                    cluster.close()
